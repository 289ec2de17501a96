"""pip: the target's own pip when recent, else torchsmith's pip with ``--python``.

A pinned group runs with no pip configuration file (``PIP_CONFIG_FILE=os.devnull``: "disables
the loading of all configuration files", https://pip.pypa.io/en/stable/topics/configuration/) and
none of the user's ``PIP_*`` variables but network ones (each is an option: ``PIP_REQUIREMENT``,
``PIP_EXTRA_INDEX_URL``, ``PIP_CONSTRAINT``...). pip >= 22.2 writes ``--report``: the lock's hashes
and the URLs actually fetched come from it.
"""

from __future__ import annotations

import os
from typing import List, Optional, Tuple

from torchsmith.errors import InstallError
from torchsmith.host import Host
from torchsmith.install.installers.base import (
    Hashes,
    Installer,
    InstallerKind,
    StepCommand,
    requirement_argv,
)
from torchsmith.install.lock import hashes_from_pip_report
from torchsmith.install.steps import Group, StepFiles
from torchsmith.install.target import Target, distribution_version
from torchsmith.versions import version_tuple

__all__ = ["PipInstaller", "pip_command"]


def pip_command(host: Host, target: Target) -> Tuple[List[str], bool]:
    """How to run pip for ``target``, and whether that pip writes ``--report`` (22.2+).

    The target's own pip when recent; else torchsmith's, with ``--python`` (22.3+). Looked up
    in the dist-info directories, not by running ``pip --version`` (half a second each).
    """
    own_version: Optional[str] = None
    try:
        from importlib.metadata import version as installed_version

        own_version = installed_version("pip")  # the interpreter running torchsmith
    except Exception:  # no pip here, or broken metadata: the target's pip it is
        own_version = None
    target_version = distribution_version(host, target, "pip")
    if target_version and (version_tuple(target_version) >= (22, 2) or not own_version):
        return [target.python, "-m", "pip"], version_tuple(target_version) >= (22, 2)
    if own_version and version_tuple(own_version) >= (22, 3):
        return [host.platform().python_executable, "-m", "pip", "--python", target.python], True
    if target_version:
        return [target.python, "-m", "pip"], False
    raise InstallError(f"no pip for {target.python}", code="installer-missing",
                       hint=f"{target.python} -m ensurepip, or use --installer uv")


class PipInstaller(InstallerKind):
    name = "pip"
    missing_hint = "python -m ensurepip, or use --installer uv"
    setting_prefix = "PIP_"
    kept_settings = frozenset({"PIP_PROXY", "PIP_CERT", "PIP_CLIENT_CERT", "PIP_TRUSTED_HOST", "PIP_TIMEOUT",
                               "PIP_RETRIES", "PIP_CACHE_DIR", "PIP_NO_CACHE_DIR", "PIP_KEYRING_PROVIDER"})
    no_config = (("PIP_CONFIG_FILE", os.devnull),)

    def present(self, host: Host) -> bool:
        return True  # a venv brings its own pip; find() says when the target has none

    def find(self, host: Host, target: Target) -> Installer:
        argv, reports = pip_command(host, target)
        return Installer(self.name, (*argv, "install"), reports)

    def command(self, installer: Installer, group: Group, files: StepFiles, step: int,
                constraints: Optional[str] = None) -> StepCommand:
        argv = requirement_argv(installer, group, files, step, constraints)
        argv += ["--no-input", "--disable-pip-version-check", "--progress-bar", "off"]
        report: Optional[str] = None
        if installer.reports:
            report = os.path.join(files.workdir, f"step{step}-report.json")
            argv += ["--report", report]
        return StepCommand(argv, {}, report)

    def step_hashes(self, report_text: str) -> Hashes:
        return hashes_from_pip_report(report_text)
