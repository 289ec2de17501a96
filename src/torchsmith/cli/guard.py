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
from typing import IO, Any, Dict, List, Optional, Tuple

from torchsmith.cli.common import Context, add_json_option
from torchsmith.errors import TorchsmithError, UsageError
from torchsmith.output import ExitCode, Result

ACTIONS = ("status", "on", "off", "check")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=ACTIONS, help="what to do (default: status)", nargs="?",
                        default="status")
    # REMAINDER: argparse cannot take options between the action and `-- COMMAND` otherwise;
    # --python there is read by _split below.
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                        help="for check: the pip or uv install command to predict")
    parser.add_argument("--python", metavar="PATH",
                        help="the environment's interpreter (default: the active venv or conda "
                             "prefix, else ./.venv)")
    add_json_option(parser)


def _default_python(ctx: Context) -> str:
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = ctx.environ.get(variable)
        if prefix:
            return str(prefix)
    if os.path.isdir(".venv"):
        return os.path.abspath(".venv")
    raise UsageError("no environment to guard: none is active and there is no ./.venv",
                     hint="pass --python PATH/TO/ENV/bin/python")


def _split(words: List[str]) -> Tuple[Optional[str], List[str]]:
    """(--python value, the command) from what follows the action: ``--python P -- pip install x``."""
    python: Optional[str] = None
    while words and words[0] != "--" and words[0].startswith("-"):
        flag = words.pop(0)
        if flag == "--python" and words:
            python = words.pop(0)
        elif flag.startswith("--python="):
            python = flag.split("=", 1)[1]
        else:
            raise UsageError(f"{flag} must come before the action (e.g. torchsmith guard {flag} check ...)")
    if words[:1] == ["--"]:
        words = words[1:]
    return python, words


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.host.live import LiveHost
    from torchsmith.install import guard
    from torchsmith.install.target import inspect_target

    python, command = _split(list(args.command))
    python = python or args.python
    if args.action != "check" and command:
        raise UsageError(f"`guard {args.action}` takes no command; did you mean `guard check -- ...`?")
    host = LiveHost(ctx.environ)
    target = inspect_target(host, python or _default_python(ctx))
    if args.action == "check":
        return _check(host, target, command)
    if args.action in ("on", "off"):
        from torchsmith.install.exclusive import exclusive

        with exclusive(target.prefix, what=f"guard {args.action}"):  # never under a running install
            status = (guard.guard_on if args.action == "on" else guard.guard_off)(target.prefix)
    else:
        status = guard.guard_status(target.prefix)
    status = guard.guard_status(target.prefix, ctx.environ)  # with what this environment switches off
    from packaging.utils import canonicalize_name

    from torchsmith.install.target import installed_packages

    installed = installed_packages(host, target) if status.pins else {}
    # Pins that no longer match the environment (changed while the guard was off).
    drift = {name: {"pinned": version, "installed": installed.get(canonicalize_name(name), {}).get("version")}
             for name, version in sorted(status.pins.items())
             if installed.get(canonicalize_name(name), {}).get("version") != version}
    data: Dict[str, Any] = {
        "drift": drift,
        "prefix": target.prefix,
        "on": status.on,
        "constraints_file": status.constraints_file,
        "pins": status.pins,
        "pip": status.pip_hook,
        "uv_activate_scripts": status.uv_hooks,
        "held": status.held,
        "bypassed": status.bypassed,
        # Constraints applied by pip (and uv where hooked) as this environment is set now.
        "effective": status.on and not status.bypassed,
    }
    warnings = [f"the guard's constraints are bypassed here: {reason}" for reason in status.bypassed]

    def human(out: IO[str]) -> None:
        if status.constraints_file is None:
            out.write(f"No guard in {target.prefix} (install with `torchsmith install` to get one).\n")
            return
        state = "on" if status.on else "off"
        if status.on and status.bypassed:
            state = "on, but bypassed by this environment"
        out.write(f"Guard {state} in {target.prefix}\n")
        out.write(f"  pip: {'applies ' if status.pip_hook else 'does not apply '}{status.constraints_file}\n")
        for reason in status.bypassed:
            out.write(f"  bypassed: {reason}\n")
        if status.held:
            out.write(f"  held (pip and uv cannot uninstall or replace them): {', '.join(status.held)}\n")
        hooks = ", ".join(os.path.basename(s) for s in status.uv_hooks)
        uv = f"UV_CONSTRAINT set by {hooks}" if hooks else "no activate hook"
        out.write(f"  uv: {uv} (only in an activated shell)\n")
        out.write("  pins: " + ", ".join(f"{n}=={v}" for n, v in sorted(status.pins.items())) + "\n")
        for name, versions in drift.items():
            out.write(f"  drift: {name} pinned {versions['pinned']}, installed "
                      f"{versions['installed'] or 'nothing'}: `torchsmith install` makes a new verified "
                      "stack and guard\n")

    return Result(command="guard", data=data, human=human, warnings=warnings,
                  status="bypassed" if status.on and status.bypassed else "ok")


def _check(host: Any, target: Any, command: List[str]) -> Result:
    from torchsmith.install import guard
    from torchsmith.install.check import parse_user_command, predict

    if not command:
        raise UsageError("give the command to check: torchsmith guard check -- pip install xformers")
    parse_user_command(command)  # a command it cannot check is a usage error before anything runs
    status = guard.guard_status(target.prefix)
    if status.constraints_file is None:
        raise TorchsmithError(f"{target.prefix} has no guard to check against", code="no-guard",
                              hint="install with `torchsmith install`, which writes one")
    prediction = predict(host, target, command, status.constraints_file, status.pins)
    data = prediction.to_json()
    data["prefix"] = target.prefix
    breaks = prediction.breaks
    if prediction.unguarded_problem and not prediction.changes:
        raise TorchsmithError(f"the command fails even without the guard: {prediction.unguarded_problem}",
                              code="command-fails", context=[" ".join(command)])

    def human(out: IO[str]) -> None:
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

    status_text = "would-break" if breaks else "ok"
    return Result(command="guard", data=data, status=status_text,
                  exit_code=ExitCode.WOULD_BREAK if breaks else ExitCode.OK, human=human)
