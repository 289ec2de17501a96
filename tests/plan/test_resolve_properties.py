"""Properties every plan keeps, whatever the GPUs, driver, Python and platform."""

from __future__ import annotations

import re
from typing import Any, List, Sequence, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.plan.plan_hosts import host

from torchsmith.kb import load_kb
from torchsmith.plan.hostview import driver_tuple, version_tuple
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.resolve import matrix, recommend, resolve

KB = load_kb()

CCS = ["3.5", "3.7", "5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0",
       "10.0", "10.3", "11.0", "12.0", "12.1", "13.0"]
DRIVERS = ["418.87.01", "450.80.02", "470.82.01", "515.65.01", "525.60.13", "535.104.05",
           "550.54.14", "560.35.03", "570.133.07", "575.57.08", "580.65.06", "595.45.04", "610.43.02"]
PLATFORMS = ["linux-x86_64", "linux-aarch64", "windows-x86_64", "wsl-x86_64"]
PYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15", "3.16"]


def covers(sass: Sequence[str], ptx: Sequence[str], cc: Tuple[int, int]) -> bool:
    """An independent statement of NVIDIA's rule: SASS within a major (``a`` exact only), PTX
    upward (``a`` exact, ``f`` within the major)."""
    for arch in list(sass) + list(ptx):
        match = re.match(r"^(sm|compute)_(\d+)(\d)([af]?)$", arch)
        if not match:
            continue
        kind, major, minor, suffix = match.group(1), int(match.group(2)), int(match.group(3)), match.group(4)
        if suffix == "a":
            runs = (major, minor) == cc
        elif kind == "sm" or suffix == "f":
            runs = major == cc[0] and minor <= cc[1]
        else:
            runs = (major, minor) <= cc
        if runs:
            return True
    return False


def chosen_variant(plan: Plan) -> Any:
    torch = plan.package("torch")
    assert torch is not None
    release = KB.release(torch.version)
    assert release is not None, torch.version
    variant = release.variant(plan.variant)
    assert variant is not None
    return variant


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ccs=st.lists(st.sampled_from(CCS), min_size=1, max_size=3), driver=st.sampled_from(DRIVERS),
       platform=st.sampled_from(PLATFORMS), python=st.sampled_from(PYTHONS))
def test_a_cuda_plan_runs_on_every_gpu_and_driver(ccs: List[str], driver: str, platform: str,
                                                  python: str) -> None:
    machine = host(platform=platform, python=python, gpus=[f"{cc}:GPU" for cc in ccs], driver=driver)
    plan = resolve(machine, Request(), KB)
    assert plan.status in ("ok", "no-solution")
    if not plan.ok:
        assert plan.reasons and not plan.packages
        return
    assert plan.package("torch") is not None
    if plan.accelerator != "cuda":
        assert plan.variant == "cpu"
        assert any("no CUDA build" in w for w in plan.warnings)
        return
    variant = chosen_variant(plan)
    used = dict(plan.environment).get("CUDA_VISIBLE_DEVICES")
    indexes = [int(i) for i in used.split(",")] if used else range(len(ccs))
    wheel_platform = "linux-x86_64" if platform == "wsl-x86_64" else platform
    for i in indexes:
        major, minor = version_tuple(ccs[i])
        assert covers(variant.sass(wheel_platform), variant.ptx(wheel_platform), (major, minor)), \
            (ccs[i], variant.name)
    # Never a CUDA newer than the driver runs without saying so.
    system = "windows" if platform in ("windows-x86_64", "wsl-x86_64") else "linux"
    toolkit = KB.cuda_release(variant.cuda)
    full = getattr(toolkit, f"min_driver_{system}")
    if full is None and system == "windows" and version_tuple(variant.cuda)[0] >= 13:
        # NVIDIA's table has no Windows number for 13.x; Windows shares the Linux floor's branch.
        full = toolkit.min_driver_linux.split(".")[0]
    floor = getattr(toolkit, f"minor_compat_min_driver_{system}")
    if full is None or driver_tuple(driver) < driver_tuple(full):
        assert floor is not None and driver_tuple(driver) >= driver_tuple(floor)
        assert any("minor-version compatibility" in w for w in plan.warnings), plan.warnings
    # The Python has a wheel for the chosen release on this platform.
    release = KB.release(plan.package("torch").version)  # type: ignore[union-attr]
    assert python in release.pythons(wheel_platform)


@settings(max_examples=60, deadline=None)
@given(cc=st.sampled_from(CCS), driver=st.sampled_from(DRIVERS))
def test_rejections_are_coded_one_liners(cc: str, driver: str) -> None:
    plan = resolve(host(gpus=[f"{cc}:GPU"], driver=driver), Request(), KB)
    known = {"arch-not-compiled", "driver-too-old", "no-wheel-for-python", "no-wheel-for-platform",
             "conflicts-with-requirement", "no-gpu-support", "cuda-libraries-not-needed"}
    for rejection in plan.rejected:
        assert rejection.code in known
        assert "\n" not in rejection.reason and rejection.reason
    for line in plan.reasons + plan.warnings:
        assert "\n" not in line


def test_the_plan_does_not_depend_on_call_order() -> None:
    machine = host(gpus=["6.1:GTX 1080"], driver="580.65.06")
    first = resolve(machine, Request(), KB)
    resolve(host(platform="macos-arm64", python="3.12"), Request(), KB)
    assert resolve(machine, Request(), KB) == first


def test_recommend_is_the_default_request() -> None:
    machine = host(gpus=["8.6:RTX 3090"], driver="580.65.06")
    assert recommend(machine, KB) == resolve(machine, Request(), KB)


def test_matrix_agrees_with_the_resolver() -> None:
    machine = host(gpus=["7.0:Tesla V100"], driver="580.65.06")
    plan = resolve(machine, Request(requirements=("torch",)), KB)
    rows = matrix(machine, KB, releases=20)
    row = next(r for r in rows if r.torch == plan.package("torch").version and r.variant == plan.variant)  # type: ignore[union-attr]
    assert row.works
    assert not any(r.works for r in rows if r.kind == "cuda" and r.variant.startswith("cu13"))


def test_matrix_on_a_jetson_points_to_the_jetpack_wheel() -> None:
    rows = matrix(host(platform="linux-aarch64", python="3.10", jetson="36.4.3", jetson_cc="8.7"), KB)
    cuda = [r for r in rows if r.kind == "cuda"]
    assert cuda and not any(r.works for r in cuda)
    assert any(r.code == "no-gpu-support" and "JetPack" in r.reason for r in cuda)


def test_rocm_without_kfd_access_warns() -> None:
    import dataclasses

    machine = host(rocm_gfx=["gfx1100"])
    assert machine.rocm is not None
    machine = dataclasses.replace(machine, rocm=dataclasses.replace(machine.rocm, kfd_access=False))
    plan = resolve(machine, Request(), KB)
    assert plan.accelerator == "rocm"
    assert any("/dev/kfd" in w for w in plan.warnings)


@pytest.mark.parametrize("spec", [
    {"platform": "linux-aarch64", "python": "3.8", "jetson": "35.2.1"},
    {"rocm_gfx": ["gfx1100"]},
    {},
])
def test_companions_never_pull_a_cuda_wheel_onto_another_torch(spec: Any) -> None:
    plan = resolve(host(**spec), Request(requirements=("torch", "xformers")), KB)
    assert plan.ok
    xformers = plan.package("xformers")
    assert xformers is None or xformers.variant == "source" or xformers.index_url == plan.package(
        "torch").index_url  # type: ignore[union-attr]
    assert any("xformers" in w for w in plan.warnings)


def test_conda_side_follows_conda_forge_builds() -> None:
    plan = resolve(host(gpus=["8.6:RTX 3090"], driver="550.54.14"), Request(requirements=("torch<2.6",)), KB)
    assert plan.ok and plan.variant == "cu124" and plan.conda["pytorch"] == "2.5.1"
    # conda-forge built 2.5.1 for CUDA 11.8, 12.0 and 12.6 (feedstock), not 12.4: the nearest 12.x.
    assert plan.conda["cuda-version"] == "12.6" and plan.conda["pytorch-gpu"] == "2.5.1"
    machine = host(gpus=["8.6:RTX 3090"], driver="580.65.06")
    plan = resolve(machine, Request(requirements=("torch==2.8.0",)), KB)
    assert plan.variant == "cu129" and plan.conda["cuda-version"] == "12.9"
    plan = resolve(machine, Request(requirements=("torch==2.7.1",)), KB)
    assert plan.variant == "cu128" and plan.conda["cuda-version"] == "12.9"  # Linux 2.7: 12.6, 12.9


def test_unknown_platform_is_a_no_solution_naming_it() -> None:
    import dataclasses

    machine = host()
    machine = dataclasses.replace(machine, os=dataclasses.replace(machine.os, arch="riscv64"))
    plan = resolve(machine, Request(), KB)
    assert plan.status == "no-solution"
    assert any("linux-riscv64" in r for r in plan.reasons)
    assert {r.code for r in plan.rejected} == {"no-wheel-for-platform"}


def test_python_too_new_with_a_gpu_names_the_python_that_works() -> None:
    plan = resolve(host(python="3.16", gpus=["8.9:RTX 4090"], driver="580.65.06"), Request(), KB)
    assert plan.status == "no-solution"
    assert any("newest Python that works is 3.15" in r for r in plan.reasons), plan.reasons


def test_pypy_is_told_to_use_cpython() -> None:
    import dataclasses

    machine = host(gpus=["8.9:RTX 4090"], driver="580.65.06")
    machine = dataclasses.replace(machine, python=dataclasses.replace(machine.python, implementation="PyPy"))
    plan = resolve(machine, Request(), KB)
    assert plan.status == "no-solution"
    assert any("CPython only" in r for r in plan.reasons)
