"""How much of its GPUs the user's own job uses: NVML samples (``snippets/nvml_watch.py``) folded
into a summary per device, and the verdict when the job keeps a GPU mostly idle (pure).

A sample's numbers are the job's where NVML names the job's processes (their SM utilisation and
memory); in a container whose PID namespace NVML does not share, no process ID matches, and the
device's own numbers stand in for the job's, saying so.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from torchsmith.doctor.model import Fact, Finding
from torchsmith.records import dataclass

__all__ = ["IDLE_BELOW", "DeviceUse", "Watch", "gpu_indexes_of_slurm_job", "pids_of_slurm_job"]

# The rule the Alliance's cluster guidance gives: a job using less than half of a GPU's compute
# and memory runs as fast on a MIG instance (https://docs.alliancecan.ca/wiki/Multi-Instance_GPU).
IDLE_BELOW = 50
MIG_SOURCE = "https://docs.alliancecan.ca/wiki/Multi-Instance_GPU"


def _dict(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


@dataclass
class DeviceUse:
    """One device over the watch: only the samples in which the job was on it count."""

    key: str  # "0", or "0/1" for MIG device 1 of GPU 0
    name: str = "GPU"
    parent: Optional[str] = None  # the GPU of a MIG device
    total_mib: Optional[int] = None
    job_sm: List[int] = field(default_factory=list)  # the job's SM %, per sample that has it
    device_util: List[int] = field(default_factory=list)  # the device's busy %, same samples
    job_mib: List[int] = field(default_factory=list)
    times: List[float] = field(default_factory=list)
    by_device: bool = False  # the job's processes were not named: the device's numbers

    @property
    def busy(self) -> List[int]:
        return self.job_sm if self.job_sm and not self.by_device else self.device_util

    def to_json(self) -> Dict[str, Any]:
        busy = self.busy
        return {
            "device": self.key, "name": self.name, "mig": self.parent is not None,
            "samples": len(self.times),
            "seconds": round(self.times[-1] - self.times[0], 1) if len(self.times) > 1 else 0.0,
            "busy_source": "device" if self.by_device or not self.job_sm else "job processes",
            "busy_percent_mean": round(sum(busy) / len(busy), 1) if busy else None,
            "busy_percent_max": max(busy) if busy else None,
            "memory_mib_peak": max(self.job_mib) if self.job_mib else None,
            "memory_mib_total": self.total_mib,
        }


@dataclass
class Watch:
    """Samples folded as they come: ``header`` first, then ``add`` for each sample line."""

    target: str
    devices: Dict[str, DeviceUse] = field(default_factory=dict)
    allocated: Optional[List[str]] = None  # the GPU indexes Slurm gave the job on this node
    driver: Optional[str] = None
    samples: int = 0
    error: Optional[str] = None
    _names: Dict[str, Tuple[str, Optional[str]]] = field(default_factory=dict)
    # Devices whose processes are all of no process here (another PID namespace): used only
    # where the job's own processes were never seen.
    _by_device: Dict[str, DeviceUse] = field(default_factory=dict)

    def header(self, line: Dict[str, Any]) -> None:
        self.driver = line.get("driver") if isinstance(line.get("driver"), str) else None
        for device in line.get("devices") or ():
            if isinstance(device, dict) and isinstance(device.get("key"), str):
                self._names[device["key"]] = (str(device.get("name") or "GPU"), device.get("parent"))

    def add(self, line: Dict[str, Any], job: Set[int], alive: Set[int]) -> None:
        """One sample; ``job``: the job's process IDs now; ``alive``: NVML's pids that exist here."""
        self.samples += 1
        stamp = line.get("t")
        when = float(stamp) if isinstance(stamp, (int, float)) else float(self.samples)
        devices = line.get("devices")
        for key, sample in (devices if isinstance(devices, dict) else {}).items():
            if not isinstance(sample, dict):
                continue
            pids = {p.get("pid"): _number(p.get("used_mib")) for p in sample.get("processes") or ()
                    if isinstance(p, dict)}
            mine = [p for p in pids if p in job]
            by_device = not mine and bool(pids) and all(p not in alive for p in pids)
            if not mine and not by_device:
                continue
            self._fold(key, sample, when, pids=pids, mine=mine, by_device=by_device)

    def _fold(self, key: str, sample: Dict[str, Any], when: float, *, pids: Dict[Any, Optional[int]],
              mine: List[Any], by_device: bool) -> None:
        name, parent = self._names.get(key, ("GPU", None))
        use = (self._by_device if by_device else self.devices).setdefault(key, DeviceUse(key, name, parent))
        use.by_device = by_device
        use.times.append(float(when))
        memory = _dict(sample.get("memory_mib"))
        use.total_mib = _number(memory.get("total")) or use.total_mib
        counted = list(pids) if by_device else mine
        use.job_mib.append(sum(pids[p] or 0 for p in counted))
        util = _dict(sample.get("util"))
        if _number(util.get("gpu")) is not None:
            use.device_util.append(int(util["gpu"]))
        rows = [r for r in sample.get("process_util") or ()
                if isinstance(r, dict) and r.get("pid") in counted]
        if rows:
            use.job_sm.append(min(100, sum(_number(r.get("sm")) or 0 for r in rows)))

    def used(self) -> List[DeviceUse]:
        """The devices the job used: where its processes were seen, else (another PID
        namespace) where NVML's processes were none of this namespace's."""
        return list(self.devices.values()) + [d for k, d in self._by_device.items() if k not in self.devices]

    def to_json(self) -> Dict[str, Any]:
        verdict = self.verdict()
        data: Optional[Dict[str, Any]] = None
        if verdict is not None:
            data = dict(verdict[0].to_json(), options=list(verdict[1]))
        return {"target": self.target, "driver": self.driver, "samples": self.samples,
                "devices": [d.to_json() for d in self.used()],
                "allocated_gpus": self.allocated,
                "pid_namespace_differs": any(d.by_device for d in self.used()),
                "verdict": data, "error": self.error}

    def verdict(self) -> Optional[Tuple[Finding, Tuple[str, ...]]]:
        """``gpu-underused`` and the options, when the job kept a whole GPU (not a MIG slice) busy
        less than IDLE_BELOW % on average over at least three samples, or held GPUs it never used."""
        idle = [d for d in self.used() if d.parent is None and len(d.busy) >= 3
                and sum(d.busy) / len(d.busy) < IDLE_BELOW]
        unused = len(self.allocated or ()) - len({d.parent or d.key for d in self.used()})
        if not idle and unused <= 0:
            return None
        facts = [fact for use in idle for fact in _facts(use)]
        if unused > 0:
            facts.append(Fact(f"Slurm gave the job {len(self.allocated or ())} GPU(s) here (IDX "
                              f"{','.join(self.allocated or ())}); its processes were on "
                              f"{len(self.allocated or ()) - unused}", "scontrol show job -d"))
        small = all(max(d.job_mib or [0]) * 2 < (d.total_mib or 0) for d in idle)
        if idle:
            where = ", ".join(f"GPU {d.key} ({d.name})" for d in idle)
            mean = max(round(sum(d.busy) / len(d.busy)) for d in idle)
            title = f"{self.target} kept {where} busy {mean}% of the time on average"
        else:
            title = f"{self.target} holds {unused} GPU(s) it did not use"
        options = _OPTIONS if small else _OPTIONS[1:]
        return Finding("gpu-underused", "warning", title, tuple(facts), note=_note(small)), options


def _facts(use: DeviceUse) -> List[Fact]:
    data = use.to_json()
    source = ("NVML nvmlDeviceGetUtilizationRates (the whole device: NVML's process IDs are of "
              "another PID namespace)" if data["busy_source"] == "device"
              else "NVML nvmlDeviceGetProcessUtilization (the job's processes)")
    facts = [Fact(f"GPU {use.key} ({use.name}): busy {data['busy_percent_mean']}% on average, at "
                  f"most {data['busy_percent_max']}%, over {data['samples']} samples ({data['seconds']} s)",
                  source)]
    if data["memory_mib_peak"] is not None and use.total_mib:
        facts.append(Fact(f"memory: at most {data['memory_mib_peak']} MiB of {use.total_mib} MiB "
                          f"({100 * data['memory_mib_peak'] / use.total_mib:.0f}%)",
                          "NVML nvmlDeviceGetComputeRunningProcesses"))
    return facts


_OPTIONS = (
    "ask for a MIG slice or a smaller GPU: Slurm --gres=gpu:<type>:1 with a MIG profile `sinfo -o '%G'` "
    "lists (e.g. 1g.10gb, 3g.40gb)",
    "put more work in each step: a larger batch, several runs at once, DataLoader workers "
    "(num_workers, pin_memory) so the GPU does not wait for data, CUDA graphs (torch.compile "
    "mode='reduce-overhead') against launch overhead",
    "share the GPU with MPS (nvidia-cuda-mps-control -d) to run several such jobs on it at once",
    "run it on CPUs: a job this light may not need a GPU (torchsmith plan --cpu)",
)


def _note(small: bool) -> str:
    rule = (f"A job using less than half of a GPU's compute and memory runs about as fast on a MIG "
            f"instance ({MIG_SOURCE}). " if small else "")
    return rule + "A whole GPU held by a job this idle is lost to everyone else waiting for one."


# --- Slurm: which processes and GPUs are the job's (scontrol, run on the job's node) ----------
def pids_of_slurm_job(listpids: str) -> List[int]:
    """The PIDs ``scontrol listpids JOBID`` prints on this node (its first column)."""
    pids = []
    for line in listpids.splitlines():
        first = line.split()[0] if line.split() else ""
        if first.isdigit():
            pids.append(int(first))
    return pids


def gpu_indexes_of_slurm_job(show_job: str, node: str) -> Optional[List[str]]:
    """The GPU indexes ``scontrol show job -d JOBID`` gives this node (``GRES=gpu:h100:2(IDX:0-1)``)."""
    indexes: List[str] = []
    for line in show_job.splitlines():
        if "IDX:" not in line or (node and "Nodes=" in line and not _node_in(line, node)):
            continue
        for spec in re.findall(r"IDX:([\d,\-]+)", line):
            indexes.extend(_expand(spec))
    return indexes or None


def _node_in(line: str, node: str) -> bool:
    match = re.search(r"Nodes=(\S+)", line)
    short = node.split(".", maxsplit=1)[0]
    return match is not None and (match.group(1) == node or short in _hostlist(match.group(1)))


def _hostlist(text: str) -> Sequence[str]:
    """node[01-03,07] -> node01 node02 node03 node07 (Slurm's host list, one bracket)."""
    match = re.match(r"^([^\[]+)\[([^\]]+)\](.*)$", text)
    if not match:
        return text.split(",")
    prefix, body, suffix = match.groups()
    names = []
    for part in body.split(","):
        low, _, high = part.partition("-")
        width = len(low)
        for number in range(int(low), int(high or low) + 1) if low.isdigit() else ():
            names.append(f"{prefix}{number:0{width}d}{suffix}")
    return names


def _expand(spec: str) -> List[str]:
    out: List[str] = []
    for part in spec.split(","):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            out.extend(str(i) for i in range(int(low), int(high or low) + 1))
    return out
