"""Evidence against the causes that widely firing triggers state: a shell's reply, a warning a
build goes past, a message several tools or causes print. Each check reads what else the text shows
(the build, the toolchain, the platform, the GPU, the symbol's own namespace) and returns the
evidence in words, or None. Part of :data:`torchsmith.explain.contradictions.TEXT_CONTRADICTIONS`.
Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Mapping, Optional, Set, Tuple

from torchsmith.explain.confirmations import Check
from torchsmith.explain.elsewhere import ELSEWHERE_CONTRADICTIONS
from torchsmith.explain.extract.loader import demangle, symbol_owner
from torchsmith.explain.extract.model import Extracted
from torchsmith.explain.triggers import named_capabilities
from torchsmith.kb import KnowledgeBase
from torchsmith.versions import version_tuple

__all__ = ["MISFIRE_CONTRADICTIONS"]


def _looked_up_without_build(tool: str, how: str) -> Check:
    """A shell's "nvcc: command not found" or cmd's "'cl' is not recognized" answering the user's own
    lookup (``nvcc --version``, ``which nvcc``; ``cl`` typed at a plain prompt, which has no MSVC
    environment) where the text shows no build: the tool is absent, but nothing was being compiled,
    so that is not what failed. Facts ``<tool>_missing`` and ``<tool>_lookup``."""
    def check(extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]) -> Optional[str]:
        if not facts.get(f"{tool}_missing") or not facts.get(f"{tool}_lookup") or extracted.build_shown:
            return None
        return f"{tool} {how}, and the text shows no build that needed it"
    return check


def _build_went_past_compiler_check(extracted: Extracted, facts: Mapping[str, Any],
                                    kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch's cpp_extension only warns where its version check finds no cl on PATH (get_compiler_abi_
    compatibility_and_version), and setuptools finds MSVC on its own (vswhere): the build shown running
    cl.exe, or failing in nvcc for a reason of nvcc's own, went past that check."""
    if not facts.get("cl_version_check"):
        return None
    if facts.get("cl_ran") or any(m.tool == "cl" for m in extracted.compiler):
        return "the text shows MSVC's cl.exe running"
    own = next((m for m in extracted.compiler if m.tool in ("nvcc", "ptxas", "cicc")
                and not re.search(r"\bcl(?:\.exe)?\b|host compiler", m.text)), None)
    return f"the build reached {own.tool}, which failed for its own reason ({own.text})" if own else None


def _symbol_not_torchs(extracted: Extracted, facts: Mapping[str, Any],
                       kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The undefined symbol, demangled, is a function of another namespace than torch's (at, c10,
    torch, caffe2): torch's types only in its parameters (``mylib::forward(at::Tensor const&)``), or
    a name that merely contains one (``12attention``). The module lacks a function of its own (a
    source not compiled or linked into it), not one that torch stopped exporting."""
    symbol = facts.get("symbol")
    if not isinstance(symbol, str):
        return None
    name = demangle(symbol)
    # the symbol's own reading (std::vector<at::Tensor> is torch's interface), or its name's namespace
    # alone (c10::Error::Error taking a __cxx11 string is still torch's)
    if not name or "torch" in (symbol_owner(symbol, name)[0], symbol_owner(name, name)[0]):
        return None
    return f"the missing symbol is {name}, not a function of torch's (c10/ATen/torch)"


# Shared memory (POSIX shm_open's /psm_..., torch's /torch_... segments, /dev/shm), and the frames of
# the installers that write wheels and caches to disk
_SHARED_MEMORY = re.compile(r"^/(?:psm_|torch_|dev/shm/)")
_INSTALLER_FRAME = re.compile(r"[\\/](?:pip|setuptools|_distutils_hack|distutils|conda|wheel|installer|uv)"
                              r"[\\/]")


def _space_exhausted_outside_install(extracted: Extracted, facts: Mapping[str, Any],
                                     kb: Optional[KnowledgeBase]) -> Optional[str]:
    """Python's bare ENOSPC ("[Errno 28] No space left on device") where the write that failed is
    shared memory, or where the traceback is a program's (torch.save, multiprocessing) with no
    installer's frame: a disk or /dev/shm filled while the program ran, not during an install."""
    if facts.get("installer_said"):
        return None
    path = str(facts.get("space_path") or "")
    if _SHARED_MEMORY.match(path):
        return f"the write that failed is to shared memory ({path})"
    frames = extracted.frames
    if frames and not any(_INSTALLER_FRAME.search(f.path) for f in frames):
        return f"the traceback is a program's ({frames[-1].path}), not an installer's"
    return None


def _glibc_shown_new_enough(extracted: Extracted, facts: Mapping[str, Any],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text reports the system's glibc (collect_env, ldd --version) at or past the GLIBC_2.x the
    binary asks for: the glibc that refused it is not that one (another machine or container, a libc
    or loader on LD_LIBRARY_PATH), so the system's glibc is not shown too old. Also conda's report
    of an installed __glibc at or past the version a package asks for."""
    installed, needed = str(facts.get("glibc_installed") or ""), str(facts.get("glibc_needed") or "")
    if installed and needed and version_tuple(installed) >= version_tuple(needed):
        # conda prints its virtual-package report for a conflict elsewhere too (conda/exceptions.py)
        return f"conda reports glibc {installed} installed, which meets the >={needed} asked for"
    shown, wanted = extracted.environment.glibc, str(facts.get("version") or "")
    if not shown or not wanted.startswith("GLIBC_"):
        return None
    if version_tuple(shown) < version_tuple(wanted[len("GLIBC_"):]):
        return None
    return f"the text shows glibc {shown}, which has {wanted}"


def _python_ranges_disjoint(extracted: Extracted, facts: Mapping[str, Any],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The project's Python range and the dependency's share no Python release: the dependency
    supports none of the project's Pythons, so narrowing the project's range to what the dependency
    supports cannot help (poetry and uv report both through the same header)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        project = SpecifierSet(str(facts.get("project_range") or "").replace(" ", ""))
        package = SpecifierSet(str(facts.get("package_python") or "").replace(" ", ""))
    except InvalidSpecifier:
        return None  # poetry's ^3.10 and ~3.11 are not PEP 440: no verdict
    if not str(project) or not str(package):
        return None
    shared = [f"3.{minor}" for minor in range(30) if f"3.{minor}" in project and f"3.{minor}" in package]
    return None if shared else f"the project's Python {project} and the package's {package} share no release"


# Triton's FP8 types in AMD's FNUZ encoding (CDNA3, gfx942), which no NVIDIA GPU has
_FNUZ_FP8 = re.compile(r"\bfp8e4b8\b|\bfp8e5b16\b")


def _fp8_format_of_other_vendor(extracted: Extracted, facts: Mapping[str, Any],
                                kb: Optional[KnowledgeBase]) -> Optional[str]:
    """Triton refused an FP8 type of the other vendor's encoding: an AMD FNUZ type (fp8e4b8,
    fp8e5b16) that NVIDIA GPUs never have, or NVIDIA's fp8e4nv where the types this GPU supports
    are AMD's FNUZ ones. The GPU has FP8, in another encoding: not a GPU below compute capability 8.9."""
    refused = str(facts.get("fp8_type") or "")
    if _FNUZ_FP8.search(refused):
        return f"{refused} is AMD's FNUZ FP8 encoding, which no NVIDIA GPU has"
    supported = str(facts.get("fp8_supported") or "")
    if refused == "fp8e4nv" and _FNUZ_FP8.search(supported):
        return f"the GPU supports AMD's FNUZ FP8 types {supported}: it has FP8 in another encoding"
    return None


def _gpu_newer_than_hopper(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """Every GPU the text shows is a Blackwell or newer (compute capability 10.0 on). flash-attn
    2's check before Blackwell accepted only sm8x and sm90 (csrc/flash_attn/flash_api.cpp: is_sm8x
    || is_sm90) and refuses a newer GPU with the same "Ampere GPUs or newer" message: the flash-attn
    release predates the GPU, which is not too old."""
    env = extracted.environment
    shown = [("GPU", env.capability)] if env.capability else []
    shown += named_capabilities(env, kb)
    majors = [int(cc.split(".")[0]) for _, cc in shown if cc and cc.split(".")[0].isdigit()]
    if not majors or min(majors) < 10:
        return None
    name = next((n for n, _ in shown if n != "GPU"), "the GPU")
    return f"{name} (compute capability {shown[0][1]}) is newer than Hopper: this flash-attn predates it"


def _mkl_symbol_not_ittnotify(extracted: Extracted, facts: Mapping[str, Any],
                              kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The undefined MKL symbol is one of MKL's own functions (mkl_blas_..., mkl_sparse_...), not
    the ittnotify profiling interface (iJIT_...) that newer MKL releases dropped from under
    torch's libtorch_cpu: another library and MKL disagree (numpy/scipy's MKL, MKL's own layers)."""
    symbol = str(facts.get("symbol") or "")
    if not symbol or symbol.startswith("iJIT_"):
        return None
    return f"the missing symbol {symbol} is MKL's own function, not the iJIT_ profiling interface"


def _refused_on_one_node(extracted: Extracted, facts: Mapping[str, Any],
                         kb: Optional[KnowledgeBase]) -> Optional[str]:
    """NCCL's socket connect was refused in a job the text launches on one node: every rank is on
    this host, which the interface NCCL picked reaches; a refusal is a peer that was not listening
    (it exited or crashed first), not an interface that reaches no other node."""
    if not (facts.get("refused") or facts.get("refused_call")) or not extracted.environment.one_node:
        return None
    return "the job runs on one node, where a refused connection is a peer that was not listening"


def _xformers_built_for_this_torch(extracted: Extracted, facts: Mapping[str, Any],
                                   kb: Optional[KnowledgeBase]) -> Optional[str]:
    """xformers prints what it was built for whenever its extensions do not load; where the torch it
    was built for, local build tag included, is the one installed ("PyTorch 2.1.0+cu121 ... (you have
    2.1.0+cu121)"), the torch is not what differs. Without the installed build's tag the CUDA may."""
    built, have = str(facts.get("built_torch") or ""), str(facts.get("have_torch") or "").strip()
    if "+" not in have or built != have:
        return None
    return f"xformers was built for torch {built}, the one installed"


def _torch_cpu_build_shown(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text shows the torch in use is a CPU-only build (+cpu, torch.version.cuda None): CUDA is
    unavailable to it whatever CUDA_VISIBLE_DEVICES says (a value quoted from advice, set for
    another run)."""
    env = extracted.environment
    if not env.torch_cpu_only:
        return None
    return f"the text shows a CPU-only torch{f' ({env.torch})' if env.torch else ''}"


def _rocm_torch_shown(extracted: Extracted, facts: Mapping[str, Any],
                      kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The torch the text shows is a ROCm build (+rocmX.Y): an extension built for it compiles with
    hipcc, where a CUDA header is looked for only by a source that was not hipified, not for want
    of a CUDA toolkit."""
    torch = extracted.environment.torch or ""
    return f"the text shows a ROCm build of torch ({torch})" if "+rocm" in torch else None


def _pins_agree(extracted: Extracted, facts: Mapping[str, Any],
                kb: Optional[KnowledgeBase]) -> Optional[str]:
    """pip's "conflict is caused by" lists requirements that all ask for the same exact release of
    each package (the user's torch==2.0.1, torchvision 0.15.2's torch==2.0.1): they agree. pip
    reports ResolutionImpossible so when no distribution of that release installs here (no wheel for
    this Python or platform, not on the index read), not because the pins conflict."""
    rows = [c for c in extracted.conflicts if c.installer == "pip" and c.what]
    specs: Dict[str, Set[str]] = {}
    for row in rows:
        specs.setdefault(row.what, set()).add(row.spec.strip())
    if not rows or len(rows) == len(specs):
        return None  # no package asked for twice
    for asked in specs.values():
        if len(asked) != 1 or not re.fullmatch(r"===?[\w.+!]+", next(iter(asked))):
            return None
    shown = ", ".join(f"{what}{next(iter(asked))}" for what, asked in specs.items())
    return f"every requirement pip lists agrees ({shown}): that release does not install here"


def _arch_tuple(arch: str) -> Tuple[int, int]:
    digits = arch.rsplit("_", maxsplit=1)[-1].rstrip("abf")
    return int(digits[:-1] or 0), int(digits[-1:] or 0)


def _nvrtc_knows_gpu(extracted: Extracted, facts: Mapping[str, Any],
                     kb: Optional[KnowledgeBase]) -> Optional[str]:
    """NVRTC's "invalid value for --gpu-architecture" said of a GPU its CUDA release compiles up to:
    the CUDA the text names (torch's +cuXYZ, the toolkit), or, where it names none, every CUDA
    release of the arch-support data. That NVRTC does not predate the GPU (an architecture a newer
    release dropped, e.g. Kepler after CUDA 11, or an -arch the program passed itself, is refused the
    same way)."""
    env = extracted.environment
    shown = [cc for cc in ([env.capability] if env.capability else
                           [cc for _, cc in named_capabilities(env, kb)]) if cc]
    if kb is None or not shown:
        return None
    gpus = [(int(cc.split(".")[0]), int(cc.split(".")[1])) for cc in shown]
    cuda = env.torch_cuda or env.cuda
    rows = [kb.arch_support(cuda)] if cuda else list(kb.arch_support_rows())
    if not rows or any(row is None for row in rows):
        return None
    if all(_arch_tuple(row.max_arch) >= gpu for row in rows if row is not None for gpu in gpus):
        which = f"CUDA {cuda}'s NVRTC" if cuda else "every CUDA release's NVRTC"
        return f"{which} compiles for {', '.join(shown)} (the GPU shown), so it does not predate it"
    return None


# The pip release that first installs each platform tag (pip's changelog, pip.pypa.io/en/stable/news:
# 19.0 manylinux2010, 19.3 manylinux2014, 20.3 PEP 600's manylinux_X_Y and macOS 11's tags)
_TAG_PIP = ((re.compile(r"manylinux2010_"), (19, 0)), (re.compile(r"manylinux2014_"), (19, 3)),
            (re.compile(r"manylinux_\d+_\d+_"), (20, 3)),
            (re.compile(r"macosx_(?:1[1-9]|[2-9]\d)_"), (20, 3)))


def _pip_older_than_wheel_tag(extracted: Extracted, facts: Mapping[str, Any],
                              kb: Optional[KnowledgeBase]) -> Optional[str]:
    """pip refused a wheel whose every platform tag is newer than the pip shown ("You are using pip
    version 19.2.3", "pip 19.2.3 from ..."): that pip knows none of them, so the wheel may well be
    built for this interpreter and platform."""
    pip, platform = str(facts.get("pip_version") or ""), str(facts.get("wheel_platform") or "")
    if not pip or not platform:
        return None
    needed = []
    for tag in platform.split("."):
        need = next((version for pattern, version in _TAG_PIP if pattern.match(tag)), None)
        if need is None:
            return None  # a tag every pip of these years reads
        needed.append(need)
    parts = tuple(int(p) for p in pip.split(".")[:2])
    if parts >= min(needed):
        return None
    first = ".".join(str(n) for n in min(needed))
    return (f"pip {pip} predates every platform tag of the wheel ({platform}): pip reads them from "
            f"{first} on")


def _tensorrt_dropped_gpu(extracted: Extracted, facts: Mapping[str, Any],
                          kb: Optional[KnowledgeBase]) -> Optional[str]:
    """TensorRT's "Target GPU SM NN is not supported by this TensorRT release" for a GPU older than
    Turing (SM 7.5): TensorRT 5 (2018) already supported Turing, and later releases dropped the older
    architectures (8.5 the last for Kepler, 9.0 without Maxwell, 10.x built for SM 7.0 or 7.5 and
    newer: the release notes and support matrices), so such a refusal is a TensorRT newer than the GPU."""
    sm = str(facts.get("sm") or "")
    if not re.fullmatch(r"\d{2,3}", sm) or int(sm[:-1]) * 10 + int(sm[-1]) >= 75:
        return None
    return (f"SM {sm} is older than Turing: every TensorRT release since 2018 postdates it, and newer "
            "ones dropped it")


# Driver API functions of CUDA 9.0 and older (cuda.h; the CUDA Driver API reference): every driver a
# CUDA 10+ build runs on exports them
_OLD_DRIVER_API = re.compile(
    r"cu(?:Init|DriverGetVersion|DeviceGet\w*|DeviceTotalMem|DevicePrimaryCtx\w+|"
    r"Ctx(?:Create|Destroy|Push|Pop|Synchronize|GetCurrent|SetCurrent|GetDevice)\w*|"
    r"Module(?:Load|LoadData|LoadDataEx|LoadFatBinary|Unload|GetFunction|GetGlobal)|LaunchKernel|"
    r"Mem(?:Alloc|AllocHost|AllocManaged|AllocPitch|Free|FreeHost|GetInfo|HostAlloc|HostRegister|"
    r"HostUnregister|cpy\w*|setD\w+)|GetErrorString|GetErrorName|"
    r"Stream(?:Create|Destroy|Synchronize|Query|WaitEvent|AddCallback)|"
    r"Event(?:Create|Destroy|Record|Synchronize|Query|ElapsedTime)|"
    r"Func(?:GetAttribute|SetAttribute|SetCacheConfig)|PointerGetAttributes?|"
    r"OccupancyMaxActiveBlocksPerMultiprocessor)(?:_v\d)?")


def _driver_symbol_in_every_driver(extracted: Extracted, facts: Mapping[str, Any],
                                   kb: Optional[KnowledgeBase]) -> Optional[str]:
    """A driver API function missing that every driver since CUDA 9.0 exports (cuModuleGetFunction,
    cuGetErrorString...): the module was linked without libcuda (an extension built without
    -lcuda), not run on a driver older than the call."""
    symbol = str(facts.get("symbol") or "")
    if not _OLD_DRIVER_API.fullmatch(symbol):
        return None
    return (f"{symbol} is in every NVIDIA driver since CUDA 9.0: the module is not linked against "
            "libcuda, the driver is not too old for it")


# Headers every torch release since the one named ships (ATen/cuda/CUDAContext.h since 1.0, c10/cuda
# since 1.1; torch's setup.py package_data lists include/ATen/cuda, include/c10/cuda)
_LONG_SHIPPED_HEADERS = {"ATen/cuda/CUDAContext.h": (1, 0), "ATen/Tensor.h": (1, 0),
                         "ATen/Functions.h": (1, 0), "c10/cuda/CUDAGuard.h": (1, 1),
                         "c10/cuda/CUDAStream.h": (1, 1), "c10/core/Device.h": (1, 1)}


def _header_shipped_by_this_torch(extracted: Extracted, facts: Mapping[str, Any],
                                  kb: Optional[KnowledgeBase]) -> Optional[str]:
    """A torch header not found that the torch release the text shows ships (and every later one): the
    compiler was not given torch's include directory (a build that does not use torch's own
    include paths), not a source written for another torch."""
    header, torch = str(facts.get("header") or ""), extracted.environment.torch
    since = _LONG_SHIPPED_HEADERS.get(header)
    if since is None or not torch or version_tuple(torch)[:2] < since:
        return None
    if "cuda/" in header and extracted.environment.torch_cpu_only:
        return None  # a CPU build is not judged for its CUDA headers
    return (f"torch {torch} ships {header}: the compiler did not search torch's include "
            "directory")


# torch imported from a conda environment (a named env, or the base of an Anaconda/Miniforge install)
_CONDA_TORCH = re.compile(r"(?:[\\/]envs[\\/][^\\/\s]+|[\\/](?:ana|mini)conda\d?|[\\/]mini(?:forge|mamba)\d?"
                          r"|[\\/]mambaforge)[\\/](?:[^\s]*[\\/])?site-packages[\\/]torch[\\/]",
                          re.IGNORECASE)


def _torch_from_conda_env(extracted: Extracted, facts: Mapping[str, Any],
                          kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch's library that lacks a BLAS routine is a conda environment's: conda links torch against
    the environment's BLAS (the libblas variant chosen: mkl, openblas...), a package it installs, so
    a routine missing there is that variant's, not a wheel's undeclared system library."""
    env = extracted.environment
    if env.jetson or env.machine in ("aarch64", "armv7l"):
        return None  # a board's pip wheel may sit in a Miniforge env: the cases the cause is written for
    places = [e.message for e in extracted.exceptions] + [f.path for f in extracted.frames]
    shown = next((m.group(0) for m in map(_CONDA_TORCH.search, places) if m), None)
    return f"torch is imported from a conda environment ({shown})" if shown else None


def _ffmpeg_shown_installed(extracted: Extracted, facts: Mapping[str, Any],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """ffmpeg's own banner is shown: FFmpeg is installed, so torchaudio finding no backend is not
    "nothing installed" (an FFmpeg major it does not load, one without shared libraries, or
    libraries off the loader's path: ffmpeg-version-unsupported and its checks)."""
    shown = extracted.environment.ffmpeg
    return f"the text shows FFmpeg {shown} installed" if shown else None


def _all_nvidia_nodes_missing(extracted: Extracted, facts: Mapping[str, Any],
                              kb: Optional[KnowledgeBase]) -> Optional[str]:
    """/dev/nvidia-uvm missing beside /dev/nvidia0, /dev/nvidiactl or the whole /dev/nvidia* missing:
    no NVIDIA device is there at all (a container started without GPU access, no driver), not the
    uvm module alone."""
    shown = facts.get("all_nodes_missing")
    if not shown:
        return None
    return f"the text shows {shown} too: no NVIDIA device node at all, not only nvidia-uvm's"


def _libpython_of_other_python(extracted: Extracted, facts: Mapping[str, Any],
                               kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The libpython missing is another Python's than the one the text runs (its site-packages
    paths, its version line): the module was built for that other Python, not for this one."""
    running = extracted.environment.python
    for lib in extracted.libraries:
        wanted = re.match(r"libpython(\d+\.\d+)", lib.soname) if lib.kind == "python" else None
        if wanted and running and version_tuple(running)[:2] != version_tuple(wanted.group(1))[:2]:
            return (f"{lib.soname} is Python {wanted.group(1)}'s, and the text runs Python {running}: "
                    "the module was built for another Python")
    return None


def _no_driver_beside_stub(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The stub libcuda answered where no NVIDIA driver is reachable at all (nvidia-smi missing or
    unable to talk to the driver, NVML's Driver Not Loaded): the stub is the only libcuda there, not
    one found before the driver's (a container without GPU access, a machine without the driver)."""
    said = facts.get("no_driver")
    if not said and not any(e.name == "NVML_ERROR_DRIVER_NOT_LOADED" for e in extracted.gpu_errors):
        return None
    return f"no NVIDIA driver is reachable here ({said or 'NVML: Driver Not Loaded'})"


def _torch_import_itself_failed(extracted: Extracted, facts: Mapping[str, Any],
                                kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch's own library not found while torch itself imports (the innermost frame is torch's,
    e.g. torch/__init__.py's `from torch._C import *`): no extension was imported first; torch's
    own directory lacks it (a half-removed or interrupted install, two installs mixed)."""
    frame = extracted.frames[-1] if extracted.frames else None
    if frame is None or frame.package != "torch":
        return None
    return f"the import that failed is torch's own ({frame.path})"


def _driver_mismatch_shown(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """NVML's "Driver/library version mismatch" is shown too: the host's driver was replaced under the
    running system (an update without a reboot), which also leaves a container's NVML failing; a
    cgroup rewrite by a systemd reload is then not what the text shows."""
    if any(e.api == "nvml" and "version mismatch" in (e.message or "") for e in extracted.gpu_errors):
        return ("NVML reports a driver/library version mismatch: the driver was updated under the "
                "running system")
    return None


def _failed_after_build(extracted: Extracted, facts: Mapping[str, Any],
                        kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The image build the text shows ended, or a container was run after it: a failure then is the
    run's (a container started without GPU access), not a build step's."""
    shown = extracted.environment.ran_after_build
    return f"the build ended or a container ran after it ({shown.strip()})" if shown else None


MISFIRE_CONTRADICTIONS: Dict[str, Check] = {
    "nvcc_looked_up_without_build": _looked_up_without_build("nvcc", "was looked up by hand"),
    "cl_looked_up_without_build": _looked_up_without_build("cl", "was run by hand at a prompt"),
    "build_went_past_compiler_check": _build_went_past_compiler_check,
    "symbol_not_torchs": _symbol_not_torchs,
    "space_exhausted_outside_install": _space_exhausted_outside_install,
    "glibc_shown_new_enough": _glibc_shown_new_enough,
    "python_ranges_disjoint": _python_ranges_disjoint,
    "fp8_format_of_other_vendor": _fp8_format_of_other_vendor,
    "gpu_newer_than_hopper": _gpu_newer_than_hopper,
    "mkl_symbol_not_ittnotify": _mkl_symbol_not_ittnotify,
    "refused_on_one_node": _refused_on_one_node,
    "xformers_built_for_this_torch": _xformers_built_for_this_torch,
    "torch_cpu_build_shown": _torch_cpu_build_shown,
    "rocm_torch_shown": _rocm_torch_shown,
    "pins_agree": _pins_agree,
    "nvrtc_knows_gpu": _nvrtc_knows_gpu,
    "pip_older_than_wheel_tag": _pip_older_than_wheel_tag,
    "tensorrt_dropped_gpu": _tensorrt_dropped_gpu,
    "driver_symbol_in_every_driver": _driver_symbol_in_every_driver,
    "header_shipped_by_this_torch": _header_shipped_by_this_torch,
    "torch_from_conda_env": _torch_from_conda_env,
    "ffmpeg_shown_installed": _ffmpeg_shown_installed,
    "all_nvidia_nodes_missing": _all_nvidia_nodes_missing,
    "libpython_of_other_python": _libpython_of_other_python,
    "no_driver_beside_stub": _no_driver_beside_stub,
    "torch_import_itself_failed": _torch_import_itself_failed,
    "driver_mismatch_shown": _driver_mismatch_shown,
    "failed_after_build": _failed_after_build,
    **ELSEWHERE_CONTRADICTIONS,
}
