"""AMD GPUs and ROCm."""

from __future__ import annotations

from typing import List, Optional

from torchsmith.host import Host
from torchsmith.machine import ProbeNote, RocmInfo

__all__ = ["detect_rocm"]


def detect_rocm(host: Host, notes: List[ProbeNote]) -> Optional[RocmInfo]:
    """ROCm and AMD GPUs, or None when there is no sign of either."""
    if host.read_text("/dev/kfd") is None and host.list_dir("/opt/rocm") is None:
        return None
    return RocmInfo(source="/opt/rocm")
