"""The walk over releases: newest first, the first release with a working build wins.

Within that release full driver support beats minor-version compatibility, then (with no
driver known) the build that runs on the widest range of drivers. Newer builds that were turned
down are kept as rejections; so is the newest build the hardware runs but a constraint refuses.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

from torchsmith.plan.check import check_variant
from torchsmith.plan.constraints import allowed_by_user, first_conflict
from torchsmith.plan.core import Check, Constraint, Job
from torchsmith.plan.hostview import GpuView
from torchsmith.plan.index import Release
from torchsmith.plan.model import Rejection
from torchsmith.versions import version_tuple

__all__ = ["Accept", "Walk", "prefer_wide_driver_range", "rank", "walk_releases"]

# A planner's own test of a build that runs (ROCm: its gfx list): (code, reason) to refuse it.
Accept = Callable[[Check], Optional[Tuple[str, str]]]

_MAX_NEWER_REJECTIONS = 12  # enough to show the pattern, short enough to read


class Walk:
    """What a walk found: the chosen build, and what it passed over on the way."""

    def __init__(self) -> None:
        self.chosen: Optional[Check] = None
        self.rejected: List[Rejection] = []
        self.blocked: Optional[Tuple[Check, Constraint, str]] = None  # newest build the hardware runs
        self.failures: Dict[str, int] = {}
        # Within the user's own pins: builds that fail here, and builds another constraint refuses.
        self.pinned_failures: List[Check] = []
        self.pinned_conflicts: List[Tuple[Check, Constraint, str]] = []


def rank(check: Check) -> Tuple[int, Tuple[int, ...]]:
    """Full (or unneeded) driver support first, then the newest CUDA/ROCm."""
    variant = check.variant
    return (1 if check.driver_mode in ("full", "unknown", "") else 0,
            version_tuple(variant.cuda or variant.rocm or ""))


def prefer_wide_driver_range(check: Check) -> Tuple[int, int, Tuple[int, ...]]:
    """Sort key within a release: full driver support first; with no driver known, lowest CUDA."""
    variant = check.variant
    cuda = version_tuple(variant.cuda or variant.rocm or "")
    if check.driver_mode == "unknown":
        return (1, 1, tuple(-x for x in cuda))
    return (1 if check.driver_mode in ("full", "") else 0, 0, cuda)


def walk_releases(job: Job, kinds: Tuple[str, ...], constraints: Sequence[Constraint], *,
                  gpus: Optional[Sequence[GpuView]] = None, accept: Optional[Accept] = None) -> Walk:
    """Newest release first; the first release with a working variant (of ``kinds``) wins."""
    idx, view = job.idx, job.view
    walk = Walk()
    newer_rejections = 0
    for rel in idx.releases:
        variants = [v for v in rel.data.variants if v.kind in kinds]
        if not variants:
            continue
        checks = [check_variant(idx, view, rel, v, gpus) for v in variants]
        if accept is not None:
            checks = [_accepted(c, accept) for c in checks]
        pinned = allowed_by_user(constraints, rel.data)
        working = _working(walk, rel, checks, constraints, pinned)
        if working:
            working.sort(key=prefer_wide_driver_range, reverse=True)
            walk.chosen = working[0]
            better = [c for c in checks if not c.ok and rank(c)[1] > rank(working[0])[1]]
            walk.rejected.extend(Rejection(c.label, c.reason, c.code) for c in better)
            return walk
        if pinned:
            failing = sorted((c for c in checks if not c.ok), key=rank, reverse=True)
            for check in failing[:max(0, _MAX_NEWER_REJECTIONS - newer_rejections)]:
                walk.rejected.append(Rejection(check.label, check.reason, check.code))
                newer_rejections += 1
    return walk


def _working(walk: Walk, rel: Release, checks: Sequence[Check], constraints: Sequence[Constraint],
             pinned: bool) -> List[Check]:
    """The builds of one release that run here and every constraint allows; notes the others."""
    working: List[Check] = []
    for check in checks:
        if not check.ok:
            walk.failures[check.code] = walk.failures.get(check.code, 0) + 1
            if pinned:
                walk.pinned_failures.append(check)
            continue
        conflict = first_conflict(constraints, rel.data, check.variant)
        if conflict is None:
            working.append(check)
            continue
        if walk.blocked is None:
            walk.blocked = (check, conflict[0], conflict[1])
        if pinned:
            walk.pinned_conflicts.append((check, conflict[0], conflict[1]))
    return working


def _accepted(check: Check, accept: Accept) -> Check:
    if not check.ok:
        return check
    refusal = accept(check)
    return check if refusal is None else check._replace(code=refusal[0], reason=refusal[1])
