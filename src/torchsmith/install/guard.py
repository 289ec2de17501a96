"""The guard: keeps a working torch from being swapped by a later ``pip install`` or ``uv pip install``.

Files in the environment's prefix:

- ``torchsmith-guard.txt``: constraints pinning torch, the packages installed with it from the
  PyTorch index (nvidia-*, triton) and the packages tied to it, at their exact local versions.
- ``pip.conf`` (``pip.ini`` on Windows): ``[install] constraint = <guard file>``. pip reads this
  *site* configuration from ``sys.prefix`` whenever it runs with the environment's interpreter
  (``pip``, ``python -m pip``, ``pip --python``), activated or not.
- The activate scripts export ``UV_CONSTRAINT=<guard file>``. uv reads no configuration from a
  venv, so this is the only environment-local hook it has: it applies to ``uv pip install`` in a
  shell where the environment is activated, not to ``uv pip install --python .venv/bin/python``
  from elsewhere, nor to ``uv add``/``uv sync`` (projects pin through ``[tool.uv]
  constraint-dependencies``).

- *Held packages*: the ``RECORD`` of each pinned distribution (installed at its pinned version)
  is moved aside (``RECORD.torchsmith-guard``, a directory in its place) and its ``INSTALLER``
  says ``torchsmith guard``. Neither pip nor uv removes a distribution whose files it cannot
  list, so torch can be neither uninstalled nor replaced, whatever configuration or environment
  they run with (``PIP_CONFIG_FILE=/dev/null``, a user ``PIP_CONSTRAINT``, ``uv pip install
  --python`` from outside, ``pip uninstall torch``): see :mod:`torchsmith.install.guard_hold`.

What is left open, and reported by :func:`bypasses` (``guard status``, ``doctor``): environment
settings that switch the constraints off (pip then fails at the uninstall rather than resolving
around the pins), and what never uninstalls: ``pip install --ignore-installed``/``--target``,
deleting files by hand, conda. No ``sitecustomize`` or ``.pth`` hook is used: those run in
every interpreter start of the environment, torch's included.

``guard off`` removes the pip and activate hooks, gives the packages their ``RECORD`` back and
keeps the constraints file; ``guard on`` puts them back.
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from torchsmith.install import guard_hold, journal
from torchsmith.install.guard_files import (
    constraint_reference,
    names_guard,
    pip_conf_with,
    pip_conf_without,
    read_bytes,
    restore,
    save_original,
    write_atomic,
)
from torchsmith.records import dataclass

__all__ = ["GUARD_FILE", "GuardStatus", "guard_off", "guard_on", "guard_status", "write_guard_file"]

GUARD_FILE = "torchsmith-guard.txt"
JOURNAL_FILE = "torchsmith-guard-journal"  # "on" | "off" while that switch runs
_BEGIN = "torchsmith guard >>>"
_END = "<<< torchsmith guard"

# activate script -> (line exporting the constraint, comment prefix)
_ACTIVATE: Dict[str, str] = {
    "activate": 'UV_CONSTRAINT="{path}"; export UV_CONSTRAINT',
    "activate.fish": 'set -gx UV_CONSTRAINT "{path}"',
    "activate.csh": 'setenv UV_CONSTRAINT "{path}"',
    "Activate.ps1": '$env:UV_CONSTRAINT = "{path}"',
    "activate.bat": 'set "UV_CONSTRAINT={path}"',
}
_DEACTIVATE_BASH = re.compile(r"^deactivate \(\) \{[ \t]*$", re.M)
_UNSET_BASH = "    unset UV_CONSTRAINT  # torchsmith guard"
_CONSTRAINT_LINE = re.compile(r"^([ \t]*constraint[ \t]*[=:])([^\r\n]*)$", re.M)


@dataclass(frozen=True)
class GuardStatus:
    prefix: str
    constraints_file: Optional[str]  # None: never guarded
    pins: Dict[str, str]  # name -> exact version
    pip_hook: bool
    uv_hooks: List[str]  # activate scripts that export UV_CONSTRAINT
    held: List[str] = field(default_factory=list)  # distributions pip and uv cannot remove
    bypassed: List[str] = field(default_factory=list)  # settings now switching the constraints off
    interrupted: Optional[str] = None  # "on" | "off": that switch was stopped part-way

    @property
    def on(self) -> bool:
        return self.constraints_file is not None and self.pip_hook and self.interrupted is None


def _pip_conf(prefix: str) -> str:
    return os.path.join(prefix, "pip.ini" if os.name == "nt" else "pip.conf")


def _scripts_dir(prefix: str) -> str:
    return os.path.join(prefix, "Scripts" if os.name == "nt" else "bin")


def write_guard_file(prefix: str, pins: Mapping[str, str], header: str) -> str:
    path = os.path.join(prefix, GUARD_FILE)
    lines = [f"# {line}" for line in header.splitlines()]
    lines.append("# Remove these pins with `torchsmith guard off`; see `torchsmith guard status`.")
    lines.extend(f"{name}=={version}" for name, version in sorted(pins.items()))
    from torchsmith.redact import redact

    write_atomic(path, redact("\n".join(lines) + "\n").encode("utf-8"))
    return path


def read_pins(path: str) -> Dict[str, str]:
    pins: Dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                text = line.split("#", 1)[0].strip()
                if "==" in text:
                    name, version = text.split("==", 1)
                    pins[name.strip()] = version.strip()
    except OSError:
        pass
    return pins


def _text(data: Optional[bytes]) -> str:
    return (data or b"").decode("utf-8", "surrogateescape")  # any bytes survive a round trip


def _pip_hook(path: str, guard: str) -> bool:
    return any(names_guard(m.group(2), guard) for m in _CONSTRAINT_LINE.finditer(_text(read_bytes(path))))


def guard_on(prefix: str) -> GuardStatus:
    finish_interrupted(prefix)
    if not os.path.exists(os.path.join(prefix, GUARD_FILE)):
        from torchsmith.errors import TorchsmithError

        raise TorchsmithError(f"{prefix} has no {GUARD_FILE}", code="no-guard",
                              hint="install with `torchsmith install`, which writes it")
    _journaled(prefix, "on", _switch_on)
    return guard_status(prefix)


def guard_off(prefix: str) -> GuardStatus:
    finish_interrupted(prefix)
    _journaled(prefix, "off", _switch_off)
    return guard_status(prefix)


def finish_interrupted(prefix: str) -> Optional[str]:
    """Finish a ``guard on``/``off`` that a kill stopped part-way (both are safe to run again),
    as a database replays its log; the switch finished, or None. The caller holds the lock."""
    _remove_strays(prefix)
    action = _journal_action(prefix)
    if action is None:
        return None
    if action == "on" and os.path.exists(os.path.join(prefix, GUARD_FILE)):
        _switch_on(prefix)
    else:
        _switch_off(prefix)
    journal.end(os.path.join(prefix, JOURNAL_FILE))
    return action


def _remove_strays(prefix: str) -> None:
    """Temporary files a kill left before their rename: never read, so simply gone."""
    import glob

    for pattern in ("*", os.path.join("bin", "*"), os.path.join("Scripts", "*"),
                    os.path.join("lib", "python*", "site-packages", "*.dist-info", "*"),
                    os.path.join("lib", "python*", "site-packages", "*.dist-info", "RECORD", "*"),
                    os.path.join("Lib", "site-packages", "*.dist-info", "*")):
        for path in glob.glob(os.path.join(glob.escape(prefix), pattern + ".torchsmith-tmp")):
            os.remove(path)


def _journal_action(prefix: str) -> Optional[str]:
    text = journal.read(os.path.join(prefix, JOURNAL_FILE))
    if text is None:
        return None
    text = text.strip()
    return text if text in ("on", "off") else "off"  # a torn journal: switch off, the safe end


def _journaled(prefix: str, action: str, work: Callable[[str], None]) -> None:
    journal.begin(os.path.join(prefix, JOURNAL_FILE), action)
    work(prefix)
    journal.end(os.path.join(prefix, JOURNAL_FILE))


def _switch_on(prefix: str) -> None:
    guard = os.path.join(prefix, GUARD_FILE)
    path = _pip_conf(prefix)
    if not _pip_hook(path, guard):  # a symlinked pip.conf is read, and replaced, never written through
        text = pip_conf_with(_text(read_bytes(path)), constraint_reference(guard))
        _write_saving(prefix, path, text.encode("utf-8", "surrogateescape"))
    for name, script in _activate_scripts(prefix):
        _set_hook(prefix, script, _ACTIVATE[name].format(path=constraint_reference(guard)),
                  "REM" if name.endswith(".bat") else "#", bash=name == "activate")
    guard_hold.hold(prefix, read_pins(guard))


def _switch_off(prefix: str) -> None:
    guard = os.path.join(prefix, GUARD_FILE)
    path = _pip_conf(prefix)
    if not restore(prefix, path) and os.path.isfile(path) and not os.path.islink(path):
        text = _text(read_bytes(path))  # edited since `guard on`: only the guard's part goes
        kept = pip_conf_without(text, guard)
        if kept != text:
            write_atomic(path, kept.encode("utf-8", "surrogateescape"))
    for _name, script in _activate_scripts(prefix):
        if not restore(prefix, script):
            _remove_hook(script)
    guard_hold.release(prefix)


def _read_text(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(1 << 20)
    except OSError:
        return None


def guard_status(prefix: str, environ: Optional[Mapping[str, str]] = None,
                 read: Callable[[str], Optional[str]] = _read_text) -> GuardStatus:
    """The guard of ``prefix``; with ``environ``, also what in it switches the constraints off."""
    guard = os.path.join(prefix, GUARD_FILE)
    exists = os.path.exists(guard)
    pip_hook = _pip_hook(_pip_conf(prefix), guard)
    hooks = []
    for _name, script in _activate_scripts(prefix):
        try:
            with open(script, encoding="utf-8") as handle:
                if _BEGIN in handle.read():
                    hooks.append(script)
        except OSError:
            continue
    bypassed = guard_hold.bypasses(prefix, guard, environ, read) if environ is not None and exists else []
    return GuardStatus(prefix, guard if exists else None, read_pins(guard) if exists else {}, pip_hook, hooks,
                       guard_hold.held(prefix), bypassed, _journal_action(prefix))


def _activate_scripts(prefix: str) -> Iterator[Tuple[str, str]]:
    """(name, path) of the environment's activate scripts that exist."""
    scripts = _scripts_dir(prefix)
    for name in _ACTIVATE:
        script = os.path.join(scripts, name)
        if os.path.exists(script):
            yield name, script


def _write_saving(prefix: str, path: str, data: bytes) -> None:
    save_original(prefix, path, data)
    write_atomic(path, data)


def _set_hook(prefix: str, script: str, line: str, comment: str, bash: bool) -> None:
    with open(script, encoding="utf-8", errors="surrogateescape", newline="") as handle:
        before = handle.read()
    text = _without_hook(before)
    newline = "\r\n" if "\r\n" in text else "\n"
    if bash:  # deactivate forgets the constraint again
        text = _DEACTIVATE_BASH.sub(lambda m: m.group(0) + newline + _UNSET_BASH, text, count=1)
    if not text.endswith(newline):
        text += newline
    text += f"{comment} {_BEGIN}{newline}{line}{newline}{comment} {_END}{newline}"
    if text != before:
        _write_saving(prefix, script, text.encode("utf-8", "surrogateescape"))


def _remove_hook(script: str) -> None:
    with open(script, encoding="utf-8", errors="surrogateescape", newline="") as handle:
        text = handle.read()
    kept = _without_hook(text)
    if kept != text:
        write_atomic(script, kept.encode("utf-8", "surrogateescape"))


def _without_hook(text: str) -> str:
    if _BEGIN not in text and _UNSET_BASH not in text:
        return text
    kept: List[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        if _BEGIN in line:
            inside = True
            continue
        if inside:
            if _END in line:
                inside = False
            continue
        if line.rstrip("\r\n") == _UNSET_BASH:
            continue
        kept.append(line)
    return "".join(kept)
