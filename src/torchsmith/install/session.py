"""One install from start to end: choose the installer, take the environment for itself, open
(or make) the target, and run the prepared groups with rollback (:mod:`.runner`)."""

from __future__ import annotations

import errno
import os
import time
from typing import Callable, Optional

from torchsmith.errors import InstallError, TorchsmithError
from torchsmith.host import Host
from torchsmith.install.exclusive import exclusive
from torchsmith.install.installers import InstallerKind, choose_installer
from torchsmith.install.prepare import Prepared
from torchsmith.install.runner import InstallJob, InstallOutcome, run_install
from torchsmith.install.snapshot import reason, remove_tree
from torchsmith.install.target import Target, create_venv, inspect_target, venv_python
from torchsmith.install.target_choice import TargetChoice
from torchsmith.install.transaction import journaled_prefix, recover
from torchsmith.records import dataclass

__all__ = ["InstallOptions", "install_prepared", "open_target"]

Say = Callable[[str], None]


@dataclass(frozen=True)
class InstallOptions:
    installer: Optional[str] = None  # a name in INSTALLERS; None: the first one present
    lock_out: Optional[str] = None  # default: <prefix>/torchsmith.lock.json
    guard: bool = True
    timeout: float = 3600.0  # per installer step
    wait: float = 0.0  # for another torchsmith changing the same environment


def install_prepared(host: Host, choice: TargetChoice, prepared: Prepared, options: InstallOptions, *,
                     progress: Say, waiting: Say) -> InstallOutcome:
    """Install ``prepared`` into the chosen environment, or leave it as it was."""
    try:
        return _install_prepared(host, choice, prepared, options, progress=progress, waiting=waiting)
    except OSError as exc:  # before or after the transaction (its own are handled there): a full disk
        where = f" ({exc.filename})" if exc.filename else ""
        raise InstallError(f"install failed: {reason(exc)}{where}", code="install-failed",
                           hint="free disk space" if exc.errno == errno.ENOSPC else None) from None


def _install_prepared(host: Host, choice: TargetChoice, prepared: Prepared, options: InstallOptions, *,
                      progress: Say, waiting: Say) -> InstallOutcome:
    kind = choose_installer(host, options.installer)
    prefix = _prefix(host, choice)
    with exclusive(prefix, options.wait, waiting=waiting):
        recovered = recover(prefix) if prefix else []  # what a kill -9 stopped here, first
        for line in recovered:
            progress(line)
        progress("preparing the environment")
        started = time.monotonic()
        target = open_target(host, choice, kind)
        made = time.monotonic() - started
        try:
            installer = kind.find(host, target)
        except TorchsmithError:
            if target.new:
                remove_tree(target.prefix)
            raise
        job = InstallJob(target=target, installer=installer, groups=list(prepared.groups),
                         expect=prepared.expect, lock=prepared.lock,
                         lock_path=os.path.abspath(options.lock_out) if options.lock_out else None,
                         guard=options.guard, timeout=options.timeout, pairing=prepared.pairing)
        outcome = run_install(host, job, progress)
        outcome.warnings[:0] = recovered
        outcome.notices[:0] = recovered
        outcome.seconds["environment"] = made  # inspecting the target, or making the venv
        return outcome


def _prefix(host: Host, choice: TargetChoice) -> str:
    """The environment the install changes, found without changing anything. (A kill between
    the two renames of a rollback leaves no interpreter: its journal names the prefix.)"""
    if choice.python:
        return journaled_prefix(choice.python) or inspect_target(host, choice.python).prefix
    return choice.prefix or ""


def open_target(host: Host, choice: TargetChoice, kind: InstallerKind) -> Target:
    """The chosen interpreter's environment, the venv at the chosen prefix, or a new venv there."""
    if choice.python:
        return inspect_target(host, choice.python)
    path = os.path.abspath(choice.prefix or ".")
    windows = host.platform().system == "Windows"
    if os.path.exists(path) and not os.path.isdir(path):
        raise InstallError(f"--venv {path} is a file, not a directory", code="venv-exists",
                           hint="choose a new path, or an existing venv's directory")
    if os.path.exists(os.path.join(path, "pyvenv.cfg")):
        return inspect_target(host, venv_python(path, windows))
    base = choice.version or host.platform().python_executable
    argv = kind.venv_command(host, path, base)
    if argv is None and choice.version:
        base = host.which(f"python{choice.version}") or ""
        if not base:
            raise TorchsmithError(f"no python{choice.version} on PATH to make the venv with",
                                  code="python-missing", hint="install it, or use --installer uv")
    return create_venv(host, path, base, argv)
