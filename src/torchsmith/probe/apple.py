"""Macs: Apple silicon or Intel, MPS, and a Python running under Rosetta."""

from __future__ import annotations

from typing import List, Optional

from torchsmith.host import Host, PlatformInfo
from torchsmith.machine import AppleInfo, ProbeNote

__all__ = ["detect_apple"]


def detect_apple(host: Host, plat: PlatformInfo, notes: List[ProbeNote]) -> Optional[AppleInfo]:
    if plat.system != "Darwin":
        return None
    arm = plat.machine == "arm64"
    return AppleInfo(apple_silicon=arm, mps_capable=arm, macos_version=plat.mac_version or None,
                     source="platform")
