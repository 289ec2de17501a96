"""One answer: the summary, `plan`, doctor's fix, `install` and `fleet` give the same stack, over a
matrix of machines and pip/uv configurations, each test building its own configuration (this
machine's own pip.conf never reaches it)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from torchsmith.cli import main

HOSTS = Path(__file__).parent / "hosts"

# Machines as this one's own facts (TORCHSMITH_* correct detection; they describe no other machine).
MACHINES: Dict[str, Dict[str, str]] = {
    "cpu": {"TORCHSMITH_NO_GPU": "1"},
    "h100-drv580": {"TORCHSMITH_GPUS": "9.0:NVIDIA H100 80GB HBM3", "TORCHSMITH_DRIVER": "580.65.06"},
    "gtx1080ti-drv470": {"TORCHSMITH_GPUS": "6.1:NVIDIA GeForce GTX 1080 Ti",
                         "TORCHSMITH_DRIVER": "470.239.06"},
}
CONFIGS = ("none", "pip.conf", "PIP_CONSTRAINT", "uv.toml")


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No pip/uv setting of this machine: an empty HOME, XDG dirs and PIP_CONFIG_FILE."""
    import os

    for name in list(os.environ):
        if name.startswith(("PIP_", "UV_", "TORCHSMITH_")) or name in ("VIRTUAL_ENV", "CONDA_PREFIX"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "no-system-config"))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _configure(config: str, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A corporate-style setting: a global cap on torch, from where `config` says."""
    constraints = root / "constraints.txt"
    constraints.write_text("# site pins\ntorch<=2.3.1\ntorchvision<=0.18.1\nnumpy<3\n")
    if config == "pip.conf":
        conf = root / "pip.conf"
        conf.write_text(f"[global]\nconstraint = {constraints}\nextra-index-url = https://mirror.invalid/simple\n")
        monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    elif config == "PIP_CONSTRAINT":
        monkeypatch.setenv("PIP_CONSTRAINT", str(constraints))
    elif config == "uv.toml":
        uv_toml = root / "home" / ".config" / "uv" / "uv.toml"
        uv_toml.parent.mkdir(parents=True)
        uv_toml.write_text('constraint-dependencies = ["torch<=2.3.1", "torchvision<=0.18.1"]\n')


def _json(argv: List[str], capsys: pytest.CaptureFixture[str]) -> Dict[str, Any]:
    main([*argv, "--json"])
    data: Dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _pins(packages: List[Dict[str, Any]]) -> Tuple[str, ...]:
    return tuple(sorted(p["requirement"] for p in packages))


def _pins_in(command: str) -> Tuple[str, ...]:
    return tuple(sorted(word for word in shlex.split(command) if "==" in word))


@pytest.fixture(scope="module")
def pipless_env(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A venv without pip and without torch, as `uv venv` makes them."""
    root = tmp_path_factory.mktemp("env") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    return str(root / "bin" / "python")


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_summary_plan_and_doctor_give_one_answer(machine: str, config: str, isolated: Path, pipless_env: str,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in MACHINES[machine].items():
        monkeypatch.setenv(name, value)
    _configure(config, isolated, monkeypatch)
    where = ["--python", pipless_env]
    summary = _json(["summary", *where], capsys)
    plan = _json(["plan", *where], capsys)
    doctor = _json(["doctor", "--quick", *where], capsys)
    install = _json(["install", "--dry-run", *where], capsys)
    stack = _pins(plan["data"]["packages"])
    assert stack and _pins(summary["data"]["plan"]["packages"]) == stack
    assert _pins(install["data"]["packages"]) == stack and install["data"]["target"]["new"] is False
    assert summary["data"]["plan"]["choices"] == plan["data"]["choices"]
    fix = next(f["fix"] for f in doctor["data"]["findings"] if f["code"] == "no-torch")
    # The fix runs where it points: this venv has no pip, so uv installs into it.
    assert fix[-1].startswith(f"uv pip install --python {pipless_env} ")
    assert _pins_in(fix[-1]) == stack
    # Each command names the environment it is about.
    for data in (summary["data"], plan["data"], doctor["data"].get("target")):
        named = data.get("environment", data) if isinstance(data, dict) else {}
        assert named.get("python") == pipless_env and named.get("source") == "--python"
    torch = next(p for p in plan["data"]["packages"] if p["name"] == "torch")
    capped = [r for r in plan["data"]["reasons"] if "caps it" in r]
    if config == "none":
        assert not capped
    elif torch["version"] != "2.3.1":  # an older driver caps harder than the constraint
        assert not any("command line" in r for r in capped)
    else:  # the cap's reason names where it is written, never "(command line)"
        where_written = "constraint-dependencies" if config == "uv.toml" else "constraints.txt:2"
        assert any(where_written in r for r in capped) and not any("command line" in r for r in capped)


@pytest.mark.parametrize("profile", ["linux-x86_64-h100-drv535", "linux-x86_64-cpu-only",
                                     "linux-x86_64-gtx1080ti-drv460", "jetson-orin-jp6.2"])
def test_fleet_and_plan_agree_on_a_described_machine_whatever_this_ones_config(
        profile: str, isolated: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A node's profile is described facts only: this machine's constraints cap nothing there."""
    path = str(HOSTS / f"{profile}.expected.json")
    answers = []
    for config in ("none", "pip.conf"):
        _configure(config, isolated, monkeypatch)
        plan = _json(["plan", "--host", path], capsys)
        fleet = _json(["fleet", path], capsys)
        group = fleet["data"]["node_types"][0]["plan"]
        assert _pins(group["packages"]) == _pins(plan["data"]["packages"])
        # plan's commands carry --host (pasted, they describe the same node); a node type has no one file
        assert group["choices"] == [c.replace(f" --host {path})", ")") for c in plan["data"]["choices"]]
        assert plan["data"]["environment"]["python"] is None  # no local environment is meant
        assert not any("constraints.txt" in line for line in plan["data"]["reasons"] + plan["warnings"])
        answers.append(_pins(plan["data"]["packages"]))
    assert answers[0] == answers[1]


def test_a_gpu_described_by_flags_takes_no_local_cap(isolated: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    flags = ["--gpu", "9.0", "--driver", "580.65.06", "--python", "3.12"]
    free = _json(["plan", *flags], capsys)
    _configure("pip.conf", isolated, monkeypatch)
    capped_here = _json(["plan", *flags], capsys)
    assert _pins(free["data"]["packages"]) == _pins(capped_here["data"]["packages"])
    said = capped_here["data"]["reasons"] + capped_here["warnings"]
    assert not any("constraints.txt" in line for line in said)
    # The same flags with this machine's own environment named: its constraints apply.
    own = _json(["plan", "--gpu", "9.0", "--driver", "580.65.06", "--python", sys.executable], capsys)
    assert any("constraints.txt:2" in r for r in own["data"]["reasons"])


def test_every_cap_names_where_it_is_written(isolated: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A requirements file's line, a pip.conf constraint, the command line: each cap says which."""
    reqs = isolated / "reqs.txt"
    reqs.write_text("numpy\ntorch<2.3\n")
    from_file = _json(["plan", "--no-gpu", "-r", str(reqs)], capsys)
    assert any(f"({reqs}:2) caps it" in r for r in from_file["data"]["reasons"])
    typed = _json(["plan", "--no-gpu", "torch<2.3"], capsys)
    assert any("(command line) caps it" in r for r in typed["data"]["reasons"])
    _configure("pip.conf", isolated, monkeypatch)
    both = _json(["plan", "--no-gpu", "torch<2.3"], capsys)
    cap = next(r for r in both["data"]["reasons"] if "caps it" in r)
    assert "command line" in cap or "constraints.txt:2" in cap  # the tighter one caps, named
    summary = _json(["summary", "--no-gpu"], capsys)
    assert summary["data"]["plan"]["packages"] == _json(["plan", "--no-gpu"], capsys)["data"]["packages"]
