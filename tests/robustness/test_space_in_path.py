"""A guarded environment whose path holds a space: real pip and real uv still install in it.

pip splits ``[install] constraint`` and uv splits ``UV_CONSTRAINT`` on whitespace, so the guard
names its file by a ``file:`` URL there; status and off must read that back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest
from tests.support.pkgindex import IndexServer

from torchsmith.install.guard import write_guard_file

pytestmark = pytest.mark.slow


def test_a_guarded_venv_under_a_path_with_a_space_still_installs(
        package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path) -> None:
    env = dict(installer_env)
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"  # uv, for the activated shell
    venv = tmp_path / "my envs" / "venv"
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "tqdm==4.67.1"], env=env, check=True)
    write_guard_file(str(venv), {"tqdm": "4.67.1"}, "test")

    def torchsmith(*args: str) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "torchsmith", "guard", "--json", *args, "--python", str(python)]
        return subprocess.run(argv, env=env, capture_output=True, text=True, check=False)

    assert torchsmith("on").returncode == 0
    assert json.loads(torchsmith("status").stdout)["data"]["on"]
    pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "tabulate"], env=env,
                         capture_output=True, text=True, check=False)
    assert pip.returncode == 0, pip.stderr
    uv = subprocess.run(["bash", "-c", f'. "{venv}/bin/activate" && uv pip install colorama'], env=env,
                        capture_output=True, text=True, check=False)
    assert uv.returncode == 0, uv.stderr
    assert torchsmith("off").returncode == 0
    assert not json.loads(torchsmith("status").stdout)["data"]["on"]
    assert not (venv / "pip.conf").exists() and "UV_CONSTRAINT" not in (venv / "bin" / "activate").read_text()
