"""What an install holds on to: the dependency closure it locks and the packages it guards.

Works from the target's installed metadata (name -> {"version", "requires"}), without
importing packaging's marker machinery (start-up time is torchsmith's overhead).
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Set, Tuple

from packaging.utils import canonicalize_name

__all__ = ["TORCH_FAMILY", "closure", "guarded_names", "requirement_name"]

TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
Installed = Dict[str, Dict[str, Any]]  # canonical name -> {"version", "requires"}

_DEP = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?([^;]*?)\)?\s*(?:;(.*))?$")
_CUDA_BOUND = re.compile(r"^(nvidia-.+|triton|pytorch-triton(-.+)?|torchtriton)$")


def requirement_name(line: str) -> str:
    """The canonical name of a requirement line (``torch==2.6.0+cu126 --hash ...``), or ""."""
    head = line.split(";", 1)[0].split("@", 1)[0].split("--hash", 1)[0]
    for sep in ("===", "==", ">=", "<=", "~=", "!=", "<", ">", "["):
        head = head.split(sep, 1)[0]
    return canonicalize_name(head.strip()) if head.strip() else ""


def _dependency(text: str) -> Optional[Tuple[str, str, str]]:
    """(canonical name, specifier text, marker text) of a Requires-Dist line."""
    match = _DEP.match(text)
    if not match:
        return None
    return canonicalize_name(match.group(1)), (match.group(3) or "").strip(), (match.group(4) or "").strip()


def closure(roots: Set[str], info: Installed) -> Set[str]:
    """The installed dependency closure of ``roots``. Markers other than extras are not
    evaluated: a dependency for another platform is simply not installed, so not in ``info``."""
    seen: Set[str] = set()
    todo = [r for r in roots if r in info]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in info[name].get("requires") or ():
            dep = _dependency(str(text))
            if dep is None or "extra" in dep[2]:
                continue
            if dep[0] in info and dep[0] not in seen:
                todo.append(dep[0])
    return seen


def guarded_names(info: Installed, pinned: Set[str], requested: Set[str]) -> Set[str]:
    """What the guard pins: the packages asked for from the PyTorch index (the torch family),
    the CUDA-bound packages that came with them (nvidia-*, triton), and the packages tied to
    torch. Generic dependencies (filelock, sympy, jinja2 ...) stay free to upgrade."""
    held = {n for n in pinned if n in requested or n in TORCH_FAMILY or _CUDA_BOUND.match(n)}
    return held | _tied(info, held)


def _tied(info: Installed, pinned: Set[str]) -> Set[str]:
    """Installed packages that require a torch-family package exactly or below a bound (mmcv,
    xformers): they break when torch moves, so the guard holds them too."""
    tied: Set[str] = set()
    for name, value in info.items():
        for text in value.get("requires") or ():
            dep = _dependency(str(text))
            if dep is None or dep[2] or dep[0] not in TORCH_FAMILY:
                continue
            if re.search(r"(===?|<=?|~=)", dep[1]):
                tied.add(name)
    return tied - pinned
