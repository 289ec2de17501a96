"""A real ``torchsmith install`` into an existing environment, with real pip and real uv, stopped
by kill -9, SIGHUP or SIGQUIT while the installer is replacing torch.

The local index holds back a later download, so the stop comes at a known point without timing:
torch 2.7.1 is already in place, the install is not complete. SIGHUP and SIGQUIT roll back at
once (exit 130); after kill -9 the installer dies with torchsmith and the next command (``guard
status``) rolls back and says so. Either way the environment imports the torch it had, its lock
and guard still name it, and nothing is left beside it. (Every file operation of torchsmith's own
is tried in test_install_journal.py; this is the same with the real installers in the middle.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from tests.robustness.harness import FAILURES, TALLY
from tests.support.envtools import tree_digest
from tests.support.pkgindex import IndexServer

pytestmark = pytest.mark.slow

STOPS: Dict[str, Tuple[signal.Signals, ...]] = {"pip": (signal.SIGKILL, signal.SIGHUP),
                                                 "uv": (signal.SIGKILL, signal.SIGQUIT)}


def _torchsmith(env: Dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchsmith", *args], env=env, capture_output=True,
                          text=True, timeout=240, check=False)


def _imports(python: Path) -> str:
    code = "import torch; print(torch.__version__)"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _described(venv: Path) -> Tuple[str, str, str]:
    """What imports, what the lock names, what the guard pins."""
    lock = json.loads((venv / "torchsmith.lock.json").read_text())
    locked = {p["name"]: p["version"] for p in lock["packages"]}["torch"]
    guard = (venv / "torchsmith-guard.txt").read_text().splitlines()
    pinned = next(line.split("==")[1] for line in guard if line.startswith("torch=="))
    return _imports(venv / "bin" / "python"), locked, pinned


@pytest.mark.parametrize("installer", sorted(STOPS))
def test_an_install_stopped_while_the_installer_replaces_torch_leaves_the_old_stack_whole(
        installer: str, package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path) -> None:
    env = dict(installer_env)
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")
    # Caches of its own: the held-back wheel is asked for on every try.
    env.update(PIP_CACHE_DIR=str(tmp_path / "cache" / "pip"), UV_CACHE_DIR=str(tmp_path / "cache" / "uv"))
    venv = tmp_path / "envs" / "venv"
    python = venv / "bin" / "python"
    base = ["install", "--yes", "--json", "--installer", installer, "--torch-index",
            package_index.url + "/pytorch", "--no-gpu"]
    made = _torchsmith(env, *base, "--venv", str(venv), "torch==2.6.0")
    assert made.returncode == 0, made.stderr
    before = tree_digest(venv)
    described = _described(venv)
    assert described == ("2.6.0+cpu",) * 3
    for stop in STOPS[installer]:
        package_index.stall("tabulate-")
        argv = [sys.executable, "-m", "torchsmith", *base, "--python", str(python), "torch==2.7.1",
                "tabulate"]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert package_index.stall_hit.wait(120), "the installer never asked for the held-back wheel"
            assert tree_digest(venv) != before  # torch 2.7.1 is in place: the environment changed
            os.kill(proc.pid, stop)
            out, _err = proc.communicate(timeout=120)
        finally:
            package_index.release()
            if proc.poll() is None:
                proc.kill()
        problems: List[str] = []
        said = ""
        if stop == signal.SIGKILL:
            if proc.returncode != -signal.SIGKILL:
                problems.append(f"exit {proc.returncode}")
            status = _torchsmith(env, "guard", "status", "--json", "--python", str(python))
            warnings = json.loads(status.stdout)["warnings"] if status.stdout else [status.stderr]
            said = warnings[0] if warnings else ""
            if "stopped part-way: rolled back" not in said or "(torch 2.6.0+cpu)" not in said:
                problems.append(f"the next command said {warnings}")
        else:
            error = (json.loads(out)["errors"] or [{}])[0] if out.startswith("{") else {}
            said = str(error.get("message"))
            ended = (proc.returncode, error.get("code"))
            if ended != (130, "install-interrupted") or "restored exactly" not in said:
                problems.append(f"exit {proc.returncode}: {out[-500:]}")
        if tree_digest(venv) != before:
            problems.append("the environment is not as it was")
        if _described(venv) != described:
            problems.append(f"imports/lock/guard: {_described(venv)}")
        if os.listdir(venv.parent) != ["venv"]:
            problems.append(f"left beside it: {os.listdir(venv.parent)}")
        TALLY["clean" if not problems else "data-lost"] += 1
        if problems:
            FAILURES.append(f"{installer} install stopped by {stop.name}: {problems}")
        assert not problems, f"{installer}, {stop.name}: {problems} ({said})"
