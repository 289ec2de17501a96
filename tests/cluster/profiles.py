"""Host profiles of cluster nodes for the tests and the benchmark: real Machine values."""

from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Sequence, Tuple

from torchsmith.machine import Machine, NvidiaGpu, NvidiaInfo, OsInfo, PythonInfo, SchedulerInfo

# (GPU name, compute capability, memory MiB)
A100 = ("NVIDIA A100-SXM4-80GB", "8.0", 81920)
V100 = ("Tesla V100-SXM2-32GB", "7.0", 32768)
RTX5090 = ("NVIDIA GeForce RTX 5090", "12.0", 32607)
H100 = ("NVIDIA H100 80GB HBM3", "9.0", 81559)
L40S = ("NVIDIA L40S", "8.9", 46068)


def node(gpu: Optional[Tuple[str, str, int]], count: int = 1, driver: str = "550.54.14",
         driver_cuda: str = "12.4", python: str = "3.11.7", arch: str = "x86_64",
         name: Optional[str] = None, cpus: int = 64) -> Machine:
    nvidia = None
    if gpu is not None:
        nvidia = NvidiaInfo(
            driver_version=driver, driver_version_source="nvidia-smi",
            driver_cuda=driver_cuda, driver_cuda_source="nvidia-smi",
            gpus=tuple(NvidiaGpu(i, gpu[0], gpu[1], memory_mib=gpu[2], source="nvidia-smi")
                       for i in range(count)),
            gpus_source="nvidia-smi")
    scheduler = None
    if name:
        scheduler = SchedulerInfo(kind="slurm", job_id="42", variables={"SLURMD_NODENAME": name})
    return Machine(
        os=OsInfo(system="linux", arch=arch, distro="ubuntu", distro_version="22.04",
                  distro_name="Ubuntu 22.04.4 LTS", glibc="2.35", cpu_count=cpus),
        python=PythonInfo(version=python, executable="/usr/bin/python3"),
        nvidia=nvidia, scheduler=scheduler)


# A mixed cluster: 60% A100 nodes, V100 nodes on an old driver, H100 and L40S nodes, CPU nodes.
_MIX: Sequence[Tuple[float, Dict[str, object]]] = (
    (0.4, {"gpu": A100, "count": 8}),
    (0.2, {"gpu": V100, "count": 4, "driver": "535.104.05", "driver_cuda": "12.2"}),
    (0.2, {"gpu": H100, "count": 8, "driver": "570.86.10", "driver_cuda": "12.8"}),
    (0.1, {"gpu": L40S, "count": 4, "driver": "560.35.03", "driver_cuda": "12.6"}),
    (0.1, {"gpu": None}),
)


def fleet(count: int) -> List[Tuple[str, Machine]]:
    out: List[Tuple[str, Machine]] = []
    start = 0
    for share, spec in _MIX:
        n = round(share * count) if spec is not _MIX[-1][1] else count - start
        for i in range(start, start + n):
            name = f"gpu{i:04d}"
            out.append((name, node(name=name, **spec)))  # type: ignore[arg-type]
        start += n
    return out


def write_profiles(folder: str, named: Sequence[Tuple[str, Machine]]) -> List[str]:
    paths = []
    for name, machine in named:
        path = os.path.join(folder, f"{name}.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(machine.to_json(), handle)
        paths.append(path)
    return paths
