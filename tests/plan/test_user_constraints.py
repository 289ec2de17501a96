"""plan and the user's own constraint files (PIP_CONSTRAINT, pip.conf, UV_CONSTRAINT, uv.toml):
a plan within them when they narrow versions, else a warning naming the file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from packaging.version import Version

from torchsmith.cli import main


def _plan(args: List[str], capsys: pytest.CaptureFixture[str]) -> Dict[str, Any]:
    code = main(["plan", "--json", "--no-gpu", "--python", "3.11", *args])
    data = json.loads(capsys.readouterr().out)
    assert code == data["exit_code"]
    return dict(data)


def _torch(data: Dict[str, Any]) -> Version:
    return Version(next(p["version"] for p in data["data"]["packages"] if p["name"] == "torch"))


def test_unconstrained_plan_is_newer_than_the_constraints_below(clean_env: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert _torch(_plan([], capsys)) >= Version("2.6")


@pytest.mark.parametrize("where", ["PIP_CONSTRAINT", "pip.conf", "UV_CONSTRAINT", "uv.toml"])
def test_a_constraint_that_narrows_torch_is_planned_within(where: str, clean_env: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    constraints = clean_env / "constraints.txt"
    constraints.write_text("# the cluster's pins\nnumpy<3\ntorch<2.6\n")
    if where in ("PIP_CONSTRAINT", "UV_CONSTRAINT"):
        monkeypatch.setenv(where, str(constraints))
        expected = f"{constraints}:3 ({where})"
    elif where == "pip.conf":
        conf = clean_env / "pip.conf"
        conf.write_text(f"[global]\nconstraint = {constraints}\n")
        monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
        expected = f"{constraints}:3 (constraint in {conf})"
    else:
        uv_toml = clean_env / "home" / ".config" / "uv" / "uv.toml"
        uv_toml.parent.mkdir()
        uv_toml.write_text('constraint-dependencies = [\n  "numpy<3",\n  "torch<2.6",\n]\n')
        expected = f"{uv_toml} constraint-dependencies"
    data = _plan([], capsys)
    assert data["exit_code"] == 0 and _torch(data) < Version("2.6")
    # The cap's reason names where the constraint is written, not "(command line)".
    cap = next(r for r in data["data"]["reasons"] if "caps it" in r)
    assert expected in cap and "command line" not in cap


def test_a_constraint_the_request_contradicts_is_named_with_the_way_out(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    constraints = clean_env / "constraints.txt"
    constraints.write_text("torch==2.5.1\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(constraints))
    data = _plan(["torch==2.6.0"], capsys)
    assert data["exit_code"] == 0 and str(_torch(data)) == "2.6.0"
    warning = next(w for w in data["warnings"] if "forbids the planned torch" in w)
    assert f"{constraints}:1 (PIP_CONSTRAINT)" in warning and "change that constraint" in warning
    assert "PIP_CONSTRAINT=" not in warning  # never advise switching constraints off
    assert "\n" not in warning


def test_install_plans_within_them_too(clean_env: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    constraints = clean_env / "constraints.txt"
    constraints.write_text("torch<2.6\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(constraints))
    assert main(["install", "--dry-run", "--json", "--no-gpu", "--python", "3.11"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["data"]["dry_run"] and _torch(data) < Version("2.6")


def test_torchsmiths_own_guard_is_lifted_by_install_not_switched_off(
        clean_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The guard of the environment --python names is read from that environment's pip.conf
    (pip's site configuration), and the way past it is the install that rewrites it."""
    import subprocess
    import sys

    env = tmp_path / "guarded"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    (env / "torchsmith-guard.txt").write_text("# Written by torchsmith\ntorch==2.1.0+cpu\n")
    (env / "pip.conf").write_text(f"[install]\nconstraint = {env / 'torchsmith-guard.txt'}\n")
    code = main(["plan", "--json", "--no-gpu", "--python", str(env / "bin" / "python"), "torch==2.2.0"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and str(_torch(data)) == "2.2.0"
    warning = next(w for w in data["warnings"] if "guard pins torch==2.1.0+cpu" in w)
    assert f"torchsmith install torch==2.2.0 --python {env / 'bin' / 'python'}" in warning
    assert "CONSTRAINT=" not in warning and "UV_NO_CONFIG" not in warning

    # `install` lifts the guard and writes it anew: its pin is no limit there, and no warning.
    code = main(["install", "--dry-run", "--json", "--no-gpu", "--python", str(env / "bin" / "python"),
                 "torch==2.2.0"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and str(_torch(data)) == "2.2.0" and data["data"]["target"]["new"] is False
    assert not any("guard" in w for w in data["warnings"])


@pytest.mark.parametrize("asked", ["whisperx", "bitsandbytes"])
def test_a_constraint_on_torch_applies_when_torch_comes_with_another_package(
        asked: str, clean_env: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """torch not asked for but planned (for whisperx, bitsandbytes): pip applies the constraint to
    the printed commands all the same, so the plan is made within it, as ``plan`` alone is."""
    for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL", "UV_INDEX"):
        monkeypatch.delenv(name, raising=False)
    constraints = clean_env / "constraints.txt"
    constraints.write_text("torch<2.6\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(constraints))
    data = _plan([asked], capsys)
    assert data["exit_code"] == 0 and _torch(data) < Version("2.6")
    assert not any("forbids the planned torch" in w for w in data["warnings"])
    assert any(f"{constraints}:1 (PIP_CONSTRAINT)" in r for r in data["data"]["reasons"])


def test_a_constraint_that_would_refuse_the_command_is_part_of_the_answer(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """pip would refuse the printed command: said with the answer (``!``), not a hidden note."""
    constraints = clean_env / "constraints.txt"
    constraints.write_text("torch==2.5.1\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(constraints))
    assert main(["plan", "torch==2.6.0", "--no-gpu", "--python", "3.11"]) == 0
    out = capsys.readouterr().out
    assert "  ! your constraint torch==2.5.1" in out


def test_a_dead_ends_door_names_a_release_the_users_constraint_allows(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Doors are made before the user's constraints apply: a door pip would refuse is no way out."""
    import shlex

    constraints = clean_env / "constraints.txt"
    constraints.write_text("torch<=2.5.1\n")
    conf = clean_env / "pip.conf"
    conf.write_text(f"[global]\nconstraint = {constraints}\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    data = _plan(["torch>=99"], capsys)
    assert data["data"]["status"] == "no-solution"
    door = next(d for d in data["data"]["alternatives"] if d["kind"] == "release")
    assert door["change"] == "torch>=99 -> torch==2.5.1", door
    assert f"torch<=2.5.1 ({constraints}:1 (constraint in {conf}))" in door["summary"]  # the cap's origin
    # The door is a request that plans, within the constraint: no caution that pip would refuse it.
    argv = shlex.split(door["command"])
    assert argv[:2] == ["torchsmith", "plan"]
    again = _plan(argv[2:], capsys)
    assert again["exit_code"] == 0 and str(_torch(again)) == "2.5.1"
    assert not any("forbids the planned" in w for w in again["warnings"])


@pytest.mark.parametrize("setting", ["pip.conf", "PIP_CONSTRAINT", "none"])
def test_a_profiles_constraint_files_that_cannot_be_read_are_a_caution(
        setting: str, clean_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A profile names the constraint files of the node's pip, not their contents: say so, as
    part of the answer, only when it names one."""
    from torchsmith.machine import Machine, OsInfo, PythonInfo

    profile = Machine(os=OsInfo(system="linux", arch="x86_64"), python=PythonInfo(version="3.11.7")).to_json()
    if setting == "pip.conf":
        profile["env"]["index_settings"] = {"pip /etc/xdg/pip/pip.conf [global] constraint":
                                            "/nodes/pins.txt"}
    elif setting == "PIP_CONSTRAINT":
        profile["env"]["variables"] = {"PIP_CONSTRAINT": "/nodes/pins.txt"}
    path = clean_env / "node.json"
    path.write_text(json.dumps(profile))
    assert main(["plan", "--json", "--host", str(path)]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    said = [w for w in warnings if "cannot read from a profile" in w]
    if setting == "none":
        assert not said
        return
    assert said == ["the node's pip applies constraints from /nodes/pins.txt, which torchsmith cannot "
                    "read from a profile: check them there (pip refuses a pin they forbid)"]
    assert main(["plan", "--host", str(path)]) == 0
    assert "  ! the node's pip applies constraints from /nodes/pins.txt" in capsys.readouterr().out


def test_matrix_marks_the_rows_the_users_constraint_forbids_on_this_machine_only(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from torchsmith.machine import Machine, OsInfo, PythonInfo

    constraints = clean_env / "constraints.txt"
    constraints.write_text("numpy<3\ntorch<2.6\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(constraints))
    cap = f"torch<2.6 ({constraints}:2 (PIP_CONSTRAINT))"
    assert main(["matrix", "--json", "--all", "--releases", "12"]) == 0
    rows = json.loads(capsys.readouterr().out)["data"]["rows"]
    assert rows and all(r["forbidden_by"] == (cap if Version(r["torch"]) >= Version("2.6") else "")
                        for r in rows)
    assert main(["matrix", "--all", "--releases", "12"]) == 0
    out = capsys.readouterr().out
    marks = [line.split()[::2][:2] for line in out.splitlines() if line.startswith("  2.")]
    assert marks and all(mark.endswith("*") == (Version(torch) >= Version("2.6")) for torch, mark in marks)
    assert "  * pip/uv would refuse it here: your constraint torch<2.6" in out
    # A described machine takes no local constraints.
    profile = clean_env / "node.json"
    profile.write_text(json.dumps(Machine(os=OsInfo(system="linux", arch="x86_64"),
                                          python=PythonInfo(version="3.11.7")).to_json()))
    assert main(["matrix", "--json", "--host", str(profile)]) == 0
    assert not any(r["forbidden_by"] for r in json.loads(capsys.readouterr().out)["data"]["rows"])
