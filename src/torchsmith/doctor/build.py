"""Reading versions and build labels: ``2.5.1+cu124`` -> public 2.5.1, variant cu124."""

from __future__ import annotations

import re
from typing import Any, Dict, NamedTuple, Optional

from torchsmith.compat import Variant
from torchsmith.kb.buildlabel import TorchBuild, TorchReleases
from torchsmith.kb.buildlabel import torch_build as label_build
from torchsmith.versions import version_tuple

__all__ = [
    "CompanionBuild",
    "companion_built_for",
    "local_label",
    "public_version",
    "satisfies",
    "torch_build",
    "version_tuple",
]


def public_version(version: str) -> str:
    return version.split("+", 1)[0]


def local_label(version: str) -> str:
    """``cu124`` from ``2.5.1+cu124``; "" when there is none."""
    return version.partition("+")[2]


def _variant_of(label: str) -> Optional[str]:
    """The accelerator token inside a local label: cu124, cpu, rocm6.2, xpu (compat's names)."""
    match = re.search(r"(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*|xpu)", label)
    variant = Variant.parse(match.group(1)) if match else None
    return variant.name if variant else None


def _text(value: Any) -> Optional[str]:
    """A string field of a child's report; anything else (a garbled report) counts as absent."""
    return value if isinstance(value, str) and value else None


def torch_build(report: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The installed torch: version, variant and accelerator, from import when done, else text.

    ``accelerator`` is cuda | rocm | xpu | cpu.
    """
    static = report.get("torch")
    dynamic = report.get("dynamic") or {}
    imported = dynamic.get("status") == "ok"
    if not static and not imported:
        return None
    static = static if isinstance(static, dict) else {}
    version = _text(dynamic.get("version") if imported else None) or _text(static.get("version")) or ""
    cuda = _text(dynamic.get("version_cuda") if imported else static.get("cuda"))
    hip = _text(dynamic.get("version_hip") if imported else static.get("hip"))
    label = local_label(version)
    variant = _variant_of(label)
    if hip:
        accelerator = "rocm"
    elif cuda:
        accelerator = "cuda"
    elif variant == "xpu":
        accelerator = "xpu"
    else:
        accelerator = "cpu"
    source = "import torch" if imported else str(static.get("version_file") or "torch/version.py")
    return {
        "version": version,
        "public": public_version(version),
        "label": label,
        "variant": variant or ("cpu" if accelerator == "cpu" and label in ("", "cpu") else None),
        "jetson": bool(re.search(r"\bnv\d", label)),
        "cuda": cuda,
        "hip": hip,
        "accelerator": accelerator,
        "source": source,
    }


class CompanionBuild(NamedTuple):
    """The torch a companion was built for, as its metadata or label says."""

    wants: Optional[str]  # a specifier: "==2.4.1", ">=2.6,<2.7", "==2.4.*"; None when not said or unread
    variant: Optional[str]  # its CUDA/ROCm/CPU build: "cu121"
    source: str  # where that was read
    unread: str = ""  # packed digits naming no torch, or two: "pt210: torch 2.10 or torch 2.1.0"


def companion_built_for(companion: Dict[str, Any], known: Optional[TorchReleases] = None) -> CompanionBuild:
    """The torch ``companion`` was built for, its variant, and where that was read.

    The specifier comes from ``Requires-Dist: torch==2.4.1`` (or a range such as mmcv's
    ``>=2.6,<2.7``), else from the build its version's label encodes (``+pt24cu124`` -> ``==2.4.*``),
    else from the wheel's file name or find-links path (``torch2.4`` -> ``==2.4.*``). Labels are read
    by kb/buildlabel: packed digits (``pt210``) against ``known``; when they name two releases, or
    none, the build is ``unread`` and nothing is guessed.
    """
    version = str(companion.get("version") or "")
    label = local_label(version)
    variant = _variant_of(label)
    specs = [str(s) for s in companion.get("torch_requires") or () if s]
    metadata = str(companion.get("metadata") or "")
    if specs:
        return CompanionBuild(",".join(specs), variant, f"{metadata}/METADATA Requires-Dist")
    build = label_build(label, known) if label else None
    if build is not None and (build.torch or build.unread):
        return _said(build, variant, f"{metadata} (version {version})")
    # The wheel's file name (flash_attn-2.6.3+cu123torch2.4...) or its find-links path
    # (download.openmmlab.com/mmcv/dist/cu121/torch2.1/mmcv-2.1.0-...).
    url = str(companion.get("url") or "")
    folder, _, name = url.rpartition("/")
    for part in (name, folder + "/"):
        build = label_build(part, known) if part.strip("/") else None
        if build is not None and (build.torch or build.unread):
            return _said(build, variant or _variant_name(build), f"{metadata}/direct_url.json")
    return CompanionBuild(None, variant, "")


def _said(build: TorchBuild, variant: Optional[str], source: str) -> CompanionBuild:
    series = build.torch.count(".") == 1  # "2.4" -> any 2.4.x; "2.1.0" -> that release
    wants = (f"=={build.torch}.*" if series else f"=={build.torch}") if build.torch else None
    return CompanionBuild(wants, variant, source, build.unread)


def _variant_name(build: TorchBuild) -> Optional[str]:
    """compat's name of a label's accelerator: CUDA 12.3 -> cu123, ROCm 6.2 -> rocm6.2, cpu."""
    if build.cuda:
        return f"cu{build.cuda.replace('.', '')}"
    return f"rocm{build.rocm}" if build.rocm else "cpu" if build.cpu else None


def satisfies(version: str, specifier: str) -> Optional[bool]:
    """Whether ``version`` meets ``specifier``; None when either cannot be parsed."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None
