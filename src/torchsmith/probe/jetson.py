"""NVIDIA Jetson (Tegra iGPU): L4T release, JetPack, CUDA, module and compute capability."""

from __future__ import annotations

from typing import List, Optional

from torchsmith.host import Host
from torchsmith.machine import JetsonInfo, ProbeNote

__all__ = ["detect_jetson"]


def detect_jetson(host: Host, notes: List[ProbeNote]) -> Optional[JetsonInfo]:
    """A Jetson when /etc/nv_tegra_release exists; None on every other machine."""
    if host.read_text("/etc/nv_tegra_release") is None:
        return None
    return JetsonInfo(source="/etc/nv_tegra_release")
