"""A dead end's doors within the user's pip/uv constraints (``PIP_CONSTRAINT``, pip.conf, uv):
pip/uv apply them to a door's command too, so each door names a stack they allow, or says
which cap blocks it and where that cap is written. A described machine takes no local caps."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from tests.cluster.profiles import node

from torchsmith.cli import main
from torchsmith.kb import load_kb
from torchsmith.machine import EnvInfo, Machine
from torchsmith.plan.api import make_plan
from torchsmith.plan.model import Door, Plan, Request


def _cli(args: List[str], capsys: pytest.CaptureFixture[str]) -> Dict[str, Any]:
    code = main(["plan", "--json", "--no-gpu", *args])
    data = json.loads(capsys.readouterr().out)
    assert code == data["exit_code"]
    return dict(data)


def _doors(data: Dict[str, Any], kind: str) -> List[Dict[str, str]]:
    return [d for d in data["data"]["alternatives"] if d["kind"] == kind]


def _command_plans_within(door: Dict[str, str], capsys: pytest.CaptureFixture[str]) -> Dict[str, Any]:
    words = door["command"].split()
    assert words[:2] == ["torchsmith", "plan"]
    again = _cli([w.strip("'") for w in words[2:] if w != "--no-gpu"], capsys)
    assert again["exit_code"] == 0 and not [w for w in again["warnings"] if "forbids" in w]
    return again


def test_the_python_door_keeps_a_release_the_cap_allows(clean_env: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    pins = clean_env / "pins.txt"
    pins.write_text("numpy<3\ntorch<2.5\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(pins))
    data = _cli(["torch>=2.4,<2.6", "--python", "3.14"], capsys)
    assert data["exit_code"] != 0
    door = _doors(data, "python")[0]
    assert door["summary"].startswith("torch 2.4.1 has wheels for Python 3.12")
    assert f"within your pip/uv constraint torch<2.5 ({pins}:2 (PIP_CONSTRAINT))" in door["summary"]
    again = _command_plans_within(door, capsys)
    assert next(p["version"] for p in again["data"]["packages"] if p["name"] == "torch") == "2.4.1"
    # Where the cap allows no release the pins allow, the door says which cap blocks it.
    pins.write_text("torch<2.0\n")
    door = _doors(_cli(["torch>=2.4,<2.6", "--python", "3.14"], capsys), "python")[0]
    assert door["summary"].endswith(f"but your pip/uv constraint torch<2.0 ({pins}:1 (PIP_CONSTRAINT)) "
                                    "forbids it: change that first")


def test_the_companion_door_names_a_torch_the_cap_allows(clean_env: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    pins = clean_env / "pins.txt"
    pins.write_text("torch<2.5\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(pins))
    data = _cli(["torch==2.6.0", "torchvision<0.21", "--python", "3.11"], capsys)
    door = next(d for d in _doors(data, "release") if "pairs with torchvision<0.21" in d["summary"])
    assert door["summary"].startswith("torch 2.4.1 pairs with torchvision<0.21 within your pip/uv "
                                      f"constraint torch<2.5 ({pins}:1 (PIP_CONSTRAINT))")
    _command_plans_within(door, capsys)
    data = _cli(["torch==2.6.0", "torchvision==0.20.1", "--python", "3.11"], capsys)
    door = next(d for d in _doors(data, "release") if "pairs with torchvision==0.20.1" in d["summary"])
    assert door["summary"] == (f"torch 2.5.1 pairs with torchvision==0.20.1; but your pip/uv constraint "
                               f"torch<2.5 ({pins}:1 (PIP_CONSTRAINT)) forbids it: change that first")


def _kepler(pins: Optional[str]) -> Tuple[Plan, Request]:
    """A Tesla K40 (sm_35) on this machine, whose pip.conf names a constraint file holding ``pins``."""
    machine: Machine = node(("Tesla K40m", "3.5", 11441), driver="470.82.01", driver_cuda="11.4",
                            python="3.9.18")
    settings = {"pip /etc/pip.conf [global] constraint": "/etc/pins.txt"} if pins is not None else {}
    machine = dataclasses.replace(machine, env=EnvInfo(index_settings=settings))
    files = {"/etc/pins.txt": pins}
    return make_plan(machine, Request(), load_kb(None), read=files.get)


def _last_binaries(plan: Plan) -> Door:
    return next(d for d in plan.alternatives if "is the newest build with kernels for sm_35" in d.summary)


def test_the_last_binaries_door_for_this_gpu_is_within_the_cap() -> None:
    newest = _last_binaries(_kepler(None)[0])
    assert "constraint" not in newest.summary
    newest_torch = newest.change.split("torch==")[1].split("+")[0]
    below = _last_binaries(_kepler(f"torch<{newest_torch}\n")[0])
    assert below.summary.split()[1] != newest_torch
    assert (f"kernels for sm_35 within your pip/uv constraint torch<{newest_torch} (/etc/pins.txt:1 "
            "(constraint in /etc/pip.conf))") in below.summary
    blocked = _last_binaries(_kepler("torch>=2.0\n")[0])
    assert ("is the newest build with kernels for sm_35; but your pip/uv constraint torch>=2.0 (/etc/"
            "pins.txt:1 (constraint in /etc/pip.conf)) forbids it: change that first") in blocked.summary
