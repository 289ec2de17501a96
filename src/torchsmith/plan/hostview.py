"""The few facts about a machine that decide which torch wheel runs on it.

:func:`host_view` reduces a :class:`~torchsmith.machine.Machine` to what the resolver checks:
the wheel platform, the Python tag, the GPUs the job will see (with compute capability, from
the probe or the data), and the driver. Pure: no I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from torchsmith.compat import Arch, parse_cc
from torchsmith.machine import Machine
from torchsmith.records import dataclass
from torchsmith.versions import driver_tuple, version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = [
    "GpuView",
    "HostView",
    "driver_max_cuda",
    "driver_tuple",
    "host_view",
    "version_tuple",
]


@dataclass(frozen=True)
class GpuView:
    index: int
    name: str
    cc: Tuple[int, int]  # (8, 6)
    source: str

    @property
    def arch(self) -> str:
        return Arch(*self.cc).sass_name

    @property
    def label(self) -> str:
        return f"GPU {self.index} {self.name} (compute capability {self.cc[0]}.{self.cc[1]}, {self.arch})"


@dataclass(frozen=True)
class HostView:
    platform: str  # wheel platform: WSL installs Linux wheels -> "linux-x86_64"
    shown_platform: str  # machine.platform, as the user knows it
    driver_system: str  # whose driver-version table applies: "linux" | "windows" (WSL: windows)
    python: str  # "3.11", or "3.13t" for a free-threaded build
    gpus: Tuple[GpuView, ...]  # NVIDIA GPUs the job will use
    unknown_gpus: Tuple[str, ...]  # names of GPUs whose compute capability nobody knows
    driver: Optional[str]
    driver_source: str
    driver_cuda: Optional[str]  # highest CUDA the driver supports
    driver_cuda_source: str
    notes: Tuple[str, ...] = ()  # facts that could not be used, said as warnings

    @property
    def has_cuda_gpu(self) -> bool:
        return bool(self.gpus or self.unknown_gpus)


def host_view(machine: Machine, kb: KnowledgeBase) -> HostView:
    system = machine.os.system
    arch = machine.os.arch
    platform = f"linux-{arch}" if machine.os.wsl else machine.platform
    python = machine.python.minor + ("t" if machine.python.free_threaded else "")
    implementation = machine.python.implementation or "CPython"
    if implementation.lower() != "cpython":
        python = f"{implementation} {python}"  # matches no CPython wheel tag, by design
    gpus: List[GpuView] = []
    unknown: List[str] = []
    nvidia = machine.nvidia
    for gpu in nvidia.visible_gpus if nvidia else ():
        cc = parse_cc(gpu.compute_capability)
        source = gpu.source or (nvidia.gpus_source if nvidia else "")
        if cc is None:
            model = kb.gpu_by_name(gpu.name) if gpu.name else None
            cc = parse_cc(getattr(model, "compute_capability", None))
            source = "torchsmith data (by name)"
        family = _family(kb, gpu.index, gpu.name) if cc is None and gpu.name else ()
        if family:
            gpus.extend(family)
        elif cc is None:
            unknown.append(gpu.name or f"GPU {gpu.index}")
        else:
            gpus.append(GpuView(gpu.index, gpu.name or f"GPU {gpu.index}", cc, source))
    notes: List[str] = [_family_note(g) for g in gpus if g.source == FAMILY_SOURCE][:1]
    driver = nvidia.driver_version if nvidia else None
    if driver and not version_tuple(driver):
        notes.append(f"NVIDIA driver version {driver!r} is not a version number; treated as unknown")
        driver = None
    driver_cuda = nvidia.driver_cuda if nvidia else None
    if driver_cuda and len(version_tuple(driver_cuda)) < 2:
        notes.append(f"driver CUDA version {driver_cuda!r} is not X.Y; treated as unknown")
        driver_cuda = None
    driver_cuda_source = nvidia.driver_cuda_source if nvidia else ""
    driver_system = "windows" if (system == "windows" or machine.os.wsl) else "linux"
    if driver and not driver_cuda:
        driver_cuda = kb.driver_max_cuda(driver, system=driver_system)
        driver_cuda_source = "torchsmith data (driver branch table)"
    return HostView(
        platform=platform,
        shown_platform=machine.platform,
        driver_system=driver_system,
        python=python,
        gpus=tuple(gpus),
        unknown_gpus=tuple(unknown),
        driver=driver,
        driver_source=nvidia.driver_version_source if nvidia else "",
        driver_cuda=driver_cuda,
        driver_cuda_source=driver_cuda_source,
        notes=tuple(notes),
    )


FAMILY_SOURCE = "torchsmith data (every model of a family)"


def _family(kb: KnowledgeBase, index: int, name: str) -> Tuple[GpuView, ...]:
    """A name that is a family in the GPU table ("RTX 30", "A"): one view per compute capability
    of its models, so the plan covers each of them."""
    from torchsmith.kb.rows import normalize_gpu_name

    prefix = normalize_gpu_name(name)
    if len(prefix) < 2:
        return ()
    models: Dict[Tuple[int, int], List[str]] = {}
    for model in kb.gpus:
        cc = parse_cc(model.compute_capability)
        if cc is not None and normalize_gpu_name(model.name).startswith(prefix):
            models.setdefault(cc, []).append(model.name)
    return tuple(GpuView(index, f"{name} ({', '.join(names[:3])}{'…' if len(names) > 3 else ''})", cc,
                         FAMILY_SOURCE) for cc, names in sorted(models.items()))


def _family_note(gpu: GpuView) -> str:
    family = gpu.name.split(" (", 1)[0]
    return (f"{family} names a family of GPUs, not one model: planned a build that runs on every model "
            f"of it in the GPU table; give the exact model (--gpu 'RTX 3090') or its compute capability "
            f"(--gpu 8.6) for an exact plan")


def driver_max_cuda(machine: Machine, kb: KnowledgeBase) -> Optional[str]:
    """The newest CUDA the machine's NVIDIA driver supports: as reported, else from the driver
    version by the same table ``plan`` uses (``--driver 535.183.01`` alone: 12.2).
    """
    nvidia = machine.nvidia
    if nvidia is None or not (nvidia.driver_cuda or nvidia.driver_version):
        return None
    return host_view(machine, kb).driver_cuda
