"""The compatibility rules, written once: which kernel of a build serves a GPU, which driver runs it.

Vocabulary: :class:`Arch` (``sm_86``, ``sm_90a``, ``sm_100f``, ``compute_90``), :class:`Variant`
(``cu126``, ``rocm6.3``, ``xpu``, ``cpu``) and :class:`DriverVersion` (``580.65.06``). The resolver,
the doctor, ``explain`` and the knowledge base ask :func:`kernel_for` and :func:`driver_support`;
nothing else decides. Pure: no I/O.

Rules and their sources:

- SASS ``sm_XY`` runs on compute capability X.Z with Z >= Y (binary compatibility within a major);
  arch-specific ``sm_XYa`` only on exactly X.Y; family-specific ``sm_XYf`` on the family's later
  members, X.Z with Z >= Y (``sm_100f``: 10.0 and 10.3; ``sm_120f``: 12.0 and 12.1; 11.0 is its own
  family). NVIDIA CUDA Programming Guide, "Compute Capability and Streaming Multiprocessor Versions"
  (https://docs.nvidia.com/cuda/cuda-programming-guide/01-introduction/cuda-platform.html) and the
  CUDA 12.9 blog "NVIDIA Blackwell and NVIDIA CUDA 12.9 Introduce Family-Specific Architecture
  Features" (https://developer.nvidia.com/blog/nvidia-blackwell-and-nvidia-cuda-12-9-introduce-family-specific-architecture-features/).
- PTX ``compute_XY`` is JIT-compiled by the driver for any GPU of capability >= X.Y, which needs a
  driver with full support for the build's CUDA (minor-version compatibility has no PTX JIT); PTX
  ``compute_XYa`` is not forward compatible (exactly X.Y) and ``compute_XYf`` only within its family.
- An integrated Jetson GPU (L4T) runs only SASS built for exactly its architecture; PTX JITs there
  like anywhere else.
- Windows CUDA 13.x: NVIDIA's release-note table of toolkit driver minimums lists "N/A" for Windows
  because the toolkit stopped bundling a Windows display driver (CUDA 13.0 release notes, "CUDA
  Driver", https://docs.nvidia.com/cuda/archive/13.0.0/cuda-toolkit-release-notes/index.html);
  driver branches are shared by Linux and Windows (a Windows R580 driver, 580.88, reports CUDA 13.0:
  https://github.com/JuliaGPU/CUDA.jl/issues/2831), so the Windows floor is the branch of the Linux
  floor (13.0: Linux 580.65.06 -> Windows R580, >= 580).
"""

from __future__ import annotations

import re
from typing import Iterable, NamedTuple, Optional, Tuple

__all__ = [
    "NO_JIT",
    "NO_KERNEL",
    "RUNS",
    "VARIANT_TOKEN",
    "Arch",
    "DriverSupport",
    "DriverVersion",
    "Kernel",
    "Variant",
    "driver_support",
    "full_support_floor",
    "gpu_verdict",
    "kernel_for",
    "parse_cc",
    "sm_arch",
    "variant_cuda",
]

_ARCH = re.compile(r"^(sm|compute)_(\d{2,3})([af]?)$")
# A wheel variant's token where a text names one (a local version, an index URL): cu121, rocm6.3, xpu, cpu.
VARIANT_TOKEN = r"(?:cu\d{2,3}|cpu|rocm\d+(?:\.\d+){0,2}|xpu)"


def parse_cc(text: object) -> Optional[Tuple[int, int]]:
    """A compute capability from ``8.6``, ``(8, 6)``, ``86`` or ``sm_86``; None when unreadable."""
    if isinstance(text, tuple) and len(text) >= 2:
        return int(text[0]), int(text[1])
    value = str(text or "").strip().lower()
    arch = Arch.parse(value)
    if arch is not None:
        return arch.cc
    match = re.match(r"^(\d+)\.(\d+)", value)
    if match:
        return int(match.group(1)), int(match.group(2))
    if re.match(r"^\d{2,3}$", value):
        return int(value[:-1]), int(value[-1])
    return None


def sm_arch(compute_capability: str) -> str:
    """The SASS architecture of a compute capability: ``8.6`` -> ``sm_86``, ``12.0`` -> ``sm_120``."""
    cc = parse_cc(compute_capability)
    if cc is None:  # a bare major ("9") reads as its .0
        major, _, minor = compute_capability.partition(".")
        return f"sm_{major}{minor or '0'}"
    return Arch(*cc).sass_name


class Arch(NamedTuple):
    """One compiled target: SASS (``sm_``) or PTX (``compute_``), with its ``a``/``f`` suffix."""

    major: int
    minor: int
    suffix: str = ""  # "" | "a" (arch-specific) | "f" (family-specific)
    ptx: bool = False

    @classmethod
    def parse(cls, text: str, *, ptx: bool = False) -> Optional[Arch]:
        """``sm_86``, ``sm_90a``, ``sm_100f``, ``compute_90``, ``compute_90a``; ``ptx`` marks an
        ``sm_`` name from a PTX list as PTX. None for anything else."""
        match = _ARCH.match(text.strip().lower())
        if not match:
            return None
        digits = match.group(2)
        return cls(int(digits[:-1]), int(digits[-1]), match.group(3), ptx or match.group(1) == "compute")

    @property
    def cc(self) -> Tuple[int, int]:
        return self.major, self.minor

    @property
    def name(self) -> str:
        return f"{'compute' if self.ptx else 'sm'}_{self.major}{self.minor}{self.suffix}"

    @property
    def sass_name(self) -> str:
        return f"sm_{self.major}{self.minor}{self.suffix}"

    def runs_on(self, cc: Tuple[int, int], *, integrated: bool = False) -> bool:
        """Whether this target serves a GPU of capability ``cc`` (see the module's rules)."""
        if self.suffix == "a":
            return cc == self.cc
        same_family = cc[0] == self.major and cc[1] >= self.minor
        if self.ptx:
            return same_family if self.suffix == "f" else cc >= self.cc
        if integrated:
            return cc == self.cc
        return same_family


class Kernel(NamedTuple):
    """The code of a build that serves one GPU."""

    how: str  # "sass" | "ptx"
    arch: Arch

    @property
    def name(self) -> str:
        return self.arch.name


def _parsed(names: Iterable[str], ptx: bool) -> Tuple[Arch, ...]:
    parsed = (Arch.parse(str(n), ptx=ptx) for n in names)
    return tuple(a for a in parsed if a is not None)


def kernel_for(cc: Tuple[int, int], sass: Iterable[str], ptx: Iterable[str] = (), *,
               integrated: bool = False) -> Optional[Kernel]:
    """The kernel of a build that serves a GPU of capability ``cc``, or None: exact SASS first, then
    the closest compatible SASS, then the newest PTX the GPU can JIT. ``sass`` may mix in
    ``compute_`` names (``torch.cuda.get_arch_list()`` does); ``ptx`` names are PTX whatever
    their prefix."""
    archs = _parsed(sass, False) + _parsed(ptx, True)
    fitting = [a for a in archs if a.runs_on(cc, integrated=integrated)]
    binaries = [a for a in fitting if not a.ptx]
    if binaries:
        # Exact arch, then the nearest minor, then a plain target over a specific one.
        best = max(binaries, key=lambda a: (a.cc == cc, a.minor, a.suffix == ""))
        return Kernel("sass", best)
    if fitting:
        return Kernel("ptx", max(fitting, key=lambda a: (a.cc, a.suffix == "")))
    return None


class Variant(NamedTuple):
    """A wheel variant: ``cu126`` (CUDA 12.6), ``rocm6.3``, ``xpu``, ``cpu``."""

    name: str
    kind: str  # "cuda" | "rocm" | "xpu" | "cpu"
    version: str = ""  # the CUDA or ROCm version; "" for xpu and cpu

    @classmethod
    def parse(cls, text: Optional[str]) -> Optional[Variant]:
        value = (text or "").strip().lower()
        match = re.match(r"^cu(\d{2,3})$", value)
        if match:
            digits = match.group(1)
            return cls(value, "cuda", f"{int(digits[:-1])}.{digits[-1]}")
        match = re.match(r"^rocm(\d+(?:\.\d+)+)$", value)
        if match:
            return cls(value, "rocm", match.group(1))
        if value in ("xpu", "cpu"):
            return cls(value, value)
        return None

    @property
    def cuda(self) -> Optional[str]:
        return self.version if self.kind == "cuda" else None

    @property
    def rocm(self) -> Optional[str]:
        return self.version if self.kind == "rocm" else None

    @property
    def cuda_tuple(self) -> Optional[Tuple[int, int]]:
        return parse_cc(self.version) if self.kind == "cuda" else None


def variant_cuda(name: Optional[str]) -> Optional[str]:
    """``cu124`` -> ``12.4``; None for a variant that is not CUDA."""
    variant = Variant.parse(name)
    return variant.cuda if variant else None


class DriverVersion(NamedTuple):
    """An NVIDIA driver version (``580.65.06``); :meth:`at_least` compares numerically."""

    parts: Tuple[int, ...]
    text: str = ""

    @classmethod
    def parse(cls, text: Optional[str]) -> Optional[DriverVersion]:
        match = re.match(r"^\s*(\d+(?:\.\d+)*)", text or "")
        if not match:
            return None
        return cls(tuple(int(p) for p in match.group(1).split(".")), match.group(1))

    @property
    def branch(self) -> int:
        """The driver branch: R580 for 580.65.06 and 581.15 alike (branches since R500 step by 5)."""
        return self.parts[0] // 5 * 5 if self.parts[0] >= 500 else self.parts[0]

    def at_least(self, other: Optional[str]) -> bool:
        floor = DriverVersion.parse(other)
        return floor is not None and self.parts >= floor.parts

    def __str__(self) -> str:
        return self.text or ".".join(str(p) for p in self.parts)


class DriverSupport(NamedTuple):
    """How a driver runs a build's CUDA: ``mode`` is full | minor-compat | too-old | unknown."""

    mode: str
    full: str = ""  # the full-support floor for this system
    floor: str = ""  # the minor-version-compatibility floor


def full_support_floor(toolkit: object, system: str) -> str:
    """The driver that fully supports a toolkit on ``system`` (linux | windows); "" if unknown.

    Windows rows of CUDA 13+ have no number in NVIDIA's table: the Linux floor's branch stands in.
    """
    full = str(getattr(toolkit, f"min_driver_{system}", None) or "")
    if full or system != "windows":
        return full
    linux = DriverVersion.parse(getattr(toolkit, "min_driver_linux", None))
    cuda = parse_cc(getattr(toolkit, "version", None))
    if linux is None or cuda is None or cuda[0] < 13:
        return ""
    return str(linux.parts[0])


def driver_support(toolkit: object, cuda: str, system: str, driver: Optional[str],
                   driver_cuda: Optional[str]) -> DriverSupport:
    """How a driver (its version, or else the highest CUDA it reports) runs a build for ``cuda``.

    ``toolkit`` is the data's row for that CUDA (or None): ``min_driver_<system>`` and
    ``minor_compat_min_driver_<system>``."""
    full = full_support_floor(toolkit, system) if toolkit is not None else ""
    floor = str(getattr(toolkit, f"minor_compat_min_driver_{system}", None) or "")
    have = DriverVersion.parse(driver)
    if have is not None and (full or floor):
        if full and have.at_least(full):
            return DriverSupport("full", full, floor)
        if floor and have.at_least(floor):
            return DriverSupport("minor-compat", full, floor)
        return DriverSupport("too-old", full, floor)
    have_cuda, want = parse_cc(driver_cuda), parse_cc(cuda)
    if have_cuda is not None and want is not None:
        if have_cuda >= want:
            return DriverSupport("full", full, floor)
        mode = "minor-compat" if have_cuda[0] == want[0] else "too-old"
        return DriverSupport(mode, full, floor)
    return DriverSupport("unknown", full, floor)


RUNS, NO_KERNEL, NO_JIT = "runs", "no-kernel", "no-jit"


def gpu_verdict(kernel: Optional[Kernel], driver_mode: str) -> str:
    """Does a build run on one GPU: ``runs``, ``no-kernel`` (nothing in it serves the GPU) or
    ``no-jit`` (only PTX serves it, and a driver in minor-version compatibility cannot JIT it)."""
    if kernel is None:
        return NO_KERNEL
    if kernel.how == "ptx" and driver_mode == "minor-compat":
        return NO_JIT
    return RUNS
