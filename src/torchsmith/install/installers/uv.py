"""uv: ``uv pip install --python TARGET``; fast venvs with ``uv venv``.

uv writes no report: a pinned step installs hash-checked pins read from the pinned index's own
listing (:mod:`torchsmith.install.hash_checked`), which also gives the lock their files; the
other packages' hashes are read afterwards from each one's own source with ``uv pip compile
--generate-hashes``.
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
    hash_checks_pins = True  # `uv pip install` writes no report of what it fetched
    # --no-config does not stop UV_CONFIG_FILE ("this file will replace any discovered
    # configuration files", https://docs.astral.sh/uv/concepts/configuration-files/): dropped with
    # every other UV_* setting but the network and cache ones.
    setting_prefix = "UV_"
    kept_settings = frozenset({"UV_CACHE_DIR", "UV_NO_CACHE", "UV_NATIVE_TLS", "UV_HTTP_TIMEOUT",
                               "UV_REQUEST_TIMEOUT", "UV_HTTP_RETRIES", "UV_CONCURRENT_DOWNLOADS",
                               "UV_CONCURRENT_INSTALLS", "UV_CONCURRENT_BUILDS", "UV_LINK_MODE",
                               "UV_INSECURE_HOST", "UV_OFFLINE", "UV_NO_PROGRESS", "UV_KEYRING_PROVIDER",
                               "UV_PYTHON_DOWNLOADS"})
    no_config = (("UV_NO_CONFIG", "1"),)

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
        if group.pinned:
            argv += ["--no-config", "--index-strategy", "first-index"]
        return StepCommand(argv, {}, None)

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
                env = self.isolated_env(host.environ())
            if links:
                argv += ["--find-links", links]
            result = host.run(argv, timeout=300.0, env=env)
            if result.ok:
                out.update(parse_compiled_hashes(result.stdout))
        return out
