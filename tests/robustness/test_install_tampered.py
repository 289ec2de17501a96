"""A file of the torch step that is not the one the torch index lists is refused, with real pip
and real uv.

The local index serves other bytes for ``torchtriton-3.3.1`` than the file its listing names
(and hashes): a mirror or proxy that swapped it on the way. The replacement is a well-formed
wheel whose code records every interpreter start. pip checks what it fetched against the listing
(its report); uv, which writes no report, installs hash-checked pins read from the listing
(``--require-hashes``). Either way the install stops with ``install-provenance`` or the
installer's own hash refusal, the new environment is removed, and the swapped code never ran.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest
from tests.robustness.harness import FAILURES, TALLY
from tests.support.pkgindex import IndexServer, build_wheel

pytestmark = pytest.mark.slow

WHEEL = "torchtriton-3.3.1-py3-none-any.whl"


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_a_swapped_file_of_the_torch_step_is_refused_and_never_runs(
        installer: str, package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path) -> None:
    mark = 'import os; p = os.environ.get("TORCHSMITH_TEST_EVIL_MARK"); p and open(p, "a").write("ran\\n")\n'
    swapped = build_wheel(tmp_path / "swapped", "torchtriton", "3.3.1",
                          files={"torchtriton/__init__.py": mark, "torchtriton-swapped.pth": mark})
    env = dict(installer_env)
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")
    env.update(TORCHSMITH_FAKE_CUDA_CC="8.6", TORCHSMITH_TEST_EVIL_MARK=str(tmp_path / "ran"),
               PIP_CACHE_DIR=str(tmp_path / "cache" / "pip"), UV_CACHE_DIR=str(tmp_path / "cache" / "uv"))
    venv = tmp_path / "venv"
    package_index.tampered[WHEEL] = Path(swapped).read_bytes()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "torchsmith", "install", "--yes", "--json", "--torch-index",
             package_index.url + "/pytorch", "--venv", str(venv), "--installer", installer,
             "--gpu", "8.6", "--driver", "570.86.10", "torch==2.7.1"],
            env=env, capture_output=True, text=True, timeout=240, check=False)
    finally:
        package_index.tampered.clear()
    errors = json.loads(proc.stdout)["errors"] if proc.stdout.startswith("{") else []
    code = errors[0]["code"] if errors else None
    problems = []
    if proc.returncode != 1 or code != "install-provenance":
        problems.append(f"exit {proc.returncode}, {code}: {proc.stdout[-400:]} {proc.stderr[-400:]}")
    if (tmp_path / "ran").exists():
        problems.append("the swapped code ran")
    if venv.exists():
        problems.append("the new environment was kept")
    TALLY["clean" if not problems else "data-lost"] += 1
    if problems:
        FAILURES.append(f"{installer}: a swapped torch-step file: {problems}")
    assert not problems


def test_uv_refuses_a_torch_index_that_lists_no_hashes_before_changing_anything(
        package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path) -> None:
    """What uv fetched cannot be checked then (it reports nothing); pip can still check the URL."""
    env = dict(installer_env, UV_CACHE_DIR=str(tmp_path / "cache"))
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")
    venv = tmp_path / "venv"
    package_index.hashless = True
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "torchsmith", "install", "--yes", "--json", "--torch-index",
             package_index.url + "/pytorch", "--venv", str(venv), "--installer", "uv", "--no-gpu",
             "torch==2.7.1"], env=env, capture_output=True, text=True, timeout=240, check=False)
    finally:
        package_index.hashless = False
    error = json.loads(proc.stdout)["errors"][0]
    ok = proc.returncode == 1 and error["code"] == "install-provenance" and not venv.exists()
    TALLY["clean" if ok else "data-lost"] += 1
    assert ok and "lists without a sha256 torch 2.7.1+cpu" in error["message"], proc.stdout
