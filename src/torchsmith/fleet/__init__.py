"""Many nodes, one answer: group host profiles into node types and plan for them.

Pure: profiles in, a :class:`FleetReport` out. The planner is passed in (the CLI gives it the
resolver with the data loaded), so 1,000 nodes cost one resolver call per node *type*, not per
node. A shared environment is planned for a synthetic machine holding every GPU of the fleet
and its oldest driver: whatever runs there runs on every node.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from torchsmith.compat import DriverVersion, sm_arch
from torchsmith.machine import Machine, NvidiaGpu, NvidiaInfo
from torchsmith.plan.model import Plan
from torchsmith.records import dataclass
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.plan.variant_pick import VariantPrediction

__all__ = [
    "FleetReport",
    "NodeGroup",
    "NodeType",
    "group_nodes",
    "node_name",
    "plan_fleet",
    "shared_machine",
]

# planner(machine, shared): shared=True for the synthetic machine of a shared environment,
# whose GPUs are each driven by their own node's driver.
Planner = Callable[[Machine, bool], Plan]


@dataclass(frozen=True)
class NodeType:
    """What decides a node's torch stack; nodes with equal NodeTypes get the same plan."""

    platform: str
    distro: str  # "Ubuntu 22.04" or ""
    python: str  # "3.11" (+ "t" when free-threaded)
    driver: Optional[str]
    driver_cuda: Optional[str]
    gpus: Tuple[Tuple[str, Optional[str], int], ...]  # (name, compute capability, count)
    accelerator: str  # "cuda" | "jetson" | "rocm" | "xpu" | "cpu"
    extra: Tuple[str, ...] = ()  # L4T release, ROCm version and gfx targets
    other_gpus: Tuple[Tuple[str, int], ...] = ()  # Jetson, AMD and Intel GPUs: ("name (arch)", count)

    @property
    def label(self) -> str:
        gpus = ", ".join(
            [f"{count}× {name}" + f" ({sm_arch(cc) if cc else 'sm_?'})" for name, cc, count in self.gpus]
            + [f"{count}× {name}" for name, count in self.other_gpus]
        ) or "no GPU"
        parts = [gpus]
        if self.driver:
            limit = f" (CUDA ≤ {self.driver_cuda})" if self.driver_cuda else ""
            parts.append(f"driver {self.driver}{limit}")
        parts.extend(self.extra)
        parts.append(self.platform + (f" {self.distro}" if self.distro else ""))
        parts.append(f"Python {self.python or '?'}")
        return " · ".join(parts)

    def to_json(self) -> Dict[str, Any]:
        return {
            "label": self.label,
            "platform": self.platform,
            "distro": self.distro,
            "python": self.python,
            "driver": self.driver,
            "driver_cuda": self.driver_cuda,
            "accelerator": self.accelerator,
            "gpus": [{"name": n, "compute_capability": cc, "count": c} for n, cc, c in self.gpus],
            "extra": list(self.extra),
            "other_gpus": [{"name": n, "count": c} for n, c in self.other_gpus],
        }


@dataclass
class NodeGroup:
    node_type: NodeType
    nodes: List[str]
    machine: Machine  # the first node's profile stands for the group
    plan: Optional[Plan] = None
    variants: Optional[VariantPrediction] = None  # fleet --variants: what a variant installer picks


@dataclass
class FleetReport:
    groups: List[NodeGroup]
    shared: Optional[Plan]  # one environment for every node; None when none can exist
    shared_blockers: List[str]  # why no single environment can serve every node
    shared_costs: List[str]  # what choosing the shared environment gives up, per node type
    shared_machine: Optional[Machine]
    unreachable: List[Tuple[str, str]] = dataclasses.field(default_factory=list)  # (node, why)

    @property
    def node_count(self) -> int:
        return sum(len(g.nodes) for g in self.groups)


def node_name(machine: Machine, fallback: str) -> str:
    """The Slurm node name when the profile was taken inside a job, else ``fallback``."""
    if machine.scheduler is not None:
        name = machine.scheduler.variables.get("SLURMD_NODENAME")
        if name:
            return name
    return fallback


def _accelerator(machine: Machine) -> str:
    if machine.jetson is not None:
        return "jetson"
    if machine.nvidia is not None and machine.nvidia.gpus:
        return "cuda"
    if machine.rocm is not None and machine.rocm.gpus:
        return "rocm"
    if machine.intel_gpus:
        return "xpu"
    return "cpu"


def _other_gpus(machine: Machine) -> Tuple[Tuple[str, int], ...]:
    """The GPUs nvidia-smi does not list: a Jetson's iGPU, AMD's (with gfx) and Intel's."""
    counts: Dict[str, int] = {}
    jetson = machine.jetson
    if jetson is not None:
        arch = f" ({sm_arch(jetson.compute_capability)})" if jetson.compute_capability else ""
        counts[(jetson.model or f"Jetson {jetson.module or '?'}") + arch] = 1
    names = [f"{g.name} ({g.gfx or 'gfx?'})" for g in (machine.rocm.gpus if machine.rocm else ())]
    for name in [*names, *(g.name for g in machine.intel_gpus)]:
        counts[name] = counts.get(name, 0) + 1
    return tuple(sorted(counts.items()))


def _gpu_order(item: Tuple[Tuple[str, Optional[str]], int]) -> Tuple[str, str]:
    return item[0][0], item[0][1] or ""


def node_type(machine: Machine) -> NodeType:
    counts: Dict[Tuple[str, Optional[str]], int] = {}
    nvidia = machine.nvidia
    for gpu in nvidia.visible_gpus if nvidia else ():
        key = (gpu.name, gpu.compute_capability)
        counts[key] = counts.get(key, 0) + 1
    extra: List[str] = []
    if machine.jetson is not None:
        extra.append(f"L4T {machine.jetson.l4t or '?'}")
    if machine.rocm is not None and machine.rocm.gpus:
        gfx = sorted({g.gfx or "gfx?" for g in machine.rocm.gpus})
        extra.append(f"ROCm {machine.rocm.version or '?'} {' '.join(gfx)}")
    os_info = machine.os
    distro = " ".join(p for p in (os_info.distro or "", os_info.distro_version or "") if p)
    return NodeType(
        platform=machine.platform,
        distro=distro,
        python=machine.python.minor + ("t" if machine.python.free_threaded else ""),
        driver=nvidia.driver_version if nvidia else None,
        driver_cuda=nvidia.driver_cuda if nvidia else None,
        gpus=tuple((name, cc, n) for (name, cc), n in sorted(counts.items(), key=_gpu_order)),
        accelerator=_accelerator(machine),
        extra=tuple(extra),
        other_gpus=_other_gpus(machine),
    )


def group_nodes(named: Sequence[Tuple[str, Machine]]) -> List[NodeGroup]:
    """Identical node types together, largest group first (then by label, for stable output)."""
    groups: Dict[NodeType, NodeGroup] = {}
    for name, machine in named:
        key = node_type(machine)
        group = groups.get(key)
        if group is None:
            groups[key] = NodeGroup(key, [name], machine)
        else:
            group.nodes.append(name)
    return sorted(groups.values(), key=lambda g: (-len(g.nodes), g.node_type.label))


def _oldest(values: Sequence[Optional[str]]) -> Optional[str]:
    known = [v for v in values if v]
    return min(known, key=version_tuple) if known else None


def _driver_order(nvidia: NvidiaInfo) -> Tuple[int, ...]:
    """Oldest driver first (compat's DriverVersion); an unknown one last."""
    driver = DriverVersion.parse(nvidia.driver_version)
    return driver.parts if driver else (9999,)


def shared_machine(groups: Sequence[NodeGroup]) -> Tuple[Optional[Machine], List[str]]:
    """The synthetic machine a shared environment must run on, or why there is none.

    Every GPU model of the fleet, the oldest driver, the oldest Python. Nodes without a GPU
    run a CUDA build on the CPU, so they do not block sharing.
    """
    blockers: List[str] = []
    platforms = sorted({g.node_type.platform for g in groups})
    if len(platforms) > 1:
        blockers.append(f"nodes differ in platform ({', '.join(platforms)}): wheels are per platform")
    kinds = sorted({g.node_type.accelerator for g in groups} - {"cpu"})
    if len(kinds) > 1:
        blockers.append(f"nodes mix GPU kinds ({', '.join(kinds)}): each needs its own torch build")
    jetson = sorted({g.node_type.extra for g in groups if g.node_type.accelerator == "jetson"})
    if len(jetson) > 1:
        blockers.append("Jetson nodes run different L4T releases: NVIDIA's wheels are per JetPack")
    if blockers or not groups:
        return None, blockers
    machines = [g.machine for g in groups]
    base = min(machines, key=lambda m: version_tuple(m.python.version) or (99,))
    gpus: List[NvidiaGpu] = []
    seen = set()
    for machine in machines:
        for gpu in machine.nvidia.visible_gpus if machine.nvidia else ():
            key = (gpu.name, gpu.compute_capability)
            if key not in seen:
                seen.add(key)
                gpus.append(dataclasses.replace(gpu, index=len(gpus)))
    nvidia_infos = [m.nvidia for m in machines if m.nvidia is not None and m.nvidia.gpus]
    nvidia: Optional[NvidiaInfo] = None
    if nvidia_infos:
        oldest = min(nvidia_infos, key=_driver_order)
        nvidia = NvidiaInfo(
            driver_version=oldest.driver_version,
            driver_version_source="the oldest driver in the fleet",
            driver_cuda=_oldest([n.driver_cuda for n in nvidia_infos]),
            driver_cuda_source="the oldest driver in the fleet",
            gpus=tuple(gpus),
            gpus_source="every GPU model in the fleet",
        )
    rocm_gpus = tuple({(g.name, g.gfx): g for m in machines if m.rocm for g in m.rocm.gpus}.values())
    rocm = base.rocm
    if rocm is not None and rocm_gpus:
        rocm_versions = [m.rocm.version for m in machines if m.rocm]
        rocm = dataclasses.replace(rocm, gpus=rocm_gpus, version=_oldest(rocm_versions))
    synthetic = dataclasses.replace(base, nvidia=nvidia, rocm=rocm, notes=(), scheduler=None,
                                    cuda_toolkits=())
    return synthetic, blockers


def _torch_label(plan: Optional[Plan]) -> str:
    if plan is None or not plan.ok:
        return "no working torch"
    torch = plan.package("torch")
    version = torch.version if torch else "?"
    return f"torch {version} {plan.variant or plan.accelerator}".strip()


def _costs(groups: Sequence[NodeGroup], shared: Plan) -> List[str]:
    costs: List[str] = []
    shared_torch = shared.package("torch")
    for group in groups:
        own = group.plan
        if own is None or not own.ok or shared_torch is None:
            continue
        own_torch = own.package("torch")
        if own_torch is None:
            continue
        newer = version_tuple(own_torch.version) > version_tuple(shared_torch.version)
        other_variant = (own.variant or "") != (shared.variant or "")
        if newer or other_variant:
            what = "an older torch" if newer else "another build"
            costs.append(
                f"{len(group.nodes)} node(s) of type [{group.node_type.label}] could run "
                f"{_torch_label(own)} on their own; the shared environment gives them "
                f"{_torch_label(shared)} ({what})"
            )
    return costs


def plan_fleet(named: Sequence[Tuple[str, Machine]], planner: Planner) -> FleetReport:
    groups = group_nodes(named)
    for group in groups:
        group.plan = planner(group.machine, False)
    synthetic, blockers = shared_machine(groups)
    shared: Optional[Plan] = None
    costs: List[str] = []
    if synthetic is not None:
        shared = groups[0].plan if len(groups) == 1 else planner(synthetic, True)
        if shared is not None and shared.ok:
            costs = _costs(groups, shared)
        elif shared is not None:
            blockers.append("no single torch build runs on every node: "
                            + "; ".join(r.reason for r in shared.rejected[:3]))
        pythons = sorted({g.node_type.python for g in groups if g.node_type.python}, key=version_tuple)
        if len(pythons) > 1:
            costs.append(f"nodes run Python {', '.join(pythons)}: a shared environment is built for "
                         f"Python {synthetic.python.minor}, which must exist on every node")
    return FleetReport(groups=groups, shared=shared, shared_blockers=blockers, shared_costs=costs,
                       shared_machine=synthetic)
