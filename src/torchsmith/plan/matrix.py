"""The matrix: recent torch releases × their builds, and whether each runs on this host."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, NamedTuple, Tuple

from torchsmith.machine import Machine
from torchsmith.plan.check import check_variant
from torchsmith.plan.core import ARCH, NO_GPU_BUILD, Check
from torchsmith.plan.detection import GPU_DETECTION_FAILED, detection_failure
from torchsmith.plan.hostview import HostView, host_view
from torchsmith.plan.index import Index, Release, index_of
from torchsmith.versions import minor_version, sortable_version, version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase, VariantBuild

__all__ = ["MatrixRow", "matrix"]


class MatrixRow(NamedTuple):
    torch: str
    variant: str
    kind: str  # cuda | rocm | cpu | xpu
    works: bool
    code: str  # "" when it works
    reason: str  # one line: why not, or how it runs


def matrix(machine: Machine, kb: KnowledgeBase, releases: int = 8) -> Tuple[MatrixRow, ...]:
    """The newest ``releases`` torch releases × their variants: does each run on this host?"""
    idx = index_of(kb)
    view = host_view(machine, kb)
    rows: List[MatrixRow] = _jetson_rows(idx, machine)
    seen_minor: Dict[str, None] = {}
    for rel in idx.releases:
        minor = f"{rel.version.major}.{rel.version.minor}"
        if minor in seen_minor:
            continue  # the newest patch of each series tells the story
        seen_minor[minor] = None
        if len(seen_minor) > releases:
            break
        for variant in rel.data.variants:
            rows.append(_matrix_row(idx, view, machine, rel, variant))
    return tuple(rows)


def _jetson_rows(idx: Index, machine: Machine) -> List[MatrixRow]:
    """A Jetson's own builds first: NVIDIA's wheels for its JetPack (and the JetPack's index)."""
    jetson = machine.jetson
    jp = idx.kb.jetpack_for_l4t(jetson.l4t) if jetson is not None and jetson.l4t else None
    if jp is None:
        return []
    from torchsmith.plan.jetson import jetson_variant

    variant = jetson_variant(str(jp.jetpack))
    python = minor_version(machine.python.version) if machine.python.version else ""
    rows: List[MatrixRow] = []
    for wheel in sorted(jp.wheels, key=lambda w: sortable_version(w.torch), reverse=True):
        fits = not python or wheel.python == python
        listed = f", listed for JetPack {wheel.listed_for}" if wheel.listed_for else ""
        where = f"NVIDIA's wheel for JetPack {jp.jetpack}{listed} ({wheel.url})"
        rows.append(MatrixRow(wheel.torch, variant, "jetson", fits, "" if fits else "no-wheel-for-python",
                              where if fits else f"{where} is for Python {wheel.python}, not {python}"))
    if jp.index_url:
        rows.append(MatrixRow("(index)", variant, "jetson", True, "", f"the JetPack {jp.jetpack} index "
                              f"{jp.index_url}: `torchsmith plan` pins its torch"))
    return rows


def _jetson_uses_sbsa(idx: Index, machine: Machine) -> bool:
    jetson = machine.jetson
    jp = idx.kb.jetpack_for_l4t(jetson.l4t) if jetson is not None and jetson.l4t else None
    return jp is not None and version_tuple(str(jp.jetpack))[:1] >= (7,)


def _matrix_row(idx: Index, view: HostView, machine: Machine, rel: Release, variant: VariantBuild
                ) -> MatrixRow:
    check = check_variant(idx, view, rel, variant)
    if not check.ok:
        return _row(check, False, check.code, check.reason)
    if variant.kind == "cuda":
        return _cuda_row(idx, view, machine, check)
    if variant.kind == "rocm":
        gfxs = [g.gfx for g in (machine.rocm.gpus if machine.rocm else ()) if g.gfx]
        if not gfxs:
            return _row(check, False, NO_GPU_BUILD, "no AMD GPU here")
        missing = [g for g in gfxs if g not in tuple(variant.gfx or ())]
        if missing:
            return _row(check, False, ARCH, f"not compiled for {', '.join(missing)}")
        return _row(check, True, "", f"compiled for {', '.join(gfxs)}")
    if variant.kind == "xpu":
        if not machine.intel_gpus:
            return _row(check, False, NO_GPU_BUILD, "no Intel GPU here")
        return _row(check, True, "", "Intel GPU present (support depends on the GPU)")
    return _row(check, True, "", "CPU build")


def _cuda_row(idx: Index, view: HostView, machine: Machine, check: Check) -> MatrixRow:
    if machine.jetson is not None and not _jetson_uses_sbsa(idx, machine):
        return _row(check, False, NO_GPU_BUILD, "Jetson on JetPack ≤ 6: upstream aarch64 CUDA wheels "
                    "target SBSA servers, not the L4T driver; `torchsmith plan` gives the JetPack's wheel")
    if not view.has_cuda_gpu:
        failed = detection_failure(machine)
        if failed:  # not "no GPU": say what failed
            return _row(check, False, GPU_DETECTION_FAILED, f"GPU detection failed: {failed}; pass "
                        f"--gpu/--driver to judge the CUDA builds")
        return _row(check, False, NO_GPU_BUILD, "no NVIDIA GPU here: the CUDA build would run on the "
                    "CPU only, with gigabytes of unused libraries")
    how = {"full": "runs (full driver support)", "minor-compat": "runs via minor-version compatibility",
           "unknown": "arch fits; driver unknown"}.get(check.driver_mode, "runs")
    return _row(check, True, "", how)


def _row(check: Check, works: bool, code: str, reason: str) -> MatrixRow:
    return MatrixRow(check.release.text, check.variant.name, check.variant.kind, works, code, reason)
