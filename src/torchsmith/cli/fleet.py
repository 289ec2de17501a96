"""Plan for many nodes at once: one shared environment, or one per node type.

Give it host profiles (`torchsmith probe --json > NODE.json` on each node), or let it gather
them through Slurm with --slurm (one `torchsmith probe --json` task per node). It groups
identical nodes, plans each node type, and plans ONE environment for every node (all GPU
models, the oldest driver), saying what that shared environment costs.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import time
from typing import IO, Any, Dict, List, Optional, Tuple

from torchsmith.cli.common import Context, add_json_option
from torchsmith.errors import ProfileError, UsageError
from torchsmith.fleet import FleetReport, NodeGroup, node_name, plan_fleet
from torchsmith.machine import Machine
from torchsmith.output import ExitCode, Result
from torchsmith.plan.model import Plan, Request


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profiles", nargs="*", metavar="PROFILE.json",
                        help="host profiles from `torchsmith probe --json`, one per node")
    parser.add_argument("--require", action="append", metavar="SPEC", default=None,
                        help="a requirement for every node (repeat), e.g. 'torch>=2.4'")
    slurm = parser.add_argument_group("gather the profiles through Slurm")
    slurm.add_argument("--slurm", action="store_true",
                       help="run `torchsmith probe --json` on every node with srun")
    slurm.add_argument("--partition", action="append", metavar="P", default=None,
                       help="only the nodes of this partition (repeat)")
    slurm.add_argument("--timeout", type=float, default=60.0, metavar="S",
                       help="seconds to wait for the nodes (default 60)")
    slurm.add_argument("--probe-command", metavar="CMD", default=None,
                       help="the probe to run on each node (default: torchsmith probe --json)")
    slurm.add_argument("--save-profiles", metavar="DIR",
                       help="write each gathered profile to DIR/NODE.json")
    add_json_option(parser)


def _load_profiles(paths: List[str]) -> List[Tuple[str, Machine]]:
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


def _planner(ctx: Context, requirements: Optional[List[str]]) -> Any:
    from torchsmith.plan.resolve import DEFAULT_REQUIREMENTS, resolve

    kb = ctx.kb()
    request = Request(requirements=tuple(requirements or DEFAULT_REQUIREMENTS))

    shared_request = dataclasses.replace(request, gpus_on_separate_nodes=True)

    def plan(machine: Machine, shared: bool) -> Plan:
        return resolve(machine, shared_request if shared else request, kb)

    return plan


def run(args: argparse.Namespace, ctx: Context) -> Result:
    if not args.slurm and not args.profiles:
        raise UsageError("give host profiles (PROFILE.json ...) or --slurm",
                         hint="on each node: torchsmith probe --json > $(hostname).json")
    named: List[Tuple[str, Machine]] = []
    unreachable: List[Tuple[str, str]] = []
    gather: Dict[str, Any] = {}
    if args.profiles:
        named.extend(_load_profiles(args.profiles))
    if args.slurm:
        from torchsmith.fleet.slurm import DEFAULT_PROBE, gather_profiles
        from torchsmith.host.live import LiveHost

        probe = tuple(shlex.split(args.probe_command)) if args.probe_command else DEFAULT_PROBE
        if not probe:
            raise UsageError("--probe-command is empty")
        started = time.monotonic()
        gathered = gather_profiles(LiveHost(ctx.environ), args.partition or (), args.timeout, probe)
        gather = {"seconds": round(time.monotonic() - started, 3),
                  "commands": [shlex.join(c) for c in gathered.commands]}
        named.extend(gathered.profiles)
        unreachable.extend(gathered.unreachable)
        if args.save_profiles:
            _save(args.save_profiles, gathered.profiles)
    if not named:
        raise ProfileError("no node answered: nothing to plan",
                           context=[f"{node}: {why}" for node, why in unreachable])
    report = plan_fleet(named, _planner(ctx, args.require))
    report.unreachable = unreachable
    data = _report_json(report)
    if gather:
        data["gather"] = gather
    warnings = [f"node {node} did not answer: {why}" for node, why in unreachable]
    ok = report.shared is not None and report.shared.ok
    any_ok = any(g.plan is not None and g.plan.ok for g in report.groups)
    code = ExitCode.OK if ok or any_ok else ExitCode.NO_SOLUTION
    return Result(command="fleet", data=data, exit_code=code,
                  status="ok" if code == ExitCode.OK else "no-solution",
                  warnings=warnings, human=lambda out: _human(report, gather, out))


def _save(folder: str, profiles: List[Tuple[str, Machine]]) -> None:
    import json

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
        "warnings": list(plan.warnings),
        "rejected": [{"candidate": r.candidate, "reason": r.reason, "code": r.code}
                     for r in plan.rejected],
    }


def _report_json(report: FleetReport) -> Dict[str, Any]:
    return {
        "nodes": report.node_count,
        "node_types": [
            {**g.node_type.to_json(), "nodes": sorted(g.nodes), "plan": _plan_json(g.plan)}
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


def _stack(plan: Optional[Plan]) -> str:
    if plan is None:
        return "not planned"
    if not plan.ok:
        first = plan.rejected[0].reason if plan.rejected else "no compatible torch"
        return f"no working torch ({first})"
    return " ".join(p.requirement for p in plan.packages) + (f"  [{plan.variant}]" if plan.variant else "")


def _nodes(group: NodeGroup, limit: int = 8) -> str:
    names = sorted(group.nodes)
    more = f" … (+{len(names) - limit})" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _human(report: FleetReport, gather: Dict[str, Any], out: IO[str]) -> None:
    w = out.write
    w(f"{report.node_count} node(s), {len(report.groups)} node type(s)")
    if gather:
        w(f", gathered through Slurm in {gather['seconds']:.1f}s")
    w("\n\n")
    for number, group in enumerate(report.groups, 1):
        w(f"Type {number}: {group.node_type.label}\n")
        w(f"  nodes ({len(group.nodes)}): {_nodes(group)}\n")
        w(f"  own environment: {_stack(group.plan)}\n")
    w("\nOne environment for every node")
    if report.shared is not None and report.shared.ok:
        w(f": {_stack(report.shared)}\n")
        if report.shared_costs:
            w("  what it costs:\n")
            for line in report.shared_costs:
                w(f"  - {line}\n")
        else:
            w("  costs nothing: every node type gets its best stack\n")
    else:
        w(": not possible\n")
        for line in report.shared_blockers:
            w(f"  - {line}\n")
        w("  use one environment per node type (above)\n")
    if report.unreachable:
        w(f"\nDid not answer ({len(report.unreachable)}):\n")
        for node, why in report.unreachable:
            w(f"  {node}: {why}\n")
