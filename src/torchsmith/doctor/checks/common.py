"""What the checks share: the report type and the facts about the host's GPUs and torch."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from torchsmith.doctor.fixes import KbSource
from torchsmith.doctor.model import Fact, Finding
from torchsmith.machine import Machine

Report = Dict[str, Any]
Check = Callable[[Report, Machine, KbSource], Optional[Finding]]


def nvidia_gpus(machine: Machine) -> List[Tuple[str, Optional[str], str]]:
    """(name, compute capability, source) of every NVIDIA GPU a job here can use."""
    gpus = []
    if machine.nvidia:
        source = machine.nvidia.gpus_source or "probe"
        gpus = [(g.name, g.compute_capability, f"machine.nvidia.gpus ({g.source or source})")
                for g in machine.nvidia.visible_gpus]
    if not gpus and machine.jetson is not None:
        j = machine.jetson
        gpus = [(f"Jetson {j.module or ''}".strip(), j.compute_capability,
                 f"machine.jetson ({j.source or 'probe'})")]
    return gpus


def amd_gpus(machine: Machine) -> List[Tuple[str, Optional[str], str]]:
    if not machine.rocm:
        return []
    return [(g.name, g.gfx, f"machine.rocm.gpus ({g.source or machine.rocm.source or 'probe'})")
            for g in machine.rocm.gpus]


def gpu_facts(gpus: List[Tuple[str, Optional[str], str]]) -> List[Fact]:
    facts = []
    for name, cc, source in gpus:
        label = name if name.startswith("GPU") else f"GPU {name}"
        if cc:
            label += f" (compute capability {cc})" if "." in cc else f" ({cc})"
        facts.append(Fact(label, source))
    return facts


def torch_fact(build: Dict[str, Any]) -> Fact:
    what = f"torch {build['version']}"
    if build["accelerator"] == "cuda":
        what += f", a CUDA {build['cuda']} build"
    elif build["accelerator"] == "rocm":
        what += f", a ROCm (HIP {build['hip']}) build"
    else:
        what += f", a {build['accelerator'].upper()} build (torch.version.cuda is None)"
    return Fact(what, build["source"])


def dynamic_of(report: Report) -> Dict[str, Any]:
    dynamic = report.get("dynamic") or {}
    return dynamic if dynamic.get("status") == "ok" else {}
