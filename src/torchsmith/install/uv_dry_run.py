"""What ``uv pip install --dry-run`` says it would change, read whole or not at all.

uv writes no machine-readable report, so this reads its own summary as uv 0.13.9 prints it
(recorded in tests/install/test_hash_checked.py): ``Would uninstall N packages`` and
``Would install N packages``, then one `` - name==version`` or `` + name==version`` line for
each package counted; or ``Would make no changes``. Output worded otherwise is unreadable, never
taken for "nothing would change": both the hash-checked install and ``guard check`` act on it.
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

from packaging.utils import canonicalize_name

__all__ = ["Changes", "read_dry_run", "strip_colour"]

Changes = Dict[str, Tuple[Optional[str], Optional[str]]]  # canonical name -> (removed, added) version
_LINE = re.compile(r"^ ([+-]) ([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)\s*$", re.M)
_COUNT = re.compile(r"^Would (install|uninstall) (\d+) packages?\s*$", re.M)
_NO_CHANGES = re.compile(r"^Would make no changes\s*$", re.M)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def strip_colour(text: str) -> str:
    """uv colours its output under FORCE_COLOR / CLICOLOR_FORCE."""
    return _ANSI.sub("", text)


def read_dry_run(text: str) -> Optional[Changes]:
    """The changes a dry run names; ``{}`` when it says it would make none; None when it cannot be
    read whole (a count without as many lines, a line of another shape, no summary at all)."""
    text = strip_colour(text)
    lines = _LINE.findall(text)
    counts: Dict[str, int] = {}
    for verb, number in _COUNT.findall(text):
        if verb in counts:
            return None
        counts[verb] = int(number)
    added = sum(1 for sign, _, _ in lines if sign == "+")
    if not counts:
        return {} if not lines and _NO_CHANGES.search(text) else None
    if counts.get("install", 0) != added or counts.get("uninstall", 0) != len(lines) - added:
        return None
    changes: Changes = {}
    for sign, name, version in lines:
        key = str(canonicalize_name(name))
        removed, new = changes.get(key, (None, None))
        changes[key] = (version, new) if sign == "-" else (removed, version)
    return changes
