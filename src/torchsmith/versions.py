"""Version strings made comparable: the small parsers the kb, planner and installer share.

There is one ordering of versions, PEP 440's as ``packaging.version.Version`` implements it:
:func:`version_tuple` is a ``Version``'s release numbers and :func:`sortable_version` the
``Version`` itself. ``packaging`` is imported on first use, so importing this module stays free.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, List, Optional, Tuple

if TYPE_CHECKING:
    from packaging.version import Version

__all__ = ["driver_tuple", "minor_version", "python_tag_key", "sortable_version", "version_tuple"]


# No release number has 19 digits: such a run is garbage, and int() of thousands of digits
# raises (Python's int-string limit).
_LONGEST_NUMBER = 18


@lru_cache(maxsize=4096)
def version_tuple(text: Optional[str]) -> Tuple[int, ...]:
    """``12.6`` -> (12, 6); ``2.6.0a0+nv24.08`` -> (2, 6, 0): the release numbers only.

    ``packaging.version.Version(text).release`` where ``text`` is a PEP 440 version, so this
    orders releases exactly as packaging does. Anything else (``12.6a.1``, a driver string with
    junk) gives its leading numbers: a part that is not all digits ends the tuple. Never raises.
    """
    from packaging.version import InvalidVersion, Version

    try:
        release = Version(text or "").release
    except (InvalidVersion, ValueError, TypeError):
        return _leading_numbers(text or "")
    if any(number >= 10**_LONGEST_NUMBER for number in release):
        return _leading_numbers(text or "")
    return release


def _leading_numbers(text: str) -> Tuple[int, ...]:
    """The dotted numbers ``text`` starts with, its local label (``+...``) dropped."""
    parts: List[int] = []
    for piece in text.split("+", 1)[0].split("."):
        digits = re.match(r"\d+", piece)
        if not digits or len(digits.group()) > _LONGEST_NUMBER:
            break
        parts.append(int(digits.group()))
        if digits.group() != piece:
            break
    return tuple(parts)


def driver_tuple(text: Optional[str]) -> Tuple[int, ...]:
    """``"535.104.05"`` -> (535, 104, 5); surrounding white space is ignored."""
    return version_tuple((text or "").strip())


def minor_version(version: str) -> str:
    """The ``major.minor`` series: ``12.6.3`` -> ``12.6``; ``2.5.1+cu124`` -> ``2.5``."""
    return ".".join(version.strip().split("+", 1)[0].split(".")[:2])


def python_tag_key(tag: str) -> Tuple[int, int, bool]:
    """Sorts the data's Python tags: ``3.9`` < ``3.13`` < ``3.13t`` (free-threaded)."""
    major, _, minor = tag.partition(".")
    return int(major), int(minor.rstrip("t")), tag.endswith("t")


def sortable_version(text: str) -> Version:
    """A PEP 440 version to sort by; one that does not parse sorts first, as ``0``."""
    from packaging.version import InvalidVersion, Version  # only where versions are sorted

    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")
