"""Intel GPUs: the xpu build of torch where a release supports the device, else CPU with why.

Which devices each release supports is data (``kb/data/xpu.json``, from PyTorch's "Getting
Started on Intel GPU" pages); an Intel GPU the data does not list (UHD, Iris Xe) gets the CPU
build with a note naming the supported families.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.plan.adopt import adopt, headline
from torchsmith.plan.core import ARCH, PLATFORM, PYTHON, Check, Constraint, Job
from torchsmith.plan.dead_end import no_solution
from torchsmith.plan.draft import Draft
from torchsmith.plan.vendor_described import intel_family_rows, platform_doors
from torchsmith.plan.walk import walk_releases
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["plan_xpu", "supported_family"]

UNKNOWN_INTEL = "Intel GPU (model not given)"  # what `--gpu intel` names (overrides.UNKNOWN_INTEL)


def supported_family(kb: KnowledgeBase, name: str) -> Optional[Dict[str, Any]]:
    """The data row for an Intel GPU name, or None when no xpu build lists it."""
    lowered = name.lower()
    for row in kb.document("xpu")["rows"]:
        if any(pattern in lowered for pattern in row["patterns"]):
            return dict(row)
    return None


def plan_xpu(job: Job, constraints: Sequence[Constraint]) -> Optional[Draft]:
    """Plan the xpu build; None (nothing planned) when no listed device or no release fits."""
    kb = job.idx.kb
    table = kb.document("xpu")
    known: List[Tuple[str, Dict[str, Any]]] = []
    vague: List[Tuple[str, List[Dict[str, Any]]]] = []  # a family or the vendor alone
    for gpu in job.machine.intel_gpus:
        row = supported_family(kb, gpu.name)
        if row is not None:
            known.append((gpu.name, row))
            continue
        match, rows = intel_family_rows(kb, gpu.name)
        if match.kind in ("vendor", "family") and rows:
            vague.append((gpu.name, rows))
    if not known and not vague:
        return None
    # A model is planned from its own first release; a family from its earliest member's.
    firsts = [r["first_torch"] for _, r in known]
    firsts += [min((r["first_torch"] for r in rows), key=version_tuple) for _, rows in vague]
    first = max(firsts, key=version_tuple)

    def lists_device(check: Check) -> Optional[Tuple[str, str]]:
        if version_tuple(check.release.text) >= version_tuple(first):
            return None
        return ARCH, f"{check.label}: xpu support for this device starts at torch {first}"

    walk = walk_releases(job, ("xpu",), constraints, accept=lists_device)
    if walk.chosen is None:
        if walk.failures and set(walk.failures) <= {PYTHON, PLATFORM}:
            names = ", ".join(g.name for g in job.machine.intel_gpus)
            dead_end = Draft()
            no_solution(job, dead_end, walk, constraints, f"runs on Intel GPU {names}")
            return platform_doors(job, dead_end, "intel")
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
    for name, rows in vague:
        supported = "; ".join(f"{r['family']} from torch {r['first_torch']}" for r in rows)
        what = ("an Intel GPU of unknown model" if name == UNKNOWN_INTEL
                else f"{name} names a family of Intel GPUs, not one model")
        draft.warnings.append(f"{what}: planned torch {chosen.release.text} xpu, whose builds support "
                              f"{supported}; an Intel GPU outside these (UHD, Iris Xe) has no xpu build. "
                              f"Give the model (--gpu 'Arc A770') for an exact plan")
    draft.reasons.append(headline(walk, f"torch {chosen.release.text} xpu",
                                  f"with an xpu wheel for Python {job.view.python} on "
                                  f"{job.view.platform}"))
    draft.prerequisites.append("the Intel GPU driver and runtime (Intel's 'PyTorch prerequisites "
                               "for Intel GPU' page): the xpu wheels bring the SYCL runtime, not "
                               "the kernel driver")
    return draft
