"""What `torchsmith` alone prints: the install to use here first, then at most five lines of
why; this machine and the environment's verdict in full with ``-v`` (and always in ``--json``).

The summary never fails as a whole: a part that cannot be computed (unreadable data, a broken
interpreter) becomes one line saying so, and the other parts still show.
"""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from torchsmith.cli.common import DESCRIBED, Context, add_host_options, add_json_option
from torchsmith.cli.plan import installed_packages
from torchsmith.errors import TorchsmithError
from torchsmith.output import Result

if TYPE_CHECKING:
    from torchsmith.machine import Machine
    from torchsmith.plan.model import Plan

_DOCTOR = "Doctor   "  # how quick_verdict opens its first line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser)
    add_host_options(parser)


def _recommendation(ctx: Context) -> Tuple[Plan, Dict[str, Any], Tuple[Tuple[str, str], ...]]:
    """The answer `plan` gives for the default stack (the one policy, ``make_plan``), as JSON,
    and what the environment has installed."""
    from torchsmith.plan.api import make_plan
    from torchsmith.plan.model import Request
    from torchsmith.render.output import commands_of

    installed = installed_packages(ctx.args, ctx)
    from torchsmith.cli.door_commands import with_machine_flags

    plan, _request = make_plan(ctx.machine(), Request(installed=installed), ctx.kb(),
                               read=ctx.constraint_reader(), described=ctx.described_by_flags(),
                               profile=bool(getattr(ctx.args, "host", None)) and ctx.described())
    plan = with_machine_flags(plan, ctx.args)  # its commands describe the same machine, as plan's do
    return plan, plan.to_json(commands_of(plan, ctx.kb())), installed


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.doctor import quick_verdict

    machine = ctx.machine()
    environment = ctx.environment()
    data: Dict[str, Any] = {"machine": machine.to_json(), "environment": dict(environment.to_json())}
    # The environment the summary talks about is the one select_target chose for the probe.
    from torchsmith.cli.progress import waiting

    with waiting(args, "reading the environment"):  # runs its interpreter, without importing torch
        verdict: List[str] = quick_verdict(machine, python=ctx.environment_python(), host=ctx.host(),
                                           kb=None)
    data["doctor"] = verdict
    plan: Optional[Plan] = None
    installed: Tuple[Tuple[str, str], ...] = ()
    try:
        plan, data["plan"], installed = _recommendation(ctx)
    except TorchsmithError as exc:
        data["plan_error"] = exc.to_json()

    from torchsmith.cli.door_commands import plan_command_for

    def human(out: IO[str]) -> None:
        out.write("\n".join(_human_lines(data, machine, plan, installed=installed, where=environment.label(),
                                         out=out, verbose=int(getattr(args, "verbose", 0) or 0),
                                         plan_command=plan_command_for(args))) + "\n")

    return Result(command="summary", data=data, human=human, cautions_shown=True,
                  warnings=list(plan.warnings) if plan is not None else [])


def _installed_is_planned(plan: Plan, installed: Tuple[Tuple[str, str], ...], verdict: List[str]) -> bool:
    """The environment already has the planned torch, and the quick check found nothing wrong."""
    have = dict(installed).get("torch")
    pin = next((p for p in plan.packages if p.name == "torch"), None)
    return (pin is not None and have is not None and have == pin.version + (pin.local_version or "")
            and "no problems found" in verdict[0])


def _working_torch_replaced(plan: Plan, installed: Tuple[Tuple[str, str], ...], verdict: List[str]) -> bool:
    """The quick check found the environment's torch working, and the plan's command replaces it."""
    from torchsmith.plan.api import INSTALLED_TORCH_CHANGES

    replaced = f"{INSTALLED_TORCH_CHANGES}{dict(installed).get('torch')} is replaced by "
    return ("torch" in dict(installed) and "no problems found" in verdict[0]
            and any(w.startswith(replaced) for w in plan.warnings))


def _human_lines(data: Dict[str, Any], machine: Machine, plan: Optional[Plan], *,
                 installed: Tuple[Tuple[str, str], ...], where: str, out: IO[str], verbose: int,
                 plan_command: str = "torchsmith plan") -> List[str]:
    from torchsmith.cli.layout import bullets, cautions_of, why_lines
    from torchsmith.cli.plan_text import answer_lines, target, title
    from torchsmith.output import paint, terminal_columns, use_color
    from torchsmith.report import machine_lines

    color, width = use_color(out), terminal_columns()
    verdict: List[str] = data["doctor"]
    lines: List[str] = []
    commands = data.get("plan", {}).get("commands", {})
    if plan is None:
        lines.append(paint(f"Cannot plan an install here: {data['plan_error']['message']}", "1;31", color))
    elif not plan.ok:
        lines.append(paint(f"No working torch stack for {target(plan)}: "
                           f"`{plan_command}` says why.", "1;31", color))
    elif _installed_is_planned(plan, installed, verdict) and not verbose:
        lines.append(paint(f"Nothing to install: this environment has {title(plan)}, the one to use.",
                           "1;32", color))
    elif _working_torch_replaced(plan, installed, verdict):  # healthy first; the other stack second
        lines.append(paint(f"torch {dict(installed)['torch']} in this environment works: nothing to do.",
                           "1;32", color))
        lines.append(paint(f"Or replace it with {title(plan)} (pip):", "1", color))
        lines.extend(answer_lines(plan, commands, "pip", width, color))
    else:
        lines.append(paint(f"Install {title(plan)} (pip):", "1", color))
        lines.extend(answer_lines(plan, commands, "pip", width, color))
    lines.append(f"Environment: {where}")
    if where != DESCRIBED or verbose:  # a described machine has no environment here to judge
        first = verdict[0][len(_DOCTOR):] if verdict[0].startswith(_DOCTOR) else verdict[0]
        lines.extend(bullets([first], width, "  "))
        lines.extend(f"  {line.strip()}" for line in verdict[1:])
    if plan is not None and plan.ok:
        caps = [r for r in plan.reasons[1:] if " caps it " in r]  # the user's own limits, named
        reasons = list(plan.reasons) if verbose else [*plan.reasons[:1], *caps]
        lines.append("Why:")
        lines.extend(why_lines([*reasons, *plan.choices], width, verbose,
                               cautions=cautions_of(plan.warnings), color=color,
                               more="this machine"))
    if verbose:
        lines.append("This machine:")
        lines.extend(f"  {line}" for line in machine_lines(machine))
    # A described machine has no environment here for the doctor to examine.
    doctor = "" if where == DESCRIBED else ", `torchsmith doctor`"
    lines.append(f"More: `{plan_command} -v` (sources, alternatives){doctor}.")
    return lines
