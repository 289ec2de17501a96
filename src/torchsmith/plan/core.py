"""The resolver's shared vocabulary: the job being resolved, the verdict on one build, the
constraints that narrow the walk, and the stable rejection codes (documented in docs/plan.md).

Everything here is a plain record; the modules that decide (check, walk, the per-accelerator
planners) import it and nothing here imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, NamedTuple, Optional, Tuple

from torchsmith.machine import Machine
from torchsmith.plan.hostview import HostView
from torchsmith.plan.index import Index, Release
from torchsmith.plan.model import Request
from torchsmith.plan.request import Wanted

if TYPE_CHECKING:
    from torchsmith.kb import TorchRelease, VariantBuild

__all__ = [
    "ARCH",
    "CONFLICT",
    "DEFAULT_REQUIREMENTS",
    "DRIVER",
    "NO_GPU_BUILD",
    "PLATFORM",
    "PYTHON",
    "TORCH_FAMILY",
    "Check",
    "Constraint",
    "Job",
    "is_default",
]

DEFAULT_REQUIREMENTS = Request().requirements
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")

# Stable rejection codes (documented in docs/plan.md).
ARCH = "arch-not-compiled"
DRIVER = "driver-too-old"
PYTHON = "no-wheel-for-python"
PLATFORM = "no-wheel-for-platform"
CONFLICT = "conflicts-with-requirement"
NO_GPU_BUILD = "no-gpu-support"


class Job(NamedTuple):
    """One resolution: the machine, its reduced view, the indexed data and the request."""

    machine: Machine
    view: HostView
    idx: Index
    wanted: Dict[str, Wanted]
    request: Request


class Check(NamedTuple):
    """The verdict on one torch release + variant for this host."""

    release: Release
    variant: VariantBuild
    code: str = ""  # "" = runs here
    reason: str = ""
    driver_mode: str = ""  # "full" | "minor-compat" | "unknown" | "" (no CUDA)
    gpu_lines: Tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.code

    @property
    def label(self) -> str:
        return f"torch {self.release.text} {self.variant.name}"


# Why a release (and, when given, one of its builds) is refused; None when it is allowed.
ConstraintCheck = Callable[["TorchRelease", Optional["VariantBuild"]], Optional[str]]


class Constraint(NamedTuple):
    """Something that narrows the torch releases/variants; ``check`` returns why not, or None."""

    label: str
    check: ConstraintCheck
    # The user's own pin on the torch family: releases it excludes are not "better-looking".
    user_pin: bool = False
    code: str = CONFLICT  # the blocker code when this constraint blocks


def is_default(request: Request) -> bool:
    """The request is the default stack, not one the user spelled out (the user's own pip/uv
    constraints narrow it, they do not make torchaudio required)."""
    return tuple(request.requirements) == DEFAULT_REQUIREMENTS and not request.explicit
