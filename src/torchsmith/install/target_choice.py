"""Which environment a command is about: ``--python``, ``--venv``, ``--prefix`` or a default.

One function, :func:`select_target`, decides it for every command, and says where the answer
came from (``TargetChoice.source``). Defaults differ by what a command does:

- ``"active"`` (probe, plan, doctor, the summary): the active venv (VIRTUAL_ENV), else the
  active conda env (CONDA_PREFIX), unless it is torchsmith's own; else torchsmith's own
  interpreter. torchsmith is often installed apart from the environments it looks at.
- ``"new-venv"`` (install): ``./.venv``, created when missing; the active env is not changed
  unless named.
- ``"active-or-venv"`` (guard): the active venv or conda env, else an existing ``./.venv``.
- ``"build-prefix"`` (build-env): the active conda env, else the active venv, else none.

Nothing is run: the chosen interpreter is inspected by the command afterwards.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Literal, Mapping, Optional, Tuple, get_args

from torchsmith.errors import UsageError
from torchsmith.host import Host

__all__ = ["DEFAULT_VENV", "TargetChoice", "TargetDefault", "looks_like_version", "select_target"]

DEFAULT_VENV = ".venv"
TargetDefault = Literal["active", "new-venv", "active-or-venv", "build-prefix"]
_INTERPRETERS = ("bin/python", "Scripts/python.exe", "python.exe")


@dataclass(frozen=True)
class TargetChoice:
    """The environment chosen, as far as it is known without running anything."""

    python: Optional[str] = None  # an interpreter path to inspect
    prefix: Optional[str] = None  # the environment's directory (may not exist yet for a new venv)
    version: Optional[str] = None  # ``--python 3.12``: a Python version wanted, not an interpreter
    source: str = "this interpreter"  # "--python", "--venv", "VIRTUAL_ENV", "./.venv" ...

    @property
    def location(self) -> Optional[str]:
        """The interpreter, else the prefix: what :func:`~torchsmith.install.target.inspect_target` takes."""
        return self.python or self.prefix

    def to_json(self) -> Mapping[str, Optional[str]]:
        return {"python": self.python, "prefix": self.prefix, "version": self.version, "source": self.source}


def looks_like_version(text: str) -> bool:
    """``3.12``, ``3.12.4`` or a free-threaded ``3.13t``: a version, not a path."""
    head = text[:-1].split(".") if text.endswith("t") else text.split(".")
    return 2 <= len(head) <= 3 and all(p.isdigit() for p in head)


def select_target(host: Host, *, python: Optional[str] = None, venv: Optional[str] = None,
                  prefix: Optional[str] = None, default: TargetDefault = "active",
                  interpreter_for: Optional[str] = None, own_prefix: Optional[str] = None) -> TargetChoice:
    """The environment meant by the flags given, else by ``default`` (see the module docstring).

    ``interpreter_for`` names a command that inspects an interpreter: a version is then an error.
    ``own_prefix`` is torchsmith's own ``sys.prefix`` (the active env that is not a target).
    """
    if default not in get_args(TargetDefault):
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
    return _default(host, default, version, own_prefix or sys.prefix)


def _default(host: Host, default: TargetDefault, version: Optional[str], own_prefix: str) -> TargetChoice:
    environ = host.environ()
    if default == "new-venv":
        return TargetChoice(prefix=os.path.abspath(DEFAULT_VENV), version=version, source=f"./{DEFAULT_VENV}")
    if default == "build-prefix":
        variable, active = _active(environ, ("CONDA_PREFIX", "VIRTUAL_ENV"))
        return TargetChoice(prefix=active, source=variable) if active else TargetChoice(source="none")
    if default == "active-or-venv":
        variable, active = _active(environ, ("VIRTUAL_ENV", "CONDA_PREFIX"))
        if active:
            return TargetChoice(prefix=active, source=variable)
        if host.list_dir(DEFAULT_VENV) is not None:
            return TargetChoice(prefix=os.path.abspath(DEFAULT_VENV), source=f"./{DEFAULT_VENV}")
        raise UsageError(f"no environment to guard: none is active and there is no ./{DEFAULT_VENV}",
                         hint="pass --python PATH/TO/ENV/bin/python")
    if version:
        return TargetChoice(version=version, source="--python")
    return _active_interpreter(host, environ, own_prefix)


def _active(environ: Mapping[str, str], variables: Tuple[str, ...]) -> Tuple[str, Optional[str]]:
    for variable in variables:
        value = environ.get(variable)
        if value:
            return variable, str(value)
    return "", None


def _active_interpreter(host: Host, environ: Mapping[str, str], own_prefix: str) -> TargetChoice:
    """The active venv's interpreter, else the active conda env's, unless it is torchsmith's own."""
    own = os.path.realpath(own_prefix)
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = environ.get(variable)
        if not prefix:
            continue
        if os.path.realpath(prefix) == own:
            return TargetChoice()
        for relative in _INTERPRETERS:
            candidate = os.path.join(prefix, relative)
            if os.path.basename(candidate) in (host.list_dir(os.path.dirname(candidate)) or ()):
                return TargetChoice(python=candidate, prefix=prefix, source=variable)
    return TargetChoice()
