"""The state of the system services a text shows, as ``systemctl status`` prints them. Pure.

systemctl status prints a unit as "● UNIT - DESCRIPTION", then its "Loaded:" (and "Drop-In:")
lines and "Active: STATE (SUBSTATE) since ..." (systemd src/systemctl/systemctl-show.c,
print_status_info; systemd/systemd@ade491c527e929eebe583b48ce9ef1627f25bf8e).
"""

from __future__ import annotations

import re
from typing import Dict

__all__ = ["services"]

_MAX_UNITS = 20
# The unit's header line (at a line's start, after systemctl's state dot), up to four
# "Field: value" lines, then its Active: line.
_STATUS = re.compile(
    r"^[ \t]{0,8}(?:\S{1,2} )?(?P<unit>[\w@:.\\-]{1,200}\.service) - [^\n]{0,300}\n"
    r"(?:[ \t]{0,20}[A-Z][\w-]{0,20}:[^\n]{0,600}\n){0,4}?"
    r"[ \t]{0,20}Active: (?P<state>[a-z-]{1,20})(?: \((?P<sub>[^)\n]{1,80})\))?",
    re.MULTILINE,
)


def services(text: str) -> Dict[str, str]:
    """unit -> state ("failed (Result: exit-code)", "active (running)") of each unit shown."""
    if "Active: " not in text or ".service - " not in text:
        return {}
    found: Dict[str, str] = {}
    for match in _STATUS.finditer(text):
        sub = match.group("sub")
        found.setdefault(match.group("unit"), match.group("state") + (f" ({sub})" if sub else ""))
        if len(found) >= _MAX_UNITS:
            break
    return found
