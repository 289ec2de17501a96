"""`torchsmith plan` and `torchsmith matrix` from the command line, in process and end to end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any, Dict, List

import pytest
from packaging.requirements import Requirement
from tests.plan.plan_hosts import host

from torchsmith.cli import main
from torchsmith.output import ExitCode


def profile(tmp_path, name: str = "host.json", **spec: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(host(**spec).to_json()), encoding="utf-8")
    return str(path)


def run_json(capsys, argv: List[str]) -> Dict[str, Any]:
    code = main(argv)
    out = capsys.readouterr().out
    envelope = json.loads(out)
    assert envelope["exit_code"] == code
    return envelope


def test_plan_json_envelope(tmp_path, capsys) -> None:
    path = profile(tmp_path, gpus=["6.1:NVIDIA GeForce GTX 1080"], driver="580.65.06")
    envelope = run_json(capsys, ["plan", "--host", path, "--json"])
    assert envelope["command"] == "plan" and envelope["status"] == "ok" and envelope["exit_code"] == 0
    data = envelope["data"]
    assert data["status"] == "ok"
    torch = data["packages"][0]
    assert torch["name"] == "torch" and torch["variant"] == "cu126"
    assert torch["index_url"].endswith("/cu126")
    assert data["reasons"] and all("\n" not in line for line in data["reasons"])
    assert {"candidate", "reason", "code"} <= set(data["rejected"][0])
    assert "arch-not-compiled" in {r["code"] for r in data["rejected"]}
    assert data["host"]["gpus"][0]["compute_capability"] == "6.1"
    assert data["host"]["driver"] == "580.65.06"
    assert set(data["commands"]) >= {"pip", "uv", "conda", "pixi"}
    assert any("--index-url" in line and "cu126" in line for line in data["commands"]["pip"])
    assert not any("--extra-index-url" in line for line in data["commands"]["pip"])
    assert envelope["kb_version"]


def test_no_solution_exits_3(tmp_path, capsys) -> None:
    path = profile(tmp_path, gpus=["12.0:NVIDIA GeForce RTX 5070 Ti"], driver="580.65.06")
    envelope = run_json(capsys, ["plan", "--host", path, "--json", "torch<2.7", "torchvision"])
    assert envelope["exit_code"] == ExitCode.NO_SOLUTION == 3
    assert envelope["data"]["status"] == "no-solution"
    assert envelope["data"]["packages"] == [] and envelope["data"]["commands"] == {}
    assert "conflicts-with-requirement" in {r["code"] for r in envelope["data"]["rejected"]}


@pytest.mark.parametrize("garbage", ["torch>>2", "torch==2.*.1", "[cuda]", "torch @ ./local.whl"])
def test_garbage_requirement_is_a_usage_error(tmp_path, capsys, garbage: str) -> None:
    path = profile(tmp_path)
    assert main(["plan", "--host", path, garbage]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error[requirement-invalid]: ")
    assert "Traceback" not in err


def test_requirements_file_and_project(tmp_path, capsys) -> None:
    path = profile(tmp_path, gpus=["8.9:NVIDIA GeForce RTX 4090"], driver="550.54.14")
    req = tmp_path / "requirements.txt"
    req.write_text("torch<2.2\n", encoding="utf-8")
    project = tmp_path / "pyproject.toml"
    project.write_text('[project]\nname = "demo"\ndependencies = ["torchvision"]\n', encoding="utf-8")
    envelope = run_json(capsys, ["plan", "--host", path, "--json", "-r", str(req), "--project", str(project)])
    names = {p["name"]: p for p in envelope["data"]["packages"]}
    assert names["torch"]["version"] == "2.1.2" and names["torchvision"]["version"] == "0.16.2"
    assert "torchaudio" not in names


def test_bad_requirements_file_is_one_line(tmp_path, capsys) -> None:
    path = profile(tmp_path)
    req = tmp_path / "r.txt"
    req.write_text("torch\n!!!\n", encoding="utf-8")
    assert main(["plan", "--host", path, "-r", str(req)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "r.txt:2" in err.splitlines()[0]


def test_torch_index_mirror_flag_and_environment(tmp_path, capsys, monkeypatch) -> None:
    path = profile(tmp_path)
    envelope = run_json(capsys, ["plan", "--host", path, "--json", "--torch-index", "http://127.0.0.1:9/pt"])
    assert envelope["data"]["packages"][0]["index_url"] == "http://127.0.0.1:9/pt/cpu"
    monkeypatch.setenv("TORCHSMITH_TORCH_INDEX", "http://mirror.invalid/whl/")
    envelope = run_json(capsys, ["plan", "--host", path, "--json"])
    assert envelope["data"]["packages"][0]["index_url"] == "http://mirror.invalid/whl/cpu"
    assert all("download.pytorch.org" not in line for line in envelope["data"]["commands"]["pip"])


def test_format_requirements_parses(tmp_path, capsys) -> None:
    path = profile(tmp_path, gpus=["8.6:NVIDIA GeForce RTX 3090"], driver="580.65.06")
    assert main(["plan", "--host", path, "--format", "requirements"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip() and not line.startswith(("#", "-"))]
    parsed = [Requirement(line) for line in lines]
    assert "torch" in {r.name for r in parsed}


def test_unknown_format_is_an_error(tmp_path, capsys) -> None:
    path = profile(tmp_path)
    assert main(["plan", "--host", path, "--format", "nope"]) == ExitCode.USAGE
    assert "unknown-format" in capsys.readouterr().err


def test_human_output_names_the_choice(tmp_path, capsys) -> None:
    path = profile(tmp_path, platform="macos-x86_64", python="3.11")
    assert main(["plan", "--host", path]) == 0
    out = capsys.readouterr().out
    assert "torch==2.2.2" in out and "Why:" in out and "Turned down:" not in out
    assert main(["plan", "--host", path, "-v"]) == 0
    assert "Turned down:" in capsys.readouterr().out


def test_matrix_json(tmp_path, capsys) -> None:
    path = profile(tmp_path, gpus=["6.1:NVIDIA GeForce GTX 1080"], driver="580.65.06")
    envelope = run_json(capsys, ["matrix", "--host", path, "--json", "--releases", "4"])
    rows = envelope["data"]["rows"]
    assert len({r["torch"] for r in rows}) == 4
    by = {(r["torch"], r["variant"]): r for r in rows}
    works = [r for r in rows if r["works"]]
    assert works and all(r["variant"] == "cu126" or r["kind"] == "cpu" for r in works)
    assert any(r["code"] == "arch-not-compiled" for r in rows if r["variant"].startswith("cu13"))
    assert all(r["reason"] for r in by.values())


def test_matrix_human(tmp_path, capsys) -> None:
    path = profile(tmp_path, rocm_gfx=["gfx1100"])
    assert main(["matrix", "--host", path]) == 0
    out = capsys.readouterr().out
    assert "rocm" in out and " yes " in out and " no " not in out and "`--all` lists them" in out
    assert main(["matrix", "--host", path, "--all"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("  2.")]
    marks = [row[2] for row in rows]
    assert "no" in marks and marks == sorted(marks, key=lambda mark: mark != "yes")  # runnable first
    runnable = [tuple(int(n) for n in row[0].split(".")) for row in rows if row[2] == "yes"]
    assert runnable == sorted(runnable, reverse=True)  # newest first


def test_existing_environment_is_read_without_importing_torch(tmp_path, capsys, monkeypatch) -> None:
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("raise SystemExit('torch must not be imported')\n",
                                                 encoding="utf-8")
    (site / "torch" / "version.py").write_text("__version__ = '2.5.1+cu124'\ncuda = '12.4'\n",
                                               encoding="utf-8")
    info = site / "torch-2.5.1+cu124.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu124\n",
                                   encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(site))
    envelope = run_json(capsys, ["plan", "xformers", "--json", "--python", sys.executable,
                                 "--platform", "linux-x86_64", "--gpu", "8.9:RTX 4090",
                                 "--driver", "580.65.06"])
    names = {p["name"]: p for p in envelope["data"]["packages"]}
    if sys.version_info >= (3, 9):
        assert names["torch"]["version"] == "2.5.1" and names["torch"]["variant"] == "cu124"
        assert names["xformers"]["version"] == "0.0.28.post3"
    else:  # torch 2.5 has no Python 3.8 wheels: the plan says the installed torch must change
        assert any("installed torch 2.5.1+cu124 must change" in w for w in envelope["warnings"])


@pytest.mark.slow
def test_end_to_end_subprocess(tmp_path) -> None:
    path = profile(tmp_path, platform="linux-aarch64", gpus=["9.0:NVIDIA GH200 480GB"], driver="580.65.06")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHSMITH_")}
    done = subprocess.run([sys.executable, "-m", "torchsmith", "plan", "--host", path, "--json"],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["data"]
    assert data["accelerator"] == "cuda" and data["packages"][0]["index_url"].startswith("https://")


def _plan_both_ways(tmp_path, capsys, **spec: Any) -> Any:
    path = profile(tmp_path, **spec)
    data = run_json(capsys, ["plan", "--host", path, "--json"])["data"]
    main(["plan", "--host", path, "-v"])
    return data, capsys.readouterr().out


def test_a_plan_on_uncertain_data_says_so_to_people(tmp_path, capsys) -> None:
    from torchsmith.kb import load_kb

    kb = load_kb(packaged_only=True)
    data, out = _plan_both_ways(tmp_path, capsys, gpus=["8.9:NVIDIA GeForce RTX 4090"], driver="595.45.04")
    torch = data["packages"][0]
    release = kb.release(torch["version"])
    build = release.variant(data["variant"])
    toolkit = kb.cuda_release(build.cuda)
    expected = [flag for flag in (release.uncertain, build.uncertain, toolkit.uncertain) if flag]
    assert len(data["uncertain"]) == len(expected) > 0
    assert "Unverified (no primary source confirms" in out
    assert all(f"  - {line}\n" in out for line in data["uncertain"])


def test_a_plan_on_verified_data_has_no_unverified_section(tmp_path, capsys) -> None:
    data, out = _plan_both_ways(tmp_path, capsys, platform="macos-x86_64", python="3.11")
    assert data["uncertain"] == [] and "Unverified" not in out


def test_a_choice_names_a_command_for_the_described_machine(capsys) -> None:
    """"with torchaudio instead: ... (torchsmith plan torch torchvision torchaudio)" pasted without
    --host would plan for the machine torchsmith runs on: the command carries --host, in plan,
    its JSON and the summary alike."""
    h100 = os.path.join(os.path.dirname(__file__), "..", "hosts", "linux-x86_64-h100-drv535.json")
    data = run_json(capsys, ["plan", "--host", h100, "--json"])["data"]
    [choice] = [c for c in data["choices"] if "with torchaudio instead" in c]
    assert choice.endswith(f"(torchsmith plan torch torchvision torchaudio --host {h100})")
    summary = run_json(capsys, ["--host", h100, "--json"])["data"]["plan"]
    assert choice in summary["choices"]
    assert main(["install", "--dry-run", "--host", h100]) == 0
    assert " ".join(choice.split()) in " ".join(capsys.readouterr().out.split())


def test_one_build_turned_down_is_singular(capsys) -> None:
    """`plan 'torch>=99'`: "1 build turned down: `-v` says why it does not run here"."""
    assert main(["plan", "torch>=99", "--no-gpu", "--python", "3.11", "--platform", "linux-x86_64"]) == 3
    out = capsys.readouterr().out
    line = re.search(r"^(\d+) builds? turned down: `-v` says why (it|each) does not run here$", out, re.M)
    assert line is not None, out
    agreeing = ("build", "it") if line.group(1) == "1" else ("builds", "each")
    assert (line.group(0).split()[1], line.group(2)) == agreeing


def test_a_conda_answer_names_the_release_its_command_installs(capsys) -> None:
    """--installer conda for a torch newer than the conda data: the headline names the pytorch the
    command installs (not the pip plan's torch) and says why."""
    h100 = os.path.join(os.path.dirname(__file__), "..", "hosts", "linux-x86_64-h100-drv535.json")
    data = run_json(capsys, ["plan", "--host", h100, "--installer", "conda", "--json"])["data"]
    forge = data["conda"].get("pytorch-gpu")
    torch = next(p["version"] for p in data["packages"] if p["name"] == "torch")
    if forge == torch:
        pytest.skip(f"the conda data has torch {torch}: one release for both")
    assert main(["plan", "--host", h100, "--installer", "conda"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Install pytorch {forge} (CUDA {data['conda']['cuda-version']}) from conda-forge")
    assert f"pytorch-gpu={forge}" in out and f"torch {torch} " not in out.split("\n")[0]
