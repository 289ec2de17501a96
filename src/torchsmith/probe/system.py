"""OS, Python, CUDA toolkits, libraries, the environment variables that matter, schedulers."""

from __future__ import annotations

import json
import os
import re

from torchsmith import TYPE_CHECKING
from torchsmith.host import Host, PlatformInfo
from torchsmith.machine import (
    CudaToolkit,
    EnvInfo,
    OsInfo,
    ProbeNote,
    PythonInfo,
    SchedulerInfo,
)

if TYPE_CHECKING:
    from typing import Dict, List, Optional, Set, Tuple

__all__ = [
    "ENV_KEYS",
    "detect_env",
    "detect_os",
    "detect_python",
    "detect_scheduler",
    "detect_toolkits",
    "normalise_arch",
    "parse_os_release",
    "redact_url",
    "toolkit_version",
]

# Variables that change which libraries load or where packages come from.
ENV_KEYS = (
    "LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT",
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
    "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION", "ROCM_PATH",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONSTRAINT", "PIP_CONFIG_FILE",
    "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS",
    "UV_TORCH_BACKEND", "UV_CONSTRAINT",
    "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_OVERRIDE_CUDA", "CONDA_OVERRIDE_GLIBC",
    "VIRTUAL_ENV", "PYTORCH_CUDA_ALLOC_CONF", "TORCH_CUDA_ARCH_LIST",
    "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY",
)

_SCHEDULER_KEYS = {
    "slurm": ("SLURM_JOB_ID", "SLURM_JOB_PARTITION", "SLURM_JOB_NUM_NODES", "SLURM_NTASKS",
              "SLURM_CPUS_PER_TASK", "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS",
              "SLURM_NODELIST", "SLURM_JOB_NODELIST", "SLURMD_NODENAME", "SLURM_CLUSTER_NAME"),
    "pbs": ("PBS_JOBID", "PBS_QUEUE", "PBS_NODEFILE", "PBS_NUM_NODES"),
    "lsf": ("LSB_JOBID", "LSB_QUEUE", "LSB_HOSTS"),
    "sge": ("JOB_ID", "SGE_ROOT", "QUEUE", "NSLOTS"),
    "kubernetes": ("KUBERNETES_SERVICE_HOST",),
}
_SCHEDULER_MARKER = {"slurm": "SLURM_JOB_ID", "pbs": "PBS_JOBID", "lsf": "LSB_JOBID",
                     "sge": "SGE_ROOT", "kubernetes": "KUBERNETES_SERVICE_HOST"}

_ARCH = {"amd64": "x86_64", "x86_64": "x86_64", "x64": "x86_64", "aarch64": "aarch64",
         "arm64": "arm64", "armv8": "aarch64", "i686": "x86", "i386": "x86"}
_SYSTEM = {"Linux": "linux", "Windows": "windows", "Darwin": "macos"}


def normalise_arch(system: str, machine: str) -> str:
    """PyTorch's names: ``x86_64`` everywhere, ``aarch64`` on Linux, ``arm64`` on macOS."""
    arch = _ARCH.get(machine.lower(), machine.lower() or "unknown")
    if arch == "arm64" and system == "linux":
        return "aarch64"
    if arch == "aarch64" and system == "macos":
        return "arm64"
    return arch


# An os-release value is a name or a URL; a longer one is kept only in part.
_OS_RELEASE_VALUE = 256


def parse_os_release(text: str) -> Dict[str, str]:
    values: Dict[str, str] = {}
    for line in text.splitlines()[:200]:
        key, sep, value = line.partition("=")
        if sep and key.strip() and not key.startswith("#") and len(key) <= 64:
            values[key.strip()] = value.strip().strip('"').strip("'")[:_OS_RELEASE_VALUE]
    return values


def redact_url(value: str) -> str:
    """Hide credentials before a profile is written: :func:`torchsmith.redact.redact`."""
    from torchsmith.redact import redact

    return redact(value)


def detect_os(host: Host, plat: PlatformInfo, notes: List[ProbeNote]) -> OsInfo:
    system = _SYSTEM.get(plat.system, plat.system.lower() or "unknown")
    info: Dict[str, object] = {
        "system": system,
        "arch": normalise_arch(system, plat.machine),
        "kernel": plat.release or None,
        "cpu_count": plat.cpu_count,
        "source": "platform",
    }
    if plat.libc.startswith("glibc"):
        info["glibc"] = plat.libc.split()[-1]
    if system == "linux":
        text = host.read_text("/etc/os-release") or host.read_text("/usr/lib/os-release")
        if text:
            rel = parse_os_release(text)
            info["distro"] = rel.get("ID")
            info["distro_version"] = rel.get("VERSION_ID")
            info["distro_name"] = rel.get("PRETTY_NAME")
        osrelease = host.read_text("/proc/sys/kernel/osrelease") or plat.release or ""
        if "microsoft" in osrelease.lower() or "WSL_DISTRO_NAME" in host.environ():
            info["wsl"] = True
            wsl_libs = host.list_dir("/usr/lib/wsl/lib") or []
            info["wsl_libcuda"] = any(n.startswith("libcuda.so") for n in wsl_libs)
            if not info["wsl_libcuda"]:
                notes.append(ProbeNote(
                    "/usr/lib/wsl/lib",
                    "WSL2 without /usr/lib/wsl/lib/libcuda.so: the Windows NVIDIA driver is not "
                    "exposed to Linux (install the Windows driver; never a Linux driver in WSL)",
                ))
        info["container"] = _detect_container(host)
    return OsInfo(**info)  # type: ignore[arg-type]


def _detect_container(host: Host) -> Optional[str]:
    env = host.environ()
    if env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if env.get("APPTAINER_CONTAINER") or env.get("SINGULARITY_CONTAINER"):
        return "apptainer"
    if host.read_text("/run/.containerenv") is not None or env.get("container") == "podman":
        return "podman"
    if host.read_text("/.dockerenv") is not None:
        return "docker"
    cgroup = host.read_text("/proc/1/cgroup") or ""
    if "docker" in cgroup or "containerd" in cgroup:
        return "docker"
    if "kubepods" in cgroup:
        return "kubernetes"
    return None


def detect_python(host: Host, plat: PlatformInfo) -> PythonInfo:
    env = host.environ()
    virtualenv = None
    if plat.python_prefix != plat.python_base_prefix:
        virtualenv = plat.python_prefix
    elif env.get("VIRTUAL_ENV"):
        virtualenv = env["VIRTUAL_ENV"]
    conda_prefix = None
    if host.list_dir(os.path.join(plat.python_prefix, "conda-meta")) is not None:
        conda_prefix = plat.python_prefix
    return PythonInfo(
        version=plat.python_version,
        implementation=plat.python_implementation,
        free_threaded=plat.python_free_threaded,
        executable=plat.python_executable,
        prefix=plat.python_prefix,
        virtualenv=virtualenv,
        conda_prefix=conda_prefix,
        source="this interpreter",
    )


# Patterns as text, compiled (and cached) by re when first used: only where a toolkit is found.
_CUDA_H_VERSION = r"(?m)^#define CUDA_VERSION (\d{1,9})\b"
_CUDA_H_HEAD = 128 * 1024


def toolkit_version(host: Host, path: str) -> Tuple[Optional[str], str]:
    """(``12.4``, how it was read) for a CUDA toolkit directory; (None, "") when unknown."""
    text = host.read_text(os.path.join(path, "version.json"))
    if text:
        try:
            version = json.loads(text)["cuda"]["version"]
            return ".".join(str(version).split(".")[:2]), "version.json"
        except (ValueError, KeyError, TypeError, RecursionError):
            pass
    text = host.read_text(os.path.join(path, "version.txt"))
    if text:
        match = re.search(r"CUDA Version\s+(\d+\.\d+)", text)
        if match:
            return match.group(1), "version.txt"
    # Toolkits installed from wheels or conda have neither file, but always the driver API header,
    # whose version line is in its first ~15 KB (of 1.1 MB in CUDA 13).
    text = host.read_text(os.path.join(path, "include", "cuda.h"), _CUDA_H_HEAD)
    match = re.search(_CUDA_H_VERSION, text) if text else None
    if match:
        number = int(match.group(1))
        return f"{number // 1000}.{(number % 1000) // 10}", "include/cuda.h"
    match = re.search(r"cuda-(\d+\.\d+)$", path.rstrip("/"))
    if match:
        return match.group(1), "directory name"
    return None, ""


_NVCC_RELEASE = r"release (\d+\.\d+)"


def detect_toolkits(host: Host, notes: List[ProbeNote]) -> Tuple[CudaToolkit, ...]:
    """CUDA toolkits on disk: CUDA_HOME/CUDA_PATH, /usr/local/cuda*, and nvcc on PATH."""
    env = host.environ()
    candidates: List[str] = []
    for key in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        if env.get(key):
            candidates.append(env[key])
    for name in host.list_dir("/usr/local") or []:
        if name == "cuda" or name.startswith("cuda-"):
            candidates.append(f"/usr/local/{name}")
    found: Dict[str, CudaToolkit] = {}
    installs: Set[str] = set()  # real paths: one install behind several links is listed once
    for path in dict.fromkeys(candidates):
        real = host.real_path(path)
        if real in installs:
            continue
        installs.add(real)
        version, source = toolkit_version(host, path)
        bin_names = host.list_dir(os.path.join(path, "bin")) or []
        nvcc = os.path.join(path, "bin", "nvcc") if "nvcc" in bin_names else None
        if version or nvcc:
            found[path] = CudaToolkit(version=version, path=path, nvcc=nvcc,
                                      source=source or "directory")
    nvcc_on_path = host.which("nvcc")
    known = {t.nvcc for t in found.values()}
    if nvcc_on_path and nvcc_on_path not in known and not any(
        os.path.dirname(nvcc_on_path) == os.path.join(p, "bin") for p in found
    ) and not found:
        result = host.run([nvcc_on_path, "--version"], 10.0)
        match = re.search(_NVCC_RELEASE, result.stdout) if result.ok else None
        if match:
            found[nvcc_on_path] = CudaToolkit(version=match.group(1), path=nvcc_on_path,
                                              nvcc=nvcc_on_path, source="nvcc --version")
        elif not result.ok:
            notes.append(ProbeNote("nvcc", result.problem()))
    return tuple(found.values())


def _find_libraries(listings: Dict[str, List[str]], prefix: str) -> Tuple[str, ...]:
    return tuple(os.path.join(directory, name) for directory, names in listings.items()
                 for name in names if name.startswith(prefix) and ".so" in name)


def detect_env(host: Host, plat: PlatformInfo) -> EnvInfo:
    env = host.environ()
    variables = {k: redact_url(env[k]) for k in ENV_KEYS if k in env}
    lib_dirs = [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d]
    multiarch = "aarch64-linux-gnu" if plat.machine.lower() in ("aarch64", "arm64") else "x86_64-linux-gnu"
    lib_dirs += [f"/usr/lib/{multiarch}", "/usr/local/cuda/lib64", "/usr/lib64"]
    if plat.system != "Linux":
        return EnvInfo(variables=variables)
    listings = {directory: host.list_dir(directory) or [] for directory in dict.fromkeys(lib_dirs)}
    return EnvInfo(
        variables=variables,
        cudnn_libraries=_find_libraries(listings, "libcudnn.so"),
        nccl_libraries=_find_libraries(listings, "libnccl.so"),
    )


def detect_scheduler(host: Host) -> Optional[SchedulerInfo]:
    env = host.environ()
    for kind, marker in _SCHEDULER_MARKER.items():
        if env.get(marker):
            keys = _SCHEDULER_KEYS[kind]
            job = env.get({"slurm": "SLURM_JOB_ID", "pbs": "PBS_JOBID", "lsf": "LSB_JOBID",
                           "sge": "JOB_ID"}.get(kind, ""), None)
            return SchedulerInfo(kind=kind, job_id=job,
                                 variables={k: env[k] for k in keys if k in env})
    return None
