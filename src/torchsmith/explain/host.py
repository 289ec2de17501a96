"""What the machine adds to an explanation: only facts the host profile has, each one line.

A signature lists the kinds it wants (``host_facts`` in the data); each kind renders from the
:class:`Machine` and, where the log carried a comparable fact (an arch, a glibc version), says
how the two compare. Nothing is guessed: an unknown fact is left out.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from torchsmith.compat import kernel_for, parse_cc, sm_arch
from torchsmith.machine import Machine, NvidiaGpu
from torchsmith.versions import version_tuple

__all__ = ["host_facts"]

# Absence is a fact only when something looked: a probe or a profile, not a few stated facts.
NO_GPU = "No NVIDIA GPU found"
NO_DRIVER = "No NVIDIA driver found"
NO_TOOLKIT = "No CUDA toolkit (nvcc) found"
NO_ROCM = "No ROCm installation found"
NO_LD_LIBRARY_PATH = "LD_LIBRARY_PATH is not set"
_ABSENCE = frozenset({NO_GPU, NO_DRIVER, NO_TOOLKIT, NO_ROCM, NO_LD_LIBRARY_PATH})


def _gpu_line(gpu: NvidiaGpu) -> str:
    return f"GPU {gpu.index}: {gpu.name} ({gpu.arch or 'architecture unknown'})"


def _coverage(gpus: Sequence[NvidiaGpu], built_for: List[str], *, integrated: bool) -> List[str]:
    """Which GPUs the build's kernels serve, by the one rule (:func:`torchsmith.compat.kernel_for`)."""
    exact, compatible, missing = set(), set(), set()
    for gpu in gpus:
        cc = parse_cc(gpu.compute_capability)
        if cc is None or not gpu.arch:
            continue
        kernel = kernel_for(cc, built_for, integrated=integrated)
        if kernel is None:
            missing.add(gpu.arch)
        elif kernel.name == gpu.arch:
            exact.add(gpu.arch)
        else:
            compatible.add(f"{gpu.arch} (through {kernel.how.upper()} {kernel.name})")
    lines = []
    if missing:
        lines.append(f"Not in the build's arch list: {', '.join(sorted(missing))}")
    if exact:
        lines.append(f"In the build's arch list: {', '.join(sorted(exact))}")
    if compatible:
        lines.append(f"Served by a compatible kernel in the build: {', '.join(sorted(compatible))}")
    return lines


def _gpus(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    lines: List[str] = []
    gpus = m.nvidia.gpus if m.nvidia else ()
    lines.extend(_gpu_line(g) for g in gpus)
    if m.jetson is not None:
        cc = m.jetson.compute_capability
        arch = sm_arch(cc) if cc else "architecture unknown"
        lines.append(f"Jetson {m.jetson.module or m.jetson.model or ''} ({arch})".replace("  ", " "))
    if not lines:
        return [NO_GPU]
    arches = {g.arch for g in gpus if g.arch}
    built_for = facts.get("arch_list")
    if isinstance(built_for, list) and arches:
        lines.extend(_coverage(gpus, [str(a) for a in built_for], integrated=m.jetson is not None))
    logged = facts.get("arch")
    if isinstance(logged, str) and logged.startswith("sm_") and arches and logged not in arches:
        lines.append(f"The log's GPU is {logged}, which this machine does not have: the log may come "
                     f"from another machine")
    return lines


def _driver(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    nv = m.nvidia
    if m.jetson is not None and nv is None:  # no desktop driver: it comes with the L4T release
        return [f"Jetson: the GPU driver is part of L4T {m.jetson.l4t or '(release unknown)'}"]
    if nv is None or not (nv.driver_version or nv.driver_cuda):
        return [NO_DRIVER]
    line = f"NVIDIA driver {nv.driver_version or 'version unknown'}"
    if nv.driver_cuda:
        line += f", supports CUDA up to {nv.driver_cuda}"
    lines = [line]
    logged = facts.get("driver_cuda")
    differs = isinstance(logged, str) and version_tuple(logged) != version_tuple(nv.driver_cuda or "")
    if nv.driver_cuda and differs:
        lines.append(f"The log reports a driver for CUDA {logged}: the log may come from another machine "
                     f"or from before a driver change")
    return lines


def _platform(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    line = f"Platform {m.platform}"
    if m.os.distro_name:
        line += f" ({m.os.distro_name})"
    return [line]


def _python(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    py = m.python
    if not py.version:
        return []
    where = f" at {py.executable}" if py.executable else ""
    env = ""
    if py.conda_prefix:
        env = f", conda env {py.conda_prefix}"
    elif py.virtualenv:
        env = f", venv {py.virtualenv}"
    lines = [f"Python {py.version} ({py.implementation}){where}{env}"]
    wheel_python = facts.get("wheel_python")
    if isinstance(wheel_python, str) and py.minor:
        mine = "cp" + py.minor.replace(".", "")
        if wheel_python != mine:
            lines.append(f"The wheel is for {wheel_python}; this Python needs {mine} wheels")
    return lines


def _glibc(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    if not m.os.glibc:
        return []
    lines = [f"glibc {m.os.glibc}"]
    needed = facts.get("version")
    if isinstance(needed, str) and needed.startswith("GLIBC_"):
        want = version_tuple(needed[len("GLIBC_"):])
        have = version_tuple(m.os.glibc)
        if want and have:
            verdict = "older than" if have < want else "at least"
            lines.append(f"This system's glibc {m.os.glibc} is {verdict} the {needed[len('GLIBC_'):]} needed")
    return lines


def _wsl(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    if not m.os.wsl:
        return []
    if m.os.wsl_libcuda is None:
        return ["WSL2"]
    state = "present" if m.os.wsl_libcuda else "missing: install or update the NVIDIA driver on Windows"
    return [f"WSL2: /usr/lib/wsl/lib/libcuda.so {state}"]


def _container(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    return [f"Running inside {m.os.container}"] if m.os.container else []


def _rocm(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    r = m.rocm
    if r is None:
        return [NO_ROCM]
    lines = [f"ROCm {r.version or 'version unknown'}"]
    lines.extend(f"AMD GPU: {g.name} ({g.gfx or 'gfx unknown'})" for g in r.gpus)
    if r.hsa_override_gfx_version:
        lines.append(f"HSA_OVERRIDE_GFX_VERSION={r.hsa_override_gfx_version} is set")
    return lines


def _apple(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    a = m.apple
    if a is None:
        return []
    chip = a.chip or ("Apple silicon" if a.apple_silicon else "Intel Mac")
    line = f"{chip}, macOS {a.macos_version or 'version unknown'}"
    if not a.mps_capable:
        line += ", no MPS"
    return [line]


def _toolkits(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    if not m.cuda_toolkits:
        return [NO_TOOLKIT]
    return [f"CUDA toolkit {tk.version or 'version unknown'} at {tk.path}" for tk in m.cuda_toolkits]


def _visible_devices(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    nv = m.nvidia
    value = m.env.variables.get("CUDA_VISIBLE_DEVICES")
    lines = []
    if value is not None:
        lines.append(f"CUDA_VISIBLE_DEVICES={value}")
    if nv is not None and nv.gpus:
        visible = len(nv.visible_gpus)
        lines.append(f"{visible} of {len(nv.gpus)} GPU(s) visible: valid indexes are 0 to {visible - 1}"
                     if visible else f"None of the {len(nv.gpus)} GPU(s) is visible")
    return lines


def _jetson(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    j = m.jetson
    if j is None:
        return []
    parts = [f"L4T {j.l4t}" if j.l4t else "", f"JetPack {j.jetpack}" if j.jetpack else "",
             f"CUDA {j.cuda}" if j.cuda else ""]
    return [f"Jetson {j.module or j.model or ''}: " + ", ".join(p for p in parts if p)]


def _ld_library_path(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    value = m.env.variables.get("LD_LIBRARY_PATH")
    if value is None:
        return [NO_LD_LIBRARY_PATH]
    lines = [f"LD_LIBRARY_PATH={value}"]
    cuda_dirs = [d for d in value.split(":") if "cuda" in d.lower() or "nvidia" in d.lower()]
    if cuda_dirs:
        lines.append(f"CUDA directories on LD_LIBRARY_PATH, searched before the libraries torch ships: "
                     f"{', '.join(cuda_dirs)}")
    return lines


def _system_libraries(m: Machine, facts: Mapping[str, Any]) -> List[str]:
    """cuDNN/NCCL copies on LD_LIBRARY_PATH or the system paths: the loader may pick them first."""
    lines = []
    if m.env.nccl_libraries:
        lines.append(f"System NCCL libraries that can be loaded instead of torch's: "
                     f"{', '.join(m.env.nccl_libraries)}")
    if m.env.cudnn_libraries:
        lines.append(f"System cuDNN libraries that can be loaded instead of torch's: "
                     f"{', '.join(m.env.cudnn_libraries)}")
    return lines


_RENDER: Dict[str, Callable[[Machine, Mapping[str, Any]], List[str]]] = {
    "apple": _apple,
    "container": _container,
    "driver": _driver,
    "glibc": _glibc,
    "gpus": _gpus,
    "jetson": _jetson,
    "ld_library_path": _ld_library_path,
    "platform": _platform,
    "python": _python,
    "rocm": _rocm,
    "system_libraries": _system_libraries,
    "toolkits": _toolkits,
    "visible_devices": _visible_devices,
    "wsl": _wsl,
}


def host_facts(kinds: Sequence[str], facts: Mapping[str, Any], machine: Optional[Machine],
               *, looked: bool = True) -> List[str]:
    """The machine's facts of the given kinds, one line each, in the order asked.

    ``looked`` is False when the machine is only what the user stated: then what is missing is
    unknown, not absent, and is not reported.
    """
    if machine is None:
        return []
    lines: List[str] = []
    for kind in kinds:
        for line in _RENDER[kind](machine, facts):
            if line not in lines and (looked or line not in _ABSENCE):
                lines.append(line)
    return lines
