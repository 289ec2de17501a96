"""NVIDIA Jetson (Tegra iGPU): L4T release, JetPack, CUDA, module and compute capability.

A Jetson is told by its Tegra files (/etc/nv_tegra_release, the device tree), never by the CPU
architecture: aarch64 servers with discrete GPUs (GH200, GB200: SBSA) have neither file.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from torchsmith import TYPE_CHECKING
from torchsmith.host import Host
from torchsmith.machine import JetsonInfo, ProbeNote

if TYPE_CHECKING:
    from typing import List, Optional, Tuple

__all__ = [
    "compute_capability_of",
    "detect_jetson",
    "module_from_model",
    "module_from_soc",
    "parse_device_tree_text",
    "parse_jetpack_version",
    "parse_nv_tegra_release",
]

TIMEOUT = 5.0
_RELEASE = "/etc/nv_tegra_release"
_MODEL_PATHS = ("/proc/device-tree/model", "/sys/firmware/devicetree/base/model")
_COMPATIBLE_PATHS = ("/proc/device-tree/compatible", "/sys/firmware/devicetree/base/compatible")

# A pattern as text, compiled (and cached) by re when first used: only on a Jetson.
# "# R35 (release), REVISION: 2.1, GCID: ..., BOARD: t186ref, ..." -> 35.2.1
# (format: dusty-nv/jetson-containers jetson_containers/l4t_version.py).
_L4T = r"#\s*R(\d{1,6})\s*\(\w+\)\s*,\s*REVISION:\s*(\d+(?:\.\d+)?)"

# The module by device-tree model, most specific first; its compute capability is the data's
# (the jetson rows of kb/data/gpus.json, sourced there: NVIDIA's CUDA GPUs pages).
# "Jetson-AGX" is the AGX Xavier developer kit's model string; "quill" (TX2) and "jetson_tx1"
# are the old L4T board names (rbonghi/jetson_stats jtop/core/jetson_variables.py).
_MODULES: Tuple[Tuple[str, str], ...] = (
    ("thor", "Thor"),
    ("agx orin", "AGX Orin"),
    ("orin nx", "Orin NX"),
    ("orin nano", "Orin Nano"),
    ("orin", "Orin"),
    ("xavier nx", "Xavier NX"),
    ("agx xavier", "AGX Xavier"),
    ("jetson-agx", "AGX Xavier"),
    ("xavier", "Xavier"),
    ("tx2", "TX2"),
    ("quill", "TX2"),
    ("tx1", "TX1"),
    ("nano", "Nano"),
)

# The SoC from the device tree's "compatible" list, when the model string is a custom carrier
# board's. Linux kernel Documentation/devicetree/bindings/arm/tegra.yaml names the SoCs.
_SOCS: Tuple[Tuple[str, str], ...] = (
    ("nvidia,tegra264", "Thor"),
    ("nvidia,tegra234", "Orin"),
    ("nvidia,tegra194", "Xavier"),
    ("nvidia,tegra186", "TX2"),
    ("nvidia,tegra210", "Nano/TX1"),
)
_GPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kb", "data", "gpus.json")


@lru_cache(maxsize=1)
def _jetson_gpus() -> Tuple[Tuple[str, str], ...]:
    """(name without "Jetson ", compute capability) of gpus.json's Jetson rows; () if unreadable.

    Read directly, not through the knowledge base: probing stays light and works in a broken
    installation (then the compute capability is unknown and the probe says so)."""
    from torchsmith.errors import parse_json_bytes, read_json_bytes

    try:
        rows = parse_json_bytes(read_json_bytes(_GPUS))["gpus"]
        return tuple((str(r["name"]).replace("Jetson ", "", 1).lower(), str(r["compute_capability"]))
                     for r in rows if isinstance(r, dict) and r.get("jetson"))
    except (OSError, ValueError, KeyError, TypeError):
        return ()


def compute_capability_of(module: str) -> Optional[str]:
    """``AGX Orin`` -> ``8.7``: the row named so, else the one capability every row of that
    family shares (``Orin``, ``Thor``, ``Nano/TX1``); None when the data does not say."""
    ccs = set()
    for part in module.lower().split("/"):
        exact = [cc for name, cc in _jetson_gpus() if name == part]
        ccs.update(exact or [cc for name, cc in _jetson_gpus() if part in re.findall(r"[a-z0-9]+", name)])
    return ccs.pop() if len(ccs) == 1 else None


def parse_nv_tegra_release(text: str) -> Optional[str]:
    """``35.2.1`` from ``# R35 (release), REVISION: 2.1, ...``; None when unreadable."""
    match = re.search(_L4T, text)
    if not match:
        return None
    revision = match.group(2)
    if "." not in revision:
        revision += ".0"
    return f"{int(match.group(1))}.{revision}"


def parse_device_tree_text(text: str) -> List[str]:
    """Device-tree strings are NUL-terminated (and NUL-separated in lists)."""
    return [part.strip() for part in text.split("\x00") if part.strip()]


def module_from_model(model: str) -> Optional[Tuple[str, str]]:
    """(module, compute capability) from a device-tree model such as
    ``NVIDIA Jetson AGX Orin Developer Kit``."""
    lowered = model.lower()
    for needle, module in _MODULES:
        if needle in lowered:
            cc = compute_capability_of(module)
            return (module, cc) if cc else None
    return None


def module_from_soc(compatible: List[str]) -> Optional[Tuple[str, str]]:
    for needle, module in _SOCS:
        if needle in compatible:
            cc = compute_capability_of(module)
            return (module, cc) if cc else None
    return None


def parse_jetpack_version(text: str) -> Optional[str]:
    """``6.2`` from the nvidia-jetpack package version ``6.2+b77`` (or ``5.1-b147``)."""
    match = re.match(r"\s*(?:\d+:)?(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match else None


def _first_text(host: Host, paths: Tuple[str, ...]) -> Tuple[Optional[str], str]:
    for path in paths:
        text = host.read_text(path)
        if text is not None:
            return text, path
    return None, ""


def _cuda_version(host: Host) -> Tuple[Optional[str], str]:
    from torchsmith.probe.system import toolkit_version

    version, how = toolkit_version(host, "/usr/local/cuda")
    return version, f"/usr/local/cuda/{how}" if how in ("version.json", "version.txt") else how


def _jetpack(host: Host, notes: List[ProbeNote]) -> Optional[str]:
    dpkg = host.which("dpkg-query")
    if not dpkg:
        return None
    result = host.run([dpkg, "-W", "-f=${Version}", "nvidia-jetpack"], TIMEOUT)
    if result.timed_out:
        notes.append(ProbeNote("nvidia-jetpack", result.problem()))
        return None
    # Not installed (a minimal L4T image) is common and not a problem: the L4T release tells.
    return parse_jetpack_version(result.stdout) if result.ok else None


def detect_jetson(host: Host, notes: List[ProbeNote]) -> Optional[JetsonInfo]:
    """A Jetson when /etc/nv_tegra_release exists or the device tree names a Tegra SoC."""
    release_text = host.read_text(_RELEASE)
    model_text, model_path = _first_text(host, _MODEL_PATHS)
    compatible_text, _ = _first_text(host, _COMPATIBLE_PATHS)
    compatible = parse_device_tree_text(compatible_text or "")
    is_tegra = any(c.startswith("nvidia,tegra") for c in compatible)
    if release_text is None and not is_tegra:
        return None

    sources: List[str] = []
    l4t = None
    if release_text is not None:
        l4t = parse_nv_tegra_release(release_text)
        if l4t:
            sources.append(_RELEASE)
        else:
            first = release_text.strip().splitlines()[0][:120] if release_text.strip() else "empty"
            notes.append(ProbeNote(_RELEASE, f"no L4T release could be read from {first!r}"))
    else:
        notes.append(ProbeNote(_RELEASE, "a Tegra device tree but no /etc/nv_tegra_release "
                                         "(a container without the L4T files?): L4T unknown"))

    model = parse_device_tree_text(model_text)[0] if model_text and parse_device_tree_text(
        model_text) else None
    found = module_from_model(model) if model else None
    if found and model_path:
        sources.append(model_path)
    if found is None:
        found = module_from_soc(compatible)
        if found:
            sources.append("device-tree compatible")
    if found is None:
        notes.append(ProbeNote("jetson", f"unknown Jetson module {model!r}: compute capability "
                                         "unknown (state it with --gpu)"))
    cuda, cuda_source = _cuda_version(host)
    if cuda:
        sources.append(cuda_source)
    jetpack = _jetpack(host, notes)
    if jetpack:
        sources.append("dpkg nvidia-jetpack")
    return JetsonInfo(
        l4t=l4t,
        jetpack=jetpack,
        cuda=cuda,
        model=model,
        module=found[0] if found else None,
        compute_capability=found[1] if found else None,
        source=", ".join(sources),
    )
