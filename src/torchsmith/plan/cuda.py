"""NVIDIA GPUs: the newest build with kernels for every GPU used that this driver runs.

GPUs the driver is too old to drive at all are left out (CUDA_VISIBLE_DEVICES); mixed GPUs no
single build covers get the largest group one build covers; when no CUDA build runs here the
plan is the CPU build, said loudly, with the ways to the GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from packaging.version import Version

from torchsmith.compat import DriverVersion, full_support_floor
from torchsmith.output import Caution
from torchsmith.plan.adopt import adopt, conda_specs, headline, reject_pypi_default
from torchsmith.plan.check import driver_cite, driver_mode, driver_name
from torchsmith.plan.core import ARCH, DRIVER, PLATFORM, PYTHON, Check, Constraint, Job
from torchsmith.plan.cpu import plan_cpu
from torchsmith.plan.dead_end import no_solution
from torchsmith.plan.described import driver_needs
from torchsmith.plan.doors import arch_doors
from torchsmith.plan.draft import Draft
from torchsmith.plan.hostview import GpuView, HostView
from torchsmith.plan.index import Index
from torchsmith.plan.model import Rejection
from torchsmith.plan.walk import Walk, walk_releases
from torchsmith.records import replace
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["plan_cuda"]


def plan_cuda(job: Job, constraints: Sequence[Constraint]) -> Draft:
    """Plan a CUDA build for the NVIDIA GPUs of ``job`` (or the CPU build, with why)."""
    draft = Draft()
    if not job.request.gpus_on_separate_nodes:
        job = _drop_gpus_the_driver_cannot_drive(job, draft)
    if not job.view.gpus and not job.view.unknown_gpus:
        draft.warnings.append(Caution(f"no CUDA build of torch can use these GPUs with "
                              f"{driver_name(job.view)}; planned the CPU build until the driver "
                              f"is upgraded"))
        return draft.then(plan_cpu(job, constraints, "the NVIDIA driver is too old for every GPU here"))
    walk, gpus_used = _walk_gpus(job, constraints, draft)
    draft.warnings.extend(job.view.notes)
    if walk.chosen is None:
        return _no_cuda_build(job, constraints, draft, walk)
    _plan_chosen(job, draft, walk, walk.chosen, gpus_used)
    return draft


def _walk_gpus(job: Job, constraints: Sequence[Constraint], draft: Draft
               ) -> Tuple[Walk, Sequence[GpuView]]:
    """The walk for every GPU, or for the largest group one build covers."""
    view = job.view
    walk = walk_releases(job, ("cuda",), constraints)
    if walk.chosen is not None or walk.blocked is not None or len({g.cc for g in view.gpus}) <= 1:
        return walk, view.gpus
    split = _split_gpus(job, constraints)
    if split is None:
        return walk, view.gpus
    walk, gpus_used, left_out = split
    indexes = ",".join(str(g.index) for g in gpus_used)
    draft.environment.append(("CUDA_VISIBLE_DEVICES", indexes))
    draft.warnings.append(Caution(
        "no torch build covers every GPU here; this plan uses "
        + ", ".join(g.label for g in gpus_used)
        + f" (CUDA_VISIBLE_DEVICES={indexes}); left out: "
        + ", ".join(g.label for g in left_out)
        + " (plan for them separately with CUDA_VISIBLE_DEVICES set to their indexes)"))
    return walk, gpus_used


def _no_cuda_build(job: Job, constraints: Sequence[Constraint], draft: Draft, walk: Walk) -> Draft:
    """A constraint or the Python/platform blocks: no solution. Else the CPU build, said loudly."""
    idx, view = job.idx, job.view
    if walk.blocked is not None or (walk.failures and set(walk.failures) <= {PYTHON, PLATFORM}):
        no_solution(job, draft, walk, constraints, "runs on these GPUs")
        return draft
    for rejection in walk.rejected:
        draft.reject(rejection)
    gpu_names = ", ".join(g.label for g in view.gpus) or ", ".join(view.unknown_gpus)
    for gpu in view.gpus:
        if gpu.cc in idx.tegra:
            draft.warnings.append(Caution(
                f"{gpu.label} is an integrated Jetson GPU ({idx.tegra[gpu.cc]}): desktop and server "
                f"wheels do not run on it; describe the machine with --jetson L4T_RELEASE "
                f"(from /etc/nv_tegra_release) to get the JetPack's wheel"))
    draft.warnings.append(Caution(f"no CUDA build of torch in the data runs on {gpu_names} with this "
                          f"driver; planned the CPU build instead (see `rejected` for what "
                          f"each CUDA build lacks, and `alternatives` for the ways to the GPU)"))
    draft.alternatives.extend(arch_doors(job, cpu=False) if ARCH in walk.failures else [])
    return draft.then(plan_cpu(job, constraints, "no CUDA build runs on this GPU and driver"))


def _plan_chosen(job: Job, draft: Draft, walk: Walk, chosen: Check, gpus_used: Sequence[GpuView]) -> None:
    idx, view = job.idx, job.view
    adopt(job, draft, chosen, walk.rejected, "cuda")
    rel = chosen.release.data
    draft.reasons.append(headline(walk, f"torch {rel.version} {chosen.variant.name}",
                                  "with a build that runs on every GPU used here and on this driver")
                         + idx.cite(rel.sources, 1))
    assumed = [g for g in gpus_used if g.source == "assumed"]
    if assumed:  # one line for the architectures assumed for a GPU of unknown model
        draft.reasons.append(f"{chosen.label} carries kernels (SASS) for every assumed architecture: "
                             + ", ".join(g.arch for g in assumed))
    else:
        draft.reasons.extend(chosen.gpu_lines)
    draft.reasons.append(_driver_line(idx, view, chosen))
    draft.reasons.append(f"Python {view.python} on {view.platform}: torch {rel.version} publishes "
                         f"wheels for it{idx.cite(rel.sources, 1)}")
    draft.warnings.extend(_driver_warnings(job, chosen))
    for name in view.unknown_gpus:
        draft.warnings.append(Caution(f"GPU {name!r}: compute capability unknown (not reported and not in "
                              f"the data); planned for the other facts only. Check "
                              f"torch.cuda.get_arch_list() after installing."))
    reject_pypi_default(draft, idx, view, chosen)
    draft.conda.update(conda_specs(idx, view, chosen))


def _driver_warnings(job: Job, chosen: Check) -> List[str]:
    """Minor-version compatibility's limits, or what each build needs when the driver is unknown."""
    idx, view = job.idx, job.view
    cuda = chosen.variant.cuda or ""
    if chosen.driver_mode not in ("minor-compat", "unknown"):
        return []
    _, full, floor = driver_mode(idx.kb, view, cuda)
    if chosen.driver_mode == "minor-compat":
        return [f"{chosen.label} runs on {driver_name(view)} through NVIDIA "
                f"minor-version compatibility (CUDA {cuda.split('.')[0]}.x needs ≥ "
                f"{floor or 'the major release driver'}): no PTX JIT, and APIs that need a newer "
                f"driver return cudaErrorCallRequiresNewerDriver; driver ≥ {full or '?'} gives full "
                f"support{driver_cite(idx, cuda)}"]
    return [f"NVIDIA driver version unknown: {chosen.label} needs driver ≥ "
            f"{floor or full or '?'} (≥ {full or '?'} for full support); planned the "
            f"build that runs on the widest range of drivers. Each build of torch "
            f"{chosen.release.data.version} that runs here: {driver_needs(job, chosen)}"]


def _split_gpus(job: Job, constraints: Sequence[Constraint]
                ) -> Optional[Tuple[Walk, Tuple[GpuView, ...], Tuple[GpuView, ...]]]:
    """Mixed GPUs no single build covers: the largest group one build covers (newest wins ties)."""
    view = job.view
    options: List[Tuple[int, Version, Tuple[int, int], Walk, Tuple[GpuView, ...]]] = []
    for cc in sorted({g.cc for g in view.gpus}, reverse=True):
        for group in (tuple(g for g in view.gpus if g.cc >= cc), tuple(g for g in view.gpus if g.cc <= cc)):
            walk = walk_releases(job, ("cuda",), constraints, gpus=group)
            if walk.chosen is not None:
                options.append((len(group), walk.chosen.release.version, cc, walk, group))
    if not options:
        return None
    options.sort(key=lambda o: (o[0], o[1], o[2]), reverse=True)
    _, _, _, walk, group = options[0]
    left = tuple(g for g in view.gpus if g not in group)
    return walk, group, left


def _driver_line(idx: Index, view: HostView, chosen: Check) -> str:
    cuda = chosen.variant.cuda
    _, full, floor = driver_mode(idx.kb, view, cuda or "")
    have = view.driver or ("unknown" if not view.driver_cuda else "version not known")
    source = f" (from {view.driver_source})" if view.driver_source and view.driver else ""
    max_cuda = f", which supports CUDA up to {view.driver_cuda}" if view.driver_cuda else ""
    how = {"full": "full support", "minor-compat": "minor-version compatibility",
           "unknown": "driver not known"}.get(chosen.driver_mode, chosen.driver_mode)
    return (f"driver {have}{source}{max_cuda}: CUDA {cuda} needs ≥ {full or '?'} for full support, "
            f"≥ {floor or '?'} with minor-version compatibility → {how}{driver_cite(idx, cuda)}")


def _first_cuda_with_arch(kb: KnowledgeBase, arch: str) -> Optional[str]:
    """The oldest CUDA toolkit that knows ``arch`` (from the arch-support rows), or None."""
    rows = sorted(kb.table("arch-support"), key=lambda r: version_tuple(r.cuda))
    return next((r.cuda for r in rows if arch in r.archs), None)


def _driver_predates_gpu(idx: Index, view: HostView, gpu: GpuView) -> Optional[Tuple[str, str]]:
    """(cuda, needed driver) when the driver is older than the first CUDA that knows this GPU.

    Such a driver cannot drive the GPU at all, so no torch build helps (minor-version
    compatibility is about newer toolkits on older drivers, never about newer hardware).
    """
    if not view.driver:
        return None
    cuda = _first_cuda_with_arch(idx.kb, gpu.arch)
    release = idx.kb.cuda_release(cuda) if cuda else None
    need = full_support_floor(release, view.driver_system) if release else ""
    have = DriverVersion.parse(view.driver)
    if cuda and need and have is not None and not have.at_least(need):
        return cuda, need
    return None


def _drop_gpus_the_driver_cannot_drive(job: Job, draft: Draft) -> Job:
    idx, view = job.idx, job.view
    usable: List[GpuView] = []
    for gpu in view.gpus:
        hit = _driver_predates_gpu(idx, view, gpu)
        if hit is None:
            usable.append(gpu)
            continue
        cuda, need = hit
        why = (f"{driver_name(view)} is older than {gpu.arch}: this architecture arrived with "
               f"CUDA {cuda}, whose driver is ≥ {need}; upgrade the NVIDIA driver to ≥ {need} "
               f"to use {gpu.name}{driver_cite(idx, cuda)}")
        draft.reject(Rejection(f"every CUDA build on {gpu.label}", why, DRIVER))
        draft.warnings.append(Caution(why))
    if len(usable) == len(view.gpus):
        return job
    if usable:
        indexes = ",".join(str(g.index) for g in usable)
        draft.environment.append(("CUDA_VISIBLE_DEVICES", indexes))
    return job._replace(view=replace(view, gpus=tuple(usable)))
