"""Downstream packages (vllm, mmsegmentation, mmdet, mmpretrain, detectron2, bitsandbytes): their
constraints on torch and on each other, as data (``kb/data/downstream.json``).

A request naming one is planned within its constraints (``mmsegmentation`` brings ``mmcv<2.2``,
``vllm`` pins one torch), and the package itself appears in the plan's pins and commands.
Packages that build from source (detectron2) are planned after a torch of the right kind, built
with ``--no-build-isolation``; CUDA-only packages are never planned on a CPU torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.plan.core import Constraint, Job
from torchsmith.plan.extra import NOTHING, Addition, Extra
from torchsmith.plan.hostview import HostView
from torchsmith.plan.index import Index
from torchsmith.plan.model import Blocker, PackagePin
from torchsmith.plan.request import Wanted, parse_requirement
from torchsmith.versions import sortable_version

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase, TorchRelease, VariantBuild

__all__ = ["CUDA_ONLY", "cuda_only_blocker", "known", "plan_downstream", "with_implied"]

CUDA_ONLY = ("flash-attn", "vllm")


def _rows(kb: KnowledgeBase, name: str) -> List[Dict[str, Any]]:
    return [dict(r) for r in kb.document("downstream")["rows"] if r["package"] == name]


def known(kb: KnowledgeBase, name: str) -> bool:
    """The data has ``name`` as a downstream package."""
    return bool(_rows(kb, name))


def _cite(kb: KnowledgeBase, row: Dict[str, Any]) -> str:
    urls = kb.document("downstream")["sources"]
    return " [source: " + "; ".join(urls[i].split(" ", 1)[0] for i in row["source"][:2]) + "]"


def with_implied(job: Job) -> Tuple[Job, Optional[Blocker]]:
    """The request plus what its downstream packages require (mmsegmentation -> mmcv<2.2.0).

    A requirement the user pinned outside that range is a blocker, never silently dropped.
    """
    wanted = dict(job.wanted)
    for name, want in job.wanted.items():
        rows = [r for r in _rows(job.idx.kb, name) if not r["version"] or want.allows(r["version"])]
        for row in rows[:1]:
            for other, spec in (row.get("requires") or {}).items():
                origin = f"required by {name} {row['version']}"
                implied = parse_requirement(f"{other}{spec}", origin)
                have = wanted.get(other)
                if have is not None:
                    pinned = _exact_pin(have)
                    if pinned and not implied.allows(pinned):
                        return job, Blocker("conflicts-with-requirement", have.text,
                                            f"{name} {row['version']} needs {other}{spec}; "
                                            f"{have.text} is outside it{_cite(job.idx.kb, row)}")
                    implied = Wanted(other, ",".join(s for s in (have.spec, implied.spec) if s),
                                     have.extras, f"{have.text}, {implied.text}", have.origin)
                wanted[other] = implied
    return (job._replace(wanted=wanted) if wanted != job.wanted else job), None


def _exact_pin(want: Wanted) -> str:
    """``2.2.0`` for ``mmcv==2.2.0``; "" for anything looser."""
    spec = want.spec.strip()
    return spec[2:].strip() if spec.startswith("==") and "," not in spec and "*" not in spec else ""


def cuda_only_blocker(job: Job) -> Optional[Blocker]:
    """A CUDA-only package asked for on a machine with no NVIDIA GPU: never plan it on CPU torch."""
    asked = [n for n in CUDA_ONLY if n in job.wanted]
    if not asked or job.view.has_cuda_gpu or job.machine.jetson is not None:
        return None
    return Blocker("no-gpu-support", "no NVIDIA GPU",
                   f"{', '.join(asked)} runs only on a CUDA torch, and this machine has no NVIDIA GPU "
                   f"(a CPU torch cannot build or load it)")


def cuda_only_on_cpu(job: Job, chosen_accelerator: Optional[str], why: Sequence[str]) -> Optional[Blocker]:
    """A CUDA-only package on a machine whose NVIDIA GPUs no CUDA build can use (a driver too old,
    a GPU too new or too old): the CPU torch planned instead cannot load it either."""
    asked = [n for n in CUDA_ONLY if n in job.wanted]
    if not asked or chosen_accelerator not in (None, "cpu") or not job.view.has_cuda_gpu:
        return None
    reason = why[0] if why else "no CUDA build of torch runs on these GPUs with this driver"
    return Blocker("no-gpu-support", "no CUDA build runs here",
                   f"{', '.join(asked)} runs only on a CUDA torch, and none runs here: {reason}")


def plan_downstream(job: Job, name: str, want: Wanted, extra: Extra) -> None:
    """The torch constraint of ``name`` and a finisher that adds its own pin."""
    rows = [r for r in _rows(job.idx.kb, name) if not r["version"] or want.allows(r["version"])]
    if not rows:
        extra.fatal = True
        known_versions = ", ".join(r["version"] for r in _rows(job.idx.kb, name)[:6])
        extra.reasons.append(f"no {name} release in the data matches {want.text} (known: {known_versions})")
        return
    specs = [(r, Wanted("torch", r["torch"], frozenset(), f"torch{r['torch']}"))
             for r in rows if r.get("torch")]
    if specs:
        def torch_allowed(release: TorchRelease, _build: Optional[VariantBuild]) -> Optional[str]:
            if any(spec.allows(release.version, True) for _, spec in specs):
                return None
            wants = [spec.text for _, spec in specs][:3]  # the newest releases first
            return f"{want.text} needs {' or '.join(wants)}"

        extra.constraints.append(Constraint(f"{want.text} ({want.origin})", torch_allowed))

    def finisher(torch: Optional[PackagePin], _variant: Optional[str], view: HostView, idx: Index
                 ) -> Addition:
        if torch is None:
            return NOTHING
        fitting = [r for r, spec in specs if spec.allows(torch.version, True)] if specs else rows
        fitting.sort(key=lambda r: sortable_version(r["version"] or "0"), reverse=True)
        row = fitting[0] if fitting else rows[0]
        if row.get("source_build"):
            return Addition(
                packages=(PackagePin(name, row["version"], "source", wheel_url=row.get("url")),),
                warnings=(f"{name}: no wheel for torch {torch.version}; it builds from source after "
                          f"torch is installed, with --no-build-isolation so it compiles against the "
                          f"planned torch{_cite(idx.kb, row)}",))
        what = (f"built against torch{row['torch']}" if row.get("torch")
                else "needs " + ", ".join(f"{k}{v}" for k, v in (row.get("requires") or {}).items()))
        return Addition(packages=(PackagePin(name, row["version"]),),
                        reasons=(f"{name} {row['version'] or '(newest)'}: {what}{_cite(idx.kb, row)}"
                                 + (" (uncertain)" if row.get("uncertain") else ""),))

    extra.finishers.append(finisher)
