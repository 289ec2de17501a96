"""AMD GPUs: a ROCm build whose gfx list has the card, else the HSA_OVERRIDE_GFX_VERSION route.

PyTorch's ROCm wheels exist for Linux x86_64 only and carry their own ROCm user-space libraries
(the host needs the amdgpu kernel driver). A card whose gfx target is not compiled in can
sometimes borrow a sibling's kernels with ``HSA_OVERRIDE_GFX_VERSION``; that is a documented
community workaround with real risk, so the plan says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from torchsmith.output import Caution
from torchsmith.plan.adopt import adopt, reject_pypi_default
from torchsmith.plan.core import ARCH, PLATFORM, PYTHON, Check, Constraint, Job
from torchsmith.plan.cpu import plan_cpu
from torchsmith.plan.dead_end import no_solution
from torchsmith.plan.doors import capped_by
from torchsmith.plan.draft import Draft
from torchsmith.plan.model import Rejection
from torchsmith.plan.therock import plan_windows_amd
from torchsmith.plan.walk import Walk, walk_releases

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["hsa_override_for", "plan_rocm"]

Override = Tuple[str, str, Tuple[str, ...]]  # (HSA_OVERRIDE_GFX_VERSION value, runs as, source urls)


def hsa_override_for(gfx: str, kb: KnowledgeBase) -> Optional[Override]:
    """(override value, the gfx it runs as, source urls) for a card outside the wheels' list."""
    route = kb.hsa_override(gfx)
    return (route.value, route.runs_as, route.urls) if route is not None else None


def plan_rocm(job: Job, constraints: Sequence[Constraint]) -> Draft:
    """The newest ROCm build compiled for every card, else the override route, else CPU."""
    machine, idx = job.machine, job.idx
    rocm = machine.rocm
    assert rocm is not None
    gfxs = [g.gfx for g in rocm.gpus if g.gfx]
    names = ", ".join(f"{g.name} ({g.gfx or 'gfx unknown'})" for g in rocm.gpus)
    if machine.os.system == "windows":
        return plan_windows_amd(job, constraints, gfxs, names)
    draft = Draft()
    if not gfxs:
        draft.warnings.append(Caution(f"AMD GPU {names}: gfx target unknown; pass --rocm-gfx gfxNNNN"))
        return draft.then(plan_cpu(job, constraints, "AMD GPU with an unknown gfx target"))

    def lists_every_card(check: Check) -> Optional[Tuple[str, str]]:
        compiled = tuple(check.variant.gfx or ())
        missing = [g for g in gfxs if g not in compiled]
        if missing:
            built = f"is compiled for {' '.join(compiled)}" if compiled else "has no gfx list in the data"
            return ARCH, (f"{check.label} {built}; not {', '.join(missing)}"
                          f"{idx.cite(check.variant.sources, 1)}")
        return None

    walk = walk_releases(job, ("rocm",), constraints, accept=lists_every_card)
    if walk.chosen is not None:
        _finish(job, draft, walk.chosen, walk.rejected, names)
        cap = capped_by(walk)
        if cap:  # the deciding constraint, named: not "the newest ROCm build"
            draft.reasons.insert(0, f"torch {walk.chosen.release.text} {walk.chosen.variant.name}: {cap}")
        return draft
    if _override_route(job, constraints, draft, walk, gfxs=gfxs, names=names):
        if walk.blocked is not None:  # a newer build lists the card itself; a pin keeps it out
            newer, constraint, _why = walk.blocked
            draft.reasons.append(f"torch {newer.release.text} {newer.variant.name} lists "
                                 f"{', '.join(gfxs)} itself (no override needed), but {constraint.label} "
                                 f"excludes it")
        return draft
    if walk.blocked is not None or (walk.failures and set(walk.failures) <= {PYTHON, PLATFORM}):
        no_solution(job, draft, walk, constraints, f"runs on {names}")
        return draft
    for rejection in walk.rejected:
        draft.reject(rejection)
    draft.warnings.append(Caution(f"no ROCm build of torch in the data supports {names}, and no "
                                  f"documented override applies; planned the CPU build"))
    return draft.then(plan_cpu(job, constraints, f"no ROCm build supports {names}"))


def _override_route(job: Job, constraints: Sequence[Constraint], draft: Draft, walk: Walk, *,
                    gfxs: Sequence[str], names: str) -> bool:
    """Plan the build a documented HSA_OVERRIDE_GFX_VERSION makes the cards run; False if none."""
    kb = job.idx.kb
    override = _one_override(gfxs, kb)
    if override is None:
        return False
    value, runs_as, urls = override
    substitute = [runs_as if hsa_override_for(g, kb) else g for g in gfxs]

    def lists_substitute(check: Check) -> Optional[Tuple[str, str]]:
        compiled = tuple(check.variant.gfx or ())
        if all(g in compiled for g in substitute):
            return None
        return ARCH, f"{check.label} lacks {runs_as} too"

    routed = walk_releases(job, ("rocm",), constraints, accept=lists_substitute)
    if routed.chosen is None:
        return False
    _finish(job, draft, routed.chosen, walk.rejected, names)
    table = job.idx.kb.document("hsa_override")
    risk = table["risk"].format(runs_as=runs_as, gfx=", ".join(gfxs))
    risk_urls = "; ".join(table["sources"][i] for i in table["risk_source"])
    draft.environment.append(("HSA_OVERRIDE_GFX_VERSION", value))
    draft.reasons.append(f"no ROCm build the request allows lists {', '.join(gfxs)}; with "
                         f"HSA_OVERRIDE_GFX_VERSION={value} the card runs {runs_as} kernels "
                         f"[source: {'; '.join(urls)}]")
    draft.warnings.append(Caution(f"HSA_OVERRIDE_GFX_VERSION={value} is {risk} [source: {risk_urls}]"))
    return True


def _one_override(gfxs: Sequence[str], kb: KnowledgeBase) -> Optional[Override]:
    routes = [hsa_override_for(g, kb) for g in gfxs]
    known = [r for r in routes if r is not None]
    if not known or len({r[0] for r in known}) != 1:
        return None  # one process has one override: mixed families cannot share it
    return known[0]


def _finish(job: Job, draft: Draft, chosen: Check, rejected: List[Rejection], names: str) -> None:
    idx = job.idx
    adopt(job, draft, chosen, rejected, "rocm")
    rel = chosen.release.data
    draft.reasons.append(f"{names}: torch {rel.version} {chosen.variant.name} is the newest ROCm "
                         f"build compiled for it (gfx list: {' '.join(chosen.variant.gfx or ())})"
                         f"{idx.cite(chosen.variant.sources, 1)}")
    sdk = getattr(chosen.variant, "rocm_sdk", "")
    libraries = (f"this build takes the ROCm user-space libraries from {sdk}" if sdk
                 else "PyTorch's ROCm wheels bundle the ROCm user-space libraries")
    draft.reasons.append(f"{libraries}; the host needs the amdgpu kernel driver and access to "
                         f"/dev/kfd and /dev/dri{idx.cite(chosen.variant.sources, 1) if sdk else ''}")
    rocm = job.machine.rocm
    if rocm is not None and rocm.kfd_access is False:
        draft.warnings.append(Caution("this user cannot open /dev/kfd: add it to the render and video "
                                      "groups (sudo usermod -aG render,video $USER, then log in again) "
                                      "or torch sees no GPU"))
    reject_pypi_default(draft, idx, job.view, chosen)
