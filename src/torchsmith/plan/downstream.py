"""Downstream packages (vllm, mmsegmentation, mmdet, mmpretrain, detectron2, bitsandbytes): their
constraints on torch and on each other, as data (``kb/data/downstream.json``).

A request naming one is planned within its constraints (``mmsegmentation`` brings ``mmcv<2.2``,
``vllm`` pins one torch), and the package itself appears in the plan's pins and commands.
Packages that build from source (detectron2) are planned after a torch of the right kind, built
with ``--no-build-isolation``; CUDA-only packages are never planned on a CPU torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from torchsmith.plan.model import Blocker, PackagePin
from torchsmith.plan.request import Wanted
from torchsmith.versions import sortable_version

if TYPE_CHECKING:
    from torchsmith.plan.companions import Extra
    from torchsmith.plan.hostview import HostView
    from torchsmith.plan.resolve import Job, _Draft, _Index

__all__ = ["CUDA_ONLY", "known", "plan_downstream", "with_implied"]

CUDA_ONLY = ("flash-attn", "vllm")


def _rows(kb: Any, name: str) -> List[Dict[str, Any]]:
    return [dict(r) for r in kb.document("downstream")["rows"] if r["package"] == name]


def known(name: str, kb: Any) -> bool:
    return bool(_rows(kb, name))


def _cite(row: Dict[str, Any], kb: Any) -> str:
    urls = kb.document("downstream")["sources"]
    return " [source: " + "; ".join(urls[i].split(" ", 1)[0] for i in row["source"][:2]) + "]"


def with_implied(job: Job) -> Tuple[Job, Optional[Blocker]]:
    """The request plus what its downstream packages require (mmsegmentation -> mmcv<2.2.0).

    A requirement the user pinned outside that range is a blocker, never silently dropped.
    """
    from torchsmith.plan.request import parse_requirement

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
                                            f"{have.text} is outside it{_cite(row, job.idx.kb)}")
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


def plan_downstream(job: Job, name: str, want: Wanted, extra: Extra) -> None:
    """The torch constraint of ``name`` and a finisher that adds its own pin."""
    from torchsmith.plan import resolve as core

    rows = [r for r in _rows(job.idx.kb, name) if not r["version"] or want.allows(r["version"])]
    if not rows:
        extra.fatal = True
        known_versions = ", ".join(r["version"] for r in _rows(job.idx.kb, name)[:6])
        extra.reasons.append(f"no {name} release in the data matches {want.text} (known: {known_versions})")
        return
    specs = [(r, Wanted("torch", r["torch"], frozenset(), f"torch{r['torch']}"))
             for r in rows if r.get("torch")]
    if specs:
        def torch_allowed(release: Any, _build: Any) -> Optional[str]:
            if any(spec.allows(release.version, True) for _, spec in specs):
                return None
            wants = [spec.text for _, spec in specs][:3]  # the newest releases first
            return f"{want.text} needs {' or '.join(wants)}"

        extra.constraints.append(core.Constraint(f"{want.text} ({want.origin})", torch_allowed))

    def finisher(torch: Optional[PackagePin], draft: _Draft, view: HostView, idx: _Index) -> None:
        if torch is None:
            return
        fitting = [r for r, spec in specs if spec.allows(torch.version, True)] if specs else rows
        fitting.sort(key=lambda r: sortable_version(r["version"] or "0"), reverse=True)
        row = fitting[0] if fitting else rows[0]
        if row.get("source_build"):
            draft.packages.append(PackagePin(name, row["version"], "source", wheel_url=row.get("url")))
            draft.warnings.append(f"{name}: no wheel for torch {torch.version}; it builds from source "
                                  f"after torch is installed, with --no-build-isolation so it compiles "
                                  f"against the planned torch{_cite(row, job.idx.kb)}")
            return
        draft.packages.append(PackagePin(name, row["version"]))
        what = (f"built against torch{row['torch']}" if row.get("torch")
                else "needs " + ", ".join(f"{k}{v}" for k, v in (row.get("requires") or {}).items()))
        draft.reasons.append(f"{name} {row['version'] or '(newest)'}: {what}{_cite(row, job.idx.kb)}"
                             + (" (uncertain)" if row.get("uncertain") else ""))

    extra.finishers.append(finisher)
