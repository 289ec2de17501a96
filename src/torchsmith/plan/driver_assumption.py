"""An NVIDIA GPU described without its driver: an assumption, said first, never a blind pick.

Without a driver the newest release's build may need the newest driver branch (a CUDA 13 build
needs ≥ 580). The plan instead assumes a driver of the oldest CUDA line the recent releases
still publish (the widest range of drivers, through minor-version compatibility), says so
first, and names the newer build a newer driver gets with the flag that removes the assumption.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from torchsmith.plan.check import driver_mode
from torchsmith.plan.core import Constraint, Job
from torchsmith.plan.draft import Draft

if TYPE_CHECKING:
    from torchsmith.kb import TorchRelease, VariantBuild

__all__ = ["assumed_driver_line", "state_assumption"]

RECENT = 4  # releases whose CUDA lines count as "still published"


def assumed_driver_line(job: Job) -> Optional[Tuple[Constraint, str]]:
    """(the preference, the CUDA major it keeps) when the GPU is NVIDIA and no driver is given."""
    view = job.view
    if not view.has_cuda_gpu or view.driver or view.driver_cuda or job.machine.jetson is not None:
        return None
    majors: List[int] = []
    for release in job.idx.kb.releases[:RECENT]:
        for build in release.variants:
            if build.kind == "cuda" and build.cuda and view.platform in build.platforms:
                majors.append(int(build.cuda.split(".")[0]))
    if not majors or min(majors) == max(majors):
        return None  # one CUDA line only: nothing to choose
    major = str(min(majors))

    def oldest_line(_release: TorchRelease, build: Optional[VariantBuild]) -> Optional[str]:
        if build is None or build.kind != "cuda" or (build.cuda or "").split(".")[0] == major:
            return None
        return f"no driver given: assumed one of the CUDA {major} line"

    return Constraint(f"driver not given (assumed CUDA {major}.x)", oldest_line), major


def state_assumption(job: Job, draft: Draft, major: str, without: Draft) -> None:
    """Put the driver assumption first in the plan, with the build a newer driver gets."""
    torch = next((p for p in draft.packages if p.name == "torch"), None)
    if torch is None or draft.variant is None:
        return
    _, full, floor = driver_mode(job.idx.kb, job.view, _cuda_of(job, torch.version, draft.variant))
    line = (f"NVIDIA driver not given: assumed one of the CUDA {major} line (≥ {floor or full or '?'}), "
            f"which runs on the widest range of drivers; planned torch {torch.version} {draft.variant}")
    newer = next((p for p in without.packages if p.name == "torch"), None)
    if without.status == "ok" and newer is not None and (newer.version, without.variant) != (
            torch.version, draft.variant):
        _, newer_full, newer_floor = driver_mode(job.idx.kb, job.view,
                                                 _cuda_of(job, newer.version, without.variant or ""))
        line += (f". With driver ≥ {newer_floor or newer_full or '?'}: torch {newer.version} "
                 f"{without.variant}")
    line += ". Give --driver VERSION (nvidia-smi shows it) to plan for the real driver"
    draft.assumptions.insert(0, line)


def _cuda_of(job: Job, version: str, variant: str) -> str:
    release = job.idx.kb.release(version)
    build = release.variant(variant) if release is not None else None
    return (build.cuda or "") if build is not None else ""
