"""The environment an install goes into: an existing venv or conda prefix, or a new venv.

Everything runs through a :class:`~torchsmith.host.Host`: the interpreter is inspected with the
``python_info`` snippet, venvs are made with ``uv venv`` (fast) or ``python -m venv``.
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

from packaging.utils import canonicalize_name

from torchsmith.errors import InstallError
from torchsmith.host import Host
from torchsmith.machine import ProbeNote
from torchsmith.records import dataclass
from torchsmith.versions import minor_version

__all__ = [
    "Target",
    "create_venv",
    "distribution_version",
    "inspect_target",
    "installed_packages",
    "parse_metadata",
    "site_packages",
    "venv_python",
]

# Installed distributions of the target, read with importlib.metadata (Python 3.8+).
_LIST_CODE = (
    "import json, importlib.metadata as m\n"
    "out = {}\n"
    "for d in m.distributions():\n"
    "    name = d.metadata['Name']\n"
    "    if name: out[name] = {'version': d.version, 'requires': d.requires or []}\n"
    "print(json.dumps(out))\n"
)


@dataclass(frozen=True)
class Target:
    python: str  # the interpreter inside the environment
    prefix: str  # sys.prefix: what is snapshotted and guarded
    kind: str  # "venv" | "conda"
    python_version: str  # "3.11.7"
    new: bool = False  # made by this install: removed again if the install fails

    @property
    def bin_dir(self) -> str:
        return os.path.dirname(self.python)


def venv_python(prefix: str, windows: bool = False) -> str:
    return os.path.join(prefix, "Scripts", "python.exe") if windows else os.path.join(prefix, "bin", "python")


def inspect_target(host: Host, python: str, new: bool = False) -> Target:
    """The environment ``python`` belongs to; refuses an interpreter outside any environment."""
    if os.path.isdir(python):  # a prefix was given: find its interpreter
        windows = host.platform().system == "Windows"
        python = venv_python(python, windows)
    notes: List[ProbeNote] = []
    from torchsmith.probe import inspect_python

    info = inspect_python(host, python, notes)
    if info is None:
        problem = notes[0].problem if notes else "no answer"
        raise InstallError(f"cannot run the target interpreter {python}: {problem}",
                           code="target-unusable",
                           hint="pass --python PATH to a venv's or conda prefix's python, or --venv PATH")
    if info.conda_prefix:
        kind, prefix = "conda", info.conda_prefix
    elif info.virtualenv:
        kind, prefix = "venv", info.virtualenv
    else:
        raise InstallError(
            f"{python} is not in a virtual environment or conda prefix (prefix {info.prefix})",
            code="target-not-an-environment",
            hint="torchsmith only changes environments it can restore; create one with "
                 "`torchsmith install --venv PATH`",
        )
    return Target(python=python, prefix=os.path.abspath(prefix), kind=kind,
                  python_version=info.version, new=new)


def create_venv(host: Host, path: str, base_python: str, argv: Optional[List[str]] = None) -> Target:
    """A new venv at ``path`` (which must not exist): with ``argv`` (an installer's own venv
    command, e.g. ``uv venv``) when given, else ``base_python -m venv``."""
    path = os.path.abspath(path)
    if os.path.exists(path) and os.listdir(path):
        raise InstallError(f"{path} exists and is not empty", code="venv-exists",
                           hint="pass --python PATH/bin/python to install into it, or choose a new path")
    if not argv:
        argv = [base_python, "-m", "venv", path]
    existed = os.path.exists(path)
    try:
        result = host.run(argv, timeout=300.0, env={"VIRTUAL_ENV": None})
        if not result.ok:
            raise InstallError(f"could not create the venv {path}: {result.problem()}", code="venv-failed")
        windows = host.platform().system == "Windows"
        return inspect_target(host, venv_python(path, windows), new=True)
    except BaseException:  # Ctrl-C included: leave no half-made venv behind
        if not existed:
            from torchsmith.install.snapshot import remove_tree

            remove_tree(path)
        raise


def site_packages(host: Host, target: Target) -> List[str]:
    """The target's site-packages directories (venv and conda layouts, POSIX and Windows)."""
    minor = minor_version(target.python_version)
    candidates = [
        os.path.join(target.prefix, "lib", f"python{minor}", "site-packages"),
        os.path.join(target.prefix, "lib", f"python{minor}t", "site-packages"),  # free-threaded
        os.path.join(target.prefix, "Lib", "site-packages"),
    ]
    return [path for path in candidates if host.list_dir(path) is not None]


def distribution_version(host: Host, target: Target, name: str) -> Optional[str]:
    """The installed version of ``name`` (e.g. "pip") from its dist-info directory's name, or None."""
    prefix = name.replace("-", "_").lower() + "-"
    for directory in site_packages(host, target):
        for entry in host.list_dir(directory) or ():
            if entry.lower().startswith(prefix) and entry.endswith(".dist-info"):
                return entry[len(prefix):-len(".dist-info")]
    return None


def parse_metadata(text: str) -> Tuple[str, str, List[str]]:
    """(Name, Version, Requires-Dist lines) from a METADATA file's headers."""
    name = version = ""
    requires: List[str] = []
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line; the long description follows
        key, _, value = line.partition(":")
        if key == "Name":
            name = value.strip()
        elif key == "Version":
            version = value.strip()
        elif key == "Requires-Dist":
            requires.append(value.strip())
    return name, version, requires


def installed_packages(host: Host, target: Target) -> Dict[str, Dict[str, object]]:
    """canonical name -> {"version", "requires"} of every distribution in the target.

    Read from the ``*.dist-info`` directories directly (milliseconds, where starting the target
    interpreter costs a quarter second); falls back to importlib.metadata in the target.
    """
    dirs = site_packages(host, target)
    if dirs:
        out: Dict[str, Dict[str, object]] = {}
        for directory in dirs:
            for entry in host.list_dir(directory) or ():
                if not entry.endswith(".dist-info"):
                    continue
                text = host.read_text(os.path.join(directory, entry, "METADATA"))
                if text is None:
                    continue
                name, version, requires = parse_metadata(text)
                if name:
                    out.setdefault(canonicalize_name(name), {"version": version, "requires": requires})
        return out
    result = host.run([target.python, "-c", _LIST_CODE], timeout=60.0)
    if not result.ok:
        raise InstallError(f"cannot list the packages of {target.python}: {result.problem()}",
                           code="target-unusable")
    try:
        data = result.last_json()
    except ValueError as exc:
        raise InstallError(f"{target.python} printed no usable package list", code="target-unusable") from exc
    return {canonicalize_name(name): value for name, value in data.items()}
