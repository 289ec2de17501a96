"""Facts the resolver must not invent: GPUs of unknown model, unknown drivers, failed detection.

- An NVIDIA GPU whose model nobody gave (``--gpu nvidia``, ``--driver`` alone, a name not in the
  data): the plan covers every desktop/server architecture of the driver's era (the CUDA the
  driver supports), and says so in ``assumptions``.
- No driver version: each candidate's driver floor is named, and the build that runs on the
  widest range of drivers wins.
- GPU detection failed (nvidia-smi errored, hung, printed garbage): no silent CPU plan.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from torchsmith.compat import Arch, kernel_for
from torchsmith.plan.check import check_variant, driver_mode, ptx, sass
from torchsmith.plan.core import Check, Job
from torchsmith.plan.detection import GPU_DETECTION_FAILED, detection_failure
from torchsmith.plan.doors import plan_command
from torchsmith.plan.draft import Draft
from torchsmith.plan.hostview import GpuView
from torchsmith.plan.model import Blocker, Door
from torchsmith.records import replace
from torchsmith.versions import driver_tuple, version_tuple

__all__ = ["detection_dead_end", "driver_needs", "unknown_model_gpus", "wsl_gaps"]


def detection_dead_end(job: Job) -> Optional[Draft]:
    """A no-solution when GPU detection failed and the user stated no GPU facts."""
    why = detection_failure(job.machine)
    if why is None:
        return None
    draft = Draft(status="no-solution")
    draft.blocker = Blocker(GPU_DETECTION_FAILED, "GPU detection",
                            f"GPU detection failed: {why}; a failed detection is not 'no GPU', so "
                            f"no CPU build is planned silently")
    draft.reasons.append(f"GPU detection failed: {why}; pass --gpu/--driver, or --no-gpu for a "
                         f"CPU build")
    reqs = job.request.requirements
    draft.alternatives.append(Door("flag", "state the GPU and driver yourself (nvidia-smi "
                                           "--query-gpu=compute_cap,driver_version --format=csv, "
                                           "once it answers)", "--gpu CC --driver VERSION",
                                   plan_command(reqs, "--gpu CC --driver VERSION")))
    draft.alternatives.append(Door("cpu", "plan the CPU build on purpose", "--no-gpu",
                                   plan_command(reqs, "--no-gpu")))
    draft.assumptions.extend(job.request.assumptions)
    return draft


def _era_archs(job: Job) -> Tuple[Tuple[str, ...], str]:
    """(archs of real non-Jetson GPUs the driver's CUDA compiles for, that CUDA) — newest era if unknown."""
    kb, view = job.idx.kb, job.view
    rows = sorted(kb.table("arch-support"), key=lambda r: version_tuple(r.cuda))
    if not rows:
        return (), ""
    era = rows[-1]
    if view.driver_cuda:
        fitting = [r for r in rows if version_tuple(r.cuda) <= version_tuple(view.driver_cuda)]
        era = fitting[-1] if fitting else rows[0]
    desktop = {g.arch for g in getattr(kb, "gpus", ()) if not getattr(g, "jetson", False)}
    archs = tuple(a for a in era.archs if a in desktop and _plain(a))
    return archs, era.cuda


def _covered(job: Job, gpus: Sequence[GpuView]) -> bool:
    platform, idx = job.view.platform, job.idx
    for rel in idx.releases:
        if job.view.python not in tuple(rel.data.python.get(platform, ()) or ()):
            continue
        for variant in rel.data.variants:
            if variant.kind != "cuda" or platform not in tuple(variant.platforms or ()):
                continue
            built_sass, built_ptx = sass(variant, platform), ptx(variant, platform)
            if all(kernel_for(g.cc, built_sass, built_ptx, integrated=g.cc in idx.tegra) is not None
                   for g in gpus):
                return True
    return False


def unknown_model_gpus(job: Job) -> Job:
    """When every NVIDIA GPU is of unknown model: plan for every architecture of the driver's era."""
    view = job.view
    if view.gpus or not view.unknown_gpus or job.machine.jetson is not None:
        return job
    archs, cuda = _era_archs(job)
    if not archs:
        return job
    ordered = sorted(archs, key=_cc)
    index = 0
    gpus: List[GpuView] = []
    dropped: List[str] = []
    while ordered:
        gpus = [GpuView(index, f"{view.unknown_gpus[0]} as {a}", _cc(a), "assumed") for a in ordered]
        if _covered(job, gpus):
            break
        dropped.append(ordered.pop(0))
    if not ordered:
        return job
    era = (f"CUDA {cuda} (the newest the driver supports)" if view.driver_cuda
           else f"CUDA {cuda} (no driver given: the newest era in the data)")
    note = (f"NVIDIA GPU of unknown model ({', '.join(view.unknown_gpus)}): planned a build with kernels "
            f"for every architecture of the driver's era, {ordered[0]}…{ordered[-1]} from {era}")
    if dropped:
        note += (f"; no build covers {', '.join(dropped)} as well, so GPUs that old are not covered "
                 f"(give --gpu CC for an exact plan)")
    else:
        note += "; give --gpu CC for an exact plan"
    request = replace(job.request, assumptions=(*job.request.assumptions, note))
    return job._replace(view=replace(view, gpus=tuple(gpus), unknown_gpus=()),
                        request=request)


def _plain(arch: str) -> bool:
    """An ``sm_XY`` with no ``a``/``f`` suffix: what a GPU of unknown model can be assumed to need."""
    parsed = Arch.parse(arch)
    return parsed is not None and not parsed.suffix


def _cc(arch: str) -> Tuple[int, int]:
    parsed = Arch.parse(arch)
    return parsed.cc if parsed is not None else (0, 0)


def driver_needs(job: Job, chosen: Check) -> str:
    """"cu126 needs ≥ 525.60.13 (≥ 560.28.03 for full support); cu128 needs …" for the release."""
    parts: List[str] = []
    for variant in chosen.release.data.variants:
        if variant.kind != "cuda":
            continue
        check = check_variant(job.idx, job.view, chosen.release, variant)
        if not check.ok:
            continue
        _, full, floor = driver_mode(job.idx.kb, job.view, variant.cuda or "")
        parts.append(f"{variant.name} needs driver ≥ {floor or full or '?'}"
                     + (f" (≥ {full} for full support)" if full and floor and full != floor else ""))
    return "; ".join(parts)


# WSL2 GPU prerequisites. Pascal and later only, per NVIDIA's guide; the R470 floor for a
# WSL-capable Windows driver is from the same era's notes and not re-checked (uncertain).
WSL_GUIDE = "https://docs.nvidia.com/cuda/archive/11.4.4/wsl-user-guide/index.html"
WSL_MIN_WINDOWS_DRIVER = "470.76"
WSL_MIN_CC = (6, 0)


def wsl_gaps(job: Job) -> List[str]:
    """What a WSL2 machine lacks for CUDA: libcuda from the Windows driver, a WSL-capable driver."""
    machine, view = job.machine, job.view
    if not machine.os.wsl or not view.has_cuda_gpu:
        return []
    gaps: List[str] = []
    if machine.os.wsl_libcuda is False:
        gaps.append("WSL2: /usr/lib/wsl/lib/libcuda.so is missing, so the Windows NVIDIA driver is "
                    "not exposed to Linux and no CUDA build can reach the GPU: install or update "
                    "the NVIDIA driver on Windows (never a Linux driver inside WSL), then "
                    f"`wsl --shutdown` [source: {WSL_GUIDE}]")
    if view.driver and driver_tuple(view.driver) < driver_tuple(WSL_MIN_WINDOWS_DRIVER):
        gaps.append(f"WSL2: Windows driver {view.driver} predates CUDA on WSL; install a Windows "
                    f"driver ≥ {WSL_MIN_WINDOWS_DRIVER} (uncertain floor) [source: {WSL_GUIDE}]")
    old = [g.label for g in view.gpus if g.cc < WSL_MIN_CC and g.source != "assumed"]
    if old:
        gaps.append("WSL2: CUDA on WSL supports Pascal (compute capability 6.0) and later; "
                    + ", ".join(old) + f" is older [source: {WSL_GUIDE}]")
    return gaps
