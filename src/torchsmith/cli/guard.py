"""Keep a working torch from being replaced by later installs.

  torchsmith guard status [--python PATH]     the pins and whether pip and uv apply them
  torchsmith guard off | on                   lift the guard for a deliberate change, and restore it
  torchsmith guard check -- pip install xformers
  torchsmith guard check -- uv pip install "ftfy>=6.3"

`torchsmith install` leaves the guard: <env>/torchsmith-guard.txt (constraints with exact local
versions), <env>/pip.conf applying it to pip in that environment, and UV_CONSTRAINT in the
activate scripts for `uv pip` in an activated shell. `check` predicts, changing nothing, whether
a command would move torch or a package tied to it: exit 5 when it would, naming who drags it
and the version that fits instead.
"""

from __future__ import annotations

import argparse
import os
from typing import IO, TYPE_CHECKING, Sequence

from torchsmith.cli.common import Context, add_json_option
from torchsmith.errors import UsageError
from torchsmith.output import Caution, ExitCode, Result

if TYPE_CHECKING:
    from torchsmith.install.check import Prediction
    from torchsmith.install.guard_view import GuardView

ACTIONS = ("status", "on", "off", "check")  # guard_view.GUARD_ACTIONS, without importing it at start-up


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=ACTIONS, help="what to do (default: status)", nargs="?",
                        default="status")
    # Everything after `--` is the command, options included; options of guard go anywhere before it.
    parser.add_argument("command", nargs="*", metavar="-- COMMAND",
                        help="for check: the pip or uv install command to predict")
    parser.add_argument("--python", metavar="PATH",
                        help="the environment's interpreter (default: the active venv or conda "
                             "prefix, else ./.venv)")
    add_json_option(parser)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.install.guard_view import check_against_guard, guard_action
    from torchsmith.install.target import inspect_target
    from torchsmith.install.transaction import recover_if_stopped

    python, command = args.python, list(args.command)
    if args.action != "check" and command:
        raise UsageError(f"`guard {args.action}` takes no command; did you mean `guard check -- ...`?")
    choice = ctx.target("active-or-venv", python=python, interpreter_for="guard")
    recovered = recover_if_stopped(choice.location or "", f"guard {args.action}")
    target = inspect_target(ctx.host(), choice.location or "")
    if args.action == "check":
        from torchsmith.cli.progress import waiting

        with waiting(args, f"guard: asking the resolver what `{' '.join(command)[:60]}` would install"):
            prediction = check_against_guard(ctx.host(), target, command)
        breaks = prediction.breaks
        return Result(command="guard", data={**prediction.to_json(), "prefix": target.prefix},
                      warnings=recovered,
                      status="would-break" if breaks else "ok",
                      exit_code=ExitCode.WOULD_BREAK if breaks else ExitCode.OK,
                      human=lambda out: _human_check(prediction, out))
    view = guard_action(ctx.host(), target, args.action)
    bypassed = view.status.on and bool(view.status.bypassed)
    # A bypassed guard does not keep torch from being replaced: the status says it, in full.
    return Result(command="guard", data={**view.to_json(), "recovered": recovered},
                  human=lambda out: _human_status(view, out, recovered),
                  warnings=[Caution(w) for w in [*recovered, *view.warnings()]], cautions_shown=True,
                  status="bypassed" if bypassed else "ok")


def _human_status(view: GuardView, out: IO[str], recovered: Sequence[str] = ()) -> None:
    status, prefix = view.status, view.target.prefix
    for line in recovered:  # what a kill -9 had left, finished or rolled back first
        out.write(f"{line}\n")
    if status.constraints_file is None:
        out.write(f"No guard in {prefix} (install with `torchsmith install` to get one).\n")
        return
    state = "on" if status.on else "off"
    if status.interrupted:
        state = f"interrupted (`guard {status.interrupted}` was stopped part-way; run it again)"
    if status.on and status.bypassed:
        state = "on, but bypassed by this environment"
    out.write(f"Guard {state} in {prefix}\n")
    out.write(f"  pip: {'applies ' if status.pip_hook else 'does not apply '}{status.constraints_file}\n")
    for reason in status.bypassed:
        out.write(f"  bypassed: {reason}\n")
    if status.held:
        out.write(f"  held (pip and uv cannot uninstall or replace them): {', '.join(status.held)}\n")
    hooks = ", ".join(os.path.basename(s) for s in status.uv_hooks)
    uv = f"UV_CONSTRAINT set by {hooks}" if hooks else "no activate hook"
    out.write(f"  uv: {uv} (only in an activated shell)\n")
    out.write("  pins: " + ", ".join(f"{n}=={v}" for n, v in sorted(status.pins.items())) + "\n")
    for name, versions in view.drift.items():
        imports = versions.get("imports")
        installed = f"but `import {name}` loads {imports} from {versions.get('imported_from')}" if imports \
            else f"installed {versions['installed'] or 'nothing'}"
        out.write(f"  drift: {name} pinned {versions['pinned']}, {installed}: `torchsmith install` makes a "
                  "new verified stack and guard\n")


def _human_check(prediction: Prediction, out: IO[str]) -> None:
    breaks = prediction.breaks
    if not breaks:
        changed = ", ".join(f"{n} {v}" for n, (_o, v) in sorted(prediction.changes.items())) or "nothing"
        out.write(f"Safe: it would install {changed} and keep the torch stack as it is.\n")
        return
    out.write("Would break the torch stack:\n")
    for name, (old, new) in sorted(breaks.items()):
        why = "; ".join(prediction.dragged_by.get(name) or ()) or "required by the command"
        out.write(f"  {name} {old or '(absent)'} -> {new}  ({why})\n")
    if prediction.guarded_ok and prediction.fits:
        out.write("Fits instead: " + ", ".join(f"{n}=={v}" for n, v in sorted(prediction.fits.items()))
                  + "\n")
    elif not prediction.guarded_ok:
        out.write(f"Nothing fits the guarded stack: {prediction.guarded_problem}\n")
