"""The README followed as a new user would: the quick start puts torchsmith into ./.venv of the
clone and runs it; then the README's install command. torchsmith's own environment is never
changed unless --python names it, and every command says which environment it acts on."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Dict, List

import pytest
from tests.support.envtools import tree_digest
from tests.support.pkgindex import IndexServer

import torchsmith

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[2] / "README.md"


def _quick_start(clone: Path) -> Path:
    """The state `python3 -m venv .venv && .venv/bin/pip install -q .` leaves, without a
    download: torchsmith (this checkout) and its dependencies importable in ./.venv."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(clone / ".venv")], check=True)
    site = next((clone / ".venv" / "lib").glob("python*/site-packages"))
    source = Path(torchsmith.__file__).resolve().parents[1]
    (site / "torchsmith-checkout.pth").write_text(f"{source}\n{sysconfig.get_paths()['purelib']}\n")
    return clone / ".venv" / "bin" / "python"


def _readme_command(pattern: str) -> List[str]:
    """The README's command line matching ``pattern`` (without its comment), as argv."""
    line = next(line for line in README.read_text().splitlines() if re.search(pattern, line))
    return line.split("#", 1)[0].split()


def test_quick_start_then_install_leaves_torchsmiths_own_venv_alone(
        package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path) -> None:
    assert _readme_command(r"python3 -m venv \.venv && \.venv/bin/pip install")  # the quick start is there
    clone = tmp_path / "clone"
    clone.mkdir()
    own = _quick_start(clone)
    env = {k: v for k, v in installer_env.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")

    def torchsmith_(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(own), "-m", "torchsmith", *args], cwd=clone, env=env,
                              capture_output=True, text=True, timeout=300, check=False)

    summary = torchsmith_("--json")
    assert summary.returncode == 0, summary.stderr
    named = json.loads(summary.stdout)["data"]["environment"]
    assert named["source"].startswith("torchsmith's own") and named["prefix"] == str(clone / ".venv")
    before = tree_digest(clone / ".venv")

    # Plain `install` here would land in torchsmith's own ./.venv: refused, with the way on.
    refused = torchsmith_("install", "--yes", "--json")
    assert refused.returncode == 2
    error = json.loads(refused.stdout)["errors"][0]
    assert "torchsmith's own environment" in error["message"] and "--venv" in error["hint"]

    # The README's install command, against the local index, with a torch it serves.
    argv = _readme_command(r"torchsmith install --venv")
    assert argv[0] == ".venv/bin/torchsmith"
    local = ["--json", "--no-gpu", "--torch-index", package_index.url + "/pytorch", "torch==2.6.0"]
    dry = torchsmith_(*argv[1:], "--dry-run", *local)
    assert dry.returncode == 0, dry.stderr
    target = json.loads(dry.stdout)["data"]["target"]
    assert target["new"] and target["prefix"] == str(clone / argv[argv.index("--venv") + 1])
    assert target["python"] == target["prefix"] + "/bin/python"
    done = torchsmith_(*argv[1:], *local)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["data"]
    assert data["verify"]["ok"] and data["guard"].startswith(target["prefix"])
    # torchsmith's own venv: byte for byte as the quick start left it (no torch, no guard).
    assert tree_digest(clone / ".venv") == before
    # Named with --python, the new environment is what the summary talks about.
    again = torchsmith_("--json", "--python", target["python"])
    assert json.loads(again.stdout)["data"]["environment"]["source"] == "--python"
    assert "torch 2.6.0" in " ".join(json.loads(again.stdout)["data"]["doctor"])
