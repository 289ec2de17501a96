"""The resolver: which torch stack runs on this host, and why the better-looking ones do not.

``resolve(machine, request, kb) -> Plan`` is a pure function of its inputs: no I/O, no probing,
no clock. It walks torch releases newest first and, for each, the variants built for the host's
accelerator, checking in order: the platform has the variant, the Python has a wheel, every GPU
the job uses has SASS (or usable PTX) in the build, and the driver runs the variant's CUDA (fully,
or through NVIDIA's minor-version compatibility). The first release with a working variant wins;
within it, full driver support beats minor-version compatibility, then the newest CUDA.
Everything newer that was turned down is listed in ``Plan.rejected`` with a stable code.

This module only orchestrates; the pieces live below it and never import it:
``index`` (the data, parsed once) → ``core`` (Job, Check, Constraint, codes) → ``check`` (one
build on one host) → ``constraints`` / ``walk`` (the walk over releases) → ``draft`` / ``adopt`` /
``dead_end`` / ``doors`` → the planners ``cpu``, ``cuda``, ``jetson``, ``rocm``, ``xpu`` and
``companions`` / ``downstream`` / ``described``; ``matrix`` is the same checks as a table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from torchsmith.machine import Machine
from torchsmith.output import Caution
from torchsmith.plan import companions, downstream
from torchsmith.plan.artifacts import attach_artifacts
from torchsmith.plan.check import check_variant
from torchsmith.plan.constraints import family_constraints, glibc_constraint
from torchsmith.plan.core import (
    ARCH,
    CONFLICT,
    DEFAULT_REQUIREMENTS,
    DRIVER,
    NO_GPU_BUILD,
    PLATFORM,
    PYTHON,
    TORCH_FAMILY,
    Constraint,
    Job,
)
from torchsmith.plan.cpu import no_gpu_reason, plan_cpu, plan_macos
from torchsmith.plan.cuda import plan_cuda
from torchsmith.plan.dead_end import requirement_dead_end
from torchsmith.plan.described import detection_dead_end, unknown_model_gpus, wsl_gaps
from torchsmith.plan.draft import Draft
from torchsmith.plan.driver_assumption import assumed_driver_line, state_assumption
from torchsmith.plan.extra import Extra
from torchsmith.plan.hostview import HostView, host_view
from torchsmith.plan.index import index_of, torch_index_url
from torchsmith.plan.matrix import MatrixRow, matrix
from torchsmith.plan.model import Blocker, PackagePin, Plan, Request
from torchsmith.plan.request import Wanted, constrained, parse_requirements
from torchsmith.records import replace

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = [
    "ARCH",
    "CONFLICT",
    "DEFAULT_REQUIREMENTS",
    "DRIVER",
    "NO_GPU_BUILD",
    "PLATFORM",
    "PYTHON",
    "MatrixRow",
    "matrix",
    "recommend",
    "resolve",
    "torch_index_url",
]


def resolve(machine: Machine, request: Request, kb: KnowledgeBase) -> Plan:
    """The best working stack for ``machine`` given ``request``, with reasons and rejections.

    Pure. Raises :class:`~torchsmith.errors.RequirementError` only for unparsable requirements;
    "nothing works" is a plan with ``status == "no-solution"``. The plan carries what the
    renderers print (host facts, base image, conda-forge stack): :mod:`torchsmith.plan.artifacts`.
    """
    view = host_view(machine, kb)
    wanted = _wanted_map(request)
    assumed = tuple(n.problem for n in machine.notes if n.source == "assumed")
    if assumed:
        request = replace(request, assumptions=(*request.assumptions, *assumed))
    draft = _plan_job(Job(machine, view, index_of(kb), wanted, request))
    return attach_artifacts(draft.finish(view, kb), machine, kb)


def recommend(machine: Machine, kb: KnowledgeBase) -> Plan:
    """The default stack (torch, torchvision, torchaudio) for this machine."""
    return resolve(machine, Request(), kb)


def _wanted_map(request: Request) -> Dict[str, Wanted]:
    wanted = constrained(parse_requirements(list(request.requirements), origins=dict(request.origins)),
                         request.constraints)
    return {w.name: w for w in wanted}


def _plan_job(job: Job) -> Draft:
    """The draft plan: a dead end found before the walk, the companions alone, or torch."""
    view, asked = job.view, job.wanted  # as the user asked, before the implied requirements
    stopped = detection_dead_end(job)
    if stopped is not None:
        return stopped
    job = unknown_model_gpus(job)
    job, clash = downstream.with_implied(job)
    blocker = clash or downstream.cuda_only_blocker(job)
    if blocker is not None:
        return requirement_dead_end(job, blocker)
    extra = companions.prepare(job)
    if extra.fatal:
        return _companion_dead_end(job, extra)
    if not extra.wants_torch:
        draft = Draft()
        extra.finish(None, draft, view, job.idx)
        draft.rejected.extend(extra.rejected)
        draft.warnings.extend(extra.warnings)
        draft.unplanned.extend(extra.unplanned)
        draft.assumptions.extend(job.request.assumptions)
        return draft
    draft = _plan_torch(job, asked, extra, view)
    if draft.status == "ok":
        blocker = downstream.cuda_only_on_cpu(job, draft.accelerator, draft.warnings)
        if blocker is not None:
            stopped = requirement_dead_end(job, blocker)
            stopped.warnings.extend(draft.warnings)
            return stopped
    return draft


def _companion_dead_end(job: Job, extra: Extra) -> Draft:
    """A companion that cannot be met here (no such release, a GPU too old for it)."""
    draft = Draft(status="no-solution")
    draft.blocker = Blocker(extra.rejected[0].code if extra.rejected else "no-such-release",
                            extra.rejected[0].candidate if extra.rejected else
                            ", ".join(w.text for n, w in job.wanted.items() if n not in TORCH_FAMILY),
                            "; ".join(extra.reasons) or "a requirement cannot be met here")
    draft.reasons.extend(extra.reasons)
    draft.rejected.extend(extra.rejected)
    draft.warnings.extend(extra.warnings)
    draft.assumptions.extend(job.request.assumptions)
    return draft


def _plan_torch(job: Job, asked: Dict[str, Wanted], extra: Extra, view: HostView) -> Draft:
    """torch within every constraint, then the companions that pair with it."""
    glibc = glibc_constraint(job.machine, job.view, job.idx.kb)
    hard = family_constraints(asked, job.request) + list(extra.constraints) + ([glibc] if glibc else [])
    hard += _preferred(job, hard, extra.preferred)
    draft = _solve_with_preferences(job, hard, extra.soft)
    assumed_driver = assumed_driver_line(job)
    if assumed_driver is not None and draft.status == "ok":
        assumed = _solve_with_preferences(job, [*hard, assumed_driver[0]], extra.soft)
        if assumed.status == "ok":
            state_assumption(job, assumed, assumed_driver[1], draft)
            draft = assumed
    keep = companions.installed_torch(job.request, asked)
    if draft.status != "ok" and keep is not None:
        draft = _replace_installed(job, hard, extra, draft, keep)
    if draft.status == "ok":
        chosen_torch = next((p for p in draft.packages if p.name == "torch"), None)
        extra.finish(chosen_torch, draft, view, job.idx)
        unverified = _unverified_build(job.idx.kb, chosen_torch, draft.variant)
        if unverified:
            draft.warnings.append(unverified)
    for rejection in extra.rejected:
        draft.reject(rejection)
    draft.warnings.extend(extra.warnings)
    draft.unplanned.extend(extra.unplanned)
    draft.assumptions.extend(job.request.assumptions)
    if draft.status == "no-solution" and draft.blocker is None:  # a safety net: always name one
        draft.blocker = Blocker("unplannable", "this request on this machine",
                                draft.reasons[0] if draft.reasons else "no build meets every requirement")
    return draft


def _replace_installed(job: Job, hard: Sequence[Constraint], extra: Extra, draft: Draft,
                       keep: Tuple[str, str]) -> Draft:
    """The installed torch cannot stay: plan without it, and say why it must change."""
    loose = [c for c in hard if not c.label.endswith("(installed)")]
    retry = _solve_with_preferences(job, loose, extra.soft)
    if retry.status != "ok":
        return draft
    new = next(p for p in retry.packages if p.name == "torch")
    why = _installed_problem(job, keep) or "; ".join(draft.reasons) or "it does not fit the request"
    retry.warnings.insert(0, Caution(f"the installed torch {keep[0]}{'+' + keep[1] if keep[1] else ''} "
                                     f"must change to {new.version}{new.local_version or ''}: {why}"))
    return retry


def _unverified_build(kb: KnowledgeBase, torch: Optional[PackagePin], variant: Optional[str]) -> str:
    """A warning when the data marks the chosen build as not checked against a primary source."""
    if torch is None or not variant or torch.wheel_url:
        return ""
    release = kb.release(torch.version)
    build = release.variant(variant) if release is not None else None
    if build is None or not build.uncertain:
        return ""
    return (f"the data marks torch {torch.version} {variant} as not yet verified against the "
            f"index itself; if the index lacks it, pin the previous release "
            f"(torchsmith plan 'torch<{torch.version}') or run `torchsmith kb refresh`")


def _installed_problem(job: Job, keep: Tuple[str, str]) -> str:
    """Why the installed torch itself cannot stay (no wheel, no kernels, driver), or ""."""
    version, variant_name = keep
    rel = next((r for r in job.idx.releases if r.text == version), None)
    variant = rel.data.variant(variant_name) if rel is not None and variant_name else None
    if rel is None or variant is None or job.machine.jetson is not None:
        return ""
    check = check_variant(job.idx, job.view, rel, variant)
    return "" if check.ok else check.reason


def _preferred(job: Job, hard: Sequence[Constraint], tiers: Sequence[Sequence[Constraint]]
               ) -> List[Constraint]:
    """Per package, the newest release whose torch need can be met with the others (greedy)."""
    chosen: List[Constraint] = []
    for package in tiers:
        for tier in package:
            if _solve(job, [*hard, *chosen, tier]).status == "ok":
                chosen.append(tier)
                break
    return chosen


def _solve_with_preferences(job: Job, hard: Sequence[Constraint], soft: Sequence[Constraint]) -> Draft:
    """Solve with the preferences (prebuilt companion wheels); without them if nothing fits."""
    draft = _solve(job, list(hard) + list(soft))
    if draft.status != "ok" and soft:
        relaxed = _solve(job, hard)
        if relaxed.status == "ok":
            return relaxed
    return draft


def _solve(job: Job, constraints: Sequence[Constraint]) -> Draft:
    """One attempt: the planner of the machine's accelerator."""
    machine = job.machine
    if machine.jetson is not None:
        from torchsmith.plan.jetson import plan_jetson  # lazy: start-up time of `plan --json`

        return plan_jetson(job, constraints)
    if machine.os.system == "macos":
        from torchsmith.plan.vendor_described import described_vendor_dead_end  # lazy: start-up time

        return described_vendor_dead_end(job) or plan_macos(job, constraints)
    if job.view.has_cuda_gpu:
        gaps = wsl_gaps(job)
        return Draft(prerequisites=list(gaps), warnings=list(gaps)).then(plan_cuda(job, constraints))
    if machine.rocm is not None and machine.rocm.gpus:
        from torchsmith.plan.rocm import plan_rocm

        return plan_rocm(job, constraints)
    if machine.intel_gpus:
        from torchsmith.plan.xpu import plan_xpu

        xpu = plan_xpu(job, constraints)
        if xpu is not None:
            return xpu
    return plan_cpu(job, constraints, no_gpu_reason(machine))
