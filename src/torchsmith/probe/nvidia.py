"""NVIDIA driver and GPUs.

Sources, in order; each is asked only for what the earlier ones left unknown, each with a
timeout because a broken driver can make NVML or nvidia-smi hang for minutes:

1. NVML (nvidia-ml-py) in a child interpreter: driver, driver CUDA, every GPU.
2. ``/proc/driver/nvidia/version`` then ``/sys/module/nvidia/version``: the driver version.
3. ``nvidia-smi --query-gpu=...``: the GPUs (``compute_cap`` needs driver 510+; older
   drivers are asked again without it).
4. libcuda's ``cuDriverGetVersion`` in a child interpreter, then the ``nvidia-smi`` banner:
   the highest CUDA the driver supports.
"""

from __future__ import annotations

import os
import re

from torchsmith import TYPE_CHECKING
from torchsmith.host import Host
from torchsmith.machine import MAX_GPUS, NvidiaGpu, NvidiaInfo, ProbeNote

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = [
    "detect_nvidia",
    "parse_cuda_driver_int",
    "parse_nvidia_smi_banner",
    "parse_nvidia_smi_query",
    "parse_proc_driver_version",
    "parse_visible_devices",
]

TIMEOUT = 8.0
_SNIPPETS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "snippets")

QUERY_FIELDS = ("index", "name", "compute_cap", "memory.total", "uuid", "pci.bus_id",
                "mig.mode.current", "driver_version")
_LEGACY_FIELDS = tuple(f for f in QUERY_FIELDS if f != "compute_cap")

# Patterns as text: re compiles (and caches) them when first used, on a machine with an NVIDIA
# driver; a probe of any other machine compiles none.
_PROC_VERSION = r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)*)"
# Drivers 610+ print "KMD Version:" and "CUDA UMD Version:" instead of the old labels
# (sgl-project/sglang issue #27487 shows a 610.43.02 banner).
_BANNER_DRIVER = r"(?:Driver|KMD) Version:\s*(\d+\.\d+(?:\.\d+)*)"
_BANNER_CUDA = r"CUDA (?:UMD )?Version:\s*(\d+\.\d+)"
_DRIVER = r"^\d+\.\d+(\.\d+)*$"


def parse_proc_driver_version(text: str) -> Optional[str]:
    """``535.104.05`` from /proc/driver/nvidia/version (or the bare /sys/module line)."""
    match = re.search(_PROC_VERSION, text)
    if match:
        return match.group(1)
    stripped = text.strip()
    return stripped if re.match(_DRIVER, stripped) else None


def parse_nvidia_smi_banner(text: str) -> Tuple[Optional[str], Optional[str]]:
    """(driver version, driver CUDA) from plain ``nvidia-smi`` output."""
    driver = re.search(_BANNER_DRIVER, text)
    cuda = re.search(_BANNER_CUDA, text)
    return (driver.group(1) if driver else None, cuda.group(1) if cuda else None)


def parse_cuda_driver_int(value: int) -> Optional[str]:
    """cuDriverGetVersion's 12080 -> ``12.8``."""
    if value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


def _clean(cell: str) -> Optional[str]:
    cell = cell.strip()
    return None if cell in ("", "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]") else cell


def parse_nvidia_smi_query(text: str, fields: Sequence[str] = QUERY_FIELDS) -> List[Dict[str, Any]]:
    """Rows of ``--query-gpu=... --format=csv,noheader,nounits`` as dicts.

    Lines that do not have the right number of cells (a truncated output) are skipped.
    """
    rows: List[Dict[str, Any]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(fields):
            continue
        row = {name: _clean(cell) for name, cell in zip(fields, cells)}
        index = str(row.get("index") or "")
        if not (index.isdigit() and len(index) <= 6):  # more digits: garbage (and int() refuses)
            continue
        rows.append(row)
    return rows


def parse_visible_devices(value: str, gpus: Sequence[NvidiaGpu]) -> Tuple[int, ...]:
    """Indexes of the GPUs CUDA_VISIBLE_DEVICES lets a process see.

    CUDA's own rules: entries are indexes or (prefixes of) UUIDs; the list stops at the first
    entry that matches no device; an empty value or ``-1`` hides every GPU.
    """
    chosen: List[int] = []
    for entry in (e.strip() for e in value.split(",")):
        if entry.isdigit() and len(entry) <= 6:
            index = int(entry)
            if not any(g.index == index for g in gpus):
                break
            chosen.append(index)
            continue
        matches = [g.index for g in gpus if entry and g.uuid and g.uuid.startswith(entry)]
        if len(matches) != 1:
            break
        chosen.append(matches[0])
    return tuple(dict.fromkeys(chosen))


def _driver_present(host: Host) -> bool:
    if host.read_text("/proc/driver/nvidia/version") is not None:
        return True
    if host.which("nvidia-smi"):
        return True
    wsl_lib = host.list_dir("/usr/lib/wsl/lib") or []
    return any(name.startswith("libnvidia-ml") for name in wsl_lib)


def _from_nvml(host: Host, python: str, notes: List[ProbeNote]
               ) -> Tuple[Optional[Dict[str, Any]], bool]:
    """NVML's answer, and whether the query hung."""
    result = host.run([python, "-IS", os.path.join(_SNIPPETS, "nvml_probe.py")], TIMEOUT)
    if not result.ok:
        notes.append(ProbeNote("nvml", result.problem()))
        return None, result.timed_out
    try:
        data = result.last_json()
    except ValueError:
        notes.append(ProbeNote("nvml", "the NVML child printed no JSON"))
        return None, False
    if not isinstance(data, dict):
        return None, False
    if data.get("error"):
        notes.append(ProbeNote("nvml", _explain_nvml_error(str(data["error"]))))
        if not data.get("driver_version"):
            return None, False
    return data, False


def _explain_nvml_error(error: str) -> str:
    lowered = error.lower()
    if "mismatch" in lowered:
        return ("Driver/library version mismatch: the loaded kernel module and the user-space "
                "NVIDIA libraries differ (a driver update without a reboot). Reboot, or reload "
                "the nvidia kernel modules.")
    if "driver not loaded" in lowered:
        return "NVML: the NVIDIA kernel driver is not loaded"
    return error


def _gpus_from_rows(rows: Sequence[Dict[str, Any]], source: str) -> Tuple[NvidiaGpu, ...]:
    gpus = []
    for row in rows:
        memory = row.get("memory.total")
        gpus.append(NvidiaGpu(
            index=int(row["index"]),
            name=row.get("name") or "unknown NVIDIA GPU",
            compute_capability=_normalise_cc(row.get("compute_cap")),
            memory_mib=_memory_mib(memory),
            uuid=row.get("uuid"),
            bus_id=row.get("pci.bus_id"),
            mig_mode=row.get("mig.mode.current"),
            source=source,
        ))
    return tuple(gpus)


def _text_or_none(value: Any) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def _gpu_from_nvml(position: int, row: Dict[str, Any]) -> NvidiaGpu:
    """One GPU of the NVML child's JSON; a field of the wrong type counts as unknown."""
    index, memory = row.get("index"), row.get("memory_mib")
    return NvidiaGpu(
        index=index if isinstance(index, int) and index >= 0 else position,
        name=_text_or_none(row.get("name")) or "unknown NVIDIA GPU",
        compute_capability=_normalise_cc(_text_or_none(row.get("compute_capability"))),
        memory_mib=memory if isinstance(memory, int) and memory >= 0 else None,
        uuid=_text_or_none(row.get("uuid")),
        bus_id=_text_or_none(row.get("bus_id")),
        mig_mode=_text_or_none(row.get("mig_mode")),
        source="nvml",
    )


def _memory_mib(text: Optional[str]) -> Optional[int]:
    """nvidia-smi's ``81559``; None for anything that is not a sane size (N/A, inf, 10^5000)."""
    try:
        value = float(text or "")
    except ValueError:
        return None
    return int(value) if 0 <= value < 2**40 else None  # also false for nan


def _normalise_cc(value: Optional[str]) -> Optional[str]:
    if not value:
        return None
    match = re.match(r"^(\d{1,3})\.(\d{1,3})$", value.strip())
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


def _smi_problem(stdout: str, stderr: str, rc: Optional[int]) -> str:
    text = (stdout + "\n" + stderr).strip()
    if "No devices were found" in text:
        return "nvidia-smi: the driver is loaded but no NVIDIA device was found"
    if "version mismatch" in text.lower():
        return ("nvidia-smi: Driver/library version mismatch (driver updated without a reboot); "
                "reboot or reload the nvidia kernel modules")
    if "couldn't communicate with the NVIDIA driver" in text:
        return ("nvidia-smi cannot talk to the NVIDIA driver: it is not loaded or not installed "
                "for this kernel")
    first = text.splitlines()[0][:200] if text else "no output"
    return f"nvidia-smi exited with {rc}: {first}"


def _from_nvidia_smi(
    host: Host, notes: List[ProbeNote]
) -> Optional[Tuple[Tuple[NvidiaGpu, ...], Optional[str]]]:
    """(GPUs, driver version) from ``nvidia-smi --query-gpu``, or None with a note."""
    smi = host.which("nvidia-smi")
    if not smi:
        notes.append(ProbeNote("nvidia-smi", "nvidia-smi not found on PATH"))
        return None
    for fields in (QUERY_FIELDS, _LEGACY_FIELDS):
        result = host.run(
            [smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"], TIMEOUT
        )
        if result.timed_out or result.not_found:
            notes.append(ProbeNote("nvidia-smi", result.problem()))
            return None
        text = result.stdout + result.stderr
        if result.returncode != 0 and "not a valid field" in text and fields is QUERY_FIELDS:
            continue  # driver older than 510 has no compute_cap; ask again without it
        if result.returncode != 0:
            notes.append(ProbeNote("nvidia-smi", _smi_problem(result.stdout, result.stderr,
                                                              result.returncode)))
            return None
        rows = parse_nvidia_smi_query(result.stdout, fields)
        if not rows:
            notes.append(ProbeNote("nvidia-smi", "nvidia-smi printed no GPU rows it could read"))
            return None
        unread = sum(1 for line in result.stdout.splitlines() if line.strip()) - len(rows)
        if unread:
            notes.append(ProbeNote("nvidia-smi", f"skipped {unread} line(s) of nvidia-smi output "
                                                 "that could not be read (truncated output?)"))
        drivers = [r.get("driver_version") for r in rows if r.get("driver_version")]
        return _gpus_from_rows(rows, "nvidia-smi --query-gpu"), drivers[0] if drivers else None
    return None


def _cuda_from_libcuda(host: Host, python: str, notes: List[ProbeNote]) -> Optional[str]:
    result = host.run([python, "-IS", os.path.join(_SNIPPETS, "cuda_driver.py")], TIMEOUT)
    if not result.ok:
        notes.append(ProbeNote("cuDriverGetVersion", result.problem()))
        return None
    try:
        data = result.last_json()
        if isinstance(data, dict) and data.get("error"):
            notes.append(ProbeNote("cuDriverGetVersion", str(data["error"])[:200]))
            return None
        version = int(data["version"])
    except (ValueError, KeyError, TypeError):
        detail = result.stdout.strip()[:200] or "no output"
        notes.append(ProbeNote("cuDriverGetVersion", f"no version: {detail}"))
        return None
    return parse_cuda_driver_int(version)


def detect_nvidia(host: Host, notes: List[ProbeNote]) -> Optional[NvidiaInfo]:
    """The NVIDIA driver and GPUs, or None when there is no sign of an NVIDIA driver."""
    if not _driver_present(host):
        return None
    python = host.platform().python_executable or "python3"
    driver = driver_src = cuda = cuda_src = None
    gpus: Tuple[NvidiaGpu, ...] = ()
    gpus_src = ""

    # A wedged driver hangs NVML and nvidia-smi alike; libcuda's version query does not touch
    # the device, so only nvidia-smi is skipped after NVML hung.
    nvml, nvml_hung = _from_nvml(host, python, notes)
    if nvml:
        driver, driver_src = _text_or_none(nvml.get("driver_version")), "nvml"
        cuda_int = nvml.get("cuda_driver_version")
        if isinstance(cuda_int, int):
            cuda, cuda_src = parse_cuda_driver_int(cuda_int), "nvml"
        listed = nvml.get("gpus")
        rows = [g for g in listed if isinstance(g, dict)] if isinstance(listed, list) else []
        gpus = tuple(_gpu_from_nvml(i, g) for i, g in enumerate(rows))
        gpus_src = "nvml" if gpus else ""

    if not driver:
        driver, driver_src = _driver_from_files(host, notes)

    smi_gpus = None
    if nvml_hung:
        notes.append(ProbeNote("nvidia-smi", "not run: NVML hung, so the NVIDIA driver looks wedged "
                                             "(check `dmesg` for NVRM/Xid errors; a reboot usually "
                                             "clears it)"))
    elif not gpus or any(g.compute_capability is None for g in gpus):
        smi = _from_nvidia_smi(host, notes)
        if smi:
            smi_gpus, smi_driver = smi
            gpus, gpus_src = smi_gpus, "nvidia-smi --query-gpu"
            if not driver and smi_driver:
                driver, driver_src = smi_driver, "nvidia-smi --query-gpu"

    if not cuda and driver:
        cuda = _cuda_from_libcuda(host, python, notes)
        cuda_src = "cuDriverGetVersion" if cuda else None
    if not cuda and smi_gpus is not None and host.which("nvidia-smi"):
        banner = host.run([host.which("nvidia-smi") or "nvidia-smi"], TIMEOUT)
        if banner.ok:
            banner_driver, cuda = parse_nvidia_smi_banner(banner.stdout)
            cuda_src = "nvidia-smi" if cuda else None
            if not driver and banner_driver:
                driver, driver_src = banner_driver, "nvidia-smi"

    if not driver and not gpus:
        return None
    gpus = _at_most_max(gpus, gpus_src, notes)
    visible = _visible(host, gpus, notes)
    if driver and not gpus:
        notes.append(ProbeNote("nvidia", f"driver {driver} is loaded but no GPU could be listed"))
    return NvidiaInfo(
        driver_version=driver, driver_version_source=driver_src or "",
        driver_cuda=cuda, driver_cuda_source=cuda_src or "",
        gpus=gpus, gpus_source=gpus_src, visible=visible,
    )


def _driver_from_files(host: Host, notes: List[ProbeNote]) -> Tuple[Optional[str], Optional[str]]:
    """(driver version, the file it came from) from the kernel module's files."""
    for path in ("/proc/driver/nvidia/version", "/sys/module/nvidia/version"):
        text = host.read_text(path)
        found = parse_proc_driver_version(text) if text else None
        if found:
            return found, path
        if text is not None:
            notes.append(ProbeNote(path, "present but no driver version could be read"))
    return None, None


def _visible(host: Host, gpus: Tuple[NvidiaGpu, ...], notes: List[ProbeNote]) -> Optional[Tuple[int, ...]]:
    """The indexes CUDA_VISIBLE_DEVICES leaves to CUDA; None when it is unset (all of them)."""
    cvd = host.environ().get("CUDA_VISIBLE_DEVICES")
    if cvd is None or not gpus:
        return None
    visible = parse_visible_devices(cvd, gpus)
    hidden = len(gpus) - len(visible)
    if hidden:
        notes.append(ProbeNote(
            "CUDA_VISIBLE_DEVICES",
            f"CUDA_VISIBLE_DEVICES={cvd!r} hides {hidden} of {len(gpus)} GPU(s) from CUDA",
        ))
    return visible


def _at_most_max(gpus: Tuple[NvidiaGpu, ...], source: str, notes: List[ProbeNote]) -> Tuple[NvidiaGpu, ...]:
    if len(gpus) > MAX_GPUS:
        notes.append(ProbeNote(source or "nvidia", f"listed {len(gpus)} GPUs, more than any node "
                                                   f"has: kept the first {MAX_GPUS}"))
    return gpus[:MAX_GPUS]
