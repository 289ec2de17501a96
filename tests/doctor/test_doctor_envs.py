"""The doctor against real interpreters and environments written on disk.

Fast tests put a fake site-packages first on a child's sys.path (PYTHONPATH) and run the
doctor in process; slow ones build venvs and run ``python -m torchsmith`` end to end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from tests.doctor.envs import path_env, write_dist, write_torch

from torchsmith.cli import main
from torchsmith.output import ExitCode

BROKEN_INIT = 'raise OSError("libcudnn.so.9: cannot open shared object file: No such file or directory")\n'
HANGING_INIT = "import time\ntime.sleep(600)\n"


def run_doctor(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, env: Dict[str, str], *args: str
) -> Any:
    for key in list(os.environ):
        if key not in env:
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code = main(["doctor", "--python", sys.executable, "--json", *args])
    out = json.loads(capsys.readouterr().out)
    assert out["exit_code"] == code
    return code, out["data"]


def codes(data: Dict[str, Any]) -> Dict[str, str]:
    return {f["code"]: f["severity"] for f in data["findings"]}


def test_companion_built_for_another_torch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write_torch(site, "2.5.1", cuda="12.4", init=BROKEN_INIT)
    write_dist(site, "torchvision", "0.19.1", requires=["numpy", "torch==2.4.1", "pillow!=8.3.*,>=5.3.0"])
    write_dist(site, "torchaudio", "2.5.1", requires=["torch==2.5.1"])
    code, data = run_doctor(capsys, monkeypatch, path_env(site), "--quick", "--no-gpu")
    assert code == ExitCode.PROBLEMS_FOUND
    hit = next(f for f in data["findings"] if f["code"] == "companion-abi-mismatch")
    assert hit["facts"][1] == {
        "text": "torchvision 0.19.1 is built for torch ==2.4.1, but torch 2.5.1 is installed",
        "source": f"{site}/torchvision-0.19.1.dist-info/METADATA Requires-Dist",
    }
    assert len(hit["facts"]) == 2  # torchaudio matches
    env = data["environment"]
    assert env["torch"]["path"] == str(site / "torch")
    assert env["inspected"] == "static"  # --quick never imported the broken torch
    assert {"name": "torchvision", "version": "0.19.1", "built_for_torch": "==2.4.1"} in env["companions"]


def test_broken_torch_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write_torch(site, "2.5.1+cu124", cuda="12.4", init=BROKEN_INIT)
    code, data = run_doctor(capsys, monkeypatch, path_env(site), "--gpu", "8.6", "--driver", "550.54.14")
    assert code == ExitCode.PROBLEMS_FOUND
    hit = data["findings"][0]
    assert hit["code"] == "torch-import-fails"
    assert hit["title"] == (
        "`import torch` fails: OSError: libcudnn.so.9: cannot open shared object "
        "file: No such file or directory"
    )
    assert any("torch/__init__.py" in f["text"] for f in hit["facts"])  # the traceback's tail
    assert data["environment"]["import"]["status"] == "failed"


def test_hanging_torch_import_is_killed_at_the_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write_torch(site, "2.5.1+cu124", cuda="12.4", init=HANGING_INIT)
    # The import sleeps 600 s: the doctor returning at all, with this finding, proves the kill.
    code, data = run_doctor(capsys, monkeypatch, path_env(site), "--no-gpu", "--timeout", "2")
    assert code == ExitCode.PROBLEMS_FOUND
    assert data["findings"][0]["code"] == "torch-import-hangs"
    assert data["findings"][0]["title"] == "`import torch` did not finish within 2 s (killed)"


def test_library_shadowed_and_old_libstdcxx(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    torch = write_torch(site, "2.5.1+cu124", cuda="12.4")
    (torch / "lib").mkdir()
    # Version tags as they appear in .gnu.version_r of a real libc10.so.
    (torch / "lib" / "libc10.so").write_bytes(b"\x7fELF\0GLIBCXX_3.4.21\0GLIBCXX_3.4.29\0CXXABI_1.3\0")
    cudnn = site / "nvidia" / "cudnn" / "lib"
    cudnn.mkdir(parents=True)
    (cudnn / "libcudnn.so.9").write_bytes(b"")
    old_cuda = tmp_path / "cuda-12.1" / "lib64"
    old_cuda.mkdir(parents=True)
    for name in ("libcudnn.so.9", "libcudnn.so.9.0.0", "libcudart.so.12"):
        (old_cuda / name).write_bytes(b"")
    old_cxx = tmp_path / "oldcxx"
    old_cxx.mkdir()
    (old_cxx / "libstdc++.so.6").write_bytes(b"GLIBCXX_3.4\0GLIBCXX_3.4.19\0")
    env = path_env(site, LD_LIBRARY_PATH=f"{old_cuda}:{old_cxx}")
    code, data = run_doctor(capsys, monkeypatch, env, "--quick", "--gpu", "8.6", "--driver", "550.54.14")
    assert code == ExitCode.PROBLEMS_FOUND
    found = codes(data)
    assert found["libstdcxx-too-old"] == "error"
    # --quick imports nothing: the names on LD_LIBRARY_PATH are a possibility, not a shadowing.
    assert found["library-path-overlap"] == "info" and "library-shadowed" not in found
    overlap = next(f for f in data["findings"] if f["code"] == "library-path-overlap")
    assert overlap["facts"][1]["text"].startswith(f"{old_cuda} has libcudnn.so.9,")
    cxx = next(f for f in data["findings"] if f["code"] == "libstdcxx-too-old")
    assert cxx["title"] == "libstdc++ provides GLIBCXX up to 3.4.19, torch needs GLIBCXX_3.4.29"
    assert cxx["fix"] == [f"export LD_LIBRARY_PATH={old_cuda}"]


def test_missing_interpreter_is_one_line_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["doctor", "--python", str(tmp_path / "nope" / "python"), "--no-gpu"]) == ExitCode.FAILURE
    err = capsys.readouterr().err
    assert err.startswith("error[python-not-inspectable]: cannot inspect the environment of")
    assert "Traceback" not in err


def test_version_instead_of_interpreter_is_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--python", "3.11", "--no-gpu"]) == ExitCode.USAGE
    assert "doctor inspects an interpreter" in capsys.readouterr().err


def test_human_output_worst_first_with_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write_torch(site, "2.13.0+cpu", init=BROKEN_INIT)
    for key, value in path_env(site, NO_COLOR="1").items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    argv = ["doctor", "--python", sys.executable, "--quick", "--gpu", "8.6:RTX 3090", "--driver", "550.54.14"]
    code = main(argv)
    out = capsys.readouterr().out
    assert code == ExitCode.PROBLEMS_FOUND
    # The answer first: the verdict with the worst finding, then its fix, then why.
    lines = out.splitlines()
    assert lines[0].startswith("✗ 1 error (exit code 4): torch 2.13.0+cpu is a CPU-only build, but this "
                               "host has 1 NVIDIA GPU(s):"), out
    assert lines[1].startswith(f"  $ {sys.executable} -m pip install ")
    assert next(line for line in lines if line.startswith("Environment: ")).endswith(
        "· torch 2.13.0+cpu · CPU build")
    why = lines[lines.index("Why:") + 1:]
    why = why[:next((i for i, line in enumerate(why) if not line.startswith(" ")), len(why))]
    assert 1 <= len(why) <= 5 and "[" not in "".join(why)  # sources: -v
    assert len(lines) <= 20
    # -v: every finding, worst first, with its facts, their sources and its fix.
    assert main([*argv, "-v"]) == ExitCode.PROBLEMS_FOUND
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("✗ 1 error")
    found = next(i for i, line in enumerate(lines) if line.startswith("torchsmith doctor: "))
    assert lines[found + 1].startswith("  torch 2.13.0+cpu · CPU build · ")
    first = next(i for i, line in enumerate(lines) if line.startswith(("✗ error", "! warning", "i info")))
    assert (
        lines[first] == "✗ error[cpu-build-on-gpu-host] torch 2.13.0+cpu is a CPU-only build, "
        "but this host has 1 NVIDIA GPU(s)"
    )
    assert "    fix:" in lines
    assert len(lines) < 40  # one screen


# --- end to end, in venvs ------------------------------------------------------------------
def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    found = list(path.glob("lib/python3*/site-packages"))
    assert found, "venv has no site-packages"
    return found[0]


def _torchsmith(*args: str, env: Dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torchsmith", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def _clean_env() -> Dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "TORCHSMITH_", "LD_LIBRARY", "CUDA_", "CONDA", "VIRTUAL_ENV"))
    }


@pytest.mark.slow
def test_conda_env_with_pip_torch_over_conda_pytorch(tmp_path: Path) -> None:
    prefix = tmp_path / "env"
    site = _venv(prefix)
    meta = prefix / "conda-meta"
    meta.mkdir()
    records = [
        "pytorch-2.1.0-py3.11_cpu_0",
        "pytorch-mutex-1.0-cpu",
        "cpuonly-2.0-0",
        "python-3.11.7-h955ad1f_0",
    ]
    for record in records:
        (meta / f"{record}.json").write_text(json.dumps({"name": record.rsplit("-", 2)[0]}), encoding="utf-8")
    write_torch(site, "2.5.1+cu124", cuda="12.4")  # pip's, over conda's files
    python = str(prefix / "bin" / "python")
    result = _torchsmith(
        "doctor",
        "--python",
        python,
        "--quick",
        "--json",
        "--gpu",
        "8.9",
        "--driver",
        "550.54.14",
        env=_clean_env(),
    )
    assert result.returncode == ExitCode.PROBLEMS_FOUND, result.stderr
    data = json.loads(result.stdout)["data"]
    found = codes(data)
    assert found["two-torch-installs"] == "error"
    assert found["conda-mutex-cpu"] == "error"
    two = next(f for f in data["findings"] if f["code"] == "two-torch-installs")
    assert two["fix"][:2] == [  # the env has no pip (made --without-pip): uv removes pip's torch
        f"uv pip uninstall --python {python} torch",
        f"conda remove -p {prefix} --force -y pytorch",
    ]
    assert data["environment"]["kind"] == "conda"
    assert "pytorch-mutex=1.0=cpu" in data["environment"]["conda_torch_packages"]


@pytest.mark.slow
def test_guarded_venv_has_no_guard_finding(tmp_path: Path) -> None:
    prefix = tmp_path / "env"
    site = _venv(prefix)
    write_torch(site, "2.13.0+cpu")
    guard = prefix / "torchsmith-guard.txt"
    guard.write_text("torch==2.13.0+cpu\n", encoding="utf-8")
    python = str(prefix / "bin" / "python")
    args = ("doctor", "--python", python, "--quick", "--json", "--no-gpu")
    first = json.loads(_torchsmith(*args, env=_clean_env()).stdout)["data"]
    assert codes(first) == {"guard-off": "info"}
    assert first["findings"][0]["fix"] == [f"torchsmith guard on --python {python}"]
    (prefix / "pip.conf").write_text(f"[install]\nconstraint = {guard}\n", encoding="utf-8")
    result = _torchsmith(*args, env=_clean_env())
    assert result.returncode == 0
    data = json.loads(result.stdout)["data"]
    assert data["healthy"] is True and data["findings"] == []
    assert data["environment"]["guard"] is True


@pytest.mark.slow
def test_oldest_python_target(tmp_path: Path) -> None:
    """The static snippet runs in a Python 3.8 environment (JetPack 5's system Python)."""
    python38 = Path(".venv-test-3.8/bin/python").resolve()
    candidates: List[Path] = [
        python38,
        *Path(os.path.expanduser("~/.pyenv/versions")).glob("3.8*/bin/python3.8"),
    ]
    python = next((p for p in candidates if p.exists()), None)
    if python is None:
        pytest.skip("no Python 3.8 on this machine")
    prefix = tmp_path / "env38"
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(prefix)], check=True)
    site = next(prefix.glob("lib/python3.8/site-packages"))
    write_torch(site, "2.1.0a0+41361538.nv23.06", cuda="11.4")
    result = _torchsmith(
        "doctor",
        "--python",
        str(prefix / "bin" / "python"),
        "--quick",
        "--json",
        "--jetson",
        "35.3.1",
        env=_clean_env(),
    )
    data = json.loads(result.stdout)["data"]
    assert data["environment"]["python_version"].startswith("3.8.")
    assert data["environment"]["torch"]["version"] == "2.1.0a0+41361538.nv23.06"
    assert data["environment"]["torch"]["accelerator"] == "cuda"
    assert not any(f["severity"] == "error" for f in data["findings"]), data["findings"]


def test_host_profile_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.doctor.envs import gpu_host

    profile = tmp_path / "host.json"
    profile.write_text(
        json.dumps(gpu_host(cc="12.0", name="NVIDIA GeForce RTX 5090", driver="570.86.10").to_json())
    )
    site = tmp_path / "site"
    write_torch(site, "2.13.0+cpu", init=BROKEN_INIT)
    code, data = run_doctor(capsys, monkeypatch, path_env(site), "--quick", "--host", str(profile))
    assert code == ExitCode.PROBLEMS_FOUND
    hit = data["findings"][0]
    assert hit["code"] == "cpu-build-on-gpu-host"
    assert {
        "text": "GPU NVIDIA GeForce RTX 5090 (compute capability 12.0)",
        "source": "machine.nvidia.gpus (nvidia-smi)",
    } in hit["facts"]


def test_diagnosis_replays_from_a_capture() -> None:
    """Through a RecordedHost: a bug report's captured snippet output gives the same diagnosis."""
    from tests.doctor.envs import gpu_host, report

    from torchsmith.doctor import diagnose
    from torchsmith.doctor.inspect import snippet_path
    from torchsmith.host import PlatformInfo, command_key
    from torchsmith.host.recorded import RecordedHost

    python = "/env/bin/python"
    capture = {
        "schema": 1,
        "platform": PlatformInfo(
            system="Linux",
            machine="x86_64",
            release="6.1",
            python_version="3.11.7",
            python_implementation="CPython",
            python_executable=python,
            python_prefix="/env",
            python_base_prefix="/usr",
        ).to_json(),
        "commands": {
            command_key([python, snippet_path("inspect_env.py")]): {
                "returncode": 0,
                "stdout": json.dumps(report()),
                "stderr": "",
            },
            command_key([python, snippet_path("torch_check.py")]): {"timed_out": True},
        },
    }
    assert (
        command_key([python, snippet_path("torch_check.py")]) == "python torchsmith:snippets/torch_check.py"
    )
    diagnosis = diagnose(RecordedHost(capture), gpu_host(), python, None, timeout=30)
    assert [f.code for f in diagnosis.errors] == ["torch-import-hangs"]
    assert diagnosis.environment["import"] == {"status": "timeout", "timeout": 30}


@pytest.mark.slow
def test_pip_installed_companion_wheels_for_another_torch(tmp_path: Path) -> None:
    """Real wheels, installed by pip (its own dist-info, INSTALLER, RECORD): torchvision built for 2.4.1."""
    from tests.support.faketorch import fake_companion_files, fake_torch_files
    from tests.support.pkgindex import build_wheel

    wheels = tmp_path / "wheels"
    torch = build_wheel(
        wheels, "torch", "2.5.1+cu124", files=fake_torch_files("2.5.1+cu124", "12.4", ["sm_80", "sm_90"])
    )
    vision = build_wheel(
        wheels,
        "torchvision",
        "0.19.1+cu124",
        requires=["torch==2.4.1"],
        files=fake_companion_files("torchvision", "0.19.1+cu124", "2.4.1"),
    )
    prefix = tmp_path / "env"
    _venv(prefix)
    python = str(prefix / "bin" / "python")
    env = _clean_env()
    env = {k: v for k, v in env.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            str(torch),
            str(vision),
        ],
        check=True,
        env=env,
        timeout=300,
    )
    result = _torchsmith(
        "doctor", "--python", python, "--json", "--gpu", "8.6", "--driver", "550.54.14", env=_clean_env()
    )
    assert result.returncode == ExitCode.PROBLEMS_FOUND, result.stderr
    data = json.loads(result.stdout)["data"]
    hit = next(f for f in data["findings"] if f["code"] == "companion-abi-mismatch")
    assert (
        hit["facts"][1]["text"]
        == "torchvision 0.19.1+cu124 is built for torch ==2.4.1, but torch 2.5.1+cu124 is installed"
    )
    site = next(prefix.glob("lib/python3*/site-packages"))
    assert hit["facts"][1]["source"] == f"{site}/torchvision-0.19.1+cu124.dist-info/METADATA Requires-Dist"
    # The stand-in torch imports: the dynamic checks ran (no GPU visible to it here).
    assert data["environment"]["import"]["status"] == "ok"
    assert data["environment"]["torch"]["cuda"] == "12.4"


def test_human_output_names_a_repeated_fix_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write_torch(site, "2.5.1+cpu")
    write_dist(site, "torchvision", "0.19.1", requires=["torch==2.4.1"])
    for key, value in path_env(site, NO_COLOR="1").items():
        monkeypatch.setenv(key, value)
    assert (
        main(["doctor", "--python", sys.executable, "--quick", "--gpu", "8.6", "--driver", "550.54.14", "-v"])
        == 4
    )
    out = capsys.readouterr().out
    assert out.count("    fix:\n") == 2  # cpu-build's install, and the guard
    assert "    fix: the same as for cpu-build-on-gpu-host above" in out
