"""NVIDIA Jetson (Tegra iGPU): L4T release, JetPack, CUDA, module and compute capability.

A Jetson is told by its Tegra files (/etc/nv_tegra_release, the device tree), never by the CPU
architecture: aarch64 servers with discrete GPUs (GH200, GB200: SBSA) have neither file.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from torchsmith.host import Host
from torchsmith.machine import JetsonInfo, ProbeNote

__all__ = [
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

# "# R35 (release), REVISION: 2.1, GCID: ..., BOARD: t186ref, ..." -> 35.2.1
# (format: dusty-nv/jetson-containers jetson_containers/l4t_version.py).
_L4T = re.compile(r"#\s*R(\d{1,6})\s*\(\w+\)\s*,\s*REVISION:\s*(\d+(?:\.\d+)?)")

# Module and compute capability by device-tree model, most specific first. Compute capabilities:
# https://developer.nvidia.com/cuda-gpus and https://developer.nvidia.com/cuda-legacy-gpus;
# jetson-containers l4t_version.py get_cuda_arch(): "Nano/TX1 = 5.3, TX2 = 6.2, Xavier = 7.2,
# Orin = 8.7, Thor = 11.0" (Thor was sm_101 before CUDA 13).
# "Jetson-AGX" is the AGX Xavier developer kit's model string; "quill" (TX2) and "jetson_tx1"
# are the old L4T board names (rbonghi/jetson_stats jtop/core/jetson_variables.py).
_MODULES: Tuple[Tuple[str, str, str], ...] = (
    ("thor", "Thor", "11.0"),
    ("agx orin", "AGX Orin", "8.7"),
    ("orin nx", "Orin NX", "8.7"),
    ("orin nano", "Orin Nano", "8.7"),
    ("orin", "Orin", "8.7"),
    ("xavier nx", "Xavier NX", "7.2"),
    ("agx xavier", "AGX Xavier", "7.2"),
    ("jetson-agx", "AGX Xavier", "7.2"),
    ("xavier", "Xavier", "7.2"),
    ("tx2", "TX2", "6.2"),
    ("quill", "TX2", "6.2"),
    ("tx1", "TX1", "5.3"),
    ("nano", "Nano", "5.3"),
)

# The SoC from the device tree's "compatible" list, when the model string is a custom carrier
# board's. Linux kernel Documentation/devicetree/bindings/arm/tegra.yaml names the SoCs.
_SOCS: Tuple[Tuple[str, str, str], ...] = (
    ("nvidia,tegra264", "Thor", "11.0"),
    ("nvidia,tegra234", "Orin", "8.7"),
    ("nvidia,tegra194", "Xavier", "7.2"),
    ("nvidia,tegra186", "TX2", "6.2"),
    ("nvidia,tegra210", "Nano/TX1", "5.3"),
)


def parse_nv_tegra_release(text: str) -> Optional[str]:
    """``35.2.1`` from ``# R35 (release), REVISION: 2.1, ...``; None when unreadable."""
    match = _L4T.search(text)
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
    for needle, module, cc in _MODULES:
        if needle in lowered:
            return module, cc
    return None


def module_from_soc(compatible: List[str]) -> Optional[Tuple[str, str]]:
    for needle, module, cc in _SOCS:
        if needle in compatible:
            return module, cc
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
