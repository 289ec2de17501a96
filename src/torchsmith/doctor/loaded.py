"""The CUDA libraries a process actually loaded, where from, and whether torch was built with them.

``torch_check.py`` lists the libraries mapped into the process after importing torch and touching
cuBLAS, cuDNN and NCCL (``/proc/self/maps``, or the module list on Windows), with the version
each one reports of itself. This module reads that list (pure): a library from outside torch's own
wheels (or the conda environment that installed torch) whose version differs from the one torch
was built with is a shadowing one. Variables that do not steer the loader (CUDA_HOME) are no
evidence either way.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from torchsmith.doctor.build import torch_build
from torchsmith.records import dataclass
from torchsmith.versions import version_tuple

__all__ = ["LoadedLibrary", "expected_versions", "loaded_libraries", "shadowing", "trusted_dirs"]

# CUDA libraries torch is built with (stems: libcudnn.so.9 and cudnn64_9.dll are both "cudnn").
# The driver's own (libcuda, libnvidia-ml...) belong to the driver checks, not here.
TORCH_BUILT_WITH = ("cudnn", "cublas", "cublaslt", "cudart", "nccl", "cufft", "curand", "cusolver",
                    "cusparse", "cusparselt", "nvrtc", "nvjitlink", "cupti", "nvshmem_host", "cufile")
# The wheel (name without its -cuNN suffix) that ships each library: torch pins these wheels.
_WHEEL_OF = {"cudnn": "nvidia-cudnn", "cublas": "nvidia-cublas", "cublaslt": "nvidia-cublas",
             "cudart": "nvidia-cuda-runtime", "nccl": "nvidia-nccl", "cufft": "nvidia-cufft",
             "curand": "nvidia-curand", "cusolver": "nvidia-cusolver", "cusparse": "nvidia-cusparse",
             "cusparselt": "nvidia-cusparselt", "nvrtc": "nvidia-cuda-nvrtc",
             "nvjitlink": "nvidia-nvjitlink", "cupti": "nvidia-cuda-cupti",
             "nvshmem_host": "nvidia-nvshmem", "cufile": "nvidia-cufile"}


@dataclass(frozen=True)
class LoadedLibrary:
    path: str
    stem: str  # cudnn, cublaslt, nccl...
    version: Tuple[int, ...]  # () when neither the library nor its file name tells
    version_source: str  # "cudnnGetVersion() = 91900" or "the file name"


def stem_of(path: str) -> str:
    base = re.split(r"[\\/]", path)[-1]
    stem = re.sub(r"^lib", "", base).split(".")[0]
    return re.sub(r"(64)?_\d+$", "", stem).lower()


def _decode(symbol: str, number: int) -> Tuple[int, ...]:
    """A version number as its library encodes it (the headers' *_VERSION macros)."""
    if symbol == "cudnnGetVersion":  # 9.x: major*10000 + minor*100 + patch; before: *1000
        return (number // 10000, number % 10000 // 100, number % 100) if number >= 90000 else \
            (number // 1000, number % 1000 // 100, number % 100)
    if symbol == "ncclGetVersion":  # 2.9+: major*10000 + minor*100 + patch; before: *1000
        return (number // 10000, number % 10000 // 100, number % 100) if number >= 20900 else \
            (number // 1000, number % 1000 // 100, number % 100)
    if symbol == "cublasLtGetVersion":
        return number // 10000, number % 10000 // 100, number % 100
    if symbol in ("cudaRuntimeGetVersion", "cuDriverGetVersion"):  # major*1000 + minor*10
        return number // 1000, number % 1000 // 10
    return ()


def _file_version(path: str) -> Tuple[int, ...]:
    """9.1.0 of libcudnn.so.9.1.0, 12 of cublas64_12.dll."""
    base = re.split(r"[\\/]", path)[-1]
    match = re.search(r"\.so\.(\d+(?:\.\d+)*)$", base) or re.search(r"_(\d+)\.dll$", base, re.I)
    return tuple(int(p) for p in match.group(1).split(".")) if match else ()


def loaded_libraries(loaded: Any) -> List[LoadedLibrary]:
    """The CUDA libraries torch builds with, from ``torch_check.py``'s ``loaded`` report."""
    libraries = []
    for entry in (loaded.get("libraries") if isinstance(loaded, dict) else None) or ():
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str) or stem_of(path) not in TORCH_BUILT_WITH:
            continue
        symbol, number = entry.get("symbol"), entry.get("reported")
        version: Tuple[int, ...] = ()
        if isinstance(symbol, str) and isinstance(number, int) and not isinstance(number, bool):
            version, source = _decode(symbol, number), f"{symbol}() = {number}"
        if not version:
            version, source = _file_version(path), "the file name"
        libraries.append(LoadedLibrary(path, stem_of(path), version, source))
    return libraries


def _norm(path: str) -> str:
    path = path.replace("\\", "/")
    return path.lower() if re.match(r"^[A-Za-z]:/", path) else path


def trusted_dirs(report: Dict[str, Any]) -> List[str]:
    """Where torch's own CUDA libraries live: torch/lib, the nvidia/* wheels beside torch, and
    the conda environment's lib when conda installed torch (its CUDA packages are torch's)."""
    dynamic = report.get("dynamic") if isinstance(report.get("dynamic"), dict) else {}
    torch_file = (dynamic or {}).get("file")
    torch_dir = str((report.get("torch") or {}).get("path") or "")
    if not torch_dir and isinstance(torch_file, str):
        torch_dir = re.sub(r"[\\/][^\\/]*$", "", torch_file)
    dirs = []
    if torch_dir:
        site = re.sub(r"[\\/][^\\/]*$", "", _norm(torch_dir))
        dirs += [_norm(torch_dir) + "/", site + "/nvidia/"]
    conda_prefix = (report.get("python") or {}).get("conda_prefix")
    if conda_prefix and any(r.get("name") == "pytorch" for r in report.get("conda") or ()):
        dirs += [_norm(str(conda_prefix)) + "/lib/", _norm(str(conda_prefix)) + "/library/bin/"]
    return dirs


def _pins(report: Dict[str, Any]) -> Dict[str, Tuple[str, str]]:
    """wheel name (no -cuNN) -> (pinned version, where the pin was read), from torch's metadata."""
    pins: Dict[str, Tuple[str, str]] = {}
    for install in report.get("torch_installs") or ():
        for text in install.get("nvidia_requires") or ():
            match = re.match(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([\d.]+)", str(text))
            if match:
                name = re.sub(r"-cu\d+$", "", match.group(1).lower().replace("_", "-"))
                pins.setdefault(name, (match.group(2), f"{install.get('metadata')}/METADATA Requires-Dist"))
    return pins


def expected_versions(report: Dict[str, Any]) -> Dict[str, Tuple[Tuple[int, ...], str]]:
    """stem -> (the version torch was built with, where that was read)."""
    expected: Dict[str, Tuple[Tuple[int, ...], str]] = {}
    for stem, wheel in _WHEEL_OF.items():
        pin = _pins(report).get(wheel)
        if pin:
            expected[stem] = (version_tuple(pin[0]), f"{pin[1]} ({wheel}=={pin[0]})")
    dynamic = report.get("dynamic") if isinstance(report.get("dynamic"), dict) else {}
    cuda = (dynamic or {}).get("cuda")
    built = cuda.get("built_with") if isinstance(cuda, dict) else None
    compiled = built.get("cudnn") if isinstance(built, dict) else None
    if isinstance(compiled, str) and version_tuple(compiled):
        expected["cudnn"] = (version_tuple(compiled), "torch._C._cudnn.getCompileVersion()")
    build = torch_build(report)
    if build is not None and build.get("cuda") and version_tuple(build["cuda"]):
        source = f"torch.version.cuda ({build['source']})"
        expected.setdefault("cudart", (version_tuple(build["cuda"]), source))
    return expected


def _differs(have: Tuple[int, ...], want: Tuple[int, ...]) -> bool:
    """Provably another version: the components both name disagree (12 vs 12.4.5 proves nothing)."""
    common = min(len(have), len(want), 3)
    return common > 0 and have[:common] != want[:common]


def shadowing(report: Dict[str, Any]) -> List[Tuple[LoadedLibrary, Tuple[int, ...], str]]:
    """(library, the version torch was built with, its source) for every loaded CUDA library from
    outside torch's own directories whose version provably differs from torch's."""
    dynamic = report.get("dynamic")
    if not isinstance(dynamic, dict):
        return []
    trusted = trusted_dirs(report)
    expected = expected_versions(report)
    found = []
    for library in loaded_libraries(dynamic.get("loaded")):
        if any(_norm(library.path).startswith(d) for d in trusted):
            continue
        want: Optional[Tuple[Tuple[int, ...], str]] = expected.get(library.stem)
        if want is not None and _differs(library.version, want[0]):
            found.append((library, want[0], want[1]))
    return found
