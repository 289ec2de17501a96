"""AMD and Intel GPUs as people describe them: a product name, a family, or the vendor alone.

An AMD product resolves to its gfx target through ``rocm.json``'s product lists and an Intel one
to its xpu family through ``xpu.json``. A family ("Radeon RX 7", "Instinct") or the vendor alone
("amd", "intel") is covered by what that vendor's builds support, and the plan says so with the
flag that makes it exact. A platform with no build for the vendor (ROCm or xpu on macOS) is a
dead end with its doors, never a silent CPU plan.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.kb.product_names import ProductMatch, expand_listing, match_product
from torchsmith.plan.core import Job
from torchsmith.plan.doors import plan_command
from torchsmith.plan.draft import Draft
from torchsmith.plan.model import Blocker, Door
from torchsmith.records import dataclass

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.machine import AmdGpu

__all__ = ["AmdDescribed", "describe_amd", "described_vendor_dead_end", "intel_family_rows",
           "platform_doors", "vendor_doors", "vendor_platform_dead_end"]

GFX_HINT = "--rocm-gfx gfxNNNN (rocminfo | grep gfx names it)"


@dataclass
class AmdDescribed:
    """The AMD GPUs as the data resolves them: exact gfx targets, and the rest as a family
    (``family`` None: the vendor alone, any gfx a build supports)."""

    gfxs: List[str] = field(default_factory=list)
    vague: List[str] = field(default_factory=list)  # names with no exact gfx target
    family: Optional[Tuple[str, ...]] = ()
    notes: List[str] = field(default_factory=list)
    labels: List[str] = field(default_factory=list)  # "Radeon RX 7900 XTX (gfx1100)"


def _amd_rows(kb: KnowledgeBase) -> List[Tuple[str, List[str]]]:
    return [(row.gfx, expand_listing(row.name)) for row in kb.gfx_targets]


def describe_amd(kb: KnowledgeBase, gpus: Sequence[AmdGpu]) -> AmdDescribed:
    """Resolve each AMD GPU without a gfx target through the product lists."""
    found = AmdDescribed()
    family: List[str] = []
    anything = False
    for gpu in gpus:
        if gpu.gfx:
            found.gfxs.append(gpu.gfx)
            found.labels.append(f"{gpu.name} ({gpu.gfx})")
            continue
        match = match_product(gpu.name, _amd_rows(kb))
        if len(match.keys) == 1 and match.kind in ("exact", "family"):
            found.gfxs.append(match.keys[0])
            found.labels.append(f"{gpu.name} ({match.keys[0]})")
            found.notes.append(f"{gpu.name}: {match.keys[0]} ({', '.join(match.products[:3])}) "
                               f"in the GPU table [source: rocm.json gfx_targets]")
            continue
        found.vague.append(gpu.name)
        found.labels.append(f"{gpu.name} (gfx unknown)")
        if match.kind == "family":
            family.extend(match.keys)
        else:
            anything = True
    found.family = None if anything else tuple(dict.fromkeys(family))
    return found


def intel_family_rows(kb: KnowledgeBase, name: str) -> Tuple[ProductMatch, List[Dict[str, Any]]]:
    """The xpu rows an Intel name that no row's pattern matches covers: every row for the vendor
    alone, the rows whose family it starts ("Arc") for a family, none for an unknown name."""
    rows = [dict(row) for row in kb.document("xpu")["rows"]]
    match = match_product(name, [(str(row["family"]), [str(row["family"])]) for row in rows])
    return match, [row for row in rows if row["family"] in match.keys]


def vendor_platform_dead_end(job: Job, vendor: str, names: str, why: str) -> Draft:
    """No build of ``vendor``'s GPU stack for this platform: a no-solution with the doors out."""
    draft = Draft(status="no-solution")
    draft.blocker = Blocker("no-wheel-for-platform", f"platform {job.view.shown_platform}", why)
    draft.reasons.append(f"{names}: {why}; no CPU build is planned in its place silently")
    draft.alternatives.extend(vendor_doors(job, vendor, gfx_door="gfx" in why))
    draft.assumptions.extend(job.request.assumptions)
    return draft


def vendor_doors(job: Job, vendor: str, *, gfx_door: bool = False) -> List[Door]:
    """The ways out when this platform has no build for the vendor's GPUs."""
    reqs = job.request.requirements
    stack = "ROCm" if vendor == "amd" else "xpu"
    platform = "linux-x86_64"
    doors = [Door("flag", f"plan for a Linux x86_64 machine, where PyTorch publishes {stack} wheels",
                  f"--platform {platform}", plan_command(reqs, f"--platform {platform}"))]
    if gfx_door:
        doors.append(Door("flag", "give the card's gfx target for an exact plan",
                          "--rocm-gfx gfxNNNN", plan_command(reqs, "--rocm-gfx gfxNNNN")))
    doors.append(Door("cpu", "plan the CPU build on purpose", "--no-gpu", plan_command(reqs, "--no-gpu")))
    return doors


def platform_doors(job: Job, draft: Draft, vendor: str) -> Draft:
    """A no-solution because no build of the vendor's stack exists for this platform: its doors
    are another platform or the CPU build on purpose, not another torch for the same GPU."""
    if draft.blocker is not None and draft.blocker.code == "no-wheel-for-platform":
        draft.alternatives[:] = vendor_doors(job, vendor)
    return draft


def _named(vendor: str, names: Sequence[str]) -> str:
    return ", ".join(n if n.lower().startswith(vendor.lower()) else f"{vendor} GPU {n}" for n in names)


def described_vendor_dead_end(job: Job) -> Optional[Draft]:
    """A Mac described with an AMD or Intel GPU: PyTorch has no ROCm or xpu build for macOS."""
    machine = job.machine
    if machine.os.system != "macos":
        return None
    if machine.rocm is not None and machine.rocm.gpus:
        names = _named("AMD", [g.name for g in machine.rocm.gpus])
        return vendor_platform_dead_end(job, "amd", names,
                                        "PyTorch publishes ROCm builds for Linux only (none for macOS)")
    if machine.intel_gpus:
        names = _named("Intel", [g.name for g in machine.intel_gpus])
        return vendor_platform_dead_end(job, "intel", names,
                                        "PyTorch publishes xpu builds for Linux and Windows x86_64 "
                                        "only (none for macOS)")
    return None
