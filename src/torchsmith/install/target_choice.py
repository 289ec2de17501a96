"""Which environment a command is about: one rule for every command, uv's.

:func:`select_target` decides it and says where the answer came from (``TargetChoice.source``):

1. ``--python PATH`` (or ``--venv``/``--prefix`` where a command has them);
2. the active venv (``VIRTUAL_ENV``), else the active conda env (``CONDA_PREFIX``);
3. ``./.venv`` here or in a parent directory.

torchsmith's own environment is never found this way: a command acts on it only when
``--python`` names it. When nothing is found, ``install`` makes a new ``./.venv`` (``default``
``"new-venv"``), ``guard`` refuses, ``build-env`` uses none, and the read-only commands (probe,
plan, doctor, the summary) describe torchsmith's own interpreter and say so.

Nothing is run: the chosen interpreter is inspected by the command afterwards.
"""

from __future__ import annotations

import os
import sys

from torchsmith import TYPE_CHECKING
from torchsmith.errors import UsageError
from torchsmith.host import Host
from torchsmith.records import dataclass

if TYPE_CHECKING:
    from typing import Literal, Mapping, Optional, Tuple

    TargetDefault = Literal["active", "new-venv", "active-or-venv", "build-prefix"]

__all__ = ["DEFAULT_VENV", "OWN", "TargetChoice", "discover", "looks_like_version", "select_target"]

DEFAULT_VENV = ".venv"
OWN = "torchsmith's own interpreter: no environment found"
# Every TargetDefault, for the run-time check (the Literal exists for the type checker only).
_DEFAULTS: Tuple[TargetDefault, ...] = ("active", "new-venv", "active-or-venv", "build-prefix")
_INTERPRETERS = ("bin/python", "Scripts/python.exe", "python.exe")


@dataclass(frozen=True)
class TargetChoice:
    """The environment chosen, as far as it is known without running anything."""

    python: Optional[str] = None  # an interpreter path to inspect (None: torchsmith's own)
    prefix: Optional[str] = None  # the environment's directory (may not exist yet for a new venv)
    version: Optional[str] = None  # ``--python 3.12``: a Python version wanted, not an interpreter
    source: str = OWN  # "--python", "--venv", "VIRTUAL_ENV", "./.venv" ...

    @property
    def location(self) -> Optional[str]:
        """The interpreter, else the prefix: what :func:`~torchsmith.install.target.inspect_target` takes."""
        return self.python or self.prefix

    @property
    def own(self) -> bool:
        """No environment was found: torchsmith's own interpreter stands in (read-only commands)."""
        return self.source == OWN

    def label(self) -> str:
        """One line for a command's header: ``/w/.venv/bin/python (./.venv)``."""
        where = (sys.executable if self.own else self.python or self.prefix
                 or (f"Python {self.version}" if self.version else ""))
        return f"{where} ({self.source})" if where else self.source

    def to_json(self) -> Mapping[str, Optional[str]]:
        """As commands' JSON names it (torchsmith's own interpreter by its path)."""
        python, prefix = (sys.executable, sys.prefix) if self.own else (self.python, self.prefix)
        return {"python": python, "prefix": prefix, "version": self.version, "source": self.source}


def looks_like_version(text: str) -> bool:
    """``3.12``, ``3.12.4`` or a free-threaded ``3.13t``: a version, not a path."""
    head = text[:-1].split(".") if text.endswith("t") else text.split(".")
    return 2 <= len(head) <= 3 and all(p.isdigit() for p in head)


def select_target(host: Host, *, python: Optional[str] = None, venv: Optional[str] = None,
                  prefix: Optional[str] = None, default: TargetDefault = "active",
                  interpreter_for: Optional[str] = None, own_prefix: Optional[str] = None,
                  cwd: Optional[str] = None) -> TargetChoice:
    """The environment meant by the flags given, else found by the rule of the module docstring,
    else by ``default``.

    ``interpreter_for`` names a command that inspects an interpreter: a version is then an error.
    ``own_prefix`` is torchsmith's own ``sys.prefix``; ``cwd`` where ``./.venv`` is looked for.
    """
    if default not in _DEFAULTS:
        raise ValueError(f"unknown default {default!r}")
    version = python if python and looks_like_version(python) else None
    path = python if python and not version else None
    if version and interpreter_for:
        raise UsageError(f"{interpreter_for} inspects an interpreter, not a version: --python {version}",
                         hint="pass its path, e.g. --python .venv/bin/python")
    if venv and path:
        raise UsageError("--venv and --python PATH both name the target; give one")
    if prefix:  # build-env: where the build runs; --python still names the interpreter to plan for
        return TargetChoice(python=path, prefix=prefix, version=version, source="--prefix")
    if path:
        return TargetChoice(python=path, source="--python")
    if venv:
        return TargetChoice(prefix=os.path.abspath(venv), version=version, source="--venv")
    if default == "build-prefix":  # conda first: a build's compilers and headers live there
        variable, active = _active(host.environ(), ("CONDA_PREFIX", "VIRTUAL_ENV"))
        return TargetChoice(prefix=active, source=variable) if active else TargetChoice(source="none")
    if not version:  # a version asks for a new environment of it, as before
        found = discover(host, own_prefix or sys.prefix, cwd or os.getcwd())
        if found is not None:
            return found
    return _fallback(default, version, cwd or os.getcwd(), own_prefix or sys.prefix)


def discover(host: Host, own_prefix: str, cwd: str) -> Optional[TargetChoice]:
    """The active venv, the active conda env, else ``.venv`` in ``cwd`` or a parent directory;
    never torchsmith's own environment. None when there is none."""
    own = os.path.realpath(own_prefix)
    environ = host.environ()
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = environ.get(variable)
        if prefix and os.path.realpath(prefix) != own:
            return TargetChoice(python=_interpreter(host, prefix), prefix=prefix, source=variable)
    directory = os.path.abspath(cwd)
    while True:
        candidate = os.path.join(directory, DEFAULT_VENV)
        entries = host.list_dir(candidate)
        if entries is not None and "pyvenv.cfg" in entries and os.path.realpath(candidate) != own:
            here = os.path.abspath(cwd) == directory
            return TargetChoice(python=_interpreter(host, candidate), prefix=candidate,
                                source=f"./{DEFAULT_VENV}" if here else f"{DEFAULT_VENV} in {directory}")
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _fallback(default: TargetDefault, version: Optional[str], cwd: str, own_prefix: str) -> TargetChoice:
    if default == "new-venv":
        prefix = os.path.join(os.path.abspath(cwd), DEFAULT_VENV)
        if os.path.realpath(prefix) == os.path.realpath(own_prefix):
            raise UsageError(f"./{DEFAULT_VENV} here is torchsmith's own environment: it is changed "
                             "only when --python names it",
                             hint=f"install into another venv (--venv PATH, e.g. --venv "
                                  f"{DEFAULT_VENV}-torch), or into torchsmith's own with --python "
                                  f"{DEFAULT_VENV}/bin/python")
        return TargetChoice(prefix=prefix, version=version, source=f"./{DEFAULT_VENV}")
    if default == "active-or-venv":
        raise UsageError(f"no environment to guard: none is active and there is no ./{DEFAULT_VENV}",
                         hint="pass --python PATH/TO/ENV/bin/python")
    if version:
        return TargetChoice(version=version, source="--python")
    return TargetChoice()


def _active(environ: Mapping[str, str], variables: Tuple[str, ...]) -> Tuple[str, Optional[str]]:
    for variable in variables:
        value = environ.get(variable)
        if value:
            return variable, str(value)
    return "", None


def _interpreter(host: Host, prefix: str) -> str:
    """The environment's interpreter (``bin/python``, or Windows' names when those exist)."""
    for relative in _INTERPRETERS:
        candidate = os.path.join(prefix, relative)
        if os.path.basename(candidate) in (host.list_dir(os.path.dirname(candidate)) or ()):
            return candidate
    return os.path.join(prefix, _INTERPRETERS[0])
