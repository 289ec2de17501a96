"""The installer interface: how torchsmith drives one package installer (pip and uv today).

An installer *kind* is an :class:`InstallerKind` registered by name in
:data:`torchsmith.install.installers.INSTALLERS` (the first one present on the machine is the
default). It answers:

- ``name``: how it names itself (``"uv"``): ``--installer``, progress lines, the outcome;
- ``present(host)``: whether it can be used here at all, before a target exists, and
  ``missing_hint``: how to get it when it was asked for and is not;
- ``find(host, target)``: the :class:`Installer` aimed at ``target`` (argv up to ``install``),
  raising :class:`~torchsmith.errors.InstallError` when it cannot serve that target;
- ``venv_command(host, path, base_python)``: argv that makes a new venv, or None for
  ``python -m venv``;
- ``command(installer, group, files, step, constraints)``: the :class:`StepCommand` of one
  install group: argv, environment changes (None unsets a variable), and the report file the
  step writes (None when it writes none);
- hashes for the lock: ``Installer.reports`` says whether its steps write a report, and
  ``step_hashes(report_text)`` reads the hashes one recorded; a kind whose steps record none
  sets ``hashes_after_install`` and ``lock_hashes(host, installer, target, files, pins)``
  reads them afterwards (uv, from the indexes; it runs while verify runs, so it only reads).

Adding conda or pixi is one module in this package defining a subclass, and one line in
``INSTALLERS``.
"""

from __future__ import annotations

import abc
from typing import Dict, FrozenSet, List, Mapping, NamedTuple, Optional, Tuple

from torchsmith.host import Host
from torchsmith.install.steps import Group, StepFiles
from torchsmith.install.target import Target
from torchsmith.records import dataclass

__all__ = ["Hashes", "Installer", "InstallerKind", "Source", "StepCommand"]

Source = Tuple[Optional[str], Optional[str]]  # (index URL, find-links URL); None: the user's config
Hashes = Dict[str, Tuple[str, ...]]  # canonical name -> "sha256:..." digests


@dataclass(frozen=True)
class Installer:
    """An installer found on this machine and aimed at one target environment."""

    name: str  # the kind's name: "uv" | "pip"
    base: Tuple[str, ...]  # argv up to and including "install", aimed at the target
    reports: bool = True  # writes a report per step (pip >= 22.2 --report: the lock's hashes)


class StepCommand(NamedTuple):
    argv: List[str]
    env: Dict[str, Optional[str]]
    report: Optional[str]


class InstallerKind(abc.ABC):
    name: str = ""
    missing_hint: str = ""
    hashes_after_install: bool = False  # lock_hashes has work to do (the steps report no hashes)
    hash_checks_pins: bool = False  # no step report: a pinned step installs hash-checked pins (hash_checked)
    # A pinned step runs with torchsmith's settings only: every environment variable with this
    # prefix is dropped (each one is a command-line option, so any may add an index, a
    # requirement or a constraint) but the network ones, and config files are switched off.
    setting_prefix: str = ""
    kept_settings: FrozenSet[str] = frozenset()
    no_config: Tuple[Tuple[str, str], ...] = ()

    @abc.abstractmethod
    def present(self, host: Host) -> bool:
        """Whether this installer can be used on this machine."""

    @abc.abstractmethod
    def find(self, host: Host, target: Target) -> Installer:
        """This installer aimed at ``target``; InstallError when it cannot serve it."""

    def venv_command(self, host: Host, path: str, base_python: str) -> Optional[List[str]]:
        """argv making a venv at ``path`` from ``base_python``; None: ``python -m venv``."""
        return None

    @abc.abstractmethod
    def command(self, installer: Installer, group: Group, files: StepFiles, step: int,
                constraints: Optional[str] = None) -> StepCommand:
        """The command installing ``group`` (step number ``step``) into the target."""

    def isolated_env(self, environ: Mapping[str, str]) -> Dict[str, Optional[str]]:
        """Environment changes that leave a pinned step no configuration but torchsmith's."""
        env: Dict[str, Optional[str]] = {
            name: None for name in environ
            if self.setting_prefix and name.upper().startswith(self.setting_prefix)
            and name.upper() not in self.kept_settings}
        env.update(self.no_config)
        return env

    def step_hashes(self, report_text: str) -> Hashes:
        """Hashes recorded in a step's report."""
        return {}

    def lock_hashes(self, host: Host, installer: Installer, target: Target, files: StepFiles,
                    pins: Dict[Source, List[str]]) -> Hashes:
        """Hashes of ``pins`` (``name==version`` lines grouped by their source) that no step
        reported; read-only, it runs while verify runs."""
        return {}


def requirement_argv(installer: Installer, group: Group, files: StepFiles, step: int,
                     constraints: Optional[str]) -> List[str]:
    """The options every pip-like installer shares: requirements, sources, and their rules."""
    argv = list(installer.base)
    argv += ["-r", files.write(f"step{step}-requirements.txt", group.requirements)]
    if group.index_url:
        argv += ["--index-url", group.index_url]
    if group.find_links:
        argv += ["--find-links", group.find_links]
    if group.no_deps:
        argv.append("--no-deps")
    if group.require_hashes:
        argv.append("--require-hashes")
    if group.no_build_isolation:
        argv.append("--no-build-isolation")
    if constraints and not group.pinned:
        argv += ["-c", constraints]
    return argv
