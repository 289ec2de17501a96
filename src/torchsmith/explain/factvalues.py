"""A signature's facts as values: the text a regex group caught, decoded (CUDA and cuDNN version
encodings, architecture lists). Pure."""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Match

__all__ = ["add_facts", "normalise_fact"]


def _cuda_api(raw: str) -> str:
    """11040 (cudaDriverGetVersion's encoding) -> "11.4"."""
    if not raw.isdigit() or len(raw) < 4:
        return raw
    number = int(raw)
    return f"{number // 1000}.{number % 1000 // 10}"


def _cuda_short(raw: str) -> str:
    """1201 (xformers' major * 100 + minor) -> "12.1"."""
    if not raw.isdigit() or len(raw) < 3:
        return raw
    return f"{int(raw) // 100}.{int(raw) % 100}"


def _cudnn(raw: str) -> str:
    """"(8, 5, 0)" -> "8.5.0"; 7102 -> "7.1.2"; 90100 -> "9.1.0"."""
    parts = re.findall(r"\d+", raw)
    if len(parts) > 1:
        return ".".join(parts)
    if not parts:
        return raw
    number = int(parts[0])
    if number >= 10000:  # cuDNN 9 encodes major * 10000
        return f"{number // 10000}.{number % 10000 // 100}.{number % 100}"
    return f"{number // 1000}.{number % 1000 // 100}.{number % 100}"


def _arch_list(raw: str) -> List[str]:
    """"sm_75 sm_80" as listed; torch's newer capability warning lists "- 7.5 which supports
    hardware CC >=7.5,<8.0" per line (torch/cuda/__init__.py, _warn_unsupported_code): as sm_75."""
    if "which supports" in raw:
        return [f"sm_{major}{minor}" for major, minor in re.findall(r"- (\d+)\.(\d+) which supports", raw)]
    return raw.split()


_NORMALISERS: Dict[str, Callable[[str], Any]] = {
    "driver_cuda": _cuda_api,
    "built_cuda": _cuda_short,
    "compiled_cudnn": _cudnn,
    "runtime_cudnn": _cudnn,
    "arch_list": _arch_list,
    "nvjitlink_needed": lambda raw: raw.replace("_", "."),
}


def normalise_fact(name: str, raw: str) -> Any:
    """A group's text as a fact: versions decoded, lists split, whitespace trimmed."""
    raw = raw.strip()
    normaliser = _NORMALISERS.get(name)
    return normaliser(raw) if normaliser else raw


def add_facts(facts: Dict[str, Any], match: Match[str]) -> None:
    for name, value in match.groupdict().items():
        if value is not None and value.strip() and name not in facts:
            facts[name] = normalise_fact(name, value)
