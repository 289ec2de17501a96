"""AMD GPUs and ROCm: the ROCm version, each GPU's gfx target, /dev/kfd access.

GPU sources in order, each with a timeout: ``rocminfo`` (agents with a ``gfx`` name and a
marketing name), ``rocm_agent_enumerator`` (gfx names only), ``amd-smi static --json``; with
no ROCm at all, AMD display controllers on the PCI bus (names unknown, gfx unknown).
"""

from __future__ import annotations

import json
import os
import re

from torchsmith import TYPE_CHECKING
from torchsmith.host import CommandResult, Host
from torchsmith.machine import MAX_GPUS, AmdGpu, ProbeNote, RocmInfo
from torchsmith.probe.pci import display_devices

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

__all__ = [
    "detect_rocm",
    "parse_amd_smi_static",
    "parse_hipconfig_version",
    "parse_id",
    "parse_rocm_agent_enumerator",
    "parse_rocm_version",
    "parse_rocminfo",
]

TIMEOUT = 10.0
# Patterns as text, compiled (and cached) by re when first used: only where ROCm is found.
_GFX = r"^gfx[0-9a-f]{3,4}$"
_VERSION = r"^\s*(\d+\.\d+(?:\.\d+)?)"
_AMD_VENDOR = "1002"


def parse_rocm_version(text: str) -> Optional[str]:
    """``6.2.4`` from /opt/rocm/.info/version (``6.2.4-120``)."""
    match = re.match(_VERSION, text)
    return match.group(1) if match else None


def parse_hipconfig_version(text: str) -> Optional[str]:
    """ROCm ``6.2`` from HIP's ``6.2.41134-65d174c3e`` (HIP's patch field is a build number)."""
    match = re.match(r"\s*(\d+)\.(\d+)\.\d+", text)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def parse_rocminfo(text: str) -> List[AmdGpu]:
    """GPU agents from ``rocminfo``: blocks whose ``Name`` is a gfx target."""
    gpus: List[AmdGpu] = []
    for block in re.split(r"\n\*{5,}\s*\nAgent \d+\s*\n\*{5,}", text)[1:]:
        fields: Dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            key = key.strip()
            if sep and key in ("Name", "Marketing Name", "Device Type") and key not in fields:
                fields[key] = value.strip()
        gfx = fields.get("Name", "")
        if not re.match(_GFX, gfx) or fields.get("Device Type", "GPU") != "GPU":
            continue
        name = fields.get("Marketing Name") or f"AMD {gfx}"
        gpus.append(AmdGpu(name=name, gfx=gfx, source="rocminfo"))
    return gpus


def parse_rocm_agent_enumerator(text: str) -> List[AmdGpu]:
    """One gfx target per line; ``gfx000`` is the CPU agent."""
    return [AmdGpu(name=f"AMD {line.strip()}", gfx=line.strip(), source="rocm_agent_enumerator")
            for line in text.splitlines()
            if re.match(_GFX, line.strip()) and line.strip() != "gfx000"]


def _amd_smi_rows(data: Any) -> List[Dict[str, Any]]:
    # amd-smi 24.x prints a list of GPUs; 25.x+ wraps it as {"gpu_data": [...]}.
    if isinstance(data, dict):
        data = data.get("gpu_data", [])
    return [row for row in data if isinstance(row, dict)] if isinstance(data, list) else []


def parse_amd_smi_static(text: str) -> List[AmdGpu]:
    """GPUs from ``amd-smi static --json`` (asic.market_name, asic.target_graphics_version)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    gpus: List[AmdGpu] = []
    for row in _amd_smi_rows(data):
        asic = row.get("asic")
        if not isinstance(asic, dict):
            asic = {}
        gfx = str(asic.get("target_graphics_version") or "").strip().lower()
        name = str(asic.get("market_name") or "").strip()
        gpus.append(AmdGpu(name=name or f"AMD {gfx or 'GPU'}",
                           gfx=gfx if re.match(_GFX, gfx) else None, source="amd-smi static"))
    return gpus


def _rocm_root(host: Host) -> str:
    return host.environ().get("ROCM_PATH") or "/opt/rocm"


def _version(host: Host, root: str, notes: List[ProbeNote]) -> Tuple[Optional[str], str]:
    for path in (f"{root}/.info/version", f"{root}/.info/version-dev"):
        text = host.read_text(path)
        if text is not None:
            found = parse_rocm_version(text)
            if found:
                return found, path
            notes.append(ProbeNote(path, f"no ROCm version in {text.strip()[:80]!r}"))
    # /opt/rocm is usually a link to /opt/rocm-6.2.4.
    versioned = sorted(n for n in host.list_dir("/opt") or [] if re.match(r"^rocm-\d+\.\d+", n))
    if versioned:
        return versioned[-1].split("-", 1)[1], f"/opt/{versioned[-1]}"
    hipconfig = host.which("hipconfig")
    if hipconfig:
        result = host.run([hipconfig, "--version"], TIMEOUT)
        found = parse_hipconfig_version(result.stdout) if result.ok else None
        if found:
            return found, "hipconfig --version"
        notes.append(ProbeNote("hipconfig", result.problem() if not result.ok
                               else "printed no version"))
    return None, ""


def _tool(host: Host, root: str, name: str) -> Optional[str]:
    found = host.which(name)
    if found:
        return found
    candidate = f"{root}/bin/{name}"
    names = host.list_dir(f"{root}/bin") or []
    return candidate if name in names else None


def _gpus(host: Host, root: str, notes: List[ProbeNote]) -> Tuple[List[AmdGpu], str]:
    for name, argv_tail, parse in (
        ("rocminfo", [], parse_rocminfo),
        ("rocm_agent_enumerator", [], parse_rocm_agent_enumerator),
        ("amd-smi", ["static", "--json"], parse_amd_smi_static),
    ):
        tool = _tool(host, root, name)
        if not tool:
            continue
        result = host.run([tool, *argv_tail], TIMEOUT)
        if not result.ok:
            notes.append(ProbeNote(name, _explain(result)))
            continue
        gpus = parse(result.stdout)
        if len(gpus) > MAX_GPUS:
            notes.append(ProbeNote(name, f"listed {len(gpus)} GPUs, more than any node has: "
                                         f"kept the first {MAX_GPUS}"))
            gpus = gpus[:MAX_GPUS]
        if gpus:
            return gpus, " ".join([name, *argv_tail])
        notes.append(ProbeNote(name, "listed no AMD GPU"))
    return [], ""


def _explain(result: CommandResult) -> str:
    """rocminfo's first line is a banner; the HSA error line says what went wrong."""
    text = result.stdout + result.stderr
    detail = next((line.strip() for line in text.splitlines()
                   if "HSA_STATUS_" in line or "/dev/kfd" in line), None)
    problem = result.problem()
    if detail and result.returncode is not None:
        problem = f"{os.path.basename(result.argv[0])} exited with {result.returncode}: {detail[:160]}"
    if "Permission denied" in text or "HSA_STATUS_ERROR_OUT_OF_RESOURCES" in text:
        problem += (" — this user may not open /dev/kfd: add it to the render and video groups "
                    "(sudo usermod -aG render,video $USER) and log in again")
    return problem


def parse_id(text: str) -> Tuple[Optional[int], List[str]]:
    """(uid, group names) from ``id``: ``uid=1000(ann) gid=1000(ann) groups=1000(ann),44(video)``."""
    uid = re.search(r"uid=(\d{1,12})\b", text)
    groups = re.search(r"groups=(\S+)", text)
    names = re.findall(r"\(([^)]+)\)", groups.group(1)) if groups else []
    return (int(uid.group(1)) if uid else None), names


def _kfd_access(host: Host, notes: List[ProbeNote]) -> Optional[bool]:
    """Whether this user can open /dev/kfd, judged from its groups. Since Ubuntu 20.04's kernels
    /dev/kfd belongs to ``render`` (older ones: ``video``); ROCm's install guide asks for both.
    None when there is no /dev/kfd, no answer, or only ``video`` (it depends on the kernel)."""
    if "kfd" not in (host.list_dir("/dev") or []):
        return None
    result = host.run(["id"], TIMEOUT)
    uid, groups = parse_id(result.stdout) if result.ok else (None, [])
    if uid is None:
        return None
    if uid == 0 or "render" in groups:
        return True
    fix = "sudo usermod -aG render,video $USER, then log in again"
    if "video" in groups:
        notes.append(ProbeNote("/dev/kfd", "this user is in 'video' but not 'render'; where "
                                           f"/dev/kfd belongs to render, ROCm cannot open it: {fix}"))
        return None
    notes.append(ProbeNote("/dev/kfd", "this user is in neither the 'render' nor the 'video' "
                                       f"group, so ROCm cannot open /dev/kfd: {fix}"))
    return False


def _override_note(value: str) -> str:
    match = re.match(r"^(\d{1,4})\.(\d{1,4})\.(\d{1,4})$", value.strip())
    if not match:
        return f"HSA_OVERRIDE_GFX_VERSION={value!r} is not MAJOR.MINOR.STEPPING (e.g. 10.3.0)"
    major, minor, stepping = (int(g) for g in match.groups())
    return (f"HSA_OVERRIDE_GFX_VERSION={value} makes ROCm load gfx{major}{minor}{stepping:x} code "
            "on every AMD GPU (Linux only)")


def _windows(host: Host, notes: List[ProbeNote]) -> Optional[RocmInfo]:
    hip = host.environ().get("HIP_PATH")
    if not hip:
        return None
    match = re.search(r"(\d+\.\d+(?:\.\d+)?)[\\/]*$", hip)
    notes.append(ProbeNote("HIP_PATH", "the AMD HIP SDK for Windows is installed, but PyTorch "
                                       "publishes no ROCm wheels for Windows: use WSL2 or Linux "
                                       "for ROCm, or the CPU build"))
    return RocmInfo(version=match.group(1) if match else None,
                    version_source="HIP_PATH" if match else "", source="HIP_PATH")


def detect_rocm(host: Host, notes: List[ProbeNote]) -> Optional[RocmInfo]:
    """ROCm and AMD GPUs, or None when there is no sign of either."""
    if host.platform().system == "Windows":
        return _windows(host, notes)
    root = _rocm_root(host)
    has_rocm = host.list_dir(root) is not None
    dev = host.list_dir("/dev") or []
    pci = display_devices(host, _AMD_VENDOR)
    if not has_rocm and "kfd" not in dev and not pci:
        return None
    version, version_source = _version(host, root, notes) if has_rocm else (None, "")
    gpus, gpus_source = _gpus(host, root, notes) if has_rocm else ([], "")
    if not gpus and pci:
        gpus = [AmdGpu(name=f"AMD GPU {_AMD_VENDOR}:{d.device}", source=f"pci {d.slot}")
                for d in pci]
        gpus_source = "/sys/bus/pci/devices"
        if not has_rocm:
            notes.append(ProbeNote("rocm", f"AMD GPU(s) on the PCI bus but no ROCm at {root}: "
                                           "gfx targets unknown"))
    override = host.environ().get("HSA_OVERRIDE_GFX_VERSION")
    if override:
        notes.append(ProbeNote("HSA_OVERRIDE_GFX_VERSION", _override_note(override)))
    sources = [s for s in (version_source, gpus_source) if s]
    return RocmInfo(
        version=version,
        version_source=version_source,
        gpus=tuple(gpus),
        kfd_access=_kfd_access(host, notes),
        hsa_override_gfx_version=override or None,
        source=", ".join(sources) or os.path.basename(root),
    )
