"""``torchsmith fleet`` as one call: profiles from files and Slurm in, a plan per node type and
one shared plan out, with the JSON the command prints."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import time
from dataclasses import field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from torchsmith.errors import ProfileError
from torchsmith.fleet import FleetReport, Planner, node_name, plan_fleet
from torchsmith.host import Host
from torchsmith.machine import Machine
from torchsmith.plan.model import Plan, Request
from torchsmith.records import dataclass

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["FleetSurvey", "SlurmGather", "fleet_planner", "report_json", "survey_fleet"]


@dataclass(frozen=True)
class SlurmGather:
    """Gather profiles with ``srun``: which partitions, how long, which probe, where to save them."""

    probe: Tuple[str, ...]
    partitions: Tuple[str, ...] = ()
    timeout: float = 60.0
    save_to: Optional[str] = None


@dataclass
class FleetSurvey:
    report: FleetReport
    gather: Dict[str, Any] = field(default_factory=dict)  # seconds and srun commands, when gathered

    def to_json(self) -> Dict[str, Any]:
        data = report_json(self.report)
        if self.gather:
            data["gather"] = self.gather
        return data


def fleet_planner(kb: Callable[[], KnowledgeBase], requirements: Optional[Sequence[str]]) -> Planner:
    """The resolver for one node type or for the shared environment; the data is loaded by
    ``kb()`` when the first node type is planned (after every profile has been read)."""
    from torchsmith.plan.api import make_plan

    request = Request(requirements=tuple(requirements), explicit=True) if requirements else Request()
    shared_request = dataclasses.replace(request, gpus_on_separate_nodes=True)

    def plan(machine: Machine, shared: bool) -> Plan:
        # The one policy; the nodes' own profiles are the facts (no constraint file of theirs is
        # here, so a profile naming some gets a caution to check them there).
        return make_plan(machine, shared_request if shared else request, kb(), read=None, profile=True)[0]

    return plan


def survey_fleet(host: Host, planner: Planner, profiles: Sequence[str],
                 slurm: Optional[SlurmGather] = None) -> FleetSurvey:
    """Load ``profiles``, gather more through Slurm when asked, group and plan them."""
    named = load_profiles(profiles)
    unreachable: List[Tuple[str, str]] = []
    gather: Dict[str, Any] = {}
    if slurm is not None:
        from torchsmith.fleet.slurm import gather_profiles

        started = time.monotonic()
        gathered = gather_profiles(host, slurm.partitions, slurm.timeout, slurm.probe)
        gather = {"seconds": round(time.monotonic() - started, 3),
                  "commands": [shlex.join(c) for c in gathered.commands]}
        named.extend(gathered.profiles)
        unreachable.extend(gathered.unreachable)
        if slurm.save_to:
            save_profiles(slurm.save_to, gathered.profiles)
    if not named:
        raise ProfileError("no node answered: nothing to plan",
                           context=[f"{node}: {why}" for node, why in unreachable])
    report = plan_fleet(named, planner)
    report.unreachable = unreachable
    return FleetSurvey(report, gather)


def load_profiles(paths: Sequence[str]) -> List[Tuple[str, Machine]]:
    """(node name, machine) of each profile file; a repeated name gets ``#2``, ``#3`` ..."""
    from torchsmith.probe import load_machine

    named: List[Tuple[str, Machine]] = []
    names: Dict[str, int] = {}
    for path in paths:
        machine = load_machine(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        name = node_name(machine, stem)
        names[name] = names.get(name, 0) + 1
        if names[name] > 1:
            name = f"{name}#{names[name]}"
        named.append((name, machine))
    return named


def save_profiles(folder: str, profiles: Sequence[Tuple[str, Machine]]) -> None:
    from torchsmith.redact import redact_data

    os.makedirs(folder, exist_ok=True)
    for node, machine in profiles:
        with open(os.path.join(folder, f"{node}.json"), "w", encoding="utf-8") as handle:
            json.dump(redact_data(machine.to_json()), handle, indent=2, sort_keys=True)


def _plan_json(plan: Optional[Plan]) -> Optional[Dict[str, Any]]:
    if plan is None:
        return None
    return {
        "status": plan.status,
        "accelerator": plan.accelerator,
        "variant": plan.variant,
        "python": plan.python,
        "platform": plan.platform,
        "packages": [{"name": p.name, "version": p.version, "requirement": p.requirement,
                      "index_url": p.index_url} for p in plan.packages],
        "reasons": list(plan.reasons),
        "choices": list(plan.choices),
        "warnings": list(plan.warnings),
        "rejected": [{"candidate": r.candidate, "reason": r.reason, "code": r.code}
                     for r in plan.rejected],
    }


def report_json(report: FleetReport) -> Dict[str, Any]:
    return {
        "nodes": report.node_count,
        "node_types": [
            {**g.node_type.to_json(), "nodes": sorted(g.nodes), "plan": _plan_json(g.plan),
             **({"variants": g.variants.to_json()} if g.variants is not None else {})}
            for g in report.groups
        ],
        "shared": {
            "possible": report.shared is not None and report.shared.ok,
            "planned_for": _basis(report.shared_machine),
            "plan": _plan_json(report.shared),
            "blockers": report.shared_blockers,
            "costs": report.shared_costs,
        },
        "unreachable": [{"node": n, "reason": why} for n, why in report.unreachable],
    }


def _basis(machine: Optional[Machine]) -> Optional[Dict[str, Any]]:
    """The synthetic machine the shared plan was made for: every GPU, the oldest driver."""
    if machine is None:
        return None
    nvidia = machine.nvidia
    return {
        "platform": machine.platform,
        "python": machine.python.minor,
        "driver": nvidia.driver_version if nvidia else None,
        "driver_cuda": nvidia.driver_cuda if nvidia else None,
        "gpus": [{"name": g.name, "compute_capability": g.compute_capability}
                 for g in (nvidia.gpus if nvidia else ())],
    }
