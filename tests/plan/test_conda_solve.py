"""The rendered conda environment.yml and pixi.toml, solved by a real conda solver (py-rattler,
pixi's solver) against a local channel made from conda-forge's recorded builds.

The channel holds what torchsmith's data says conda-forge built (conda-forge/pytorch-cpu-feedstock:
per release, the CPU build and one build per CUDA version, pytorch-gpu, cuda-version), as
repodata.json records; ``__cuda`` is the host driver's CUDA. torchvision and the rest are not in
that data, so only the pytorch side of each file is solved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from tests.plan.plan_hosts import host
from tests.support.pixi import (
    conda_forge_channel,
    conda_record,
    conda_specs,
    pixi_specs,
    pixi_virtual_packages,
    solve,
    write_channel,
)
from tests.support.render import render

from torchsmith.kb import load_kb
from torchsmith.plan.model import Request
from torchsmith.plan.resolve import resolve

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

rattler = pytest.importorskip("rattler", reason="py-rattler (test extra, Python >= 3.10) is not installed")

KB = load_kb(None)


def _pixi_virtual(text: str) -> Dict[str, str]:
    """The virtual packages the manifest's first platform entry declares."""
    return pixi_virtual_packages(tomllib.loads(text)["workspace"]["platforms"][0])


def _solve(channel: Path, specs: List[str], cuda: str,
           declared: Optional[Dict[str, str]] = None) -> List[str]:
    packages = {"__glibc": "2.35"}
    if declared is not None:  # what the manifest itself declares
        packages.update(declared)
    elif cuda:
        packages["__cuda"] = cuda
    return solve(channel, "linux-64", specs, packages)


def _pixi_specs(text: str) -> List[str]:
    return pixi_specs(tomllib.loads(text)["dependencies"])


CASES = [
    # (requirements, host, the driver's CUDA for __cuda)
    (("torch==2.7.1",), {"gpus": ["8.6:RTX 3090"], "driver": "580.65.06"}, "13.0"),
    (("torch<2.6",), {"gpus": ["8.6:RTX 3090"], "driver": "550.54.14"}, "12.4"),
    (("torch",), {"gpus": ["8.0:A100"], "driver": "580.65.06"}, "13.0"),
    (("torch==2.5.0",), {"python": "3.11"}, ""),
    (("torch",), {"python": "3.12"}, ""),
]


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return conda_forge_channel(tmp_path_factory.mktemp("conda-forge"), KB)


@pytest.mark.parametrize("requirements,machine,cuda", CASES)
def test_rendered_files_solve_against_conda_forges_recorded_builds(
        requirements: Any, machine: Dict[str, Any], cuda: str, channel: Path) -> None:
    target = host(**machine)
    plan = resolve(target, Request(requirements=requirements), KB)
    assert plan.ok
    for fmt, specs in (("conda", conda_specs), ("pixi", _pixi_specs)):
        text = render(plan, fmt, target)
        declared = _pixi_virtual(text) if fmt == "pixi" else None
        if declared:
            assert declared["__cuda_arch"] == machine["gpus"][0].split(":")[0]
        solved = _solve(channel, specs(text), cuda, declared)
        torch = next(s for s in solved if s.startswith("pytorch="))
        assert ("=cuda" in torch) == bool(cuda), (fmt, specs(text), solved)


def test_the_solver_refuses_a_build_conda_forge_never_made(channel: Path) -> None:
    """What the renderer used to write (the pip plan's CUDA copied over) does not solve."""
    assert _solve(channel, ["python=3.11", "pytorch-gpu=2.7.1", "cuda-version=12.6"], "12.6")
    with pytest.raises(Exception, match="cuda-version"):
        _solve(channel, ["python=3.11", "pytorch-gpu=2.7.1", "cuda-version=12.8"], "12.8")
    with pytest.raises(Exception, match="pytorch"):
        _solve(channel, ["python 3.11.*", "pytorch 2.5.0.* cpu*"], "")  # 2.5.0: never built


def test_pixi_declares_the_glibc_of_the_pypi_torch_and_the_solver_holds_to_it(tmp_path: Path) -> None:
    """A ROCm plan's torch comes from its index as a manylinux wheel: the platform declares that
    wheel's glibc floor (pixi's friendly ``glibc`` key), and py-rattler, given the manifest's virtual
    packages, picks only conda builds that run there (a python build needing glibc 2.34 is passed over)."""
    target = host(rocm_gfx=["gfx942"])
    plan = resolve(target, Request(requirements=("torch",)), KB)
    assert plan.ok and plan.accelerator == "rocm"
    text = render(plan, "pixi", target)
    torch = next(p for p in plan.packages if p.name == "torch")
    row = next(r for r in KB.document("manylinux")["rows"] if r["platform"] == "linux-x86_64"
               and not r["last"] and not r.get("variants"))
    declared = _pixi_virtual(text)
    assert declared == {"__glibc": row["min_glibc"]}, (torch.version, declared)
    python = f"{plan.python}.0"
    write_channel(tmp_path, {"linux-64": [
        dict(conda_record("python", python, f"h{n}", "linux-64", [f"__glibc >={glibc}"]), build_number=n)
        for n, glibc in ((0, row["min_glibc"]), (1, "2.34"))]})
    specs = [f"python {tomllib.loads(text)['dependencies']['python']}"]
    assert _solve(tmp_path, specs, "", declared) == [f"python={python}=h0"]
    assert _solve(tmp_path, specs, "") == [f"python={python}=h1"]  # the test's own host default: glibc 2.35
