"""Install the plan into a venv, verify it, roll back on failure, leave a guard and a lock.

  torchsmith install                         torch torchvision torchaudio into a new ./.venv
  torchsmith install xformers --python .venv/bin/python --yes
  torchsmith install --venv /opt/envs/t --installer pip "torch==2.6.*"
  torchsmith install --lock .venv/torchsmith.lock.json --venv elsewhere   reproduce a lock
  torchsmith install --dry-run               show the plan and the commands, change nothing

Torch-family packages come only from the planned PyTorch index; everything else from your
configured index, constrained so it cannot move torch. Verification runs torch in the new
environment; if it fails, or the install is interrupted, an existing environment is restored
exactly and a new one removed. Exit 3: no working stack; 130: interrupted.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, Tuple, Union

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.cli.plan import (
    add_request_options,
    build_request,
    plan_result,
    with_published,
)
from torchsmith.cli.plan_text import describe
from torchsmith.errors import TorchsmithError
from torchsmith.host import Host
from torchsmith.install.installers import INSTALLERS
from torchsmith.install.target_choice import DEFAULT_VENV, TargetChoice
from torchsmith.output import ExitCode, Result

if TYPE_CHECKING:
    from torchsmith.install.prepare import Prepared
    from torchsmith.install.runner import InstallOutcome

Shown = Callable[[IO[str], str], None]  # writes what the install will do, in the environment named
Ready = Tuple["Prepared", Dict[str, Any], Shown]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preference = " when present, else ".join(INSTALLERS)
    add_request_options(parser, installers=tuple(INSTALLERS),
                        installer_help=f"the installer to run (default: {preference})")
    where = parser.add_argument_group("where")
    where.add_argument("--venv", metavar="PATH",
                       help=f"the venv to install into: created when missing (default: {DEFAULT_VENV})")
    where.add_argument("--lock", metavar="FILE", help="reproduce a torchsmith.lock.json exactly")
    where.add_argument("--lock-out", metavar="FILE",
                       help="where to write the lock (default: <environment>/torchsmith.lock.json)")
    run = parser.add_argument_group("run")
    run.add_argument("--dry-run", action="store_true", help="show the plan and stop")
    run.add_argument("-y", "--yes", action="store_true", help="do not ask before changing anything")
    run.add_argument("--no-guard", action="store_true", help="do not leave a guard in the environment")
    run.add_argument("--timeout", type=float, default=3600.0, metavar="SECONDS",
                     help="stop an installer step after this long (default: 3600)")
    run.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                     help="when another torchsmith is changing the same environment, wait this long "
                          "for it (default: refuse at once)")
    add_json_option(parser)
    add_host_options(parser)


class _Progress:
    """One line per step: on a terminal a spinner with the step's elapsed time (a multi-GB
    download shows it is alive), plain lines otherwise (a log)."""

    def __init__(self, stream: IO[str], quiet: bool) -> None:
        from torchsmith.cli.progress import Waiting

        self.stream = stream
        self.quiet = quiet
        self._spinner = Waiting("", stream, enabled=not quiet, delay=0.0)
        self._started = False

    def __call__(self, text: str) -> None:
        if self.quiet:
            return
        if self._spinner.enabled:
            self._spinner.update(text)
            if not self._started:
                self._started = True
                self._spinner.__enter__()
            return
        from torchsmith.redact import redact

        self.stream.write(f"torchsmith: {redact(text)}\n")  # step labels name the indexes
        self.stream.flush()

    def stop(self) -> None:
        self._spinner.stop()


def _confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        raise TorchsmithError("not changing anything without confirmation (no terminal to ask on)",
                              code="confirmation-needed", hint="pass --yes, or --dry-run to only look")
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.install.runner import InstallInterrupted
    from torchsmith.install.session import InstallOptions, install_prepared

    choice = ctx.target("new-venv")
    target = describe_target(ctx.host(), choice)
    ready = _from_lock(args, ctx) if args.lock else _from_plan(args, ctx, target)
    if isinstance(ready, Result):
        return ready
    prepared, data, plan_shown = ready
    data = {**data, "target": target}

    def shown(out: IO[str]) -> None:  # the answer first, then the environment it acts on
        plan_shown(out, f"{target['prefix']} ({'new' if target['new'] else 'existing'}; {target['source']})")

    if args.dry_run:
        return Result(command="install", data={**data, "dry_run": True}, human=shown,
                      warnings=list(prepared.warnings), cautions_shown=True)
    _show_before_changing(shown, sys.stderr if args.json else sys.stdout)
    if not args.yes and not _confirm("Install this?"):
        return Result(command="install", data={**data, "installed": False}, status="cancelled",
                      exit_code=ExitCode.FAILURE,
                      errors=[{"code": "cancelled", "message": "nothing was changed", "context": [],
                               "hint": None}])
    options = InstallOptions(installer=args.installer, lock_out=args.lock_out, guard=not args.no_guard,
                             timeout=args.timeout, wait=args.wait)
    progress = _Progress(sys.stderr, quiet=bool(args.json) or bool(getattr(args, "quiet", False)))
    try:
        outcome = install_prepared(ctx.host(), choice, prepared, options, progress=progress,
                                   waiting=_waiting)
    except InstallInterrupted as exc:
        return Result(command="install", status="error", exit_code=ExitCode.INTERRUPTED,
                      errors=[exc.to_json()], data=data)
    finally:
        progress.stop()
    return Result(command="install", data={**data, **outcome.to_json(), "installed": True},
                  human=lambda out: _human(outcome, out), warnings=prepared.warnings + outcome.warnings,
                  cautions_shown=True)  # shown with the plan, before the install


def _show_before_changing(shown: Callable[[IO[str]], None], out: IO[str]) -> None:
    """The plan, shown before anything changes; outside the Result, so redacted here."""
    from torchsmith.redact import redact

    plan_text = io.StringIO()
    shown(plan_text)
    out.write(redact(plan_text.getvalue()))
    out.flush()


def _waiting(text: str) -> None:
    from torchsmith.redact import redact

    sys.stderr.write(redact(f"torchsmith: {text}\n"))
    sys.stderr.flush()


def _human(outcome: InstallOutcome, stream: IO[str]) -> None:
    result = outcome.to_json()
    verify = outcome.verify
    for notice in outcome.notices:  # a stopped install finished first, a stop during cleanup
        stream.write(f"note: {notice}\n")
    stream.write(f"Installed into {outcome.target.prefix} with {outcome.installer} "
                 f"({result['seconds'].get('total', 0):.1f} s):\n")
    for name, (old, new) in sorted(outcome.changed.items()):
        stream.write(f"  {name} {old + ' -> ' if old else ''}{new}\n")
    device = verify.get("device", "cpu")
    stream.write(f"Verified: torch {verify.get('torch', '?')} on {device}"
                 f"{' (' + str(verify.get('device_name')) + ')' if verify.get('device_name') else ''}: "
                 + ", ".join(c["name"] for c in verify.get("checks", [])) + "\n")
    if outcome.guard_file:
        stream.write(f"Guard: {outcome.guard_file} (torchsmith guard status --python "
                     f"{outcome.target.python})\n")
    stream.write(f"Lock: {outcome.lock_path}\n")
    if outcome.export_path:
        stream.write(f"Environment export: {outcome.export_path}\n")


def describe_target(host: Host, choice: TargetChoice) -> Dict[str, Any]:
    """Where the install goes, before anything changes: interpreter, prefix, new or existing."""
    from torchsmith.install.target import inspect_target, venv_python

    windows = host.platform().system == "Windows"
    if choice.python:
        found = inspect_target(host, choice.python)
        python, prefix, new = found.python, found.prefix, False
    else:
        prefix = os.path.abspath(choice.prefix or DEFAULT_VENV)
        python = venv_python(prefix, windows)
        new = host.list_dir(prefix) is None or "pyvenv.cfg" not in (host.list_dir(prefix) or ())
    return {"python": python, "prefix": prefix, "new": new, "source": choice.source,
            "version": choice.version}


def _from_plan(args: argparse.Namespace, ctx: Context, target: Dict[str, Any]) -> Union[Ready, Result]:
    from torchsmith.install.installers import choose_installer
    from torchsmith.install.prepare import prepare_from_plan
    from torchsmith.plan.api import make_plan
    from torchsmith.render import render_commands

    machine = ctx.machine()
    request = with_published(build_request(args, ctx, None if target["new"] else target["python"]), ctx)
    # Installed here: pip and uv will apply this machine's constraints whatever the flags say
    # (the flags describe this machine's GPU), except the guard, which the install lifts.
    plan, request = make_plan(machine, request, ctx.kb(), read=ctx.host().read_text, lifting_guard=True)
    from torchsmith.cli.door_commands import with_machine_flags

    plan = with_machine_flags(plan, args)  # the commands it names describe the same machine
    if not plan.ok:
        return plan_result("install", args, plan, request, kb=ctx.kb())
    prepared = prepare_from_plan(plan, request.requirements)
    from torchsmith.cli.plan_confirm import pairing_from

    prepared.pairing = pairing_from(request, ctx.kb(), ctx)
    commands = render_commands(plan, kb=ctx.kb())
    data = plan.to_json(commands)
    data["warnings"] = prepared.warnings
    installer = args.installer or choose_installer(ctx.host(), None).name

    def shown(out: IO[str], where: str) -> None:
        describe(plan, commands, installer if installer in commands else "pip", out,
                 verbose=getattr(args, "verbose", 0), environment=where)

    return prepared, data, shown


def _from_lock(args: argparse.Namespace, ctx: Context) -> Ready:
    from torchsmith.cli.layout import cautions_of
    from torchsmith.cli.plan import TORCH_INDEX_ENV
    from torchsmith.install.prepare import prepare_from_lock

    mirror = args.torch_index or ctx.environ.get(TORCH_INDEX_ENV) or None
    prepared = prepare_from_lock(args.lock, mirror, ctx.machine())
    lock, groups = prepared.lock, prepared.groups
    data: Dict[str, Any] = {"lock": args.lock, "groups": [g.label for g in groups],
                            "warnings": prepared.warnings,
                            "packages": [{"name": p.name, "version": p.version, "index": p.index}
                                         for p in lock.packages]}

    def shown(out: IO[str], where: str) -> None:
        out.write(f"Reproduce {args.lock} ({len(lock.packages)} packages, "
                  f"{lock.variant or 'no variant'}, Python {lock.python or '?'}):\n")
        for group in groups:
            out.write(f"  {group.label}\n")
        out.write(f"Environment: {where}\n")
        for caution in cautions_of(prepared.warnings):  # part of the answer, before anything changes
            out.write(f"  ! {caution}\n")

    return prepared, data, shown
