"""Reading versions and build labels: ``2.5.1+cu124`` -> public 2.5.1, variant cu124."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Tuple

from torchsmith.compat import Variant
from torchsmith.versions import version_tuple

__all__ = [
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


def companion_built_for(companion: Dict[str, Any]) -> Tuple[Optional[str], Optional[str], str]:
    """(the torch it was built for, as a specifier; its CUDA variant; where that was read).

    The specifier comes from ``Requires-Dist: torch==2.4.1`` (or a range such as mmcv's
    ``>=2.6,<2.7``), else from a release series in the version (``+pt24cu124`` -> ``==2.4.*``)
    or in the wheel's file name (``torch2.4`` -> ``==2.4.*``).
    """
    version = str(companion.get("version") or "")
    label = local_label(version)
    variant = _variant_of(label)
    specs = [str(s) for s in companion.get("torch_requires") or () if s]
    metadata = str(companion.get("metadata") or "")
    if specs:
        return ",".join(specs), variant, f"{metadata}/METADATA Requires-Dist"
    match = re.search(r"pt(\d)(\d{1,2})", label)
    if match:
        return f"=={match.group(1)}.{match.group(2)}.*", variant, f"{metadata} (version {version})"
    # The wheel's file name (flash_attn-2.6.3+cu123torch2.4...) or its find-links path
    # (download.openmmlab.com/mmcv/dist/cu121/torch2.1/mmcv-2.1.0-...).
    url = str(companion.get("url") or "")
    match = re.search(r"torch(\d+\.\d+)", url.rsplit("/", 1)[-1]) or re.search(r"/torch(\d+\.\d+)/", url)
    if match:
        wheel_variant = re.search(r"\+(cu\d+)", url) or re.search(r"/(cu\d+|cpu)/", url)
        return (f"=={match.group(1)}.*", variant or (wheel_variant.group(1) if wheel_variant else None),
                f"{metadata}/direct_url.json")
    return None, variant, ""


def satisfies(version: str, specifier: str) -> Optional[bool]:
    """Whether ``version`` meets ``specifier``; None when either cannot be parsed."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None
