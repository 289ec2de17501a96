"""Two installs into one environment at once: the second is refused, or waits its turn.

The first install is held inside its transaction by the local index (a stalled download), so
the order is fixed without sleeping: nothing here depends on timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from tests.support.pkgindex import IndexServer

pytestmark = pytest.mark.slow


def _argv(index: IndexServer, *args: str) -> List[str]:
    return [sys.executable, "-m", "torchsmith", "install", "--yes", "--json", "--installer", "uv",
            "--torch-index", index.url + "/pytorch", *args]


def test_a_second_install_is_refused_or_waits_and_the_first_failure_cannot_undo_it(
        package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path) -> None:
    env = dict(installer_env)
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")
    first_env = dict(env, UV_CACHE_DIR=str(tmp_path / "cache"))  # its own cache: it must download
    venv = tmp_path / "venv"
    # The first claims a GPU this machine lacks: it installs, fails verification, removes the venv.
    package_index.stall("torch-")
    first = subprocess.Popen(_argv(package_index, "--venv", str(venv), "--gpu", "8.6", "--driver",
                                   "570.86.10", "torch==2.7.1"),
                             env=first_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    waiter = None
    try:
        assert package_index.stall_hit.wait(120), "the first install never asked for torch"
        refused = subprocess.run(_argv(package_index, "--venv", str(venv), "--no-gpu", "torch==2.7.1"),
                                 env=env, capture_output=True, text=True, timeout=120, check=False)
        error = json.loads(refused.stdout)["errors"][0]
        assert refused.returncode == 1 and error["code"] == "target-busy"
        assert f"pid {first.pid}" in error["message"] and "\n" not in error["message"]
        assert venv.is_dir()  # the refused run touched nothing, not even the half-made venv

        waiter = subprocess.Popen(_argv(package_index, "--venv", str(venv), "--no-gpu", "--wait", "600",
                                        "torch==2.7.1"),
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert waiter.stderr is not None
        shown = []  # the plan comes first (stderr under --json), then the wait
        while not shown or ("waiting" not in shown[-1] and shown[-1]):
            shown.append(waiter.stderr.readline())
        assert f"waiting for pid {first.pid}" in shown[-1], shown
    finally:
        package_index.release()
        out, err = first.communicate(timeout=240)
    failed = json.loads(out)["errors"][0]
    assert first.returncode == 1 and failed["code"] == "verify-failed", err
    assert any("was removed" in line for line in failed["context"])

    out, err = waiter.communicate(timeout=240)
    assert waiter.returncode == 0, err
    data = json.loads(out)["data"]
    assert data["installed"] and data["verify"]["ok"] and data["new_environment"]
    # What the second reported is what is there: the first one's rollback came before it.
    assert (venv / "torchsmith.lock.json").is_file() and (venv / "torchsmith-guard.txt").is_file()
    status = subprocess.run([sys.executable, "-m", "torchsmith", "guard", "--json", "status", "--python",
                             str(venv / "bin" / "python")], env=env, capture_output=True, text=True,
                            check=False)
    assert json.loads(status.stdout)["data"]["on"]
    assert "torch==2.7.1+cpu" in (venv / "torchsmith-guard.txt").read_text()
    assert not any(name.endswith(".torchsmith.lock") for name in os.listdir(tmp_path))
