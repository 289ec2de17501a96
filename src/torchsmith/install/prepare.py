"""What an install will do, decided before anything changes: its groups, the device verify must
find, and the lock's metadata; from a plan or from a lock to reproduce."""

from __future__ import annotations

from dataclasses import field
from typing import List, Optional, Sequence

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from torchsmith.errors import InstallError, load_json_file
from torchsmith.install.lock import Lock, read_lock
from torchsmith.install.steps import Group, groups_from_plan
from torchsmith.install.verify import expected_device
from torchsmith.machine import Machine
from torchsmith.output import Caution
from torchsmith.plan.conflict_words import Pairing
from torchsmith.plan.model import Plan
from torchsmith.records import dataclass

__all__ = ["Prepared", "prepare_from_lock", "prepare_from_plan", "unplanned"]


@dataclass
class Prepared:
    groups: List[Group]
    expect: str  # the device verify must find: cpu | cuda | rocm | mps
    lock: Lock  # the metadata of the lock the install writes
    warnings: List[str] = field(default_factory=list)
    # (package, torch, range) -> the release that pairs: names the way out of a resolver's refusal.
    pairing: Optional[Pairing] = None


def unplanned(requirements: Sequence[str], plan: Plan) -> List[str]:
    """Requirements the plan leaves to the user's index (no torch-specific build): install them
    last, constrained to the planned torch."""
    planned = {p.name for p in plan.packages} | {"torch", "torchvision", "torchaudio"}
    planned |= {canonicalize_name(Requirement(text).name) for text in plan.unplanned}  # in its steps
    return [text for text in requirements if canonicalize_name(Requirement(text).name) not in planned]


def prepare_from_plan(plan: Plan, requirements: Sequence[str]) -> Prepared:
    """The plan's groups, then what it left to the user's index (torch kept)."""
    groups, warnings = groups_from_plan(plan)
    left = unplanned(requirements, plan)
    if left:
        groups.append(Group(f"{', '.join(left)} from your configured index (torch kept)", tuple(left)))
    # The plan leaves unplanned packages to the user; install takes them (last, torch kept).
    kept = [w for w in plan.warnings if not (left and w.startswith("not planned by torchsmith"))]
    lock = Lock(packages=[], python=plan.python, platform=plan.platform, variant=plan.variant,
                accelerator=plan.accelerator, kb_version=plan.kb_version)
    return Prepared(groups, expected_device(plan.accelerator), lock, kept + warnings)


def prepare_from_lock(path: str, torch_index: Optional[str], machine: Machine) -> Prepared:
    """The groups reproducing the lock at ``path``, the torch index base replaced by a mirror."""
    _check_lock_entries(path)
    lock = read_lock(path)
    groups = lock.groups(torch_index)
    expect = expected_device(lock.accelerator)
    if expect in ("cuda", "rocm") and not (machine.has_nvidia_gpu or (machine.rocm and machine.rocm.gpus)):
        expect = "cpu"  # a GPU build on a machine without the GPU: import and compute on the CPU
    warnings: List[str] = []
    if lock.platform and lock.platform != machine.platform:
        warnings.append(Caution(f"the lock was made for {lock.platform}; this machine is {machine.platform}"))
    return Prepared(groups, expect, lock, warnings)


def _check_lock_entries(path: str) -> None:
    """``packages`` must be a list of objects: read_lock indexes into each entry."""
    data = load_json_file(path, "the lock", InstallError, code="lock-invalid")
    packages = data.get("packages") if isinstance(data, dict) else None
    if packages is not None and not (isinstance(packages, list)
                                     and all(isinstance(p, dict) for p in packages)):
        raise InstallError(f"the lock {path}: 'packages' must be a list of objects",
                           code="lock-invalid",
                           hint="use the torchsmith.lock.json that `torchsmith install` wrote")
