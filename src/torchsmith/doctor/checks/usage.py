"""How well a training step uses the GPU."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from torchsmith.doctor.build import (
    torch_build,
)
from torchsmith.doctor.checks.common import (
    Report,
    dynamic_of,
)
from torchsmith.doctor.fixes import KbSource
from torchsmith.doctor.model import Fact, Finding
from torchsmith.machine import Machine

# A training step whose GPU is busy less than this is bound by Python and kernel launches.
UNDERUSED_BELOW = 0.30
# Data-center parts: shared cluster GPUs, where an idle one is wasted for other users.
_DATA_CENTER = re.compile(r"\b(Tesla|[ABHL]\d{1,3}[A-Z]?|GB\d{3}|GH\d{3}|T4|V100|P100|P40|K80|"
                          r"Instinct|MI\d{2,3}[A-Z]?)\b")


def _measure(value: Any) -> Optional[float]:
    """A timing field of the snippet's report; anything but a finite non-negative number is absent."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value < float("inf") else None


def _shared_gpu(machine: Machine, names: List[str]) -> List[Fact]:
    """Why the GPU is likely shared with other users: a batch job, or a data-center part."""
    facts = []
    if machine.scheduler is not None:
        job = f" {machine.scheduler.job_id}" if machine.scheduler.job_id else ""
        facts.append(Fact(f"running inside a {machine.scheduler.kind} job{job}", "machine.scheduler"))
    named = sorted({name for name in names if _DATA_CENTER.search(name)})
    if named:
        facts.append(Fact(f"{', '.join(named)}: a data-center GPU", "torch.cuda.get_device_properties"))
    elif machine.nvidia and any(g.mig_mode in ("Enabled", "Disabled") for g in machine.nvidia.gpus):
        facts.append(Fact("the GPUs support MIG: data-center GPUs", "machine.nvidia.gpus (mig_mode)"))
    return facts


def check_gpu_underused(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    """A small model's training step leaves the GPU idle most of the time (launch-bound)."""
    build = torch_build(report)
    cuda = dynamic_of(report).get("cuda") or {}
    if build is None or build["accelerator"] not in ("cuda", "rocm") or not isinstance(cuda, dict):
        return None
    low = _underused_devices(cuda.get("devices"))
    if not low:
        return None
    names = [str(device.get("name") or "GPU") for device, *_ in low]
    device, timing, fraction, step, busy = min(low, key=lambda row: row[2])
    where = (f"GPU {device.get('index')} ({names[0]})" if len(low) == 1
             else f"{len(low)} GPUs ({', '.join(sorted(set(names)))})")
    percents = sorted(round(row[2] * 100) for row in low)
    busy_text = f"{percents[0]}%" if percents[0] == percents[-1] else f"{percents[0]}-{percents[-1]}%"
    facts = _timing_facts(device, timing, fraction, step, busy)
    shared = _shared_gpu(machine, names)
    facts.extend(shared)
    note, fix = _underused_advice(machine, names, f"idle {100 - percents[-1]}% of each step", bool(shared))
    return Finding(
        "gpu-underused", "warning" if shared else "info",
        f"a small model keeps {where} busy only {busy_text} of each training step",
        tuple(facts), fix, note=note,
    )


_Timing = Tuple[Dict[str, Any], Dict[str, Any], float, float, float]


def _underused_devices(devices: Any) -> List[_Timing]:
    """(device, timing, busy fraction, step ms, busy ms) of each GPU busy less than UNDERUSED_BELOW."""
    low = []
    for device in devices if isinstance(devices, list) else ():
        timing = device.get("small_model") if isinstance(device, dict) else None
        if not isinstance(timing, dict):
            continue
        fraction, step, busy = (_measure(timing.get(k)) for k in ("busy_fraction", "step_ms", "gpu_busy_ms"))
        if fraction is not None and step and busy is not None and fraction < UNDERUSED_BELOW:
            low.append((device, timing, fraction, step, busy))
    return low


def _timing_facts(device: Dict[str, Any], timing: Dict[str, Any], fraction: float, step: float,
                  busy: float) -> List[Fact]:
    """What the timed training step showed on the least busy GPU."""
    params = _measure(timing.get("params"))
    model = f"a {params / 1e6:.1f}M-parameter MLP" if params else "a small MLP"
    source = f"torch_check.py: CUDA events around the steps on GPU {device.get('index')}"
    batch = timing.get("batch")
    batch = batch if isinstance(batch, int) and not isinstance(batch, bool) and batch > 0 else None
    facts = [Fact(f"{model}, batch {batch or 'size unknown'}, one SGD training step: {step:.2f} ms, "
                  f"the GPU busy {busy:.3f} ms of it ({fraction:.0%})", source)]
    if timing.get("method") == "events":
        facts.append(Fact("that busy time includes the gaps between kernels (no torch.cuda._sleep to "
                          "queue the step): the GPU is idle at least this much", source))
    kernels = _measure(timing.get("kernels_per_step"))
    if kernels:
        facts.append(Fact(f"{kernels:.0f} GPU operations (kernel launches) per step, "
                          f"{busy / kernels * 1000:.0f} µs of GPU time each on average",
                          "torch_check.py: the ATen ops of one step (TorchDispatchMode)"))
    large, large_ms = timing.get("large_batch"), _measure(timing.get("large_batch_step_ms"))
    if large_ms and isinstance(large, int) and batch:
        facts.append(Fact(f"{large // batch}x the batch ({large}) took {large_ms / step:.1f}x the time "
                          f"({large_ms:.2f} ms a step)", source))
    return facts


def _underused_advice(machine: Machine, names: List[str], idle: str,
                      shared: bool) -> Tuple[str, Tuple[str, ...]]:
    """The note and fix: on a shared (cluster, data-center) GPU, give it back; else batch more."""
    advice = ("batch more work into each step (a larger batch, several models at once), cut launch "
              "overhead with CUDA graphs (torch.compile(model, mode='reduce-overhead')), or run a "
              "model this small on the CPU")
    if not shared:
        return (f"a small model leaves this GPU {idle}, waiting for Python and kernel launches, not "
                f"for compute. If your model is this small, {advice}"), ()
    if any("MIG" in name for name in names):
        smaller = "This is already a MIG slice: a smaller slice, or MPS, may do. "
    else:
        smaller = ("Ask for a MIG slice or a smaller GPU instead (Slurm: --gres=gpu:<mig-profile>:1, "
                   "e.g. 1g.10gb, as `sinfo` lists them), or share the GPU through MPS. ")
    note = (f"a small model leaves this GPU {idle}: a whole GPU held by a job like this is wasted, "
            f"idle while other users wait for one. {smaller}Or {advice}")
    fix: Tuple[str, ...] = ()
    if machine.scheduler is not None and machine.scheduler.kind == "slurm":
        fix = ("sinfo -h -o '%P %G'  # the partitions and GPU types (MIG slices) this cluster offers",)
    return note, fix
