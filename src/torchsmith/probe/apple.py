"""Macs: Apple silicon or Intel, MPS, and a Python running under Rosetta."""

from __future__ import annotations

from torchsmith import TYPE_CHECKING
from torchsmith.host import Host, PlatformInfo
from torchsmith.machine import AppleInfo, ProbeNote

if TYPE_CHECKING:
    from typing import List, Optional, Tuple

__all__ = ["detect_apple", "macos_at_least", "parse_brand_string"]

TIMEOUT = 5.0
# MPS needs macOS 12.3 or newer (https://pytorch.org/docs/stable/notes/mps.html).
MPS_MIN_MACOS = (12, 3)


def parse_brand_string(text: str) -> Optional[str]:
    """The chip from ``sysctl -n machdep.cpu.brand_string``: ``Apple M2 Pro``, ``Intel(R) ...``.

    Under Rosetta 2 older macOS releases print ``VirtualApple @ 2.50GHz processor``: not a chip.
    """
    chip = text.strip()
    if not chip or chip.startswith("VirtualApple"):
        return None
    return chip


def macos_at_least(version: str, wanted: Tuple[int, int]) -> Optional[bool]:
    parts = version.split(".")
    try:
        numbers = (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
    except ValueError:
        return None
    return numbers >= wanted


def _sysctl(host: Host, name: str) -> Optional[str]:
    result = host.run(["sysctl", "-n", name], TIMEOUT)
    return result.stdout.strip() if result.ok else None


def detect_apple(host: Host, plat: PlatformInfo, notes: List[ProbeNote]) -> Optional[AppleInfo]:
    if plat.system != "Darwin":
        return None
    brand = _sysctl(host, "machdep.cpu.brand_string")
    # 1 = this process is an x86_64 binary translated by Rosetta 2; the oid is absent on Intel.
    rosetta = _sysctl(host, "sysctl.proc_translated") == "1"
    arm_python = plat.machine.lower() in ("arm64", "aarch64")
    apple_silicon = arm_python or rosetta or (brand or "").startswith(("Apple", "VirtualApple"))
    macos = plat.mac_version or None
    if macos and macos.startswith("10.16"):
        notes.append(ProbeNote("macOS version", "Python reports macOS 10.16 (built with an old "
                                                "SDK): the real version is 11 or newer"))
    new_enough = macos_at_least(macos, MPS_MIN_MACOS) if macos else None
    mps = apple_silicon and arm_python and bool(new_enough)
    if rosetta:
        notes.append(ProbeNote("rosetta", "this Python is x86_64 running under Rosetta 2 on Apple "
                                          "silicon: the newest PyTorch for it is 2.2.2 (the last "
                                          "macOS x86_64 wheels) and MPS is unavailable; use an "
                                          "arm64 Python instead"))
    elif not apple_silicon:
        notes.append(ProbeNote("macos", "an Intel Mac: PyTorch's last macOS x86_64 wheels are "
                                        "2.2.2, CPU only"))
    elif new_enough is False:
        notes.append(ProbeNote("mps", f"MPS needs macOS 12.3 or newer (this is {macos})"))
    if brand is None:
        notes.append(ProbeNote("sysctl", "machdep.cpu.brand_string gave no chip name"))
    return AppleInfo(
        chip=parse_brand_string(brand or ""),
        apple_silicon=apple_silicon,
        rosetta=rosetta,
        macos_version=macos,
        mps_capable=mps,
        source="sysctl, platform",
    )
