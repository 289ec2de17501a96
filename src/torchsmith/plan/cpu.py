"""The CPU build (no usable GPU, or the fallback of the GPU planners) and macOS (PyPI's wheels,
MPS on Apple silicon)."""

from __future__ import annotations

from typing import Sequence

from torchsmith.machine import Machine
from torchsmith.output import Caution
from torchsmith.plan.adopt import adopt, conda_specs, headline, reject_pypi_default
from torchsmith.plan.core import Constraint, Job
from torchsmith.plan.dead_end import no_solution
from torchsmith.plan.draft import Draft
from torchsmith.plan.walk import walk_releases

__all__ = ["no_gpu_reason", "plan_cpu", "plan_macos"]

_WINDOWS_AMD = ("AMD GPU on Windows: PyTorch publishes no ROCm wheels for Windows, so this plan is "
                "the CPU build. For the GPU: run Linux, or WSL2 with AMD's ROCm-on-WSL for the Radeon "
                "cards AMD lists (uncertain), or AMD's own preview Windows wheels (not upstream).")


def plan_cpu(job: Job, constraints: Sequence[Constraint], why: str) -> Draft:
    """The CPU build from the PyTorch CPU index; ``why`` says why no GPU build is planned."""
    idx, view, machine = job.idx, job.view, job.machine
    draft = Draft()
    walk = walk_releases(job, ("cpu",), constraints)
    if walk.chosen is None:
        no_solution(job, draft, walk, constraints, "for this platform and Python")
        return draft
    chosen = walk.chosen
    adopt(job, draft, chosen, walk.rejected, "cpu")
    rel = chosen.release.data
    draft.reasons.append(f"{why}: the CPU build from the PyTorch CPU index "
                         f"({chosen.variant.index_url}) carries no CUDA libraries"
                         f"{idx.cite(chosen.variant.sources, 1)}")
    draft.reasons.append(headline(walk, f"torch {rel.version}",
                                  f"with a wheel for Python {view.python} on {view.platform}")
                         + idx.cite(rel.sources, 1))
    reject_pypi_default(draft, idx, view, chosen)
    draft.conda.update(conda_specs(idx, view, chosen))
    if machine.os.system == "windows" and machine.rocm and machine.rocm.gpus:
        draft.warnings.append(Caution(_WINDOWS_AMD))
    return draft


def plan_macos(job: Job, constraints: Sequence[Constraint]) -> Draft:
    """PyPI's macOS wheel (MPS on Apple silicon); Intel Macs stopped at torch 2.2.2."""
    idx, view, machine = job.idx, job.view, job.machine
    draft = Draft()
    apple = machine.apple
    walk = walk_releases(job, ("cpu",), constraints)
    if walk.chosen is None:
        no_solution(job, draft, walk, constraints, "for this Mac and Python")
    else:
        chosen = walk.chosen
        arm = machine.os.arch == "arm64"
        adopt(job, draft, chosen, walk.rejected, "mps" if arm else "cpu", plain_pypi=True)
        rel = chosen.release.data
        draft.reasons.append("macOS wheels come from PyPI (no CUDA on macOS); " + headline(
            walk, f"torch {rel.version}", f"with a wheel for Python {view.python} on {view.platform}")
            + idx.cite(rel.sources, 1))
        if arm:
            draft.reasons.append("Apple silicon: the PyPI wheel includes the MPS (Metal) backend")
        draft.conda.update(conda_specs(idx, view, chosen))
    if machine.os.arch == "x86_64":
        if apple is not None and (apple.rosetta or apple.apple_silicon):
            draft.warnings.append(Caution(
                "this Python is an x86_64 build running under Rosetta on Apple silicon: torch for "
                "macOS x86_64 stopped at 2.2.2 and has no MPS; install an arm64 Python (python.org "
                "universal2 installer, `uv python install`, or Homebrew in /opt/homebrew) for current "
                "torch with MPS"))
        else:
            draft.warnings.append("torch publishes no macOS x86_64 (Intel Mac) wheels after 2.2.2")
    return draft


def no_gpu_reason(machine: Machine) -> str:
    """Why the CPU build: no GPU, or an Intel GPU no xpu build lists."""
    if machine.intel_gpus:
        names = ", ".join(g.name for g in machine.intel_gpus)
        return (f"no NVIDIA or AMD GPU found, and no xpu build of torch lists Intel GPU {names} "
                f"(supported: Arc A/B-Series, Core Ultra with Arc Graphics, Data Center GPU Max)")
    return "no NVIDIA or AMD GPU found"
