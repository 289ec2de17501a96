"""install and guard on the command line, in process, without installing anything."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.output import ExitCode

# Plans for Python 3.11 whatever runs the tests (torch 2.6 has no wheel for 3.8).
INDEX = ["--torch-index", "http://127.0.0.1:9/pytorch", "--python", "3.11"]


def test_dry_run_shows_the_plan_and_changes_nothing(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    venv = tmp_path / "venv"
    code = main(["install", "--dry-run", "--json", "--venv", str(venv), "--no-gpu", "torch==2.6.0",
                 "torchvision", "ftfy", *INDEX])
    data = json.loads(capsys.readouterr().out)["data"]
    assert code == ExitCode.OK and data["dry_run"] is True
    assert [p["name"] for p in data["packages"]] == ["torch", "torchvision"]
    assert data["packages"][0]["index_url"] == "http://127.0.0.1:9/pytorch/cpu"
    assert not venv.exists()


def test_human_dry_run_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--dry-run", "--no-gpu", "--installer", "pip", "torch==2.6.0", *INDEX]) == 0
    out = capsys.readouterr().out
    assert "torch==2.6.0+cpu" in out and "--index-url http://127.0.0.1:9/pytorch/cpu" in out


def test_no_terminal_and_no_yes_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    venv = tmp_path / "venv"
    code = main(["install", "--json", "--venv", str(venv), "--no-gpu", "torch==2.6.0", *INDEX])
    envelope = json.loads(capsys.readouterr().out)
    assert code == ExitCode.FAILURE
    assert envelope["errors"][0]["code"] == "confirmation-needed"
    assert not venv.exists()


def test_conda_is_not_an_installer_for_install(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--installer", "conda", "--dry-run", "--no-gpu"]) == ExitCode.USAGE
    assert "invalid choice: 'conda'" in capsys.readouterr().err


def test_no_working_stack_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--dry-run", "--no-gpu", "torch==1.0.0", *INDEX]) == ExitCode.NO_SOLUTION


def test_a_garbage_lock_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lock = tmp_path / "lock.json"
    lock.write_text("{")
    assert main(["install", "--lock", str(lock), "--dry-run", "--no-gpu"]) == ExitCode.FAILURE
    assert capsys.readouterr().err.startswith("error[lock-invalid]: the lock")


def test_guard_refuses_a_python_outside_any_environment(capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    base = getattr(sys, "base_prefix", sys.prefix)
    python = os.path.join(base, "bin", os.path.basename(sys.executable))
    if not os.path.exists(python):
        pytest.skip("no base interpreter next to this venv's")
    assert main(["guard", "status", "--python", python]) == ExitCode.FAILURE
    assert "error[target-not-an-environment]" in capsys.readouterr().err


def test_guard_check_needs_a_command_and_understands_only_installs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    assert main(["guard", "check", "--python", sys.executable]) == ExitCode.USAGE
    assert main(["guard", "check", "--python", sys.executable, "--", "ls", "-l"]) == ExitCode.USAGE
    assert "not a pip or uv install command" in capsys.readouterr().err


def test_guard_status_of_an_unguarded_venv(capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    if sys.prefix == getattr(sys, "base_prefix", sys.prefix):
        pytest.skip("the tests are not running in a venv")
    assert main(["guard", "status", "--python", sys.executable]) == ExitCode.OK
    assert "No guard in" in capsys.readouterr().out
