"""Intel GPUs (PyTorch's XPU backend), found by PCI vendor and class."""

from __future__ import annotations

from typing import List, Tuple

from torchsmith.host import Host
from torchsmith.machine import IntelGpu, ProbeNote

__all__ = ["detect_intel_gpus"]


def detect_intel_gpus(host: Host, notes: List[ProbeNote]) -> Tuple[IntelGpu, ...]:
    return ()
