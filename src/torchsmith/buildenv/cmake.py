"""The cmake range a PyTorch checkout accepts: its own floor, and the releases that break it.

The floor is the checkout's ``pyproject.toml`` build requirement (else its top-level
``cmake_minimum_required``, else the sourced default). CMake 4.0 removed compatibility with
``cmake_minimum_required(VERSION <3.5)``, which older releases' third-party CMakeLists still
declare, so the checkout's ``third_party`` is read to see whether 4.x is a ceiling.
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Tuple

from torchsmith.host import Host
from torchsmith.versions import version_tuple

__all__ = ["check_cmake_range", "cmake_floor", "old_third_party"]

_MIN_REQUIRED = re.compile(r"cmake_minimum_required\s*\(\s*VERSION\s+(\d+(?:\.\d+)*)", re.IGNORECASE)
_PYPROJECT_CMAKE = re.compile(r"""["']cmake\s*>=\s*(\d+(?:\.\d+)*)""")


def cmake_floor(host: Host, source: str, default: Tuple[str, str]) -> Tuple[str, str]:
    """(minimum cmake, where that came from) for the checkout at ``source``."""
    pyproject = host.read_text(os.path.join(source, "pyproject.toml")) or ""
    match = _PYPROJECT_CMAKE.search(pyproject)
    if match:
        return match.group(1), f"{source}/pyproject.toml [build-system] requires"
    top = host.read_text(os.path.join(source, "CMakeLists.txt")) or ""
    match = _MIN_REQUIRED.search(top)
    if match:
        return match.group(1), f"{source}/CMakeLists.txt cmake_minimum_required"
    return default


def old_third_party(host: Host, source: str, below: str) -> List[str]:
    """``third_party/X/...CMakeLists.txt`` files that declare a cmake minimum older than ``below``."""
    root = os.path.join(source, "third_party")
    found = []
    for name in sorted(host.list_dir(root) or ()):
        for rel in ("CMakeLists.txt", os.path.join("cmake", "CMakeLists.txt")):
            path = os.path.join(root, name, rel)
            match = _MIN_REQUIRED.search(host.read_text(path) or "")
            if match and version_tuple(match.group(1)) < version_tuple(below):
                found.append(f"third_party/{name}/{rel} ({match.group(1)})")
                break
    return found


def check_cmake_range(host: Host, found: str, source: str, data: Dict[str, Any],
                      ninja: bool) -> List[Tuple[str, str, str, Optional[str]]]:
    """Findings (code, severity, message, fix) for a cmake newer than the checkout accepts.

    Also returns, as code ``export``, the variables the script should set.
    """
    out: List[Tuple[str, str, str, Optional[str]]] = []
    have = version_tuple(found)
    env = host.environ()
    for rule in data["cmake_breakages"]:
        if have < version_tuple(rule["from"]):
            continue
        cite = data["sources"][rule["source"]]
        if "third_party_below" in rule:
            below = rule["third_party_below"]
            old = old_third_party(host, source, below)
            if old and not env.get("CMAKE_POLICY_VERSION_MINIMUM"):
                out.append(("cmake-too-new", "error",
                            f"cmake {found} refuses cmake_minimum_required(VERSION <{below}), which "
                            f"this checkout still has in {', '.join(old[:3])}"
                            + (f" and {len(old) - 3} more" if len(old) > 3 else "") + f" ({cite})",
                            rule["fix"]))
                out.append(("export", "CMAKE_POLICY_VERSION_MINIMUM", below, None))
            elif not old and host.list_dir(os.path.join(source, "third_party")) is None:
                out.append(("cmake-range-unchecked", "warning",
                            f"cmake {found}: releases whose third-party code declares cmake < {below} "
                            f"fail to configure with it, and no checkout is at {source} to check "
                            f"({cite})", "pass --source PYTORCH_CHECKOUT, or " + rule["fix"]))
        elif rule.get("generator") == "ninja" and ninja:
            out.append(("cmake-ninja", "warning",
                        f"cmake {found} with Ninja: builds broke with cmake {rule['from']}+ and Ninja "
                        f"({cite})", rule["fix"]))
    return out
