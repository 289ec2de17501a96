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
from torchsmith.plan.vendor_described import (
    GFX_HINT,
    AmdDescribed,
    describe_amd,
    platform_doors,
    vendor_platform_dead_end,
)
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
    described = describe_amd(idx.kb, rocm.gpus)
    gfxs = described.gfxs
    names = ", ".join(described.labels)
    draft = Draft(reasons=list(described.notes))
    if described.vague and not gfxs and not any(g.source.startswith("override") for g in rocm.gpus):
        # Probed without ROCm (an AMD display controller on the PCI bus): maybe only an iGPU.
        draft.warnings.append(Caution(f"AMD GPU {names}: gfx target unknown; pass {GFX_HINT}"))
        return draft.then(plan_cpu(job, constraints, "AMD GPU with an unknown gfx target"))
    if described.vague and not gfxs:
        if machine.os.system == "windows":
            return vendor_platform_dead_end(
                job, "amd", f"AMD GPU {names}", "PyTorch publishes no ROCm wheels for Windows and AMD "
                "TheRock's Windows wheels are built per gfx target, which was not given")
        return draft.then(_plan_family(job, constraints, described, names))
    if described.vague:
        draft.warnings.append(Caution(f"{', '.join(described.vague)}: gfx target not known, so the plan "
                                      f"covers {', '.join(gfxs)} only; give {GFX_HINT} for each card"))
    if machine.os.system == "windows":
        return draft.then(plan_windows_amd(job, constraints, gfxs, names))

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
        return platform_doors(job, draft, "amd")
    for rejection in walk.rejected:
        draft.reject(rejection)
    draft.warnings.append(Caution(f"no ROCm build of torch in the data supports {names}, and no "
                                  f"documented override applies; planned the CPU build"))
    return draft.then(plan_cpu(job, constraints, f"no ROCm build supports {names}"))


def _plan_family(job: Job, constraints: Sequence[Constraint], described: AmdDescribed, names: str) -> Draft:
    """AMD GPUs without a gfx target: the newest ROCm build compiled for some card of the family
    (any card, for the vendor alone), planned and said so with the flag that makes it exact."""
    family = described.family
    draft = Draft()

    def lists_one_of_family(check: Check) -> Optional[Tuple[str, str]]:
        compiled = tuple(check.variant.gfx or ())
        if family is None or any(g in compiled for g in family):
            return None
        return ARCH, f"{check.label} is compiled for none of {', '.join(family)}"

    walk = walk_releases(job, ("rocm",), constraints, accept=lists_one_of_family)
    if walk.chosen is None:
        no_solution(job, draft, walk, constraints, f"runs on {names}")
        return platform_doors(job, draft, "amd")
    _finish(job, draft, walk.chosen, walk.rejected, names)
    compiled = tuple(walk.chosen.variant.gfx or ())
    build = f"torch {walk.chosen.release.text} {walk.chosen.variant.name}"
    if family is None:
        what = (f"AMD GPU whose gfx target is not known ({', '.join(described.vague)}): planned {build}, the "
                f"newest ROCm build, compiled for {' '.join(compiled) or 'the gfx targets in its notes'}; "
                f"a card outside that list needs another build or an HSA override")
    else:
        covered = [g for g in family if g in compiled]
        missing = [g for g in family if g not in compiled]
        what = (f"{', '.join(described.vague)} names a family of AMD GPUs ({', '.join(family)}), not one "
                f"model: planned {build}, compiled for {', '.join(covered)}"
                + (f"; not for {', '.join(missing)}" if missing else ""))
    draft.warnings.append(f"{what}; give {GFX_HINT} for an exact plan")
    return draft


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
