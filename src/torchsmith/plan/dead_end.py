"""When no build fits: the no-solution plan with its blocker, the ways out, and the reasons."""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from torchsmith.plan import doors
from torchsmith.plan.constraints import allowed_by_user
from torchsmith.plan.core import CONFLICT, PLATFORM, PYTHON, Constraint, Job
from torchsmith.plan.draft import Draft
from torchsmith.plan.hostview import HostView
from torchsmith.plan.index import Index
from torchsmith.plan.model import Blocker, Door, Rejection
from torchsmith.plan.walk import Walk
from torchsmith.versions import version_tuple

__all__ = ["no_solution", "requirement_dead_end"]


def no_solution(job: Job, draft: Draft, walk: Walk, constraints: Sequence[Constraint], what: str) -> None:
    """Mark the draft no-solution: the blocker, the doors out, and why nothing fits."""
    draft.status = "no-solution"
    draft.rejected.extend(r for r in walk.rejected if r not in draft.rejected)
    blocker = doors.blocker_of(job, walk, constraints)
    if walk.blocked is not None:  # the newest build that runs here, and the requirement refusing it
        check, _, why = walk.blocked
        draft.reject(Rejection(check.label, f"runs here, but {why}", CONFLICT))
    if blocker is not None:
        draft.blocker = blocker
        draft.alternatives.extend(doors.doors_for(job, walk, constraints, blocker))
        draft.reasons.append(f"blocked by {blocker.constraint}: {blocker.detail}")
        if blocker.code in (PYTHON, PLATFORM):
            _no_solution_reasons(job, draft, walk, constraints, what, blocked=False)
        return
    _no_solution_reasons(job, draft, walk, constraints, what)


def _no_solution_reasons(job: Job, draft: Draft, walk: Walk, constraints: Sequence[Constraint],
                         what: str, *, blocked: bool = True) -> None:
    idx, view = job.idx, job.view
    if walk.blocked is not None and blocked:
        check, constraint, why = walk.blocked
        draft.reasons.append(f"{check.label} would run here, but {why}: the requirement "
                             f"{constraint.label} rules out every build that runs here")
        draft.reject(Rejection(check.label, f"runs here, but {why}", CONFLICT))
        return
    if walk.failures and set(walk.failures) <= {PYTHON, PLATFORM}:
        if not view.python[:1].isdigit():
            draft.reasons.append(f"torch publishes wheels for CPython only; this interpreter is "
                                 f"{view.python}: use CPython")
            return
        newest = _python_hint(idx, view, constraints)
        if newest and PYTHON in walk.failures:
            draft.reasons.append(f"no torch release has a wheel for Python {view.python} on "
                                 f"{view.platform}; the newest Python that works is {newest}")
            return
        draft.reasons.append(f"no torch wheel exists for {view.shown_platform}")
        return
    if blocked:  # with a named blocker, this catch-all would only blur it
        draft.reasons.append(f"no torch build {what}")


def _python_hint(idx: Index, view: HostView, constraints: Sequence[Constraint]) -> str:
    """The newest Python with a torch wheel on this platform (within the user's pins)."""
    best: Optional[Tuple[Tuple[int, ...], str]] = None
    for rel in idx.releases:
        if not allowed_by_user(constraints, rel.data):
            continue
        for tag in rel.data.python.get(view.platform, ()) or ():
            free = tag.endswith("t")
            if free != view.python.endswith("t"):
                continue
            key = version_tuple(tag.rstrip("t"))
            if best is None or key > best[0]:
                best = (key, tag)
    return best[1] if best else ""


def requirement_dead_end(job: Job, blocker: Blocker) -> Draft:
    """A no-solution for requirements that exclude each other, or a CUDA-only package without a GPU."""
    draft = Draft(status="no-solution")
    draft.blocker = blocker
    draft.reasons.append(f"blocked by {blocker.constraint}: {blocker.detail}")
    reqs = job.request.requirements
    if blocker.code == CONFLICT:  # two requirements exclude each other: drop the one named
        name = blocker.constraint.split(" ", 1)[0]
        kept = [r for r in reqs if r.replace(" ", "") != name.replace(" ", "")]
        draft.alternatives.append(Door("requirement", f"drop {name}: the other requirements pick a "
                                                      f"version that fits them all", f"remove {name}",
                                       doors.plan_command(kept)))
    else:
        draft.alternatives.append(Door("flag", "plan for the NVIDIA machine it will run on",
                                       "--gpu CC --driver VERSION",
                                       doors.plan_command(reqs, "--gpu CC --driver VERSION")))
    draft.assumptions.extend(job.request.assumptions)
    return draft
