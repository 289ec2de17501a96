"""Version strings made comparable: the small parsers the kb, planner and installer share.

Imports only the standard library, and nothing on the ``probe`` path imports it. PEP 440
ordering (pre- and post-releases) is :func:`torchsmith.kb.loader.version_key`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, List, Optional, Tuple

if TYPE_CHECKING:
    from packaging.version import Version

__all__ = ["driver_tuple", "minor_version", "python_tag_key", "sortable_version", "version_tuple"]


@lru_cache(maxsize=4096)
def version_tuple(text: Optional[str]) -> Tuple[int, ...]:
    """``12.6`` -> (12, 6); ``2.6.0a0+nv24.08`` -> (2, 6, 0): the release numbers only.

    A local label (``+...``) is dropped and a part that is not all digits ends the tuple, so
    pre-release and NVIDIA build suffixes never read as more release numbers. Never raises.
    """
    parts: List[int] = []
    for piece in (text or "").split("+", 1)[0].split("."):
        digits = re.match(r"\d+", piece)
        # No release number has 19 digits: such a run is garbage, and int() of thousands of
        # digits raises (Python's int-string limit).
        if not digits or len(digits.group()) > 18:
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
