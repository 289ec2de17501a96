"""Plan for many nodes at once: one shared environment, or one per node type.

Give it host profiles (`torchsmith probe --json > NODE.json` on each node), or let it gather
them through Slurm with --slurm (one `torchsmith probe --json` task per node). It groups
identical nodes, plans each node type, and plans ONE environment for every node (all GPU
models, the oldest driver), saying what that shared environment costs.
"""

from __future__ import annotations

import argparse
import shlex
from typing import IO, TYPE_CHECKING, Any, Dict, List, Optional

from torchsmith.cli.common import Context, add_json_option
from torchsmith.errors import UsageError
from torchsmith.output import ExitCode, Result

if TYPE_CHECKING:
    from torchsmith.fleet import FleetReport, NodeGroup
    from torchsmith.fleet.survey import SlurmGather
    from torchsmith.plan.model import Plan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profiles", nargs="*", metavar="PROFILE.json",
                        help="host profiles from `torchsmith probe --json`, one per node")
    parser.add_argument("--require", action="append", metavar="SPEC", default=None,
                        help="a requirement for every node (repeat), e.g. 'torch>=2.4'")
    parser.add_argument("--format", dest="fmt", choices=("pixi",), default=None,
                        help="pixi: one pixi.toml with a named hardware platform per node type "
                             "(pixi >= 0.71), locked once")
    parser.add_argument("--out", metavar="DIR", help="write the --format file into DIR instead of printing")
    parser.add_argument("--variants", action="store_true",
                        help="per node type: the wheel-variant install and what a variant-aware "
                             "installer (uv's preview wheel-variants) picks there")
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


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.fleet.survey import SlurmGather, fleet_planner, survey_fleet

    if not args.slurm and not args.profiles:
        raise UsageError("give host profiles (PROFILE.json ...) or --slurm",
                         hint="on each node: torchsmith probe --json > $(hostname).json")
    slurm: Optional[SlurmGather] = None
    if args.slurm:
        from torchsmith.fleet.slurm import DEFAULT_PROBE

        probe = tuple(shlex.split(args.probe_command)) if args.probe_command else DEFAULT_PROBE
        if not probe:
            raise UsageError("--probe-command is empty")
        slurm = SlurmGather(probe, tuple(args.partition or ()), args.timeout, args.save_profiles)
    if args.out and not args.fmt:
        raise UsageError("--out needs --format", hint="e.g. --format pixi --out fleet/")
    from torchsmith.cli.progress import waiting

    what = "probing every node through Slurm (srun)" if slurm else "planning for each node type"
    with waiting(args, f"fleet: {what}"):
        survey = survey_fleet(ctx.host(), fleet_planner(ctx.kb, args.require), args.profiles, slurm)
    report = survey.report
    if args.fmt == "pixi":
        return _pixi_result(report, ctx, args.out)
    if args.variants:
        from torchsmith.plan.variant_pick import predict_variants

        for group in report.groups:
            if group.plan is not None:
                group.variants = predict_variants(group.plan, group.machine, ctx.kb())
    warnings = [f"node {node} did not answer: {why}" for node, why in report.unreachable]
    ok = report.shared is not None and report.shared.ok
    any_ok = any(g.plan is not None and g.plan.ok for g in report.groups)
    code = ExitCode.OK if ok or any_ok else ExitCode.NO_SOLUTION
    return Result(command="fleet", data=survey.to_json(), exit_code=code,
                  status="ok" if code == ExitCode.OK else "no-solution",
                  warnings=warnings, human=lambda out: _human(report, survey.gather, out))


def _pixi_result(report: FleetReport, ctx: Context, out: Optional[str]) -> Result:
    from torchsmith.fleet.pixi import render_fleet_pixi
    from torchsmith.render.output import write_files

    text = render_fleet_pixi(report, ctx.kb())
    written = write_files(out, {"pixi.toml": text}) if out else []

    def human(stream: IO[str]) -> None:
        stream.write("".join(f"wrote {path}\n" for path in written) if out else text)

    data: Dict[str, Any] = {"files": written} if out else {"format": "pixi", "text": text}
    return Result(command="fleet", data=data, human=human, preformatted=not out)


def _stack(plan: Optional[Plan]) -> str:
    if plan is None:
        return "not planned"
    if not plan.ok:
        first = plan.rejected[0].reason if plan.rejected else "no compatible torch"
        return f"no working torch ({first})"
    return " ".join(p.requirement for p in plan.packages) + (f"  [{plan.variant}]" if plan.variant else "")


def _cautions(plan: Optional[Plan]) -> List[str]:
    """The plan's cautions, as `plan` shows them with its answer (a Jetson torchvision that pip
    would replace NVIDIA's torch for, a driver older than a GPU ...)."""
    from torchsmith.cli.layout import cautions_of
    from torchsmith.output import strip_sources

    return [strip_sources(line) for line in cautions_of(plan.warnings)] if plan is not None else []


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
        for line in group.plan.choices if group.plan is not None else ():
            w(f"    - {line}\n")
        for line in _cautions(group.plan):  # what decides whether the stack installs safely there
            w(f"    ! {line}\n")
        if group.variants is not None and not group.variants.command:
            w(f"  wheel-variant install: none ({group.variants.reason})\n")
        elif group.variants is not None:
            picked = group.variants.label or "the CPU (null) variant"
            w(f"  wheel-variant install: {group.variants.command}\n")
            w(f"    a variant-aware installer picks {picked}"
              + ("\n" if group.variants.advice else f": {group.variants.reason}\n"))
            for line in group.variants.advice:
                w(f"    ! {line}\n")
            if group.variants.caveat:
                w(f"    note: {group.variants.caveat}\n")
    w("\nOne environment for every node")
    if report.shared is not None and report.shared.ok:
        w(f": {_stack(report.shared)}\n")
        for line in report.shared.choices:
            w(f"  - {line}\n")
        for line in _cautions(report.shared):
            w(f"  ! {line}\n")
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
