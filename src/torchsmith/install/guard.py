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

``guard off`` removes the pip and activate hooks and keeps the constraints file; ``guard on``
puts them back.
"""

from __future__ import annotations

import configparser
import os
import re
from dataclasses import dataclass
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

__all__ = ["GUARD_FILE", "GuardStatus", "guard_off", "guard_on", "guard_status", "write_guard_file"]

GUARD_FILE = "torchsmith-guard.txt"
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


@dataclass(frozen=True)
class GuardStatus:
    prefix: str
    constraints_file: Optional[str]  # None: never guarded
    pins: Dict[str, str]  # name -> exact version
    pip_hook: bool
    uv_hooks: List[str]  # activate scripts that export UV_CONSTRAINT

    @property
    def on(self) -> bool:
        return self.constraints_file is not None and self.pip_hook


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

    with open(path, "w", encoding="utf-8") as handle:
        handle.write(redact("\n".join(lines) + "\n"))
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


def _read_config(path: str) -> configparser.ConfigParser:
    config = configparser.ConfigParser(interpolation=None)
    config.optionxform = str  # type: ignore[assignment,method-assign]
    if os.path.exists(path):
        config.read(path, encoding="utf-8")
    return config


def _write_config(path: str, config: configparser.ConfigParser) -> None:
    if not config.sections():
        if os.path.exists(path):
            os.remove(path)
        return
    with open(path, "w", encoding="utf-8") as handle:
        config.write(handle)


def guard_on(prefix: str) -> GuardStatus:
    guard = os.path.join(prefix, GUARD_FILE)
    if not os.path.exists(guard):
        from torchsmith.errors import TorchsmithError

        raise TorchsmithError(f"{prefix} has no {GUARD_FILE}", code="no-guard",
                              hint="install with `torchsmith install`, which writes it")
    path = _pip_conf(prefix)
    config = _read_config(path)
    if not config.has_section("install"):
        config.add_section("install")
    values = config.get("install", "constraint", fallback="").split()
    if guard not in values:
        config.set("install", "constraint", " ".join([*values, guard]))
    _write_config(path, config)
    for name, script in _activate_scripts(prefix):
        _set_hook(script, _ACTIVATE[name].format(path=guard), "REM" if name.endswith(".bat") else "#",
                  bash=name == "activate")
    return guard_status(prefix)


def guard_off(prefix: str) -> GuardStatus:
    guard = os.path.join(prefix, GUARD_FILE)
    path = _pip_conf(prefix)
    if os.path.exists(path):
        config = _read_config(path)
        if config.has_option("install", "constraint"):
            values = [v for v in config.get("install", "constraint").split() if v != guard]
            if values:
                config.set("install", "constraint", " ".join(values))
            else:
                config.remove_option("install", "constraint")
                if not config.items("install", raw=True) or not config.options("install"):
                    config.remove_section("install")
            _write_config(path, config)
    for _name, script in _activate_scripts(prefix):
        _remove_hook(script)
    return guard_status(prefix)


def guard_status(prefix: str) -> GuardStatus:
    guard = os.path.join(prefix, GUARD_FILE)
    exists = os.path.exists(guard)
    config = _read_config(_pip_conf(prefix))
    pip_hook = guard in config.get("install", "constraint", fallback="").split()
    hooks = []
    for _name, script in _activate_scripts(prefix):
        try:
            with open(script, encoding="utf-8") as handle:
                if _BEGIN in handle.read():
                    hooks.append(script)
        except OSError:
            continue
    return GuardStatus(prefix, guard if exists else None, read_pins(guard) if exists else {}, pip_hook, hooks)


def _activate_scripts(prefix: str) -> Iterator[Tuple[str, str]]:
    """(name, path) of the environment's activate scripts that exist."""
    scripts = _scripts_dir(prefix)
    for name in _ACTIVATE:
        script = os.path.join(scripts, name)
        if os.path.exists(script):
            yield name, script


def _set_hook(script: str, line: str, comment: str, bash: bool) -> None:
    _remove_hook(script)
    with open(script, encoding="utf-8", newline="") as handle:
        text = handle.read()
    newline = "\r\n" if "\r\n" in text else "\n"
    if bash:  # deactivate forgets the constraint again
        text = _DEACTIVATE_BASH.sub(lambda m: m.group(0) + newline + _UNSET_BASH, text, count=1)
    if not text.endswith(newline):
        text += newline
    text += f"{comment} {_BEGIN}{newline}{line}{newline}{comment} {_END}{newline}"
    with open(script, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def _remove_hook(script: str) -> None:
    with open(script, encoding="utf-8", newline="") as handle:
        text = handle.read()
    if _BEGIN not in text and _UNSET_BASH not in text:
        return
    lines = text.splitlines(keepends=True)
    kept: List[str] = []
    inside = False
    for line in lines:
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
    with open(script, "w", encoding="utf-8", newline="") as handle:
        handle.write("".join(kept))
