"""The installers torchsmith can drive, by name; the interface is in :mod:`.base`.

The order of :data:`INSTALLERS` is the order of preference: without ``--installer`` the first
one present on the machine is used. A new installer is one module here and one line below.
"""

from __future__ import annotations

from typing import Dict, Optional

from torchsmith.errors import InstallError
from torchsmith.host import Host
from torchsmith.install.installers.base import Installer, InstallerKind, StepCommand
from torchsmith.install.installers.pip import PipInstaller
from torchsmith.install.installers.uv import UvInstaller
from torchsmith.install.steps import Group, StepFiles
from torchsmith.install.target import Target

__all__ = ["INSTALLERS", "Installer", "InstallerKind", "StepCommand", "choose_installer", "command",
           "find_installer", "installer_kind"]

INSTALLERS: Dict[str, InstallerKind] = {
    "uv": UvInstaller(),
    "pip": PipInstaller(),
}


def installer_kind(name: str) -> InstallerKind:
    kind = INSTALLERS.get(name)
    if kind is None:
        raise InstallError(f"unknown installer {name!r}", code="usage",
                           hint="use --installer " + " or ".join(INSTALLERS))
    return kind


def choose_installer(host: Host, choice: Optional[str]) -> InstallerKind:
    """The installer asked for (which must be present), else the first present one."""
    if choice:
        kind = installer_kind(choice)
        if not kind.present(host):
            raise InstallError(f"{kind.name} was asked for but is not installed", code="installer-missing",
                               hint=kind.missing_hint)
        return kind
    return next(kind for kind in INSTALLERS.values() if kind.present(host))


def find_installer(host: Host, choice: Optional[str], target: Target) -> Installer:
    """The chosen installer (see :func:`choose_installer`) aimed at ``target``."""
    return choose_installer(host, choice).find(host, target)


def command(installer: Installer, group: Group, files: StepFiles, step: int,
            constraints: Optional[str] = None) -> StepCommand:
    """argv, environment changes and the report path of one group, for the installer's kind."""
    return installer_kind(installer.name).command(installer, group, files, step, constraints)
