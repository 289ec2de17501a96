"""The battery's inputs: every external tool's output spoiled in every way we know, as captures.

A *slot* is one thing torchsmith reads (a command's output or a file) inside a real recorded
machine from tests/hosts that makes the probe read it; a *spoiler* turns the real text into
garbage, a truncation, a flood, non-UTF-8, a hang... Replaying the capture with ``--host`` runs
the real probe, then the real command, over the spoiled answer.
"""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from hypothesis import strategies as st

HOSTS = Path(__file__).resolve().parents[1] / "hosts"
SMI_QUERY = ("nvidia-smi --query-gpu=index,name,compute_cap,memory.total,uuid,pci.bus_id,"
             "mig.mode.current,driver_version --format=csv,noheader,nounits")


class Slot(NamedTuple):
    tool: str
    capture: str  # file name in tests/hosts
    kind: str  # "command" or "file"
    key: str  # command key or path
    prepare: Optional[Callable[[Dict[str, Any]], None]] = None  # make the probe reach the slot


def _fail(capture: Dict[str, Any], key: str) -> None:
    capture["commands"][key] = {"returncode": 1, "stdout": "", "stderr": "failed",
                                "timed_out": False, "not_found": False}


def _no_rocminfo(capture: Dict[str, Any]) -> None:
    _fail(capture, "rocminfo")


def _amd_smi(capture: Dict[str, Any]) -> None:
    _fail(capture, "rocminfo")
    capture["which"]["amd-smi"] = "/opt/rocm/bin/amd-smi"
    capture["commands"]["amd-smi static --json"] = {
        "returncode": 0, "stdout": json.dumps({"gpu_data": [{"asic": {
            "market_name": "AMD Instinct MI300X", "target_graphics_version": "gfx942"}}]})}


def _hipconfig(capture: Dict[str, Any]) -> None:
    capture["which"]["hipconfig"] = "/opt/rocm/bin/hipconfig"
    capture["commands"]["hipconfig --version"] = {"returncode": 0, "stdout": "6.3.42131-fa1d09cbd"}


def _nvcc(capture: Dict[str, Any]) -> None:
    capture["which"]["nvcc"] = "/opt/cuda/bin/nvcc"
    capture["commands"]["nvcc --version"] = {
        "returncode": 0, "stdout": "nvcc: NVIDIA (R) Cuda compiler driver\n"
                                   "Cuda compilation tools, release 12.4, V12.4.131\n"}


SLOTS: Tuple[Slot, ...] = (
    Slot("nvml snippet JSON", "linux-x86_64-h100-drv535.json", "command",
         "python torchsmith:snippets/nvml_probe.py"),
    Slot("cuDriverGetVersion snippet JSON", "linux-x86_64-driver-mismatch-drv580.json", "command",
         "python torchsmith:snippets/cuda_driver.py"),
    Slot("nvidia-smi --query-gpu", "linux-x86_64-b200-drv610-container.json", "command", SMI_QUERY),
    Slot("nvidia-smi banner", "linux-x86_64-b200-drv610-container.json", "command", "nvidia-smi"),
    Slot("/proc/driver/nvidia/version", "linux-x86_64-smi-missing-drv470.json", "file",
         "/proc/driver/nvidia/version"),
    Slot("rocminfo", "linux-x86_64-mi300x-rocm6.3.json", "command", "rocminfo"),
    Slot("rocm_agent_enumerator", "linux-x86_64-rx7600xt-rocm6.2-override.json", "command",
         "rocm_agent_enumerator", _no_rocminfo),
    Slot("amd-smi static --json", "linux-x86_64-mi300x-rocm6.3.json", "command",
         "amd-smi static --json", _amd_smi),
    Slot("hipconfig --version", "linux-x86_64-rx7600xt-rocm6.2-override.json", "command",
         "hipconfig --version", _hipconfig),
    Slot("id", "linux-x86_64-mi300x-rocm6.3.json", "command", "id"),
    Slot("ROCm .info/version", "linux-x86_64-rx7900xtx-rocm6.1.json", "file", "/opt/rocm/.info/version"),
    Slot("nvcc --version", "linux-x86_64-cpu-only.json", "command", "nvcc --version", _nvcc),
    Slot("sysctl brand string", "macos-arm64-m1pro.json", "command", "sysctl -n machdep.cpu.brand_string"),
    Slot("sysctl proc_translated", "macos-rosetta-m1pro.json", "command",
         "sysctl -n sysctl.proc_translated"),
    Slot("dpkg-query nvidia-jetpack", "jetson-orin-jp6.2.json", "command",
         "dpkg-query -W -f=${Version} nvidia-jetpack"),
    Slot("/etc/nv_tegra_release", "jetson-orin-jp6.2.json", "file", "/etc/nv_tegra_release"),
    Slot("CUDA version.json", "jetson-orin-jp6.2.json", "file", "/usr/local/cuda/version.json"),
    Slot("/etc/os-release", "linux-x86_64-cpu-only.json", "file", "/etc/os-release"),
)


class Spoiled(NamedTuple):
    how: str
    text: Optional[str]  # None: the file or command is absent
    answer: Dict[str, Any]  # extra fields of a command's answer (returncode, timed_out...)


def _random_bytes(seed: int, size: int) -> str:
    rng = random.Random(seed)
    return bytes(rng.getrandbits(8) for _ in range(size)).decode("utf-8", errors="replace")


def spoilers(valid: str, seed: int = 0) -> List[Spoiled]:
    """Every way we spoil one real output ``valid``; deterministic."""
    ok: Dict[str, Any] = {"returncode": 0}
    third = max(1, len(valid) // 3)
    digits = re.sub(r"\d+", "9" * 5000, valid)
    line = valid.rstrip("\n") + "\n"
    flood = line * (3_000_000 // len(line) + 1)
    return [
        Spoiled("empty", "", ok),
        Spoiled("blank lines", "\n \n\t\n", ok),
        Spoiled("truncated at a third", valid[:third], ok),
        Spoiled("truncated at two thirds", valid[:2 * third], ok),
        Spoiled("random bytes (non-UTF-8)", _random_bytes(seed, 4096), ok),
        Spoiled("control characters and lone surrogates", "\x00\x1b[31m\ud800\udfff\x7f\r" + valid, ok),
        Spoiled("3 MB flood of its own lines", flood, ok),
        Spoiled("5000-digit numbers", digits, ok),
        Spoiled("JSON nested 100000 deep", "[" * 100_000 + "]" * 100_000, ok),
        Spoiled("JSON of the wrong types", json.dumps({"gpus": "x", "driver_version": 5, "version": [],
                                                       "cuda_driver_version": "12", "error": {}}), ok),
        Spoiled("JSON NaN and Infinity", '{"version": NaN, "gpus": [{"index": Infinity}]}', ok),
        Spoiled("CRLF and NUL separators", valid.replace("\n", "\r\n").replace(",", ",\x00"), ok),
        Spoiled("exit 1 with garbage on stderr", valid,
                {"returncode": 1, "stderr": _random_bytes(seed + 1, 300)}),
        Spoiled("killed by a signal", "", {"returncode": -9}),
        Spoiled("hung (timed out)", "", {"returncode": None, "timed_out": True}),
        Spoiled("missing", None, {}),
    ]


def spoiled_capture(slot: Slot, spoiled: Spoiled) -> Dict[str, Any]:
    """The slot's capture with its answer replaced."""
    capture: Dict[str, Any] = json.loads((HOSTS / slot.capture).read_text(encoding="utf-8"))
    for section in ("files", "dirs", "which", "commands", "environ"):
        capture.setdefault(section, {})
    if slot.prepare:
        slot.prepare(capture)
    if slot.kind == "file":
        capture["files"][slot.key] = spoiled.text
        return capture
    if spoiled.text is None:
        capture["commands"].pop(slot.key, None)
        return capture
    answer = {"returncode": 0, "stdout": spoiled.text, "stderr": "", "timed_out": False, "not_found": False}
    answer.update(spoiled.answer)
    capture["commands"][slot.key] = answer
    return capture


def valid_text(slot: Slot) -> str:
    capture: Dict[str, Any] = json.loads((HOSTS / slot.capture).read_text(encoding="utf-8"))
    capture.setdefault("which", {})
    capture.setdefault("commands", {})
    if slot.prepare:
        slot.prepare(capture)
    if slot.kind == "file":
        return str(capture.get("files", {}).get(slot.key) or "")
    return str(capture["commands"].get(slot.key, {}).get("stdout") or "")


def base_profile() -> Dict[str, Any]:
    """A real, valid host profile to spoil."""
    return copy.deepcopy(json.loads((HOSTS / "linux-x86_64-h100-drv535.expected.json").read_text()))


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
# Any JSON value, small: what a spoiled field of a profile or a lock may hold.
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _TEXT),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8)
