"""The vocabulary of a plan, shared by the resolver, the renderers, install and doctor.

A :class:`Request` is what the user asked for; a :class:`Plan` is the decision: exact pins,
where each comes from, why, and what was turned down. Plans are values: "no solution" is a
Plan with ``status == "no-solution"`` and its rejections, not an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

__all__ = ["Blocker", "Door", "PackagePin", "Plan", "Rejection", "Request"]


@dataclass(frozen=True)
class Request:
    """What the user asked for."""

    requirements: Tuple[str, ...] = ("torch", "torchvision", "torchaudio")
    installer: str = "pip"  # pip | uv | conda | pixi
    # Keep what is installed in the target environment (``plan xformers`` next to a torch).
    installed: Tuple[Tuple[str, str], ...] = ()  # (name, version incl. local, e.g. "2.5.1+cu124")
    allow_prerelease: bool = False
    # A mirror of the PyTorch wheel index: replaces the base of every PyTorch index URL from the
    # data (https://download.pytorch.org/whl/cu126 -> <base>/cu126). From --torch-index or
    # TORCHSMITH_TORCH_INDEX; the tests point it at their local index.
    torch_index_base: Optional[str] = None
    # The GPUs sit on different nodes, each with its own driver (fleet's shared environment):
    # the driver given bounds the CUDA version only, not which GPUs it can drive.
    gpus_on_separate_nodes: bool = False
    # The user listed the requirements (``plan torch torchvision torchaudio``): nothing asked for is
    # ever dropped. Only the implied default stack leaves torchaudio out where none pairs.
    explicit: bool = False
    # Facts not given for a described machine, and what was assumed instead (said in the plan).
    assumptions: Tuple[str, ...] = ()


@dataclass(frozen=True)
class PackagePin:
    """One package of the stack, pinned exactly, with where it must come from."""

    name: str  # canonical name: torch, torchvision, mmcv, torch-scatter, xformers
    version: str  # public version: "2.5.1"
    variant: Optional[str] = None  # "cu124", "cpu", "rocm6.2", "jetson-jp51"; None for plain PyPI
    # The index this package must come from; None = the user's configured default index.
    index_url: Optional[str] = None
    # A direct wheel URL, for packages published as files (NVIDIA's Jetson wheels).
    wheel_url: Optional[str] = None
    # The file name to save wheel_url under when the URL does not end in one (NVIDIA's box.com
    # links): installed as a download, then ``pip install ./FILE``.
    wheel_filename: Optional[str] = None
    # Find-links page (mmcv, torch-geometric extensions publish per-torch/CUDA pages).
    find_links: Optional[str] = None
    local_version: Optional[str] = None  # "+cu124" as it appears in the installed version
    extras: Tuple[str, ...] = ()  # ("and-cuda",) for tensorflow[and-cuda], ("cuda12",) for jax

    @property
    def requirement(self) -> str:
        """A pip requirement line pinning this package (``torch==2.5.1+cu124``)."""
        name = f"{self.name}[{','.join(self.extras)}]" if self.extras else self.name
        if self.wheel_url:
            return f"{name} @ {self.wheel_url}"
        if not self.version:  # an index or find-links page that serves one build: name only
            return name
        return f"{name}=={self.version}{self.local_version or ''}"


@dataclass(frozen=True)
class Rejection:
    """A better-looking alternative and why it does not work on this host."""

    candidate: str  # "torch 2.9.1 cu128"
    reason: str  # one plain line with found-vs-needed facts
    code: str = ""  # stable kebab-case reason: driver-too-old, arch-not-compiled, no-wheel-for-python


@dataclass(frozen=True)
class Blocker:
    """The one constraint that leaves no working stack (``Plan.blocker`` of a no-solution)."""

    code: str  # stable: no-wheel-for-python, arch-not-compiled, driver-too-old, glibc-too-old, ...
    constraint: str  # what the user can change: "Python 3.12", "torch==1.13.1", "mmcv<2.2"
    detail: str  # one plain line: found vs needed, with a source


@dataclass(frozen=True)
class Door:
    """A way out of a dead end: what to change, and the exact command or requirement for it."""

    kind: str  # release | python | variant | driver | build-from-source | cpu | requirement | flag
    summary: str  # "torch 2.0.1 is the nearest release with a wheel for Python 3.11"
    change: str  # "torch==1.13.1 -> torch==2.0.1", "Python 3.12 -> 3.10"
    command: str  # "torchsmith plan 'torch==2.0.1'"


@dataclass(frozen=True)
class Plan:
    status: str  # "ok" | "no-solution"
    packages: Tuple[PackagePin, ...] = ()
    platform: str = ""  # "linux-x86_64"
    python: str = ""  # "3.11"
    accelerator: str = "cpu"  # "cuda", "rocm", "mps", "xpu", "cpu", "jetson"
    variant: Optional[str] = None  # the chosen torch variant: "cu126"
    reasons: Tuple[str, ...] = ()  # the chosen path, one plain line each, with sources
    rejected: Tuple[Rejection, ...] = ()
    warnings: Tuple[str, ...] = ()
    system_prerequisites: Tuple[str, ...] = ()  # "sudo apt-get install libopenblas-dev"
    environment: Tuple[Tuple[str, str], ...] = ()  # ("HSA_OVERRIDE_GFX_VERSION", "10.3.0")
    conda: Dict[str, Any] = field(default_factory=dict)  # conda-forge specs for conda/pixi
    kb_version: str = ""
    # Data rows the plan stands on that no primary source confirms: one line each, said to people.
    uncertain: Tuple[str, ...] = ()
    blocker: Optional[Blocker] = None  # set on every no-solution: the constraint that blocks
    alternatives: Tuple[Door, ...] = ()  # the nearest ways out, each with its command
    assumptions: Tuple[str, ...] = ()  # facts not given for a described machine, and what was assumed

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def package(self, name: str) -> Optional[PackagePin]:
        return next((p for p in self.packages if p.name == name), None)
