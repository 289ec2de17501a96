"""Every external tool's output, spoiled every way (tests/robustness/corpus.py), through the CLI.

Fast: ``probe`` over every (tool, spoiler), and one more command per pair in rotation. Slow: every
command over every pair.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from tests.robustness.corpus import SLOTS, Slot, Spoiled, spoiled_capture, spoilers, valid_text
from tests.robustness.harness import check, run_cli

EXPLAIN_TEXT = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def _commands(tmp: Path, host: str) -> List[List[str]]:
    return [
        ["plan", "--json", "--host", host],
        ["matrix", "--json", "--host", host],
        ["explain", "--json", "--host", host, EXPLAIN_TEXT],
        ["install", "--dry-run", "--json", "--venv", str(tmp / "venv"), "--host", host],
        ["fleet", "--json", host],
        ["build-env", "--json", "--cuda", "--host", host],
        ["plan", "--host", host],  # human output: every string of the capture is printed
    ]


_SLOW_ONLY = [["summary", "--json"], ["doctor", "--json", "--quick"]]
CASES: List[Tuple[Slot, Spoiled, int]] = []
for _slot in SLOTS:
    for _number, _spoiled in enumerate(spoilers(valid_text(_slot))):
        CASES.append((_slot, _spoiled, _number))


def _ids(case: Tuple[Slot, Spoiled, int]) -> str:
    return f"{case[0].tool}: {case[1].how}"


def _write(tmp_path: Path, slot: Slot, spoiled: Spoiled) -> str:
    path = tmp_path / "capture.json"
    path.write_text(json.dumps(spoiled_capture(slot, spoiled)), encoding="utf-8")
    return str(path)


def _bounded_profile(envelope: Dict[str, Any]) -> None:
    """The profile stays small and sane whatever the tool printed."""
    assert len(json.dumps(envelope)) < 3_000_000
    nvidia = envelope["data"].get("nvidia") or {}
    rocm = envelope["data"].get("rocm") or {}
    assert len(nvidia.get("gpus") or []) <= 256 and len(rocm.get("gpus") or []) <= 256


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_probe_and_one_more_command_survive(case: Tuple[Slot, Spoiled, int], tmp_path: Path) -> None:
    slot, spoiled, number = case
    host = _write(tmp_path, slot, spoiled)
    label = f"{slot.tool} / {spoiled.how}"
    outcome = run_cli(["probe", "--json", "--host", host], label=f"probe: {label}")
    check(outcome)
    assert outcome.envelope is not None
    _bounded_profile(outcome.envelope)
    commands = _commands(tmp_path, host)
    argv = commands[number % len(commands)]
    check(run_cli(argv, label=f"{argv[0]}: {label}"))


@pytest.mark.slow
@pytest.mark.parametrize("slot", SLOTS, ids=lambda slot: slot.tool)
def test_every_command_survives(slot: Slot, tmp_path: Path) -> None:
    """Every command over every spoiler of one tool; summary and doctor (which run the target
    interpreter, about a second each) over one spoiler in rotation."""
    for number, spoiled in enumerate(spoilers(valid_text(slot))):
        host = _write(tmp_path, slot, spoiled)
        argv_list = _commands(tmp_path, host)
        argv_list.append([*_SLOW_ONLY[number % len(_SLOW_ONLY)], "--host", host] if number < 2 else [])
        for argv in filter(None, argv_list):
            check(run_cli(argv, label=f"{argv[0]}: {slot.tool} / {spoiled.how}"))
