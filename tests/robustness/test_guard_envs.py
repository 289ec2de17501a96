"""The guard in awkward real environments.

A path with a space: pip splits ``[install] constraint`` and uv splits ``UV_CONSTRAINT`` on
whitespace, so the guard names its file by a ``file:`` URL there; real pip and real uv still
install, and status and off read that back. Two copies of torch under one name: status compares
what imports with the pin.
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


def test_guard_status_compares_what_imports_with_the_pin(tmp_path: Path) -> None:
    """After `pip install --ignore-installed --no-deps torch==X` the old dist-info stays and
    torch's files are X's: the metadata agrees with the pin, the import does not."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "torch-2.6.0.dist-info").mkdir()
    metadata = "Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0\n"
    (site / "torch-2.6.0.dist-info" / "METADATA").write_text(metadata)
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("raise SystemExit('imported')\n__version__ = '2.6.0'\n")
    write_guard_file(str(venv), {"torch": "2.6.0"}, "test")
    python = str(venv / "bin" / "python")
    argv = [sys.executable, "-m", "torchsmith", "guard", "--json", "status", "--python", python]

    def drift() -> dict:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        return dict(json.loads(proc.stdout)["data"]["drift"])

    assert drift() == {}
    (site / "torch" / "version.py").write_text("__version__ = '2.7.1+cu126'\n")
    assert drift() == {"torch": {"pinned": "2.6.0", "installed": "2.6.0", "imports": "2.7.1+cu126",
                                 "imported_from": str(site / "torch" / "__init__.py")}}
