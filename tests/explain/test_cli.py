"""`torchsmith explain` on the command line: inputs, exit codes, the JSON contract."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from torchsmith.cli import main
from torchsmith.machine import Machine, NvidiaGpu, NvidiaInfo, OsInfo
from torchsmith.output import ExitCode

CORPUS = Path(__file__).parent / "corpus"
ARCH_TEXT = ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
             "PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 "
             "sm_70 sm_75 sm_80 sm_86 sm_90.\n")
MATCH_FIELDS = {"id", "title", "cause", "fix", "facts", "excerpt", "line"}


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Dict[str, Any]:
    code = main(["explain", "--json", *argv])
    envelope: Dict[str, Any] = json.loads(capsys.readouterr().out)
    assert envelope["exit_code"] == code
    return envelope


def host_file(tmp_path: Path) -> str:
    machine = Machine(
        os=OsInfo(system="linux", arch="x86_64", glibc="2.35"),
        nvidia=NvidiaInfo(driver_version="550.54.14", driver_cuda="12.4",
                          gpus=(NvidiaGpu(0, "NVIDIA GeForce RTX 5090", compute_capability="12.0"),)),
    )
    path = tmp_path / "host.json"
    path.write_text(json.dumps(machine.to_json()))
    return str(path)


def test_text_arguments_are_explained_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--no-probe", "RuntimeError: CUDA error: no kernel image is available",
                 "for execution on the device"]) == 0
    out = capsys.readouterr().out
    assert "No compiled CUDA kernel for this GPU  [no-kernel-image, line 1]" in out
    assert "Cause: " in out and "Fix:" in out
    assert "torchsmith plan" in out
    assert len(out.splitlines()) < 25  # one screen


def test_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    envelope = run_json(capsys, "--no-probe", ARCH_TEXT)
    assert set(envelope) == {"schema", "torchsmith", "kb_version", "command", "status", "exit_code", "data",
                             "warnings", "errors"}
    assert envelope["command"] == "explain"
    assert envelope["status"] == "ok" and envelope["exit_code"] == 0
    data = envelope["data"]
    assert data["recognised"] is True
    assert data["host"] is None
    (match,) = data["matches"]
    assert set(match) >= MATCH_FIELDS
    assert match["id"] == "arch-not-compiled"
    assert match["line"] == 1
    assert match["facts"] == {"arch": "sm_120", "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80",
                                                              "sm_86", "sm_90"],
                              "gpu_name": "NVIDIA GeForce RTX 5090"}
    assert match["excerpt"].startswith("NVIDIA GeForce RTX 5090 with CUDA capability sm_120")
    assert isinstance(match["fix"], list) and all(isinstance(step, str) for step in match["fix"])
    assert "sm_120" in match["cause"] and "{" not in match["cause"]
    assert match["related_finding"] == "arch-not-compiled"
    assert match["host_facts"] == []


def test_unrecognised_text_is_said_honestly_with_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    envelope = run_json(capsys, "--no-probe", "my model's accuracy went down after epoch 3")
    assert envelope["exit_code"] == ExitCode.OK
    assert envelope["status"] == "not-recognised"
    assert envelope["data"]["recognised"] is False
    assert envelope["data"]["matches"] == []
    assert "torchsmith doctor" in envelope["data"]["checks"]
    assert main(["explain", "--no-probe", "nothing to see"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Not recognised:")
    assert "No cause is guessed" in out


def test_a_host_profile_adds_the_machine_facts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    envelope = run_json(capsys, "--host", host_file(tmp_path), ARCH_TEXT)
    data = envelope["data"]
    assert data["host"].startswith("host profile ")
    assert data["matches"][0]["host_facts"] == ["GPU 0: NVIDIA GeForce RTX 5090 (sm_120)",
                                                "Not in the build's arch list: sm_120"]
    assert data["matches"][0]["fix"][0].startswith(
        f"On the machine that shows this error: `torchsmith plan --host {tmp_path / 'host.json'}`")
    assert main(["explain", "--host", host_file(tmp_path), ARCH_TEXT]) == 0
    assert "On host profile " in capsys.readouterr().out


def test_driver_text_with_a_stated_driver(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = "RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."
    envelope = run_json(capsys, "--host", host_file(tmp_path), text)
    (match,) = envelope["data"]["matches"]
    assert match["facts"] == {"driver_cuda": "11.4"}
    assert "NVIDIA driver 550.54.14, supports CUDA up to 12.4" in match["host_facts"]


def test_a_log_file_with_several_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "build.log"
    log.write_bytes((CORPUS / "extension-build-failed--1.txt").read_bytes()
                    + (CORPUS / "cuda-home-not-set--1.txt").read_bytes())
    envelope = run_json(capsys, "--no-probe", "--file", str(log))
    ids = [m["id"] for m in envelope["data"]["matches"]]
    assert ids == ["cuda-home-not-set", "extension-build-failed"]  # the root cause first
    assert envelope["data"]["input"]["from"] == "file"


def test_a_file_path_given_as_the_text_is_said_with_the_flag_that_reads_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "build.log"
    log.write_bytes((CORPUS / "cuda-home-not-set--1.txt").read_bytes())
    assert main(["explain", "--no-probe", str(log)]) == 0
    err = capsys.readouterr().err
    assert f"torchsmith explain --file {log}" in err and "names a file" in err
    envelope = run_json(capsys, "--no-probe", str(log))
    assert any("names a file" in warning for warning in envelope["warnings"])
    # a message that is not a path, or a path that does not exist, says nothing of files
    for text in ("CUDA_HOME environment variable is not set", str(tmp_path / "no-such.log")):
        assert not any("names a file" in w for w in run_json(capsys, "--no-probe", text)["warnings"])


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-8-sig"])
def test_a_log_with_a_byte_order_mark_is_read_in_its_encoding(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], encoding: str) -> None:
    # Windows PowerShell 5's `python train.py > log.txt` writes UTF-16 LE with its mark
    log = tmp_path / "log.txt"
    text = (CORPUS / "cuda-home-not-set--1.txt").read_text(encoding="utf-8")
    mark = {"utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    log.write_bytes(mark + text.encode(encoding))
    envelope = run_json(capsys, "--no-probe", "--file", str(log))
    assert [m["id"] for m in envelope["data"]["matches"]] == ["cuda-home-not-set"]
    assert envelope["data"]["input"]["characters"] == len(text)


def test_binary_file_is_read_without_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blob = tmp_path / "core.bin"
    blob.write_bytes(bytes(range(256)) * 64 + b"\nIllegal instruction (core dumped)\n" + b"\xff\xfe" * 100)
    envelope = run_json(capsys, "--no-probe", "--file", str(blob))
    assert [m["id"] for m in envelope["data"]["matches"]] == ["illegal-instruction"]


def test_standard_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    raw = (CORPUS / "numpy2-abi--2.txt").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    envelope = run_json(capsys, "--no-probe", "-")
    assert [m["id"] for m in envelope["data"]["matches"]] == ["numpy2-abi"]
    assert envelope["data"]["input"]["from"] == "stdin"


def test_empty_input_is_a_usage_error(monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--no-probe"]) == ExitCode.USAGE
    assert "nothing to explain" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", io.StringIO("  \n"))
    envelope = run_json(capsys, "--no-probe", "-")
    assert envelope["exit_code"] == ExitCode.USAGE
    assert envelope["errors"][0]["code"] == "usage"


def test_two_inputs_at_once_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "a.log"
    log.write_text("x")
    assert main(["explain", "--no-probe", "--file", str(log), "some text"]) == ExitCode.USAGE
    assert "give the text one way" in capsys.readouterr().err


def test_a_missing_file_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--no-probe", "--file", str(tmp_path / "nope.log")]) == ExitCode.FAILURE
    err = capsys.readouterr().err
    assert err.startswith("error[input-unreadable]: cannot read ")
    assert len(err.strip().splitlines()) == 1


def test_a_corrupted_signature_file_is_an_error_not_a_traceback(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "sigs.json"
    bad.write_text('{"kind": "torchsmith.explain-signatures", "schema": 1, "version": "x", "signatures": [')
    envelope = run_json(capsys, "--no-probe", "--signatures", str(bad), "anything")
    assert envelope["exit_code"] == ExitCode.FAILURE
    assert envelope["errors"][0]["code"] == "explain-data-invalid"


def test_end_to_end_as_a_process(tmp_path: Path) -> None:
    log = tmp_path / "pip.log"
    log.write_bytes((CORPUS / "no-matching-distribution--1.txt").read_bytes())
    done = subprocess.run([sys.executable, "-m", "torchsmith", "explain", "--no-probe", "--json", "--file",
                           str(log)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert [m["id"] for m in envelope["data"]["matches"]] == ["no-matching-distribution"]
    assert envelope["data"]["matches"][0]["facts"]["available"] == "none"


def test_stated_facts_describe_the_machine_without_probing(capsys: pytest.CaptureFixture[str]) -> None:
    envelope = run_json(capsys, "--no-probe", "--gpu", "12.0:RTX 5090", "--driver", "570.86.10", ARCH_TEXT)
    data = envelope["data"]
    assert data["host"] == "the machine as stated"
    assert data["matches"][0]["host_facts"] == ["GPU 0: RTX 5090 (sm_120)",
                                                "Not in the build's arch list: sm_120"]


def test_on_a_stated_jetson_the_fix_is_nvidias_wheel(capsys: pytest.CaptureFixture[str]) -> None:
    text = "RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."
    assert main(["explain", "--no-probe", "--jetson", "35.2.1", text]) == 0
    out = capsys.readouterr().out
    assert "JetPack 5.1 (L4T 35.2.1, Python 3.8)" in out
    assert "torchsmith plan --jetson 35.2.1" in out
    assert "nvidia-smi" not in out and "download.pytorch.org" not in out


def test_an_unknown_text_on_a_jetson_gets_jetson_checks(capsys: pytest.CaptureFixture[str]) -> None:
    envelope = run_json(capsys, "--no-probe", "--jetson", "35.2.1", "something odd happened")
    checks = envelope["data"]["checks"]
    assert "cat /etc/nv_tegra_release" in checks and "nvidia-smi" not in checks
    assert main(["explain", "--no-probe", "something odd happened"]) == 0
    assert "nvidia-smi" in capsys.readouterr().out


def test_candidates_are_shown_and_carried_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    text = ("ImportError: /env/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: "
            "undefined symbol: ncclCommResume")
    envelope = run_json(capsys, "--no-probe", text)
    (match,) = envelope["data"]["matches"]
    assert match["id"] == "undefined-symbol"
    assert len(match["candidates"]) >= 2
    assert all(set(c) == {"id", "cause", "check"} for c in match["candidates"])
    assert main(["explain", "--no-probe", text]) == 0
    assert "Candidates (the text proves none of them):" in capsys.readouterr().out
