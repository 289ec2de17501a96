"""uv: ``uv pip install --python TARGET``; fast venvs with ``uv venv``.

uv writes no report, so the lock's hashes are read afterwards from each package's own source
with ``uv pip compile --generate-hashes``.
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional

from torchsmith.errors import InstallError
from torchsmith.host import Host
from torchsmith.install.installers.base import (
    Hashes,
    Installer,
    InstallerKind,
    Source,
    StepCommand,
    requirement_argv,
)
from torchsmith.install.lock import parse_compiled_hashes
from torchsmith.install.steps import Group, StepFiles
from torchsmith.install.target import Target

__all__ = ["UvInstaller", "find_uv"]

# Settings the user's environment may carry that would add a source to a pinned group.
_UV_SOURCES = ("UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_DEFAULT_INDEX", "UV_INDEX_URL",
               "UV_NO_INDEX", "UV_INDEX_STRATEGY", "UV_CONSTRAINT", "UV_OVERRIDE")
_HASH_SOURCES = ("UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_DEFAULT_INDEX", "UV_CONSTRAINT")


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


class UvInstaller(InstallerKind):
    name = "uv"
    missing_hint = "pip install uv, or use --installer pip"
    hashes_after_install = True

    def present(self, host: Host) -> bool:
        return find_uv(host) is not None

    def find(self, host: Host, target: Target) -> Installer:
        uv = find_uv(host)
        if not uv:
            raise InstallError("uv was asked for but is not installed", code="installer-missing",
                               hint=self.missing_hint)
        return Installer(self.name, (uv, "pip", "install", "--python", target.python))

    def venv_command(self, host: Host, path: str, base_python: str) -> Optional[List[str]]:
        uv = find_uv(host)
        return [uv, "venv", "--quiet", "--python", base_python, path] if uv else None

    def command(self, installer: Installer, group: Group, files: StepFiles, step: int,
                constraints: Optional[str] = None) -> StepCommand:
        argv = requirement_argv(installer, group, files, step, constraints)
        env: Dict[str, Optional[str]] = {}
        if group.pinned:
            argv += ["--no-config", "--index-strategy", "first-index"]
            env = dict.fromkeys(_UV_SOURCES)
        return StepCommand(argv, env, None)

    def lock_hashes(self, host: Host, installer: Installer, target: Target, files: StepFiles,
                    pins: Dict[Source, List[str]]) -> Hashes:
        """Hashes of the installed versions, read from each package's own source by uv's resolver."""
        uv = installer.base[0]
        out: Hashes = {}
        for number, ((index, links), lines) in enumerate(sorted(pins.items(), key=str), 1):
            req = files.write(f"hash{number}.in", sorted(lines))
            argv = [uv, "pip", "compile", req, "--generate-hashes", "--no-deps", "--no-header",
                    "--no-annotate", "--quiet", "--python", target.python]
            env: Dict[str, Optional[str]] = {}
            if index:
                argv += ["--index-url", index, "--no-config", "--index-strategy", "first-index"]
                env = dict.fromkeys(_HASH_SOURCES)
            if links:
                argv += ["--find-links", links]
            result = host.run(argv, timeout=300.0, env=env)
            if result.ok:
                out.update(parse_compiled_hashes(result.stdout))
        return out
