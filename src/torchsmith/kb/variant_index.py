"""Wheel-variant index metadata (PEP 825, draft): ``{name}-{version}-variants.json`` read as a
primary source of what each variant label is built for.

The file maps each variant label to its properties, ``namespace -> feature -> [values]``
(``variants``), next to the providers that detect them (``providers``) and their priorities
(``default-priorities``); checked against variantlib 0.2.2's ``VariantsJsonDict``. The NVIDIA
provider's features (wheelnext/nvidia-variant-provider) are ``cuda_version_lower_bound``,
``cuda_version_upper_bound`` and ``sm_arch`` (``90_real`` = SASS sm_90, ``120_virtual`` = PTX
compute_120). A label without properties is the null (CPU) variant.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from torchsmith.errors import KnowledgeBaseError
from torchsmith.records import dataclass

__all__ = ["LabelFacts", "build_name", "label_disagreements", "parse_variant_page", "parse_variants_data",
           "parse_variants_json"]

_CUDA_LABEL = re.compile(r"^cuda(\d+)\.(\d+)$")
_SM_ARCH = re.compile(r"^(\d+)([af]?)_(real|virtual)$")
_NAME = re.compile(r"^[a-z0-9_]+$")


@dataclass(frozen=True)
class LabelFacts:
    """What one variant label's properties say."""

    label: str
    properties: Mapping[str, Mapping[str, Tuple[str, ...]]]
    cuda_lower: Optional[str] = None  # nvidia :: cuda_version_lower_bound
    cuda_upper: Optional[str] = None  # nvidia :: cuda_version_upper_bound (exclusive)
    sass: Tuple[str, ...] = ()  # from sm_arch NN_real
    ptx: Tuple[str, ...] = ()  # from sm_arch NN_virtual, as compute_NN

    @property
    def is_null(self) -> bool:
        return not self.properties

    def values(self, namespace: str, feature: str) -> Tuple[str, ...]:
        return tuple(self.properties.get(namespace, {}).get(feature, ()))

    @property
    def priority(self) -> int:
        """The static ``priority :: order`` PyTorch gives its CUDA labels (1 first); 99 without."""
        order = self.values("priority", "order")
        return int(order[0]) if order and order[0].isdigit() else 99


def _values(where: str, value: Any) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise KnowledgeBaseError(f"{where}: expected a list of strings")
    return tuple(value)


def _label(label: str, raw: Any, where: str) -> LabelFacts:
    if not isinstance(raw, dict):
        raise KnowledgeBaseError(f"{where}: expected namespace -> feature -> values")
    props: Dict[str, Dict[str, Tuple[str, ...]]] = {}
    for namespace, features in raw.items():
        if not _NAME.match(namespace) or not isinstance(features, dict):
            raise KnowledgeBaseError(f"{where}.{namespace}: expected feature -> values")
        props[namespace] = {feature: _values(f"{where}.{namespace}.{feature}", values)
                            for feature, values in features.items()}
    nvidia = props.get("nvidia", {})
    sass: List[str] = []
    ptx: List[str] = []
    for value in nvidia.get("sm_arch", ()):
        match = _SM_ARCH.match(value)
        if match is None:
            raise KnowledgeBaseError(f"{where}.nvidia.sm_arch: {value!r} is not NN_real or NN_virtual")
        number, suffix, kind = match.groups()
        (sass if kind == "real" else ptx).append(f"{'sm' if kind == 'real' else 'compute'}_{number}{suffix}")
    key = lambda arch: int(re.sub(r"\D", "", arch))  # noqa: E731  # numeric order: sm_75 < sm_100
    return LabelFacts(label=label, properties=props,
                      cuda_lower=(nvidia.get("cuda_version_lower_bound") or (None,))[0],
                      cuda_upper=(nvidia.get("cuda_version_upper_bound") or (None,))[0],
                      sass=tuple(sorted(sass, key=key)), ptx=tuple(sorted(ptx, key=key)))


def parse_variants_json(text: str, where: str = "variants.json") -> Dict[str, LabelFacts]:
    """label -> facts; a clear KnowledgeBaseError naming the field on a malformed file."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise KnowledgeBaseError(f"{where}: not valid JSON ({exc})") from exc
    return parse_variants_data(data, where)


def parse_variants_data(data: Any, where: str = "variants.json") -> Dict[str, LabelFacts]:
    """label -> facts from the file's parsed JSON (a recorded copy is read the same way)."""
    variants = data.get("variants") if isinstance(data, dict) else None
    if not isinstance(variants, dict):
        raise KnowledgeBaseError(f"{where}: no 'variants' object (label -> properties)")
    return {label: _label(label, raw, f"{where} variants.{label}") for label, raw in variants.items()}


def build_name(label: str) -> str:
    """The build a label stands for in torchsmith's data: ``cuda12.8`` -> ``cu128`` (2.9 on); the
    null label (``null``; 2.8's ``00000000``) -> ``cpu``; ``cu126`` (2.8), ``rocm7.1``, ``xpu`` as
    they are."""
    match = _CUDA_LABEL.match(label)
    if match:
        return f"cu{match.group(1)}{match.group(2)}"
    return "cpu" if label in ("null", "00000000") else label


def label_disagreements(facts: LabelFacts, sass: Tuple[str, ...], ptx: Tuple[str, ...],
                        gfx: Tuple[str, ...] = (), rocm: Optional[str] = None) -> List[str]:
    """How the data's row for this build differs from what its variant label declares. The CUDA
    floor is a driver floor (2.9/2.10 declare 12.0 for cuda12.8), not the build's CUDA: not compared."""
    problems = []
    if facts.sass and tuple(sass) != facts.sass:
        problems.append(f"SASS {' '.join(sass) or '(none)'}: the label declares {' '.join(facts.sass)}")
    if facts.ptx and tuple(ptx) != facts.ptx:
        problems.append(f"PTX {' '.join(ptx) or '(none)'}: the label declares {' '.join(facts.ptx)}")
    declared_gfx = facts.values("amd", "gfx_arch")
    if declared_gfx and set(gfx) != set(declared_gfx):
        problems.append(f"gfx {' '.join(sorted(gfx)) or '(none)'}: the label declares "
                        f"{' '.join(sorted(declared_gfx))}")
    declared_rocm = facts.values("amd", "rocm_version")
    if declared_rocm and rocm and ".".join(rocm.split(".")[:2]) != declared_rocm[0]:
        problems.append(f"ROCm {rocm}: the label declares rocm_version {declared_rocm[0]}")
    return problems


# --- reading a variant index (kb refresh) ------------------------------------------------------

_ANCHOR = re.compile(r"<a\b[^>]*>([^<]*)</a>", re.IGNORECASE)
_VARIANTS_FILE = re.compile(r"^torch-([0-9][^-]*)-variants\.json$")
# PEP 825: a variant wheel's file name ends in its label: ...-{platform tag}-{label}.whl
_VARIANT_WHEEL = re.compile(
    r"^torch-([0-9][^-]*)-(?:\d[^-]*-)?(cp\d+t?|py3)-[^-]+-([^-]+)-([a-z0-9_.]+)\.whl$")
_PLATFORM_OF = (("manylinux", "x86_64", "linux-x86_64"), ("manylinux", "aarch64", "linux-aarch64"),
                ("win", "amd64", "windows-x86_64"), ("macosx", "arm64", "macos-arm64"))


def _platform(tag: str) -> Optional[str]:
    return next((name for prefix, arch, name in _PLATFORM_OF
                 for part in tag.split(".") if part.startswith(prefix) and part.endswith(arch)), None)


def parse_variant_page(text: str) -> Tuple[Dict[str, str], Dict[str, Dict[str, List[str]]]]:
    """From a variant index's simple page: (version -> its variants.json file name,
    version -> label -> platforms its wheels are published for)."""
    import html

    files: Dict[str, str] = {}
    platforms: Dict[str, Dict[str, List[str]]] = {}
    for label_text in _ANCHOR.findall(text):
        name = html.unescape(label_text.strip())
        match = _VARIANTS_FILE.match(name)
        if match:
            files[match.group(1)] = name
            continue
        wheel = _VARIANT_WHEEL.match(name)
        platform = _platform(wheel.group(3)) if wheel else None
        if wheel and platform:
            found = platforms.setdefault(wheel.group(1), {}).setdefault(wheel.group(4), [])
            if platform not in found:
                found.append(platform)
    return files, platforms
