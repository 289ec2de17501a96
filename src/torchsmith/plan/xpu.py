"""Intel GPUs: the xpu build of torch where a release supports the device, else CPU with why.

Which devices each release supports is data (``kb/data/xpu.json``, from PyTorch's "Getting
Started on Intel GPU" pages); an Intel GPU the data does not list (UHD, Iris Xe) gets the CPU
build with a note naming the supported families.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.plan.adopt import adopt, headline
from torchsmith.plan.core import ARCH, Check, Constraint, Job
from torchsmith.plan.draft import Draft
from torchsmith.plan.walk import walk_releases
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["plan_xpu", "supported_family"]


def supported_family(kb: KnowledgeBase, name: str) -> Optional[Dict[str, Any]]:
    """The data row for an Intel GPU name, or None when no xpu build lists it."""
    lowered = name.lower()
    for row in kb.document("xpu")["rows"]:
        if any(pattern in lowered for pattern in row["patterns"]):
            return dict(row)
    return None


def plan_xpu(job: Job, constraints: Sequence[Constraint]) -> Optional[Draft]:
    """Plan the xpu build; None (nothing planned) when no listed device or no release fits."""
    table = job.idx.kb.document("xpu")
    rows = [(gpu.name, supported_family(job.idx.kb, gpu.name)) for gpu in job.machine.intel_gpus]
    known: List[Tuple[str, Dict[str, Any]]] = [(n, r) for n, r in rows if r is not None]
    if not known:
        return None
    first = max((r["first_torch"] for _, r in known), key=version_tuple)

    def lists_device(check: Check) -> Optional[Tuple[str, str]]:
        if version_tuple(check.release.text) >= version_tuple(first):
            return None
        return ARCH, f"{check.label}: xpu support for this device starts at torch {first}"

    walk = walk_releases(job, ("xpu",), constraints, accept=lists_device)
    if walk.chosen is None:
        return None
    chosen = walk.chosen
    draft = Draft()
    adopt(job, draft, chosen, walk.rejected, "xpu")
    urls = table["sources"]
    for name, row in known:
        cite = "; ".join(urls[i].split(" ", 1)[0] for i in row["source"][:2])
        draft.reasons.append(f"{name}: {row['family']}, supported by torch's xpu builds from "
                             f"{row['first_torch']}" + (" (uncertain)" if row.get("uncertain") else "")
                             + f" [source: {cite}]")
    draft.reasons.append(headline(walk, f"torch {chosen.release.text} xpu",
                                  f"with an xpu wheel for Python {job.view.python} on "
                                  f"{job.view.platform}"))
    draft.prerequisites.append("the Intel GPU driver and runtime (Intel's 'PyTorch prerequisites "
                               "for Intel GPU' page): the xpu wheels bring the SYCL runtime, not "
                               "the kernel driver")
    return draft
