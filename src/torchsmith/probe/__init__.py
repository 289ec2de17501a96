"""``probe``: a fast picture of the machine, without importing torch.

Every fact records where it came from; a source that fails becomes a :class:`ProbeNote`
instead of an exception. All reads go through a :class:`~torchsmith.host.Host`.
"""

from __future__ import annotations

import collections.abc
import os

from torchsmith import TYPE_CHECKING
from torchsmith.host import Host, PlatformInfo
from torchsmith.machine import JetsonInfo, Machine, ProbeNote, PythonInfo
from torchsmith.records import replace

if TYPE_CHECKING:
    from typing import List, Optional

__all__ = ["inspect_python", "load_machine", "probe"]

_SNIPPET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "snippets", "python_info.py")


def inspect_python(host: Host, executable: str, notes: List[ProbeNote]) -> Optional[PythonInfo]:
    """Facts about another interpreter, read by running a stdlib-only snippet in it."""
    result = host.run([executable, _SNIPPET], 15.0)
    if not result.ok:
        notes.append(ProbeNote(f"python {executable}", result.problem()))
        return None
    try:
        data = result.last_json()
        return PythonInfo(
            version=str(data["version"]),
            implementation=str(data.get("implementation", "CPython")),
            free_threaded=bool(data.get("free_threaded")),
            executable=str(data.get("executable") or executable),
            prefix=str(data.get("prefix", "")),
            virtualenv=data.get("virtualenv"),
            conda_prefix=data.get("conda_prefix"),
            source=f"ran {executable}",
        )
    except (ValueError, KeyError, TypeError):
        notes.append(ProbeNote(f"python {executable}", "printed no usable JSON"))
        return None


def _igpu_only_jetson(jetson: Optional[JetsonInfo]) -> bool:
    """Jetsons before Thor (L4T < 38) drive their iGPU with nvgpu: /proc/driver/nvidia/version
    then reports the L4T release, and nvidia-smi (JetPack 6) shows "Orin (nvgpu)" with most
    fields N/A, so the discrete-GPU probe would only add wrong facts. Thor (L4T 38+) uses the
    same OpenRM driver as servers, with a real driver version and NVML."""
    if jetson is None:
        return False
    major = (jetson.l4t or "").split(".")[0]
    return not (major.isdigit() and int(major) >= 38)


def _site_of(plat: PlatformInfo, python: PythonInfo) -> PlatformInfo:
    """The platform with the inspected environment's prefix: pip reads its site pip.conf there
    (torchsmith's guard of that environment lives in it), not in torchsmith's own."""
    if python.prefix and python.prefix != plat.python_prefix:
        return replace(plat, python_prefix=python.prefix)
    return plat


def probe(host: Host, python: Optional[str] = None) -> Machine:
    """Describe the machine behind ``host``. ``python``: inspect that interpreter instead.

    Its commands share one time budget (:mod:`torchsmith.host.budget`), so a machine whose
    tools all hang is still described within seconds, each silent tool as a note."""
    # The detectors, imported here: `--host profile.json` reads a profile and probes nothing.
    from torchsmith.host.budget import BudgetHost, probe_budget
    from torchsmith.probe.apple import detect_apple
    from torchsmith.probe.indexes import detect_index_settings
    from torchsmith.probe.intel import detect_intel_gpus
    from torchsmith.probe.jetson import detect_jetson
    from torchsmith.probe.nvidia import detect_nvidia
    from torchsmith.probe.rocm import detect_rocm
    from torchsmith.probe.system import (
        detect_env,
        detect_os,
        detect_python,
        detect_scheduler,
        detect_toolkits,
    )

    notes: List[ProbeNote] = []
    host = BudgetHost(host, probe_budget(host.environ()))
    plat = host.platform()
    os_info = detect_os(host, plat, notes)
    python_info = detect_python(host, plat)
    if python:
        python_info = inspect_python(host, python, notes) or python_info
    jetson = detect_jetson(host, notes) if os_info.system == "linux" else None
    nvidia = None
    if os_info.system in ("linux", "windows") and not _igpu_only_jetson(jetson):
        nvidia = detect_nvidia(host, notes)
    rocm = detect_rocm(host, notes) if os_info.system in ("linux", "windows") else None
    return Machine(
        os=os_info,
        python=python_info,
        nvidia=nvidia,
        jetson=jetson,
        rocm=rocm,
        intel_gpus=detect_intel_gpus(host, notes) if os_info.system in ("linux", "windows") else (),
        apple=detect_apple(host, plat, notes),
        cuda_toolkits=detect_toolkits(host, notes) if os_info.system != "macos" else (),
        env=replace(detect_env(host, plat),
                                index_settings=detect_index_settings(host, _site_of(plat, python_info))),
        scheduler=detect_scheduler(host),
        notes=tuple(notes),
    )


def load_machine(path: str) -> Machine:
    """Read ``--host FILE``: a host profile (``probe --json``) or a capture (``probe --record``)."""
    from torchsmith.errors import ProfileError, load_json_file
    from torchsmith.host.recorded import RecordedHost, is_capture

    data = load_json_file(path, "host profile", ProfileError)
    if isinstance(data, collections.abc.Mapping) and "data" in data and "kind" not in data:
        data = data["data"]  # accept the whole `probe --json` envelope too
    if is_capture(data):  # a `probe --record` capture: probe the machine it recorded
        return probe(RecordedHost(data))
    return Machine.from_json(data)
