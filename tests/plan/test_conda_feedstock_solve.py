"""Rendered environment.yml / pixi.toml solved by py-rattler against a channel built from the
conda-forge feedstocks' own metadata, not from torchsmith's rows.

tests/fixtures/conda-forge/*.json were read from the feedstocks' git history by
tools/feedstock_builds.py (recipe version + .ci_support build configurations per release).
The records follow the recipes: a CUDA build of pytorch / torchvision / torchaudio depends on
``cuda-version >=X.Y,<X+1`` and ``__cuda``; torchvision on ``pytorch * cuda*`` and its CUDA
matching pytorch's; cuda-version X.Y constrains ``__cuda >=X`` (cuda-version-feedstock:
"Major version is lower bound"); pytorch-gpu X on ``pytorch X cuda*``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from tests.plan.plan_hosts import host
from tests.support.pixi import conda_record, conda_specs, pixi_specs, solve, write_channel
from tests.support.render import packaged_kb, render

from torchsmith.errors import TorchsmithError
from torchsmith.plan.model import Request
from torchsmith.plan.resolve import resolve

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

rattler = pytest.importorskip("rattler", reason="py-rattler (test extra, Python >= 3.10) is not installed")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "conda-forge"
SUBDIRS = {"linux-x86_64": "linux-64", "windows-x86_64": "win-64", "linux-aarch64": "linux-aarch64"}
SOLVED = ("python", "pytorch", "pytorch-gpu", "cuda-version", "torchvision", "torchaudio", "mkl",
          "arm-variant")


def _cuda_deps(cuda: str) -> List[str]:
    return [f"cuda-version >={cuda},<{int(cuda.split('.')[0]) + 1}", "__cuda"]


def _records(subdir: str) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    cudas = set()
    for package in ("pytorch-cpu", "torchvision", "torchaudio"):
        data = json.loads((FIXTURES / f"{package}.json").read_text())
        name = "pytorch" if package == "pytorch-cpu" else package
        for version, platforms in data["releases"].items():
            for kind in platforms.get(subdir, ()):
                torch = ["pytorch * cuda*"] if name != "pytorch" and kind != "cpu" else (
                    ["pytorch * cpu*"] if name != "pytorch" else [])
                if kind == "cpu":
                    out.append(conda_record(name, version, "cpu_h0", subdir, torch))
                    continue
                # linux-aarch64 CUDA builds depend on `arm-variant * sbsa|tegra` (the recipe's run deps).
                arm, cuda = (("tegra", kind[6:]) if kind.startswith("tegra-") else ("sbsa", kind))
                variant = [f"arm-variant * {arm}"] if subdir == "linux-aarch64" else []
                cudas.add(cuda)
                build = f"cuda{cuda.replace('.', '')}_{arm if variant else 'h'}0"
                out.append(conda_record(name, version, build, subdir, [*torch, *variant, *_cuda_deps(cuda)]))
                if name == "pytorch":
                    out.append(conda_record("pytorch-gpu", version, build, subdir,
                                            [f"pytorch {version} {build}"]))
    for cuda in sorted(cudas):
        out.append(conda_record("cuda-version", cuda, "h0", subdir,
                                constrains=[f"__cuda >={cuda.split('.')[0]}"]))
    out.extend(conda_record("arm-variant", "1.0", arm, subdir) for arm in ("sbsa", "tegra"))
    for python in ("3.10", "3.11", "3.12", "3.13"):
        out.append(conda_record("python", f"{python}.0", "h0", subdir))
    return out


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conda-forge-from-feedstocks")
    return write_channel(root, {subdir: _records(subdir) for subdir in SUBDIRS.values()})


def _solve(channel: Path, subdir: str, specs: List[str], cuda: str) -> List[str]:
    return solve(channel, subdir, specs, {"__glibc": "2.35", **({"__cuda": cuda} if cuda else {})})


def _conda_specs(text: str) -> List[str]:
    return conda_specs(text, SOLVED)


def _pixi_specs(text: str) -> List[str]:
    return pixi_specs(tomllib.loads(text)["dependencies"], SOLVED)


CASES = [
    # (requirements, host, __cuda (the driver's CUDA), the pytorch the solver must end on)
    (("torch", "torchvision"), {"gpus": ["7.5:T4"], "driver": "470.82.01"}, "11.4", "2.5.1"),
    (("torch", "torchvision", "torchaudio"), {"gpus": ["8.6:RTX 3090"], "driver": "580.65.06"}, "13.0", None),
    (("torch", "torchvision"), {"platform": "windows-x86_64", "gpus": ["8.6:RTX 3090"],
                                "driver": "570.86.10"}, "12.8", None),
    (("torch",), {"python": "3.12"}, "", None),
    # An aarch64 server (GH200) and JetPack 7: the sbsa build, never the tegra one.
    (("torch",), {"platform": "linux-aarch64", "gpus": ["9.0:GH200"], "driver": "580.65.06",
                  "python": "3.12"}, "13.0", None),
    # JetPack 6.2 (L4T 36.4.3, CUDA 12.6): conda-forge's tegra build, never the sbsa one.
    (("torch",), {"platform": "linux-aarch64", "jetson": "36.4.3", "python": "3.10"}, "12.6", "2.13.0"),
]


@pytest.mark.parametrize("requirements,machine,cuda,pytorch", CASES)
def test_rendered_files_solve_against_the_feedstocks_builds(
        requirements: Any, machine: Dict[str, Any], cuda: str, pytorch: Optional[str], channel: Path) -> None:
    target = host(**machine)
    plan = resolve(target, Request(requirements=requirements, explicit=True), packaged_kb())
    assert plan.ok
    subdir = SUBDIRS[plan.platform]
    for fmt, specs in (("conda", _conda_specs), ("pixi", _pixi_specs)):
        wanted = specs(render(plan, fmt, target))
        solved = _solve(channel, subdir, wanted, cuda)
        torch = next(s for s in solved if s.startswith("pytorch="))
        assert ("=cuda" in torch) == bool(cuda), (fmt, wanted, solved)
        if pytorch:
            assert torch.startswith(f"pytorch={pytorch}="), (fmt, wanted, solved)
        if "jetson" in machine:
            assert torch.endswith("_tegra0") and "arm-variant=1.0=tegra" in solved, solved
        elif machine.get("platform") == "linux-aarch64":
            assert torch.endswith("_sbsa0") and "arm-variant=1.0=sbsa" in solved, solved
        for name in requirements[1:]:
            assert any(s.startswith(f"{'torch' + name[5:]}=") for s in solved), (name, solved)


def test_what_no_solver_can_satisfy_is_refused_with_its_source() -> None:
    """conda-forge builds no torchaudio for win-64: the file would never solve."""
    target = host(platform="windows-x86_64", gpus=["8.6:RTX 3090"], driver="570.86.10")
    plan = resolve(target, Request(requirements=("torch", "torchvision", "torchaudio"), explicit=True),
                   packaged_kb())
    with pytest.raises(TorchsmithError) as raised:
        render(plan, "conda", target)
    assert raised.value.code == "format-not-applicable"
    assert "conda-forge" in raised.value.message and "feedstock" in raised.value.message


def test_the_old_file_does_not_solve(channel: Path) -> None:
    """Control: what driver 470 used to get (pytorch-gpu 2.7.1 with cuda-version 11.8) has no solution."""
    with pytest.raises(Exception, match=r"cuda-version|pytorch"):
        _solve(channel, "linux-64", ["python 3.11.*", "pytorch-gpu 2.7.1.*", "cuda-version 11.8.*"], "11.4")
