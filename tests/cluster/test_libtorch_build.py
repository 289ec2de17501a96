"""plan --format libtorch, for real: the generated CMakeLists builds and runs a C++ program.

Uses the C++ half (include/, lib/, share/cmake) of a CPU torch wheel on disk: the wheel named by
TORCHSMITH_TEST_TORCH_WHEEL, else one in /opt/wheels; skipped when there is none, or no cmake,
ninja or C++ compiler.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import zipfile
from typing import Any, Optional

import pytest
from tests.plan.plan_hosts import host
from tests.support.render import render

from torchsmith.plan.model import PackagePin, Plan


def _wheel() -> Optional[str]:
    named = os.environ.get("TORCHSMITH_TEST_TORCH_WHEEL")
    if named:
        return named
    found = sorted(glob.glob("/opt/wheels/torch-*-*linux*_x86_64.whl"))
    return found[-1] if found else None


@pytest.mark.slow
def test_generated_cmake_builds_and_runs_a_program_without_ld_library_path(tmp_path: Any) -> None:
    wheel = _wheel()
    if wheel is None or not os.path.exists(wheel):
        pytest.skip("no torch wheel on disk (set TORCHSMITH_TEST_TORCH_WHEEL)")
    for tool in ("cmake", "ninja", "c++"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed")
    version = re.match(r"torch-([^-]+)-", os.path.basename(wheel))
    assert version is not None
    public, _, local = version.group(1).partition("+")
    with zipfile.ZipFile(wheel) as archive:
        wanted = ("torch/include/", "torch/lib/", "torch/share/")
        members = [n for n in archive.namelist() if n.startswith(wanted)]
        archive.extractall(tmp_path / "site", members)
    plan = Plan(status="ok", platform="linux-x86_64", python="3.11", accelerator="cpu", variant="cpu",
                packages=(PackagePin("torch", public, "cpu", local_version=f"+{local}" if local else None),))
    (tmp_path / "CMakeLists.txt").write_text(render(plan, "libtorch", host()))
    (tmp_path / "main.cpp").write_text(
        "#include <torch/torch.h>\n#include <iostream>\n"
        "int main() { std::cout << (torch::ones({2, 3}) * 2).sum().item<float>() << std::endl; }\n")
    prefix = tmp_path / "site" / "torch" / "share" / "cmake"
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    configure = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build"), "-G", "Ninja",
                                f"-DCMAKE_PREFIX_PATH={prefix}"], capture_output=True, text=True, env=env,
                               check=False)
    assert configure.returncode == 0, configure.stdout[-2000:] + configure.stderr[-2000:]
    build = subprocess.run(["cmake", "--build", str(tmp_path / "build")], capture_output=True, text=True,
                           env=env, check=False)
    assert build.returncode == 0, build.stdout[-3000:]
    ran = subprocess.run([str(tmp_path / "build" / "torch_app")], capture_output=True, text=True, env=env,
                         check=False)
    assert (ran.returncode, ran.stdout.strip()) == (0, "12")


def _cuda_plan(variant: str, version: str = "2.7.1") -> Plan:
    return Plan(status="ok", platform="linux-x86_64", python="3.11", accelerator="cuda", variant=variant,
                packages=(PackagePin("torch", version, variant, local_version=f"+{variant}"),))


def _configure(tmp_path: Any, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    tmp_path.mkdir()
    (tmp_path / "CMakeLists.txt").write_text(text)
    return subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build"), *args],
                          capture_output=True, text=True, check=False, timeout=120)


@pytest.mark.slow
def test_a_cuda_wheels_cmake_names_the_toolkit_major_it_needs(tmp_path: Any) -> None:
    """Run by CMake with this machine's CUDA toolkit: a cu126 wheel refuses a CUDA 13 one with the
    way out; a cu130 wheel gets past the check (to find_package(Torch), absent here)."""
    nvcc = shutil.which("nvcc")
    if shutil.which("cmake") is None or shutil.which("c++") is None or nvcc is None:
        pytest.skip("needs cmake, a C++ compiler and a CUDA toolkit")
    found = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False).stdout
    release = re.search(r"release (\d+)\.(\d+)", found)
    assert release is not None
    have = f"{release.group(1)}.{release.group(2)}"
    other = "cu126" if release.group(1) != "12" else "cu130"
    refused = _configure(tmp_path / "a", render(_cuda_plan(other), "libtorch", host()))
    assert refused.returncode != 0
    assert f"but CMake found CUDA {have}" in refused.stderr and "-DCUDAToolkit_ROOT=" in refused.stderr
    same = f"cu{release.group(1)}{release.group(2)}"
    passed = _configure(tmp_path / "b", render(_cuda_plan(same), "libtorch", host()))
    assert "CUDAToolkit_ROOT" not in passed.stderr and "Torch" in passed.stderr
