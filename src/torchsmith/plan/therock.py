"""AMD GPUs on Windows: AMD TheRock's published torch wheels, where its data says the card is
release-ready there; otherwise the CPU build, with the ways to the GPU stated (DirectML last).

PyTorch's own index has no ROCm wheels for Windows. TheRock publishes torch for Windows on its
multi-arch index, one ``device-<gfx>`` extra per target (kb: rocm.json#therock_indexes and the
per-target status in rocm.json#gfx_targets).
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from torchsmith.plan.core import Constraint, Job
from torchsmith.plan.cpu import plan_cpu
from torchsmith.plan.draft import Draft
from torchsmith.plan.model import PackagePin, Rejection

__all__ = ["plan_windows_amd"]

WINDOWS = "windows-x86_64"
_FALLBACKS = ("for the GPU otherwise: run Linux (PyTorch's ROCm wheels), or WSL2 with AMD's ROCm-on-WSL "
              "for the Radeon cards AMD lists; torch-directml (DirectML) is a last fallback with its "
              "own, older torch")


def plan_windows_amd(job: Job, constraints: Sequence[Constraint], gfxs: Sequence[str], names: str) -> Draft:
    """TheRock's Windows wheels when every card is release-ready there, else the CPU build."""
    kb, idx = job.idx.kb, job.idx
    not_ready: List[str] = []
    index = None
    for gfx in gfxs:
        target = kb.gfx_target(gfx)
        status = target.therock.get(WINDOWS) if target is not None else None
        found = kb.therock_index_for(gfx, WINDOWS)
        if status != "release-ready" or found is None or (index is not None and found is not index):
            not_ready.append(f"{gfx} ({status or 'not listed'} on Windows in AMD TheRock's table)")
            continue
        index = found
    if not gfxs or not_ready or index is None:
        why = (f"AMD GPU {names} on Windows: PyTorch publishes no ROCm wheels for Windows, and AMD "
               f"TheRock's Windows wheels are not release-ready for {', '.join(not_ready) or 'it'}")
        draft = plan_cpu(job, constraints, why)
        draft.reject(Rejection("AMD TheRock torch (Windows)", why, "no-wheel-for-platform"))
        draft.warnings.append(_FALLBACKS)
        return draft
    draft = Draft()
    extras = tuple(index.extra.format(gfx=gfx) for gfx in dict.fromkeys(gfxs))
    wanted = job.wanted
    series = ", ".join(index.torch)
    draft.variant = "therock-" + index.channel
    draft.python = job.view.python
    draft.packages.append(PackagePin("torch", "", draft.variant, index_url=index.index_url, extras=extras))
    for companion in ("torchvision", "torchaudio"):
        if companion in wanted:
            draft.packages.append(PackagePin(companion, "", draft.variant, index_url=index.index_url,
                                             extras=extras if companion == "torchvision" else ()))
    draft.reasons.append(
        f"AMD GPU {names} on Windows: PyTorch's own index has no ROCm wheels for Windows; AMD TheRock "
        f"publishes torch ({series}) for it on {index.index_url}, and lists {', '.join(gfxs)} as "
        f"release-ready on Windows; [{', '.join(extras)}] selects the kernels for the card"
        f"{idx.cite(index.sources + _target_sources(job, gfxs), 4)}")
    draft.warnings.append(f"{index.channel} builds from AMD TheRock ({index.index_url}), not PyTorch's "
                          f"index: pin the version you test; {_FALLBACKS}")
    if version_pin(job) is not None:
        draft.warnings.append("a torch version pin is not checked against TheRock's index: torchsmith's "
                              f"data lists its torch series ({series}), not each build")
    return draft


def version_pin(job: Job) -> Optional[str]:
    spec = job.wanted.get("torch")
    text = spec.text.split("(")[0].strip() if spec is not None else ""
    return text if text and text != "torch" else None


def _target_sources(job: Job, gfxs: Sequence[str]) -> Tuple[str, ...]:
    out: List[str] = []
    for gfx in gfxs:
        target = job.idx.kb.gfx_target(gfx)
        out.extend(target.sources if target is not None else ())
    return tuple(dict.fromkeys(out))
