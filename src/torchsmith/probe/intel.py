"""Intel GPUs (PyTorch's XPU backend), found by PCI vendor 0x8086 and display class 0x03."""

from __future__ import annotations

from torchsmith import TYPE_CHECKING
from torchsmith.host import Host
from torchsmith.machine import IntelGpu, ProbeNote
from torchsmith.probe.pci import display_devices

if TYPE_CHECKING:
    from typing import Dict, List, Tuple

__all__ = ["INTEL_GPU_NAMES", "detect_intel_gpus", "intel_gpu_name"]

_INTEL_VENDOR = "8086"

# Device id -> name, from the PCI ID Repository (pci.ids 2023.04.11, Debian package pci.ids
# 0.0~2023.04.11-1; https://pci-ids.ucw.cz/read/PC/8086). Unknown ids keep their number.
INTEL_GPU_NAMES: Dict[str, str] = {
    "56a0": "Intel Arc A770",
    "56a1": "Intel Arc A750",
    "56a5": "Intel Arc A380",
    "5690": "Intel Arc A770M",
    "56c0": "Intel Data Center GPU Flex 170",
    "56c1": "Intel Data Center GPU Flex 140",
    "0bd5": "Intel Data Center GPU Max 1550",
    "0bda": "Intel Data Center GPU Max 1100",
}


def intel_gpu_name(device: str) -> str:
    return INTEL_GPU_NAMES.get(device.lower(), f"Intel GPU {_INTEL_VENDOR}:{device.lower()}")


def detect_intel_gpus(host: Host, notes: List[ProbeNote]) -> Tuple[IntelGpu, ...]:
    """Intel display controllers on the PCI bus (Linux and WSL; Windows is not read)."""
    if host.platform().system != "Linux":
        return ()
    return tuple(
        IntelGpu(name=intel_gpu_name(d.device), pci_id=f"{d.vendor}:{d.device}",
                 source=f"/sys/bus/pci/devices/{d.slot}")
        for d in display_devices(host, _INTEL_VENDOR)
    )
