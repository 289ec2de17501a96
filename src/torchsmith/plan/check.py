"""Does one torch build run on this host? Platform, then Python, then GPU arch, then driver."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from torchsmith.compat import NO_JIT, Kernel, driver_support, gpu_verdict, kernel_for
from torchsmith.plan.core import ARCH, DRIVER, PLATFORM, PYTHON, Check
from torchsmith.plan.hostview import GpuView, HostView
from torchsmith.plan.index import Index, Release

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase, VariantBuild

__all__ = ["check_variant", "driver_cite", "driver_mode", "driver_name", "ptx", "sass"]


def sass(variant: VariantBuild, platform: str) -> Tuple[str, ...]:
    """The SASS archs the build carries for ``platform``."""
    return tuple(variant.sass(platform) or ())


def ptx(variant: VariantBuild, platform: str) -> Tuple[str, ...]:
    """The PTX targets the build carries for ``platform``."""
    return tuple(variant.ptx(platform) or ())


def driver_mode(kb: KnowledgeBase, view: HostView, cuda: str) -> Tuple[str, str, str]:
    """(mode, needed-full, floor): mode is full | minor-compat | too-old | unknown."""
    support = driver_support(kb.cuda_release(cuda), cuda, view.driver_system, view.driver, view.driver_cuda)
    return support.mode, support.full, support.floor


def driver_name(view: HostView) -> str:
    """The host's driver as a reason says it: ``driver 550.54``."""
    if view.driver:
        return f"driver {view.driver}"
    if view.driver_cuda:
        return f"a driver supporting CUDA {view.driver_cuda}"
    return "an unknown driver"


def driver_cite(idx: Index, cuda: Optional[str]) -> str:
    """The sources of a CUDA toolkit's driver minimums."""
    release = idx.kb.cuda_release(cuda or "")
    return idx.cite(getattr(release, "sources", ()) or ())


def check_variant(idx: Index, view: HostView, rel: Release, variant: VariantBuild,
                  gpus: Optional[Sequence[GpuView]] = None) -> Check:
    """Does this build run here? Platform, then Python, then GPU arch, then driver."""
    platform = view.platform
    name = f"torch {rel.text} {variant.name}"
    platforms = tuple(getattr(variant, "platforms", ()) or ())
    if platform not in platforms:
        where = ", ".join(platforms) or "no platform"
        return Check(rel, variant, PLATFORM, f"{name} is built for {where}, not {view.shown_platform}"
                                             f"{idx.cite(getattr(variant, 'sources', ()))}")
    pythons = tuple(rel.data.python.get(platform, ()) or ())
    if view.python not in pythons:
        have = ", ".join(pythons) or "none"
        return Check(rel, variant, PYTHON,
                     f"{name} has no wheel for Python {view.python} on {platform} (wheels: {have})"
                     f"{idx.cite(rel.data.sources)}")
    if variant.kind != "cuda":
        return Check(rel, variant)
    return _check_cuda(idx, view, rel, variant, view.gpus if gpus is None else gpus)


def _check_cuda(idx: Index, view: HostView, rel: Release, variant: VariantBuild,
                targets: Sequence[GpuView]) -> Check:
    """A CUDA build: kernels (SASS, or PTX the driver may JIT) for every GPU, then the driver."""
    name = f"torch {rel.text} {variant.name}"
    cite = idx.cite(getattr(variant, "sources", ()))
    built_sass, built_ptx = sass(variant, view.platform), ptx(variant, view.platform)
    lines: List[str] = []
    jit: Optional[Kernel] = None  # a GPU served only by PTX
    for gpu in targets:
        kernel = kernel_for(gpu.cc, built_sass, built_ptx, integrated=gpu.cc in idx.tegra)
        if kernel is None:
            if not built_sass and not built_ptx:
                return Check(rel, variant, ARCH, f"{name}: the data has no arch list for "
                                                 f"{view.platform}, so {gpu.label} cannot be confirmed{cite}")
            built = " ".join(built_sass) + (f", PTX {' '.join(built_ptx)}" if built_ptx else ", no PTX")
            exact = " (an integrated Jetson GPU needs its exact arch or PTX)" if gpu.cc in idx.tegra else ""
            return Check(rel, variant, ARCH,
                         f"{name} has no kernels for {gpu.label}: compiled for {built}{exact}{cite}")
        jit = kernel if kernel.how == "ptx" else jit
        lines.append(f"{gpu.label}: {name} carries {kernel.how.upper()} {kernel.name}"
                     + (" (same major, lower or equal minor: binary compatible)"
                        if kernel.how == "sass" and kernel.name != gpu.arch else "") + cite)
    mode, full, floor = driver_mode(idx.kb, view, variant.cuda or "")
    driver = driver_name(view)
    if mode == "too-old":
        need = " or ".join(part for part in (
            f"≥ {floor} (minor-version compatibility)" if floor else "",
            f"≥ {full} (full support)" if full else "") if part)
        return Check(rel, variant, DRIVER,
                     f"{name} (CUDA {variant.cuda}) needs NVIDIA driver {need}; found {driver}"
                     f"{driver_cite(idx, variant.cuda)}")
    if jit is not None and gpu_verdict(jit, mode) == NO_JIT:
        return Check(rel, variant, DRIVER,
                     f"{name} would JIT-compile its PTX for this GPU, which minor-version "
                     f"compatibility does not allow: needs driver ≥ {full}; found {driver}")
    return Check(rel, variant, driver_mode=mode, gpu_lines=tuple(lines))
