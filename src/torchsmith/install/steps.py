"""Install steps: which packages come from which source, and the exact installer commands.

Each :class:`Group` installs from one source. A *pinned* group (the PyTorch index) runs with
every other index switched off, including ones from the user's pip/uv configuration and
environment, so a same-named package elsewhere can never be picked: the torchtriton dependency
confusion of December 2022. The other groups use the user's configured index, constrained to
what the pinned groups installed, so they can neither swap torch nor pull a torch dependency
from another index.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from torchsmith.errors import InstallError
from torchsmith.host import Host
from torchsmith.install.target import Target, distribution_version
from torchsmith.plan.model import Plan
from torchsmith.plan.steps import install_steps
from torchsmith.versions import version_tuple

__all__ = ["Group", "Installer", "StepFiles", "command", "find_installer", "groups_from_plan", "pip_command"]


@dataclass(frozen=True)
class Group:
    label: str  # "torch, torchvision from https://download.pytorch.org/whl/cu126"
    requirements: Tuple[str, ...]  # requirement lines, with --hash options when locked
    index_url: Optional[str] = None  # None: the user's configured index
    find_links: Optional[str] = None
    pinned: bool = False  # only this source: the user's other indexes are switched off
    no_deps: bool = False  # a lock lists the whole closure
    require_hashes: bool = False
    no_build_isolation: bool = False  # a source build compiles against the torch just installed


@dataclass(frozen=True)
class Installer:
    name: str  # "uv" | "pip"
    base: Tuple[str, ...]  # argv up to and including "install", aimed at the target
    reports: bool = True  # pip >= 22.2 writes --report (where the lock's hashes come from)


@dataclass(frozen=True)
class StepFiles:
    """Scratch files of one install: requirement files, reports, the neutral pip settings."""

    workdir: str

    @property
    def empty_dir(self) -> str:  # PIP_FIND_LINKS for pinned groups: no extra local wheels
        path = os.path.join(self.workdir, "no-links")
        os.makedirs(path, exist_ok=True)
        return path

    @property
    def empty_file(self) -> str:  # PIP_CONSTRAINT for pinned groups: no inherited constraints
        path = os.path.join(self.workdir, "no-constraints.txt")
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8"):
                pass
        return path

    def write(self, name: str, lines: Sequence[str]) -> str:
        path = os.path.join(self.workdir, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(f"{line}\n" for line in lines))
        return path


def groups_from_plan(plan: Plan) -> Tuple[List[Group], List[str]]:
    """The plan's install steps as groups, in order, and warnings for what cannot be installed here."""
    saved = [p for p in plan.packages if p.wheel_url and p.wheel_filename]
    if saved:  # pip refuses the URL and install downloads nothing itself
        pin = saved[0]
        raise InstallError(
            f"{pin.name} {pin.version}: NVIDIA's link {pin.wheel_url} ends in no wheel file name, "
            f"so it must be saved as {pin.wheel_filename} first, which `torchsmith install` does not do",
            code="install-needs-download",
            hint="run the steps of `torchsmith plan --format jetson` "
                 "(wget -O FILE URL, then pip install ./FILE)")
    groups = [Group(step.label, step.requirements, pinned=step.pinned,
                    index_url=step.url if step.source == "index" else None,
                    find_links=step.url if step.source == "find-links" else None,
                    no_build_isolation=step.no_build_isolation)
              for step in install_steps(plan)]
    return groups, []


def find_installer(host: Host, choice: Optional[str], target: Target) -> Installer:
    """uv when present (unless ``choice`` says pip), else pip; aimed at ``target``."""
    if choice not in (None, "uv", "pip"):
        raise InstallError(f"unknown installer {choice!r}", code="usage", hint="use --installer uv or pip")
    if choice in (None, "uv"):
        uv = find_uv(host)
        if uv:
            return Installer("uv", (uv, "pip", "install", "--python", target.python))
        if choice == "uv":
            raise InstallError("uv was asked for but is not installed", code="installer-missing",
                               hint="pip install uv, or use --installer pip")
    argv, reports = pip_command(host, target)
    return Installer("pip", (*argv, "install"), reports)


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


def find_uv(host: Host) -> Optional[str]:
    """The uv executable: the one of the ``uv`` dependency, else one on PATH."""
    try:
        from uv import find_uv_bin

        path = str(find_uv_bin())
        if os.path.isfile(path):
            return path
    except (ImportError, FileNotFoundError):
        pass
    return host.which("uv")


# Settings the user's environment may carry that would add a source to a pinned group.
_UV_SOURCES = ("UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_DEFAULT_INDEX", "UV_INDEX_URL",
               "UV_NO_INDEX", "UV_INDEX_STRATEGY", "UV_CONSTRAINT", "UV_OVERRIDE")


def command(installer: Installer, group: Group, files: StepFiles, step: int,
            constraints: Optional[str] = None) -> Tuple[List[str], Dict[str, Optional[str]], Optional[str]]:
    """argv, environment changes and the pip report path (None for uv) of one group."""
    argv = list(installer.base)
    argv += ["-r", files.write(f"step{step}-requirements.txt", group.requirements)]
    env: Dict[str, Optional[str]] = {}
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
    report: Optional[str] = None
    if installer.name == "pip":
        argv += ["--no-input", "--disable-pip-version-check", "--progress-bar", "off"]
        if installer.reports:
            report = os.path.join(files.workdir, f"step{step}-report.json")
            argv += ["--report", report]
        if group.pinned:
            # Environment variables beat every pip configuration file: the extra index becomes
            # the pinned index itself, find-links an empty directory, constraints nothing.
            env.update({"PIP_EXTRA_INDEX_URL": group.index_url or "", "PIP_FIND_LINKS": files.empty_dir,
                        "PIP_CONSTRAINT": files.empty_file, "PIP_NO_INDEX": "0", "PIP_INDEX_URL": None})
    elif group.pinned:
        argv += ["--no-config", "--index-strategy", "first-index"]
        env.update(dict.fromkeys(_UV_SOURCES))
    return argv, env, report
