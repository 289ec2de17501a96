"""Display controllers on the PCI bus, read from sysfs (Linux only)."""

from __future__ import annotations

from torchsmith import TYPE_CHECKING
from torchsmith.host import Host
from torchsmith.machine import MAX_GPUS
from torchsmith.records import dataclass

if TYPE_CHECKING:
    from typing import List

__all__ = ["PciDevice", "display_devices"]

_SYSFS = "/sys/bus/pci/devices"
# The largest real servers expose a few hundred PCI functions; a sysfs (or a capture) listing
# thousands is not a machine to read file by file.
MAX_SLOTS = 2048


@dataclass(frozen=True)
class PciDevice:
    slot: str  # 0000:03:00.0
    vendor: str  # 8086 (lower-case hex, no 0x)
    device: str  # 56a0


def _hex_id(text: str) -> str:
    value = text.strip().lower()
    return value[2:] if value.startswith("0x") else value


def display_devices(host: Host, vendor: str) -> List[PciDevice]:
    """Devices of ``vendor`` (``"8086"``) whose PCI class is a display controller (0x03xxxx)."""
    found: List[PciDevice] = []
    for slot in (host.list_dir(_SYSFS) or [])[:MAX_SLOTS]:
        if len(found) >= MAX_GPUS:
            break
        base = f"{_SYSFS}/{slot}"
        vendor_text = host.read_text(f"{base}/vendor")
        if vendor_text is None or _hex_id(vendor_text) != vendor:
            continue
        class_text = host.read_text(f"{base}/class")
        if class_text is None or not _hex_id(class_text).startswith("03"):
            continue
        device = _hex_id(host.read_text(f"{base}/device") or "")
        if len(device) == 4 and all(c in "0123456789abcdef" for c in device):
            found.append(PciDevice(slot, vendor, device))
    return found
