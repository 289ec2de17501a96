"""Version strings as comparable tuples: the small parsers the kb, planner and installer share.

Imports only the standard library, and nothing on the ``probe`` path imports it. PEP 440
ordering (pre- and post-releases) is :func:`torchsmith.kb.loader.version_key`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import List, Optional, Tuple

__all__ = ["driver_tuple", "minor_version", "version_tuple"]


@lru_cache(maxsize=4096)
def version_tuple(text: Optional[str]) -> Tuple[int, ...]:
    """``12.6`` -> (12, 6); ``2.6.0a0`` -> (2, 6, 0); a part without leading digits ends the
    tuple (never raises)."""
    parts: List[int] = []
    for piece in (text or "").split("."):
        digits = re.match(r"\d+", piece)
        if not digits:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


def driver_tuple(text: Optional[str]) -> Tuple[int, ...]:
    """``"535.104.05"`` -> (535, 104, 5); surrounding white space is ignored."""
    return version_tuple((text or "").strip())


def minor_version(version: str) -> str:
    """The ``major.minor`` series: ``12.6.3`` -> ``12.6``; ``2.5.1+cu124`` -> ``2.5``."""
    return ".".join(version.strip().split("+", 1)[0].split(".")[:2])
