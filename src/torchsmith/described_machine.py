"""Describing another machine: never carry a fact over from the machine torchsmith runs on.

``--platform`` naming a different platform means the GPUs, driver, glibc and WSL facts probed
here say nothing about the target. They are dropped unless stated by a flag, and each fact left
unknown becomes a note with source ``assumed`` that the plan repeats under ``assumptions``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, List

from torchsmith.machine import Machine, ProbeNote

if TYPE_CHECKING:
    from torchsmith.overrides import Overrides

__all__ = ["ASSUMED", "forget_local_facts", "forget_local_python", "state_local_facts"]

ASSUMED = "assumed"


def forget_local_facts(machine: Machine, overrides: Overrides) -> Machine:
    """The probed machine without the facts that belong to it, not to the described one."""
    notes: List[ProbeNote] = []
    gpu_stated = bool(overrides.gpus is not None or overrides.driver is not None
                      or overrides.driver_cuda or overrides.no_gpu or overrides.jetson)
    m = machine
    if not gpu_stated:
        if m.nvidia is not None or m.rocm is not None or m.intel_gpus:
            notes.append(ProbeNote(ASSUMED, "GPUs: none stated for the described machine "
                                            "(--gpu, --driver, --rocm-gfx): planned as having none, "
                                            "not with this machine's GPUs"))
        m = dataclasses.replace(m, nvidia=None, rocm=None if overrides.rocm_gfx is None else m.rocm,
                                intel_gpus=(), jetson=None)
    if not overrides.glibc and m.os.glibc:
        notes.append(ProbeNote(ASSUMED, "glibc: not stated (--glibc): wheels were not checked "
                                        "against the described machine's glibc"))
    m = dataclasses.replace(m, apple=None, cuda_toolkits=(), os=dataclasses.replace(
        m.os, glibc=None, wsl_libcuda=None, distro=None, distro_version=None, distro_name=None))
    if not overrides.python_version:
        notes.append(ProbeNote(ASSUMED, f"Python: not stated (--python X.Y): assumed "
                                        f"{m.python.minor or 'unknown'}, the version torchsmith "
                                        f"itself runs on; give the target's"))
    return dataclasses.replace(m, notes=(*m.notes, *notes))


def state_local_facts(machine: Machine, overrides: Overrides) -> Machine:
    """GPU facts given by hand for this platform: the machine may be another one of it, so each
    fact still taken from this machine (Python, glibc) is said, not silently used."""
    notes: List[ProbeNote] = []
    if not overrides.python_version and machine.python.minor and not overrides.jetson:
        notes.append(ProbeNote(ASSUMED, f"Python: not stated (--python X.Y): assumed "
                                        f"{machine.python.minor}, this machine's; give the target's "
                                        f"if it is another machine"))
    if overrides.glibc is None and machine.os.glibc:
        notes.append(ProbeNote(ASSUMED, f"glibc: not stated (--glibc X.Y): assumed {machine.os.glibc}, "
                                        f"this machine's; give the target's if it is another machine"))
    return dataclasses.replace(machine, notes=(*machine.notes, *notes)) if notes else machine


def forget_local_python(machine: Machine) -> Machine:
    """A Jetson described from another machine: its Python is the JetPack's, not this one's."""
    note = ProbeNote(ASSUMED, "Python: not stated (--python X.Y) for the described Jetson: assumed "
                              "the JetPack's own system Python")
    return dataclasses.replace(machine, python=dataclasses.replace(machine.python, version=""),
                               notes=(*machine.notes, note))
