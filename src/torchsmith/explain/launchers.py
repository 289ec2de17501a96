"""Windows console-script launchers (distlib's simple_launcher, which pip uses): each names the
interpreter that installed it. Pure: no I/O."""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from torchsmith.explain.extract.model import Extracted
from torchsmith.kb import KnowledgeBase

__all__ = ["launcher_env_moved"]

_SEPARATORS = re.compile(r"[\\/]+")
# pip install --user puts launchers in %APPDATA%\Python\PythonXY\Scripts, for a Python elsewhere.
_USER_SITE = re.compile(r"[\\/]AppData[\\/]Roaming[\\/]Python[\\/]", re.IGNORECASE)


def _environment_folder(path: str) -> Optional[str]:
    """The environment a Windows executable belongs to: its folder, less a trailing Scripts."""
    parts = [p for p in _SEPARATORS.split(path.strip()) if p][:-1]
    if parts and parts[-1].lower() == "scripts":
        parts = parts[:-1]
    return "\\".join(parts) if len(parts) >= 2 else None


def launcher_env_moved(extracted: Extracted, facts: Mapping[str, Any],
                       kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The launcher sits in ``<env>\\Scripts`` and names the interpreter of an environment of the
    same folder name at another place: that environment was moved or copied after the launcher
    was made. Another name (a user-site Scripts folder, a removed Python) proves no move."""
    interpreter, launcher = str(facts.get("interpreter", "")), str(facts.get("launcher", ""))
    if _USER_SITE.search(launcher) or not re.search(r"[\\/]scripts[\\/][^\\/]+$", launcher, re.IGNORECASE):
        return None
    old, new = _environment_folder(interpreter), _environment_folder(launcher)
    if not old or not new or old.lower() == new.lower():
        return None
    if old.rsplit("\\", 1)[-1].lower() != new.rsplit("\\", 1)[-1].lower():
        return None
    return f"the launcher's own environment is {new}, the interpreter it names is in {old}"
