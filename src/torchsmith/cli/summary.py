"""What `torchsmith` alone prints: this machine, this environment's verdict, the install to use.

The summary never fails as a whole: a part that cannot be computed (unreadable data, a broken
interpreter) becomes one line saying so, and the other parts still show.
"""

from __future__ import annotations

import argparse
from typing import IO, Any, Dict, List

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.cli.plan import installed_packages
from torchsmith.errors import TorchsmithError
from torchsmith.output import Result
from torchsmith.report import machine_lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser)
    add_host_options(parser)


def _recommendation(ctx: Context) -> Dict[str, Any]:
    """The answer `plan` gives for the default stack: the one policy (``make_plan``)."""
    from torchsmith.plan.api import make_plan
    from torchsmith.plan.model import Request
    from torchsmith.render.output import commands_of

    request = Request(installed=installed_packages(ctx.args, ctx))
    plan, _request = make_plan(ctx.machine(), request, ctx.kb(), read=ctx.constraint_reader(),
                               described=ctx.described_by_flags())
    return plan.to_json(commands_of(plan, ctx.kb()))


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.doctor import quick_verdict

    machine = ctx.machine()
    environment = ctx.environment()
    data: Dict[str, Any] = {"machine": machine.to_json(), "environment": dict(environment.to_json())}
    # The environment the summary talks about is the one select_target chose for the probe.
    verdict: List[str] = quick_verdict(machine, python=ctx.environment_python(), host=ctx.host(), kb=None)
    data["doctor"] = verdict
    try:
        data["plan"] = plan = _recommendation(ctx)
    except TorchsmithError as exc:
        plan = None
        data["plan_error"] = exc.to_json()

    def human(out: IO[str]) -> None:
        out.write("This machine\n")
        out.write("".join(f"  {line}\n" for line in machine_lines(machine)))
        out.write("\nThis environment\n")
        out.write(f"  Python   {environment.label()}\n")
        out.write("".join(f"  {line}\n" for line in verdict))
        out.write("\nRecommended install\n")
        if plan is None:
            out.write(f"  cannot plan: {data['plan_error']['message']}\n")
        elif plan["status"] != "ok":
            out.write("  no torch stack works here; `torchsmith plan` says why\n")
        else:
            for pkg in plan["packages"]:
                out.write(f"  {pkg['requirement']}\n")
            caps = [r for r in plan["reasons"][1:] if " caps it " in r]  # the user's own limits, named
            for reason in plan["reasons"][:1] + caps:
                out.write(f"  why: {reason}\n")
            for line in plan["choices"]:
                out.write(f"  - {line}\n")
            for line in plan["commands"].get("pip", []):
                out.write(f"  $ {line}\n")
        out.write("\nMore: `torchsmith plan` (why, and the alternatives), `torchsmith doctor`, "
                  "`torchsmith install`, `torchsmith --help`.\n")

    return Result(command="summary", data=data, human=human)
