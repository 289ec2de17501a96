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
import time
from typing import IO, Any, Dict, List, Optional, Sequence

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.cli.plan import (
    add_request_options,
    build_request,
    describe,
    plan_json,
    plan_result,
    within_user_constraints,
)
from torchsmith.errors import InstallError, TorchsmithError, UsageError
from torchsmith.host import Host
from torchsmith.output import ExitCode, Result

DEFAULT_VENV = ".venv"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_request_options(parser, installers=("uv", "pip"),
                        installer_help="the installer to run (default: uv when present, else pip)")
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
    """One line per step: a spinner on a terminal (rich, imported only then), plain lines otherwise."""

    def __init__(self, stream: IO[str], quiet: bool) -> None:
        self.stream = stream
        self.quiet = quiet
        self._status: Any = None
        if not quiet and stream.isatty():
            try:
                from rich.console import Console

                self._status = Console(file=stream).status("")
            except ImportError:
                self._status = None

    def __call__(self, text: str) -> None:
        if self.quiet:
            return
        from torchsmith.redact import redact

        text = redact(text)  # step labels name the indexes
        if self._status is not None:
            self._status.update(text)
            self._status.start()
        else:
            self.stream.write(f"torchsmith: {text}\n")
            self.stream.flush()

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()


def _confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        raise TorchsmithError("not changing anything without confirmation (no terminal to ask on)",
                              code="confirmation-needed", hint="pass --yes, or --dry-run to only look")
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.host.live import LiveHost
    from torchsmith.install.runner import InstallInterrupted

    if args.venv and ctx.python_path():
        raise UsageError("--venv and --python PATH both name the target; give one")
    host = LiveHost(ctx.environ)
    machine = ctx.machine()
    if args.lock:
        prepared = _from_lock(args, ctx, machine)
    else:
        prepared = _from_plan(args, ctx, machine)
        if isinstance(prepared, Result):
            return prepared
    groups, expect, lock, shown, data = prepared
    out = sys.stderr if args.json else sys.stdout
    if args.dry_run:
        return Result(command="install", data={**data, "dry_run": True}, human=shown,
                      warnings=list(data.get("warnings", [])))
    from torchsmith.redact import redact

    plan_text = io.StringIO()  # shown before anything changes, outside emit: redacted here
    shown(plan_text)
    out.write(redact(plan_text.getvalue()))
    out.flush()
    if not args.yes and not _confirm("Install this?"):
        return Result(command="install", data={**data, "installed": False}, status="cancelled",
                      exit_code=ExitCode.FAILURE,
                      errors=[{"code": "cancelled", "message": "nothing was changed", "context": [],
                               "hint": None}])
    progress = _Progress(sys.stderr, quiet=bool(args.json))
    try:
        outcome = _install(host, args, ctx, groups=groups, expect=expect, lock=lock, progress=progress)
    except InstallInterrupted as exc:
        return Result(command="install", status="error", exit_code=ExitCode.INTERRUPTED,
                      errors=[exc.to_json()], data=data)
    finally:
        progress.stop()
    result = outcome.to_json()
    warnings = list(data.get("warnings", [])) + outcome.warnings

    def human(stream: IO[str]) -> None:
        verify = outcome.verify
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

    return Result(command="install", data={**data, **result, "installed": True}, human=human,
                  warnings=warnings)


def _from_plan(args: argparse.Namespace, ctx: Context, machine: Any) -> Any:
    from torchsmith.install.runner import expected_device
    from torchsmith.install.steps import groups_from_plan
    from torchsmith.plan.render import render_commands
    from torchsmith.plan.resolve import resolve

    request = build_request(args, ctx)
    plan = resolve(machine, request, ctx.kb())
    plan, request = within_user_constraints(args, ctx, machine, request, plan)
    if not plan.ok:
        return plan_result("install", args, plan, machine, request)
    groups, warnings = groups_from_plan(plan)
    unplanned = _unplanned(request.requirements, plan)
    if unplanned:
        from torchsmith.install.steps import Group

        names = ", ".join(unplanned)
        groups.append(Group(f"{names} from your configured index (torch kept)", tuple(unplanned)))
    commands = render_commands(plan)
    data = plan_json(plan, machine, commands)
    # The plan leaves unplanned packages to the user; install takes them (last, torch kept).
    kept = [w for w in plan.warnings if not (unplanned and w.startswith("not planned by torchsmith"))]
    data["warnings"] = kept + warnings
    from torchsmith.install.lock import Lock

    lock = Lock(packages=[], python=plan.python, platform=plan.platform, variant=plan.variant,
                accelerator=plan.accelerator, kb_version=plan.kb_version)
    if args.installer:
        installer = args.installer
    else:
        from torchsmith.host.live import LiveHost
        from torchsmith.install.installers.uv import find_uv

        installer = "uv" if find_uv(LiveHost(ctx.environ)) else "pip"

    def shown(out: IO[str]) -> None:
        describe(plan, commands, installer if installer in commands else "pip", out)

    return groups, expected_device(plan.accelerator), lock, shown, data


def _unplanned(requirements: Sequence[str], plan: Any) -> List[str]:
    """Requirements the plan leaves to the user's index (no torch-specific build): install them
    last, constrained to the planned torch."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    planned = {p.name for p in plan.packages} | {"torch", "torchvision", "torchaudio"}
    return [text for text in requirements if canonicalize_name(Requirement(text).name) not in planned]


def _from_lock(args: argparse.Namespace, ctx: Context, machine: Any) -> Any:
    from torchsmith.cli.plan import TORCH_INDEX_ENV
    from torchsmith.install.lock import read_lock
    from torchsmith.install.runner import expected_device

    _check_lock_entries(args.lock)
    lock = read_lock(args.lock)
    base = args.torch_index or ctx.environ.get(TORCH_INDEX_ENV) or None
    groups = lock.groups(base)
    expect = expected_device(lock.accelerator)
    if expect in ("cuda", "rocm") and not (machine.has_nvidia_gpu or (machine.rocm and machine.rocm.gpus)):
        expect = "cpu"  # a GPU build on a machine without the GPU: import and compute on the CPU
    warnings: List[str] = []
    if lock.platform and lock.platform != machine.platform:
        warnings.append(f"the lock was made for {lock.platform}; this machine is {machine.platform}")
    data: Dict[str, Any] = {"lock": args.lock, "groups": [g.label for g in groups], "warnings": warnings,
                            "packages": [{"name": p.name, "version": p.version, "index": p.index}
                                         for p in lock.packages]}

    def shown(out: IO[str]) -> None:
        out.write(f"Reproduce {args.lock} ({len(lock.packages)} packages, "
                  f"{lock.variant or 'no variant'}, Python {lock.python or '?'}):\n")
        for group in groups:
            out.write(f"  {group.label}\n")

    return groups, expect, lock, shown, data


def _check_lock_entries(path: str) -> None:
    """``packages`` must be a list of objects: read_lock indexes into each entry."""
    from torchsmith.errors import load_json_file

    data = load_json_file(path, "the lock", InstallError, code="lock-invalid")
    packages = data.get("packages") if isinstance(data, dict) else None
    if packages is not None and not (isinstance(packages, list)
                                     and all(isinstance(p, dict) for p in packages)):
        raise InstallError(f"the lock {path}: 'packages' must be a list of objects",
                           code="lock-invalid",
                           hint="use the torchsmith.lock.json that `torchsmith install` wrote")


def _target(host: Host, args: argparse.Namespace, ctx: Context, use_uv: Optional[str]) -> Any:
    from torchsmith.install.target import create_venv, inspect_target, venv_python

    python = ctx.python_path()
    if python:
        return inspect_target(host, python)
    path = os.path.abspath(args.venv or DEFAULT_VENV)
    if os.path.exists(path) and not os.path.isdir(path):
        raise InstallError(f"--venv {path} is a file, not a directory", code="venv-exists",
                           hint="choose a new path, or an existing venv's directory")
    if os.path.exists(os.path.join(path, "pyvenv.cfg")):
        return inspect_target(host, venv_python(path, host.platform().system == "Windows"))
    base = ctx.python_version() or host.platform().python_executable
    if not use_uv and ctx.python_version():
        base = host.which(f"python{ctx.python_version()}") or ""
        if not base:
            raise TorchsmithError(f"no python{ctx.python_version()} on PATH to make the venv with",
                                  code="python-missing", hint="install it, or use --installer uv")
    return create_venv(host, path, base, use_uv)


def _install(host: Host, args: argparse.Namespace, ctx: Context, *, groups: Any, expect: str,
             lock: Any, progress: _Progress) -> Any:
    from torchsmith.install.installers.uv import find_uv

    use_uv = find_uv(host) if args.installer in (None, "uv") else None
    if args.installer == "uv" and not use_uv:
        raise TorchsmithError("uv was asked for but is not installed", code="installer-missing",
                              hint="pip install uv, or use --installer pip")
    from torchsmith.install.exclusive import exclusive

    def waiting(text: str) -> None:
        from torchsmith.redact import redact

        sys.stderr.write(redact(f"torchsmith: {text}\n"))
        sys.stderr.flush()

    with exclusive(_target_prefix(host, args, ctx), args.wait, waiting=waiting):
        return _install_locked(host, args, ctx, groups=groups, expect=expect, lock=lock, progress=progress,
                               use_uv=use_uv)


def _target_prefix(host: Host, args: argparse.Namespace, ctx: Context) -> str:
    """The environment the install changes, found without changing anything."""
    from torchsmith.install.target import inspect_target

    python = ctx.python_path()
    return inspect_target(host, python).prefix if python else os.path.abspath(args.venv or DEFAULT_VENV)


def _install_locked(host: Host, args: argparse.Namespace, ctx: Context, *, groups: Any, expect: str,
                    lock: Any, progress: _Progress, use_uv: Optional[str]) -> Any:
    from torchsmith.install.installers import find_installer
    from torchsmith.install.runner import InstallJob, run_install

    progress("preparing the environment")
    started = time.monotonic()
    target = _target(host, args, ctx, use_uv)
    made = time.monotonic() - started
    try:
        installer = find_installer(host, "uv" if use_uv else "pip", target)
    except TorchsmithError:
        if target.new:
            from torchsmith.install.snapshot import remove_tree

            remove_tree(target.prefix)
        raise
    job = InstallJob(target=target, installer=installer, groups=list(groups), expect=expect, lock=lock,
                     lock_path=os.path.abspath(args.lock_out) if args.lock_out else None,
                     guard=not args.no_guard, timeout=args.timeout)
    outcome = run_install(host, job, progress)
    outcome.seconds["environment"] = made  # inspecting the target, or making the venv
    return outcome
