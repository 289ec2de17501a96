"""A torch/CUDA build encoded in a local version, file name or URL path, read as data.

``+pt28cu128`` -> torch 2.8 + CUDA 12.8; ``cu12torch2.8cxx11abiTRUE`` -> torch 2.8 + CUDA 12
(C++11 ABI); ``+cu121`` -> CUDA 12.1; ``torch2.4-cu121``; ``rocm6.2``; ``cpu``. Packed torch
digits (NATTEN's ``+torch250cu118``, PyG's ``pt210``) are read against the torch releases the
data knows (:class:`TorchReleases`): never guessed when two releases, or none, fit them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Dict, FrozenSet, Optional, Sequence, Tuple

from torchsmith.records import dataclass

if TYPE_CHECKING:
    from torchsmith.kb.knowledge import KnowledgeBase

__all__ = ["TorchBuild", "TorchReleases", "packed_torch", "torch_build", "torch_releases"]


@dataclass(frozen=True)
class TorchBuild:
    """The torch and accelerator a wheel was built for, as its label encodes them."""

    torch: str = ""  # "2.8" ("" when the label names no torch)
    cuda: str = ""  # "12.8", or "12" when only the major is named (flash-attn's cu12)
    rocm: str = ""
    cpu: bool = False
    cxx11abi: Optional[bool] = None  # flash-attn's cxx11abiTRUE/FALSE: the C++ ABI torch must have
    unread: str = ""  # packed digits naming no torch, or two: "torch210 (torch 2.10 or 2.1.0)"

    def fits(self, torch_version: str, variant_kind: str, cuda: Optional[str], rocm: Optional[str]) -> bool:
        """Whether a torch release (public version) of that build can load this wheel."""
        if self.unread:
            return False  # which torch it needs is not known: never paired by a guess
        if self.torch and not _same_series(self.torch, torch_version):
            return False
        if self.cuda:
            if variant_kind != "cuda" or not cuda:
                return False
            return cuda == self.cuda or ("." not in self.cuda and cuda.split(".")[0] == self.cuda)
        if self.rocm:
            return variant_kind == "rocm" and bool(rocm) and (rocm or "").startswith(self.rocm)
        if self.cpu:
            return variant_kind == "cpu"
        return True

    @property
    def label(self) -> str:
        accel = (f"CUDA {self.cuda}" if self.cuda else f"ROCm {self.rocm}" if self.rocm
                 else "CPU" if self.cpu else "")
        torch = (f"torch {self.torch}" if self.torch else f"an unread torch ({self.unread})" if self.unread
                 else "")
        return " + ".join(p for p in (torch, accel) if p)


class TorchReleases:
    """The torch releases the data knows, each with its builds' names (``cu121``, ``rocm6.2``,
    ``cpu``): what packed digits in a label are read against. Hashed by identity (one per KB)."""

    __slots__ = ("variants",)

    def __init__(self, releases: Sequence[Tuple[str, Sequence[str]]]) -> None:
        self.variants: Dict[str, FrozenSet[str]] = {v: frozenset(names) for v, names in releases}

    def names(self, reading: str, accelerator: str) -> bool:
        """Whether ``reading`` (a series "2.10" or a release "2.1.0") is a real release, with a
        build whose name starts with ``accelerator`` ("cu121", "cu12", "rocm6.2", "cpu"; "" any)."""
        if reading.count(".") == 2:
            found = [self.variants[reading]] if reading in self.variants else []
        else:
            found = [names for version, names in self.variants.items() if _same_series(reading, version)]
        return any(not accelerator or any(n.startswith(accelerator) for n in names) for names in found)


@lru_cache(maxsize=4)
def torch_releases(kb: KnowledgeBase) -> TorchReleases:
    """The torch releases of ``kb`` with their builds: what packed digits (``torch250``) name."""
    return TorchReleases([(r.version, [v.name for v in r.variants]) for r in kb.releases])


def _same_series(series: str, version: str) -> bool:
    """A build against torch 2.8 (or 2.8.0) loads in every 2.8.x: same major.minor."""
    return series.split(".")[:2] == version.split("+", maxsplit=1)[0].split(".")[:2]


_TORCH_DOTTED = re.compile(r"(?:^|[^a-z])(?:pt|torch)[-_]?(\d+)\.(\d+)(?:\.(\d+))?", re.IGNORECASE)
_TORCH_PACKED = re.compile(r"(?:^|[^a-z])(?:pt|torch)(\d{2,4})(?!\d)", re.IGNORECASE)
_CUDA = re.compile(r"(?:^|[^a-z])cu(?:da)?[-_]?(\d{1,3})(?:\.(\d))?(?!\d)", re.IGNORECASE)
_ROCM = re.compile(r"rocm[-_]?(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)
_CPU = re.compile(r"(?:^|[^a-z])cpu(?:$|[^a-z])", re.IGNORECASE)
_ABI = re.compile(r"cxx11abi(true|false)", re.IGNORECASE)


@lru_cache(maxsize=4096)
def torch_build(label: str, known: Optional[TorchReleases] = None) -> Optional[TorchBuild]:
    """The build a local version / file name / URL path encodes, or None when it names none.

    ``pt28cu128`` -> torch 2.8 + CUDA 12.8; ``cu12torch2.8cxx11abiTRUE`` -> torch 2.8 + CUDA 12;
    ``cu121`` -> CUDA 12.1; ``torch2.4.0+cu121`` -> torch 2.4.0 + CUDA 12.1; ``rocm6.2`` -> ROCm.
    Packed digits (``torch250``, ``pt210``) are read against ``known`` (see :func:`packed_torch`).
    """
    text = label.replace("%2B", "+").replace("%2b", "+")
    if "+" in text:  # a file name: only its local label says the build (not ``torch-2.5.1`` itself)
        text = text.split("+", 1)[1]
    cuda = ""
    found = _CUDA.search(text)
    if found:
        digits, minor = found.group(1), found.group(2)
        if minor is not None:
            cuda = f"{digits}.{minor}"
        elif len(digits) <= 2 and (digits.startswith("1") and len(digits) == 2):
            cuda = digits  # "cu12": any CUDA 12
        elif len(digits) >= 2:
            cuda = f"{digits[:-1]}.{digits[-1]}"  # "cu128" -> 12.8, "cu92" -> 9.2
    rocm_found = _ROCM.search(text)
    rocm = rocm_found.group(1) if rocm_found else ""
    cpu = bool(_CPU.search(text)) and not cuda and not rocm
    torch, unread = "", ""
    dotted = _TORCH_DOTTED.search(text)
    packed = None if dotted else _TORCH_PACKED.search(text)
    if dotted:
        torch = ".".join(g for g in dotted.groups() if g is not None)
    elif packed:
        accelerator = (f"cu{cuda.replace('.', '')}" if cuda else f"rocm{rocm}" if rocm
                       else "cpu" if cpu else "")
        torch, readings = packed_torch(packed.group(1), accelerator, known)
        if not torch:
            said = " or ".join(f"torch {r}" for r in readings) if readings else "no torch release in the data"
            unread = f"{packed.group(0).lstrip('+._-')}: {said}"
    if not (torch or unread or cuda or rocm or cpu):
        return None
    abi = _ABI.search(text)
    return TorchBuild(torch, cuda, rocm, cpu, abi.group(1).lower() == "true" if abi else None, unread)


def packed_torch(digits: str, accelerator: str,
                 known: Optional[TorchReleases]) -> Tuple[str, Tuple[str, ...]]:
    """(the torch that packed digits name, "" when not one; the real releases they could name).

    ``250`` reads as 2.50 or 2.5.0, ``210`` as 2.10 or 2.1.0, ``2100`` as 2.100 or 2.10.0: the
    reading that names a release in ``known`` wins; when two do, the one with a build for the
    label's accelerator (``torch210cu121``: only 2.1.0 had cu121); when still two, or none, the
    torch is not read (never guessed). Without ``known``, only digits with one reading are read."""
    major, rest = digits[0], digits[1:]
    readings = [f"{major}.{rest}"] if _plain(rest) else []
    readings += [f"{major}.{rest[:cut]}.{rest[cut:]}" for cut in range(1, len(rest))
                 if _plain(rest[:cut]) and _plain(rest[cut:])]
    if known is None:
        return (readings[0] if len(readings) == 1 else ""), tuple(readings)
    real = [r for r in readings if known.names(r, "")]
    if len(real) > 1 and accelerator:
        real = [r for r in real if known.names(r, accelerator)] or real
    return (real[0] if len(real) == 1 else ""), tuple(real)


def _plain(number: str) -> bool:
    """A version component as written (no leading zero): ``0``, ``5``, ``10``; not ``00``, ``05``."""
    return bool(number) and (number == "0" or not number.startswith("0"))
