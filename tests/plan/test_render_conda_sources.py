"""conda/pixi files ask only for builds that exist: the legacy pytorch channel for releases
conda-forge never built, conda-forge's own builds of compiled extensions (or a clear refusal),
and TensorFlow's native-Windows GPU recipe (cudatoolkit 11.2 + cuDNN 8.1 from conda-forge)."""

from __future__ import annotations

from typing import Any, List

import pytest
import yaml
from tests.plan.plan_hosts import host
from tests.support.render import render

from torchsmith.errors import TorchsmithError
from torchsmith.kb import load_kb
from torchsmith.plan.model import PackagePin, Plan, Request
from torchsmith.plan.resolve import resolve
from torchsmith.versions import version_tuple

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

KB = load_kb(None)


def _plan(machine: Any, *requirements: str) -> Plan:
    plan = resolve(machine, Request(requirements=requirements), KB)
    assert plan.ok, plan.rejected
    return plan


def _deps(text: str) -> List[Any]:
    return list(yaml.safe_load(text)["dependencies"])


def test_windows_1_12_comes_from_the_legacy_channel_with_cudatoolkit() -> None:
    machine = host(platform="windows-x86_64", python="3.10", gpus=["8.6:RTX 3090"], driver="531.14")
    plan = _plan(machine, "torch==1.12.1", "torchvision")
    text = render(plan, "conda", machine)
    env = yaml.safe_load(text)
    cuda = plan.variant[2:-1] + "." + plan.variant[-1]  # cu116 -> 11.6
    assert env["channels"][0] == "pytorch" and "pytorch=1.12.1" in env["dependencies"]
    assert f"cudatoolkit={cuda}" in env["dependencies"]
    assert not any("pytorch-gpu" in str(d) for d in _deps(text))
    assert "conda-forge never built pytorch 1.12.1" in text
    pixi = tomllib.loads(render(plan, "pixi", machine))
    assert pixi["workspace"]["channels"][0] == "pytorch"
    assert pixi["dependencies"]["cudatoolkit"] == f"=={cuda}"
    cpu = host(platform="windows-x86_64", python="3.10")
    assert "cpuonly" in _deps(render(_plan(cpu, "torch==1.12.1"), "conda", cpu))


def test_a_series_conda_forge_skipped_uses_pytorch_cuda_from_the_nvidia_channel() -> None:
    machine = host(gpus=["8.6:RTX 3090"], driver="550.54.14")
    env = yaml.safe_load(render(_plan(machine, "torch==2.2.2"), "conda", machine))
    assert env["channels"][:2] == ["pytorch", "nvidia"]
    assert "pytorch=2.2.2" in env["dependencies"]
    assert any(str(d).startswith("pytorch-cuda=12.") for d in env["dependencies"])


def test_an_unlisted_patch_release_takes_the_series_release_conda_forge_built() -> None:
    machine = host(python="3.11")
    text = render(_plan(machine, "torch==2.5.0"), "conda", machine)
    assert "pytorch=2.5.1=cpu*" in _deps(text) and "not 2.5.0: pytorch=2.5.1 instead" in text


@pytest.mark.parametrize("name", ["pyg-lib", "torch-spline-conv", "mmcv-full"])
def test_extensions_built_against_pypi_torch_are_refused_with_the_reason(name: str) -> None:
    plan = Plan(status="ok", platform="linux-x86_64", python="3.11", accelerator="cpu", variant="cpu",
                packages=(PackagePin("torch", "2.7.1", "cpu"),
                          PackagePin(name, "1.0", find_links="https://data.pyg.org/whl/torch-2.7.0+cpu.html")))
    with pytest.raises(TorchsmithError) as info:
        render(plan, "conda")
    assert info.value.code == "format-not-applicable"
    assert name in info.value.message and "C++ ABI" in info.value.message


def test_tensorflow_on_native_windows_gets_cudatoolkit_and_cudnn_from_conda_forge() -> None:
    machine = host(platform="windows-x86_64", python="3.10", gpus=["8.6:RTX 3090"], driver="531.14")
    plan = _plan(machine, "tensorflow")
    tf = plan.package("tensorflow")
    assert tf is not None and tf.version == "2.10.1"
    env = yaml.safe_load(render(plan, "conda", machine))
    assert env["channels"][0] == "conda-forge"
    assert "cudatoolkit=11.2" in env["dependencies"] and "cudnn=8.1.0" in env["dependencies"]
    assert {"pip": ["tensorflow==2.10.1"]} in env["dependencies"]
    assert not any(str(d).startswith("pytorch") for d in env["dependencies"])
    # Linux keeps its tensorflow[and-cuda] rows: the Windows rows change nothing there.
    linux = _plan(host(python="3.11"), "tensorflow").package("tensorflow")
    assert linux is not None and linux.version.startswith("2.2")


def test_cuda_version_is_one_conda_forge_built_for_that_platform() -> None:
    """2.13: Linux builds for CUDA 12.9/13.0, Windows for 12.8/13.0 (the feedstock's variants)."""
    for platform, cuda in (("windows-x86_64", "12.8"), ("linux-x86_64", "12.9")):
        expected = f"cuda-version={cuda}"
        machine = host(platform=platform, python="3.12", gpus=["8.6:RTX 3090"], driver="576.02")
        plan = _plan(machine, "torch==2.13.0")
        deps = _deps(render(plan, "conda", machine))
        assert "pytorch-gpu=2.13.0" in deps and expected in deps, (platform, plan.variant, deps)


def test_a_release_newer_than_the_conda_data_is_one_answer_in_the_plan_and_the_file() -> None:
    """pip's torch is newer than every conda-forge series the data knows: ``plan.conda`` (``plan
    --json``) names the release the environment file takes, and no line says "as planned"."""
    machine = host(platform="linux-x86_64", python="3.12", gpus=["9.0:H100"], driver="580.65.06")
    plan = _plan(machine)
    newest = max(version_tuple(b.version) for b in KB.conda_builds if b.package == "pytorch")
    torch = plan.package("torch")
    assert torch is not None
    if version_tuple(torch.version)[:2] <= newest:
        pytest.skip(f"the conda data covers torch {torch.version}: no newer release to plan")
    text = render(plan, "conda", machine)
    taken = next(d for d in _deps(text) if str(d).startswith("pytorch-gpu="))
    assert taken == f"pytorch-gpu={plan.conda['pytorch-gpu']}" == f"pytorch-gpu={plan.conda['pytorch']}"
    assert "as planned" not in text
