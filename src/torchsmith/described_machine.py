"""Describing another machine: never carry a fact over from the machine torchsmith runs on.

``--platform`` naming a different platform means the GPUs, driver, glibc and WSL facts probed
here say nothing about the target. They are dropped unless stated by a flag, and each fact left
unknown becomes a note with source ``assumed`` that the plan repeats under ``assumptions``.
The facts stated by hand are :class:`Overrides` (parsed and applied by ``torchsmith.overrides``).
"""

from __future__ import annotations

from torchsmith import TYPE_CHECKING
from torchsmith.machine import AmdGpu, IntelGpu, Machine, NvidiaGpu, ProbeNote
from torchsmith.records import dataclass, field_names, replace

if TYPE_CHECKING:
    from typing import List, Optional, Tuple

__all__ = ["ASSUMED", "Overrides", "forget_local_facts", "forget_local_python", "state_local_facts"]

ASSUMED = "assumed"


@dataclass(frozen=True)
class Overrides:
    platform: Optional[str] = None
    driver: Optional[str] = None  # "" = no driver
    driver_cuda: Optional[str] = None
    gpus: Optional[Tuple[NvidiaGpu, ...]] = None
    amd_gpus: Optional[Tuple[AmdGpu, ...]] = None  # --gpu amd / 'Radeon RX 7900 XTX' / MI300X
    intel_gpus: Optional[Tuple[IntelGpu, ...]] = None  # --gpu intel / 'Arc A770'
    no_gpu: bool = False
    python_version: Optional[str] = None
    jetson: Optional[str] = None  # L4T release
    rocm_gfx: Optional[Tuple[str, ...]] = None
    rocm_version: Optional[str] = None
    glibc: Optional[str] = None  # "2.17": the target's glibc, for manylinux tags

    def merged_over(self, base: Overrides) -> Overrides:
        """These overrides, falling back to ``base`` for anything not set here."""
        values = {}
        for name in field_names(self) or ():
            mine = getattr(self, name)
            values[name] = mine if mine not in (None, False) else getattr(base, name)
        return Overrides(**values)

    @property
    def empty(self) -> bool:
        return self == Overrides()


def forget_local_facts(machine: Machine, overrides: Overrides) -> Machine:
    """The probed machine without the facts that belong to it, not to the described one."""
    notes: List[ProbeNote] = []
    gpu_stated = bool(overrides.gpus is not None or overrides.driver is not None
                      or overrides.driver_cuda or overrides.no_gpu or overrides.jetson
                      or overrides.amd_gpus or overrides.intel_gpus)
    m = machine
    if not gpu_stated:
        if m.nvidia is not None or m.rocm is not None or m.intel_gpus:
            notes.append(ProbeNote(ASSUMED, "GPUs: none stated for the described machine "
                                            "(--gpu, --driver, --rocm-gfx): planned as having none, "
                                            "not with this machine's GPUs"))
        m = replace(m, nvidia=None, rocm=None if overrides.rocm_gfx is None else m.rocm,
                                intel_gpus=(), jetson=None)
    if not overrides.glibc and m.os.glibc and (overrides.platform or "linux").startswith("linux"):
        notes.append(ProbeNote(ASSUMED, "glibc: not stated (--glibc): wheels were not checked "
                                        "against the described machine's glibc"))
    m = replace(m, apple=None, cuda_toolkits=(), os=replace(
        m.os, glibc=None, wsl_libcuda=None, distro=None, distro_version=None, distro_name=None))
    if not overrides.python_version:
        notes.append(ProbeNote(ASSUMED, f"Python: not stated (--python X.Y): assumed "
                                        f"{m.python.minor or 'unknown'}, the version torchsmith "
                                        f"itself runs on; give the target's"))
    return replace(m, notes=(*m.notes, *notes))


def state_local_facts(machine: Machine, overrides: Overrides) -> Machine:
    """GPU facts given by hand for this platform: the machine may be another one of it, so each
    fact still taken from this machine (Python, glibc) is said, not silently used."""
    notes: List[ProbeNote] = []
    if not overrides.python_version and machine.python.minor and not overrides.jetson:
        notes.append(ProbeNote(ASSUMED, f"Python: not stated (--python X.Y): assumed "
                                        f"{machine.python.minor}, this machine's; give the target's "
                                        f"if it is another machine"))
    here = machine.jetson.l4t if machine.jetson else None
    another_jetson = bool(overrides.jetson) and here != overrides.jetson
    if overrides.glibc is None and machine.os.glibc and not another_jetson:  # its glibc is its L4T's
        notes.append(ProbeNote(ASSUMED, f"glibc: not stated (--glibc X.Y): assumed {machine.os.glibc}, "
                                        f"this machine's; give the target's if it is another machine"))
    return replace(machine, notes=(*machine.notes, *notes)) if notes else machine


def forget_local_python(machine: Machine) -> Machine:
    """A Jetson described from another machine: its Python is the JetPack's, not this one's."""
    note = ProbeNote(ASSUMED, "Python: not stated (--python X.Y) for the described Jetson: assumed "
                              "the JetPack's own system Python")
    return replace(machine, python=replace(machine.python, version=""),
                               notes=(*machine.notes, note))
