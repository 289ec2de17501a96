"""The compatibility rules (torchsmith.compat): vocabulary and the one kernel/driver decision."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Optional, Tuple

import pytest

from torchsmith.compat import (
    Arch,
    DriverVersion,
    Variant,
    driver_support,
    full_support_floor,
    gpu_verdict,
    kernel_for,
    parse_cc,
)


@pytest.mark.parametrize(("text", "parsed"), [
    ("sm_86", Arch(8, 6)),
    ("sm_90a", Arch(9, 0, "a")),
    ("sm_100f", Arch(10, 0, "f")),
    ("SM_120", Arch(12, 0)),
    ("compute_90", Arch(9, 0, "", True)),
    ("compute_90a", Arch(9, 0, "a", True)),
    ("compute_120f", Arch(12, 0, "f", True)),
    ("sm_9", None), ("gfx1100", None), ("sm_90x", None), ("", None),
])
def test_arch_parse(text: str, parsed: Optional[Arch]) -> None:
    assert Arch.parse(text) == parsed
    if parsed is not None:
        assert parsed.name == text.lower()


def test_an_sm_name_from_a_ptx_list_is_ptx() -> None:
    assert Arch.parse("sm_90", ptx=True) == Arch(9, 0, "", True)


@pytest.mark.parametrize(("text", "cc"), [
    ("8.6", (8, 6)), ("12.0", (12, 0)), ("86", (8, 6)), ("120", (12, 0)), ("sm_87", (8, 7)),
    ((9, 0), (9, 0)), ("garbage", None), (None, None),
])
def test_parse_cc(text: object, cc: Optional[Tuple[int, int]]) -> None:
    assert parse_cc(text) == cc


@pytest.mark.parametrize(("archs", "cc", "integrated", "expected"), [
    (["sm_80", "sm_86", "sm_90"], (8, 9), False, ("sass", "sm_86")),  # nearest minor
    (["sm_80", "sm_86"], (8, 6), False, ("sass", "sm_86")),  # exact first
    (["sm_80", "sm_86"], (8, 7), True, None),  # an integrated GPU needs its exact SASS
    (["sm_80", "sm_87"], (8, 7), True, ("sass", "sm_87")),
    (["sm_72", "compute_72"], (8, 7), True, ("ptx", "compute_72")),  # Jetson JITs PTX too
    (["sm_80", "compute_80", "compute_90"], (12, 0), False, ("ptx", "compute_90")),  # newest PTX
    (["sm_90a", "sm_90"], (9, 0), False, ("sass", "sm_90")),
    (["sm_100f"], (10, 3), False, ("sass", "sm_100f")),
    (["sm_120f"], (12, 1), False, ("sass", "sm_120f")),
    (["sm_100f"], (12, 0), False, None),
    (["compute_90a"], (10, 0), False, None),
    (["compute_100f"], (10, 3), False, ("ptx", "compute_100f")),
    (["compute_100f"], (11, 0), False, None),
])
def test_kernel_for(archs: list, cc: Tuple[int, int], integrated: bool,
                    expected: Optional[Tuple[str, str]]) -> None:
    kernel = kernel_for(cc, archs, integrated=integrated)
    assert ((kernel.how, kernel.name) if kernel else None) == expected


def test_a_ptx_list_counts_as_ptx_whatever_the_prefix() -> None:
    kernel = kernel_for((12, 0), ["sm_90"], ["sm_90"])
    assert kernel is not None and (kernel.how, kernel.name) == ("ptx", "compute_90")


def test_verdict_needs_a_full_driver_for_jit() -> None:
    ptx = kernel_for((12, 0), ["compute_90"])
    sass = kernel_for((9, 0), ["sm_90"])
    assert gpu_verdict(ptx, "minor-compat") == "no-jit"
    assert gpu_verdict(ptx, "full") == gpu_verdict(sass, "minor-compat") == "runs"
    assert gpu_verdict(None, "full") == "no-kernel"


@pytest.mark.parametrize(("text", "kind", "version", "cuda"), [
    ("cu126", "cuda", "12.6", "12.6"), ("cu92", "cuda", "9.2", "9.2"), ("cu130", "cuda", "13.0", "13.0"),
    ("cu102", "cuda", "10.2", "10.2"), ("rocm6.3", "rocm", "6.3", None), ("rocm5.4.2", "rocm", "5.4.2", None),
    ("xpu", "xpu", "", None), ("cpu", "cpu", "", None),
])
def test_variant_parse(text: str, kind: str, version: str, cuda: Optional[str]) -> None:
    variant = Variant.parse(text)
    assert variant is not None and (variant.kind, variant.version, variant.cuda) == (kind, version, cuda)


@pytest.mark.parametrize("text", ["cu", "cuda", "rocm", "rocm6", "jetson-jp51", "", None])
def test_variant_parse_rejects(text: Optional[str]) -> None:
    assert Variant.parse(text) is None


def test_driver_version() -> None:
    driver = DriverVersion.parse("580.65.06")
    assert driver is not None and str(driver) == "580.65.06" and driver.branch == 580
    assert driver.at_least("580.65.6") and driver.at_least("525.60.13") and not driver.at_least("581")
    assert DriverVersion.parse("581.15") is not None and DriverVersion.parse("garbage") is None


def _toolkit(version: str, linux: str, windows: Optional[str], compat: str) -> SimpleNamespace:
    return SimpleNamespace(version=version, min_driver_linux=linux, min_driver_windows=windows,
                           minor_compat_min_driver_linux=compat, minor_compat_min_driver_windows=compat)


def test_windows_cuda13_takes_the_branch_of_the_linux_floor() -> None:
    cuda130 = _toolkit("13.0", "580.65.06", None, "580")
    assert full_support_floor(cuda130, "windows") == "580"
    assert driver_support(cuda130, "13.0", "windows", "581.15", None).mode == "full"
    assert driver_support(cuda130, "13.0", "windows", "576.02", None).mode == "too-old"
    # A CUDA 12 row without a Windows number stays unknown: the rule is NVIDIA's for 13.x only.
    assert full_support_floor(_toolkit("12.8", "570.26", None, "525.60.13"), "windows") == ""


def test_driver_support_modes() -> None:
    cuda128 = _toolkit("12.8", "570.26", "570.65", "525.60.13")
    assert driver_support(cuda128, "12.8", "linux", "570.86.10", None).mode == "full"
    assert driver_support(cuda128, "12.8", "linux", "535.104.05", None).mode == "minor-compat"
    assert driver_support(cuda128, "12.8", "linux", "470.82.01", None).mode == "too-old"
    assert driver_support(None, "12.8", "linux", None, "12.9").mode == "full"
    assert driver_support(None, "12.8", "linux", None, "12.4").mode == "minor-compat"
    assert driver_support(None, "12.8", "linux", None, "11.8").mode == "too-old"
    assert driver_support(None, "12.8", "linux", None, None).mode == "unknown"


def test_a_windows_rtx_4090_on_driver_581_gets_a_cuda_13_build_like_linux() -> None:
    from tests.plan.plan_hosts import host

    from torchsmith.kb import load_kb
    from torchsmith.plan.model import Request
    from torchsmith.plan.resolve import resolve

    kb = load_kb(packaged_only=True)
    request = Request(requirements=("torch<2.12",))
    plans = {platform: resolve(host(platform=platform, gpus=["8.9:NVIDIA GeForce RTX 4090"], driver="581.15"),
                               request, kb) for platform in ("windows-x86_64", "linux-x86_64")}
    assert plans["windows-x86_64"].variant == plans["linux-x86_64"].variant == "cu130"
    assert not any("minor-version compatibility" in w for w in plans["windows-x86_64"].warnings)
