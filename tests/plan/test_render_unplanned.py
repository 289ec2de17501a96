"""Requirements with no torch-specific build (``numpy``, ``ftfy>=6``, a ``-r`` file's lines) stay in
every render, installed last from the configured index with the torch pins kept; and the
requirements files of a mixed plan, written with ``--out``, install for real with pip and uv.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from tests.plan.plan_hosts import host
from tests.plan.test_render_resolve import installed, new_venv
from tests.support.pkgindex import IndexServer
from tests.support.render import packaged_kb, render, render_files

from torchsmith.cli import main
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.resolve import resolve
from torchsmith.plan.steps import install_steps
from torchsmith.render import SlurmOptions

PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
FORMATS = ("pip", "uv", "requirements", "pyproject", "conda", "pixi", "dockerfile", "slurm")
WHEELHOUSE = SlurmOptions(wheelhouse="/project/wheels")  # without one, the job installs the lock


def planned(*requirements: str, torch_index: str = "", python: str = "3.11") -> Plan:
    machine = host(gpus=["8.6:RTX 3090"], driver="570.86.10", python=python)
    request = Request(requirements=requirements, explicit=True, torch_index_base=torch_index or None)
    return resolve(machine, request, packaged_kb())


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_render_keeps_the_requirements_torchsmith_does_not_plan(fmt: str) -> None:
    plan = planned("torch", "torchvision", "numpy", "ftfy>=6")
    assert plan.ok and plan.unplanned == ("numpy", "ftfy>=6")
    text = render(plan, fmt, options=WHEELHOUSE if fmt == "slurm" else None)
    assert "numpy" in "".join(line for line in text.splitlines() if not line.startswith("#"))
    assert "ftfy" in "".join(line for line in text.splitlines() if not line.startswith("#"))


def test_the_unplanned_requirements_install_last_with_torch_held() -> None:
    steps = install_steps(planned("torch", "numpy", "ftfy>=6"))
    assert steps[0].source == "index" and "numpy" not in steps[0].requirements
    assert steps[-1].source == "default" and steps[-1].requirements[-2:] == ("numpy", "ftfy>=6")


def test_a_requirements_files_lines_reach_the_render(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "base.txt").write_text("ftfy>=6\n")
    (tmp_path / "req.txt").write_text("torch\nnumpy<3\n-r base.txt\n")
    code = main(["plan", "-r", str(tmp_path / "req.txt"), "--gpu", "8.6", "--driver", "570.86.10",
                 "--platform", "linux-x86_64", "--python", "3.11", "--format", "pip"])
    out = capsys.readouterr().out
    assert code == 0
    last = [line for line in out.splitlines() if line.startswith("python -m pip install")][-1]
    assert "'numpy<3'" in last and "'ftfy>=6'" in last and "torch==" in last


def test_requirements_out_writes_one_file_per_index() -> None:
    files = render_files(planned("torch", "numpy"), "requirements")
    assert len(files) == 2
    first, rest = ("\n".join(line for line in text.splitlines() if not line.startswith("#"))
                   for text in files.values())
    assert "--index-url" in first and "numpy" not in first
    assert "--index-url" not in rest and "numpy" in rest


@pytest.mark.slow
@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_requirements_files_of_a_resolved_mixed_plan_install_for_real(
        installer: str, package_index: IndexServer, installer_env: Dict[str, str], uv_bin: str,
        tmp_path: Path) -> None:
    """torch from the local PyTorch index; ftfy and tqdm from the configured one. ftfy 6.3.0 needs
    torch>=2.7, so the held torch 2.6.0 leaves ftfy at 6.2.0."""
    plan = planned("torch==2.6.0", "torchvision", "ftfy", "tqdm", python=PYTHON,
                   torch_index=package_index.url.rstrip("/") + "/pytorch")
    assert plan.ok and plan.variant == "cu126", plan.reasons
    env = dict(installer_env, PIP_INDEX_URL=package_index.index_url("pypi"),
               UV_DEFAULT_INDEX=package_index.index_url("pypi"))
    venv = tmp_path / "venv"
    python = new_venv(venv)
    out = tmp_path / "out"
    assert main(["plan", "--gpu", "8.6", "--driver", "570.86.10", "--platform", "linux-x86_64",
                 "--python", PYTHON, "torch==2.6.0", "torchvision", "ftfy", "tqdm",
                 "--torch-index", package_index.url.rstrip("/") + "/pytorch",
                 "--format", "requirements", "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["requirements-pytorch-cu126.txt", "requirements.txt"]
    for name in names:  # the PyTorch index's file first, as the render says
        argv = ([sys.executable, "-m", "pip", "--python", str(python), "install"] if installer == "pip"
                else [uv_bin, "pip", "install", "--python", str(python), *_uv_flags(out / name)])
        result = subprocess.run([*argv, "-r", str(out / name)], env=env, capture_output=True, text=True,
                                check=False, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
    versions = installed(python)
    assert versions["torch"] == "2.6.0+cu126" and versions["torchvision"] == "0.21.0+cu126"
    assert versions["ftfy"] == "6.2.0" and versions["tqdm"] == "4.67.1" and "wcwidth" in versions



def _uv_flags(path: Path) -> List[str]:
    """The flags the file's own comment tells uv users to add."""
    said = [line for line in path.read_text().splitlines() if line.startswith("# uv: ")]
    if not said:
        return []
    command = said[0].split("so: ", 1)[1].split()
    return command[3:command.index("-r")]
