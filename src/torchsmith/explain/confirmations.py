"""The checks a signature's ``confirmed_by`` names: evidence in the text that sets a cause apart
from the others a weak trigger (a phrase several causes print) may mean. Without one of them the
signature does not fire and its family's signature speaks. Pure: no I/O.

Each check takes (what the text shows, the facts its trigger read, the knowledge base) and returns
the evidence in words, or None. :data:`TEXT_CONFIRMATIONS` names them;
:data:`torchsmith.explain.reason.CONFIRMATION_CHECKS` adds the one that needs reason's conclusions.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

from torchsmith.compat import kernel_for, parse_cc, sm_arch
from torchsmith.explain.extract.model import Extracted
from torchsmith.explain.launchers import launcher_env_moved
from torchsmith.explain.loadchecks import compiled_module_absence_shown, dll_needs_only_vc_runtime
from torchsmith.explain.triggers import tf32_gpu
from torchsmith.kb import KnowledgeBase
from torchsmith.versions import version_tuple

__all__ = ["TEXT_CONFIRMATIONS"]


# --- what the text shows of the machine and the run ------------------------------------------


def _exclusive_mode_shown(extracted: Extracted, facts: Mapping[str, Any],
                          kb: Optional[KnowledgeBase]) -> Optional[str]:
    """nvidia-smi shows a GPU in an exclusive or prohibited compute mode."""
    mode = extracted.environment.compute_mode
    return f"nvidia-smi shows the compute mode {mode}" if mode else None


def _oom_kill_shown(extracted: Extracted, facts: Mapping[str, Any],
                    kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The out-of-memory killer's log line (dmesg, the job scheduler, the container runtime):
    SIGKILL alone is also a time limit's or a person's kill."""
    return "the out-of-memory killer's log line" if "oom-killed" in extracted.symptoms else None


def _killed_in_image_build(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The SIGKILL came inside a container image build step (extract.containers): no terminal, job
    time limit or supervisor signals a step there, and a cancelled build says so."""
    return extracted.environment.image_build_kill


def _overflow_shown(extracted: Extracted, facts: Mapping[str, Any],
                    kb: Optional[KnowledgeBase]) -> Optional[str]:
    """inf values or an overflow named: NaN alone also comes from data, a diverging learning rate
    or an operation's own NaN, in any precision."""
    return "inf values or an overflow" if "overflow" in extracted.symptoms else None


def _shm_full_shown(extracted: Extracted, facts: Mapping[str, Any],
                    kb: Optional[KnowledgeBase]) -> Optional[str]:
    """/dev/shm shown full: torch's own message hedges ("it is possible that ... out of shared
    memory"), and a memory-mapped file cut short raises the same SIGBUS."""
    return "/dev/shm full" if "shm-full" in extracted.symptoms else None


def _docker_default_shm_shown(extracted: Extracted, facts: Mapping[str, Any],
                              kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text starts its container with ``docker run`` and neither --shm-size nor --ipc=host: the
    container's /dev/shm is Docker's default 64 MB; or df shows a /dev/shm that small (extract.containers)."""
    if extracted.environment.docker_shm == "small":
        return "df shows a /dev/shm of 64 MB or less (Docker's default size)"
    if extracted.environment.docker_shm != "default":
        return None
    return "docker run without --shm-size or --ipc=host: the container's /dev/shm is Docker's default 64 MB"


def _tf32_gpu_shown(extracted: Extracted, facts: Mapping[str, Any],
                    kb: Optional[KnowledgeBase]) -> Optional[str]:
    """A GPU with TF32 (compute capability 8.0 on, NVIDIA's Ampere tuning guide) is shown: TF32 and
    precision in words alone also describe ordinary float32 rounding, or a GPU without TF32."""
    gpu = tf32_gpu(extracted, kb)
    return f"{gpu} (compute capability 8.0 or newer)" if gpu else None


def _binary_compatible_gpu(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The GPU is above the newest capability a warning says the build supports, but a cubin for
    X.y runs on a GPU of X.z, z >= y (CUDA C Programming Guide, "Binary Compatibility"); an
    integrated (Jetson) GPU needs its exact architecture."""
    have, newest = parse_cc(facts.get("capability")), facts.get("max_capability")
    if have is None or not isinstance(newest, str) or parse_cc(newest) is None:
        return None
    integrated = kb is not None and have in kb.integrated_ccs
    kernel = kernel_for(have, [sm_arch(newest)], integrated=integrated)
    if kernel is None or kernel.how != "sass" or parse_cc(newest) == have:
        return None
    return f"compute capability {facts['capability']} runs the build's {kernel.name} code (same major)"


def _gpu_below_build(extracted: Extracted, facts: Mapping[str, Any],
                     kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch's own capability warning shows the GPU older than the oldest architecture the build
    carries (its minimum capability, or every sm_/compute_ entry of its arch list): no cubin runs
    on an older major and PTX JIT-compiles only upward (CUDA C Programming Guide, "Binary
    Compatibility"), so no kernel of this build runs there. torch prints that minimum since 2.x
    (torch/cuda/__init__.py, _check_capability); its older wording says "too old" itself."""
    if facts.get("too_old"):
        return "torch's own message: the GPU is too old"
    have = parse_cc(facts.get("capability") or facts.get("arch"))
    listed = [parse_cc(arch) for arch in facts.get("arch_list") or []]  # the matcher split it
    oldest = parse_cc(facts.get("min_capability")) or min((cc for cc in listed if cc), default=None)
    if have is None or oldest is None or have >= oldest:
        return None
    return (f"compute capability {have[0]}.{have[1]} is below the build's oldest architecture "
            f"({oldest[0]}.{oldest[1]})")


def _macos_below_mps_minimum(extracted: Extracted, facts: Mapping[str, object],
                             kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The macOS the text shows is older than MPS needs: the minimum torch's message names (12.3 when
    none), 13.0 for torch 2.5 and later (its message still said 12.3: pytorch/pytorch#139425). The
    same message on a new enough macOS means the process has no Metal device."""
    shown = extracted.environment.macos
    if not shown:
        return None
    minimum = str(facts.get("mps_min") or "12.3")
    torch = extracted.environment.torch
    if torch and version_tuple(torch) >= (2, 5) and version_tuple(minimum) < (13, 0):
        minimum = "13.0"
    return f"macOS {shown}, older than {minimum}" if version_tuple(shown) < version_tuple(minimum) else None


def _apple_silicon_shown(extracted: Extracted, facts: Mapping[str, object],
                         kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The Mac is Apple silicon: the text names an Apple M chip, or the loader or linker needs arm64
    (an arm64 process runs only there). An x86_64 process that meets an arm64 library may be on an
    Intel Mac, where an arm64-only package cannot run at all."""
    if extracted.environment.chip:
        return f"the text names the Apple {extracted.environment.chip} chip"
    need = facts.get("need")
    if need in ("arm64", "arm64e"):
        return f"the process needs {need}, which runs only on Apple silicon"
    return None


_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")


def _address_not_a_host(extracted: Extracted, facts: Mapping[str, object],
                        kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The address a client connected to cannot be a host's: reserved (240.0.0.0/4, where netmasks
    such as 255.255.0.0 fall), multicast or broadcast (Python's ipaddress, from the IANA registries),
    or in 0.0.0.0/8, which RFC 1122 (3.2.1.3) allows only as a source (a MASTER_ADDR that is a bare
    number reads as one). A host name, or an ordinary address, proves nothing: the master may just
    not be listening."""
    text = str(facts.get("address") or "")
    if text.lower().startswith("::ffff:") and "." in text:  # IPv4 printed in IPv6 form: [::ffff:a.b.c.d]
        text = text[7:]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if address.is_loopback:  # IPv6's ::1 lies in a reserved block, but is this host
        return None
    this_network = address.version == 4 and address in _THIS_NETWORK and not address.is_unspecified
    kinds = [kind for kind, flag in (("reserved", address.is_reserved), ("multicast", address.is_multicast),
                                     ("'this network' (0.0.0.0/8)", this_network)) if flag]
    return f"{address} is a {kinds[0]} address, no host's" if kinds else None


_SIZE = re.compile(r"(?P<number>[\d.]+) (?P<unit>[KMGT])i?B")


def _gib(size: str) -> Optional[float]:
    """'512.00 MiB' in GiB (torch prints binary units, 'MB' in older releases)."""
    match = _SIZE.fullmatch(size.strip())
    if match is None:
        return None
    return float(match.group("number")) * 1024.0 ** ("KMGT".index(match.group("unit")) - 2)


def _hip_memory_below_listed_gpus(extracted: Extracted, facts: Mapping[str, object],
                                  kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The HIP device's whole memory is at most a quarter of the smallest VRAM among the GPUs AMD's
    ROCm specifications list (formats.json ``rocm_gpu_vram``): no such discrete card, but an
    integrated GPU whose memory is the BIOS carve-out. A quarter, not the smallest itself: a card
    reports its VRAM less a firmware reserve, and consumer cards ROCm never listed had 2 GiB."""
    total = _gib(str(facts.get("total") or ""))
    table = kb.document("formats").get("rocm_gpu_vram") if kb is not None else None
    rows = table.get("rows") if isinstance(table, dict) else None
    sizes = [row["vram_gib"] for row in rows or () if isinstance(row.get("vram_gib"), (int, float))]
    if total is None or not sizes or total > min(sizes) / 4:
        return None
    return (f"the device's whole memory is {facts['total']}, a quarter or less of the smallest GPU AMD's "
            f"ROCm specifications list ({min(sizes)} GiB)")


def _major_minor(version: Optional[str]) -> Optional[str]:
    match = re.match(r"\d+\.\d+", version or "")
    return match.group() if match else None


def _rocm_build_lacks_gfx(extracted: Extracted, facts: Mapping[str, object],
                          kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text names one AMD gfx target (or a GPU the data maps to one) and a ROCm release, and no
    torch build for that ROCm release in the data (of the torch the text names, if any) carries
    that target: the build has no code for the GPU. Only where the text is about torch: another
    program's kernels (rocBLAS's own library files, llama.cpp) are not torch's build."""
    env = extracted.environment
    if not (extracted.mentions_torch or env.torch) or env.hsa_override:
        return None  # an override makes the runtime load another target's code: the GPU's own is moot
    targets = {gpu.gfx for gpu in env.gpu_models if gpu.vendor == "amd" and gpu.gfx} | (
        {env.gfx} if env.gfx else set())
    rocm = _major_minor(env.rocm)
    torch = version_tuple(env.torch)[:3] if env.torch else None
    # a torch release named without its ROCm release: each ROCm build of it may be the one installed
    if len(targets) != 1 or (rocm is None and torch is None) or kb is None:
        return None
    (gfx,) = targets
    builds = [variant for release in kb.table("releases")
              if torch is None or version_tuple(release.version)[:3] == torch
              for variant in release.variants
              if variant.kind == "rocm" and variant.gfx
              and (rocm is None or _major_minor(variant.rocm) == rocm)]
    if not builds or any(gfx in variant.gfx for variant in builds):
        return None
    carried = sorted({target for variant in builds for target in variant.gfx})
    of = f"ROCm {rocm}" if rocm else f"torch {env.torch} (any ROCm release)"
    return f"no torch build for {of} carries {gfx} (they carry {', '.join(carried)})"


def _torch_without_cuda_by_design(extracted: Extracted, facts: Mapping[str, object],
                                  kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text shows a torch that has no CUDA by design where the right build for the GPU is no
    CUDA one: an Intel GPU build (+xpu). (On macOS the same message is labelled a CPU-only build,
    torch-not-compiled-with-cuda, in the field corpus: that case stays there.)"""
    torch = extracted.environment.torch
    if torch and "+xpu" in torch:
        return f"torch {torch} is the Intel GPU (XPU) build, which has no CUDA"
    return None


def _hsa_override_not_this_gpu(extracted: Extracted, facts: Mapping[str, object],
                               kb: Optional[KnowledgeBase]) -> Optional[str]:
    """HSA_OVERRIDE_GFX_VERSION=<major>.<minor>.<stepping> makes the runtime load gfx<major><minor><stepping>
    code (hsa_override.json's convention); the text names one AMD GPU whose gfx target is neither that one
    nor a sibling the data lists for that override, and of another major family (gfx10xx under 11.0.0,
    gfx9xx under 10.3.0): code of another ISA runs on it. Within one family the data's few rows do not
    say which targets run another's code (9.0.0 is the usual override for Vega APUs, gfx90c)."""
    env = extracted.environment
    version = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", env.hsa_override or "")
    targets = {gpu.gfx for gpu in env.gpu_models if gpu.vendor == "amd" and gpu.gfx} | (
        {env.gfx} if env.gfx else set())
    if version is None or len(targets) != 1 or kb is None:
        return None
    major, minor, stepping = (int(part) for part in version.groups())
    runs_as = f"gfx{major}{minor}{stepping:x}"
    (gfx,) = targets
    rows = kb.document("hsa_override").get("rows") or []
    siblings = {g for row in rows if row.get("runs_as") == runs_as for g in row.get("gfx") or ()}
    if gfx == runs_as or gfx in siblings or gfx[3:-2] == str(major):
        return None  # the same family (9.0.0 on a gfx90c APU, 11.0.0 on gfx1151): a two-row table is no proof
    return f"HSA_OVERRIDE_GFX_VERSION={env.hsa_override} loads {runs_as} code on this {gfx} GPU"


# Anaconda's own hosts beside conda.anaconda.org / repo.anaconda.com: not mirrors
_ANACONDA_HOST = re.compile(r"^https?://(?:[\w-]+\.)*(?:anaconda\.(?:org|com|cloud)|continuum\.io)(?:[:/]|$)")


def _channel_known_upstream(extracted: Extracted, facts: Mapping[str, object],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The channel a host answered 404 for is one the data knows anaconda.org carries (conda.json's
    channels, conda_packages' channels), and the host is not Anaconda's own: a mirror lacks a real
    channel. A name the data does not know may be a typo, which any host answers 404 for."""
    channel, url = str(facts.get("channel") or ""), str(facts.get("url") or "")
    if kb is None or not channel or _ANACONDA_HOST.match(url):
        return None
    known = {row.channel for row in kb.conda_channels}
    for row in kb.document("error_vocab").get("conda_packages", ()):
        known.update(str(c) for c in (*row.get("channels", ()), *row.get("unless_channels", ())))
    known.discard("virtual")
    if channel not in known:
        return None
    return f"{channel} is a channel anaconda.org carries, and {url} is not anaconda.org"


def _requested_after_torch_stable_html(extracted: Extracted, facts: Mapping[str, object],
                                       kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The torch the text asks torch_stable.html for is newer than the newest that page lists
    (formats.json ``torch_stable_html``: PyTorch stopped generating it before 2.4.0)."""
    requested = facts.get("requested")
    page = kb.document("formats").get("torch_stable_html") if kb is not None else None
    last = page.get("last") if isinstance(page, dict) else None
    if not isinstance(requested, str) or not isinstance(last, str):
        return None
    wanted = re.match(r"\d+\.\d+(?:\.\d+)?", requested)
    if wanted is None or version_tuple(wanted.group()) <= version_tuple(last):
        return None
    return f"torch {requested} is newer than {last}, the newest torch torch_stable.html lists"


def _async_allocator_unsupported_gpu(extracted: Extracted, facts: Mapping[str, object],
                                     kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The GPU the text names is one ComfyUI lists as not working with torch's cudaMallocAsync
    allocator (formats.json ``comfyui_cuda_malloc``, read from its cuda_malloc.py)."""
    table = kb.document("formats").get("comfyui_cuda_malloc") if kb is not None else None
    listed = table.get("unsupported_gpus") if isinstance(table, dict) else None
    if not isinstance(listed, list):
        return None
    named = [facts["gpu"]] if isinstance(facts.get("gpu"), str) else []
    for gpu in [*named, *extracted.environment.gpus]:
        hit = next((str(name) for name in listed if str(name) in str(gpu)), None)
        if hit:
            return f"{gpu} is on ComfyUI's list of GPUs without cudaMallocAsync ({hit})"
    return None


# --- how the file that failed its hash arrived (extract.downloads): the evidence download-corrupted
# and index-metadata-broken need --------------------------------------------------------------


def _download_damaged_shown(extracted: Extracted, facts: Mapping[str, Any],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The file that failed its hash was cut short, came from pip's cache, or conda found its
    extracted copy damaged: a local copy is at fault, not the index."""
    shown = {"cut": "the download stopped short of its size", "cached": "pip used its cached copy",
             "conda-verify": "conda found its extracted package damaged"}
    return next((why for key, why in shown.items() if key in extracted.transfers), None)


def _fresh_download_complete_shown(extracted: Extracted, facts: Mapping[str, Any],
                                   kb: Optional[KnowledgeBase]) -> Optional[str]:
    """A fresh download (not pip's cache) reached its full size and still failed its hash: the
    bytes are the server's (TLS guards them in transit), so the index's hash is for another file."""
    return "a fresh download that reached its full size" if extracted.transfers == ["complete"] else None


# --- two requirements on torch that no release meets (torch-pin-conflict) --------------------

_CLAUSE = re.compile(r"(<=|<)\s*(\d+(?:\.\d+){0,2})(?![\w.*])")


def _resolver_reported_conflict(extracted: Extracted, facts: Mapping[str, Any],
                                kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The resolver's own refusal named the pin (pip's ResolutionImpossible, uv's and conda's): it
    searched and found no set; pip's after-the-fact warning (``warned_range``) is not a search."""
    if "warned_range" in facts:
        return None
    return "the resolver reported that no set of versions satisfies the pins"


def _disjoint_torch_requirements(extracted: Extracted, facts: Mapping[str, Any],
                                 kb: Optional[KnowledgeBase]) -> Optional[str]:
    """One package caps torch below the release another one asks for at least
    (``torch_min``, e.g. torchao's "Please upgrade to torch >= X"): no torch meets both."""
    warned, least = facts.get("warned_range"), facts.get("torch_min")
    if not isinstance(warned, str) or not isinstance(least, str):
        return None
    floor = version_tuple(least)
    for op, version in _CLAUSE.findall(warned):
        cap = version_tuple(version)
        if (op == "<" and cap <= floor) or (op == "<=" and cap < floor):
            return f"torch{op}{version} and torch>={least} are both required: no torch release meets both"
    return None


# A check: the extracted facts, the matched signature's facts and the data in; the observation
# that proves (or contradicts) the cause out, or None.
Check = Callable[[Extracted, Mapping[str, Any], Optional[KnowledgeBase]], Optional[str]]

# --- a package's CUDA release against the one the text shows in use --------------------------------


def _asked_cuda_major(extracted: Extracted, facts: Mapping[str, Any]) -> Optional[str]:
    """The CUDA major the failing package was built for: the one it says it requires, else the major
    of the CUDA library it asked for (a CUDA library's soname carries its CUDA major; cuDNN's major is
    cuDNN's own release, not CUDA's)."""
    said = facts.get("cuda_major")
    if isinstance(said, str):
        return said
    asked = facts.get("lib")
    library = next((lib for lib in extracted.libraries
                    if lib.soname == asked and lib.kind == "cuda" and lib.major), None)
    return library.major.split(".")[0] if library is not None and library.major else None


def _other_major(asked: Optional[str], shown: Sequence[Tuple[str, Optional[str]]]) -> Optional[str]:
    """The first CUDA the text shows (what shows it, its version) of another major than ``asked``."""
    if asked is None:
        return None
    for what, version in shown:
        if version and version.split(".")[0] != asked:
            return f"{what} shows CUDA {version}, and the package asks for CUDA {asked}'s libraries"
    return None


def _toolkit_other_major_shown(extracted: Extracted, facts: Mapping[str, Any],
                               kb: Optional[KnowledgeBase]) -> Optional[str]:
    """nvcc shows a CUDA toolkit of another major than the library the package asked for (CuPy's
    wheels before v14 load NVRTC and the CUDA libraries from the system toolkit); or the package's
    compiled module lacks a CUDA API function (``symbol``): the CUDA loaded is older than its build."""
    symbol = facts.get("symbol")
    if isinstance(symbol, str):
        return f"its compiled module needs {symbol}, which the CUDA library loaded does not have"
    nvcc = extracted.environment.toolchain.get("nvcc")
    return _other_major(_asked_cuda_major(extracted, facts), [("nvcc", nvcc)])


# onnxruntime's execution-provider packages; each installs the same `onnxruntime` module as the CPU
# package (https://onnxruntime.ai/docs/install/: "only one of these packages should be installed").
_ORT_PROVIDER_PACKAGES = ("onnxruntime-gpu", "onnxruntime-openvino", "onnxruntime-directml",
                          "onnxruntime-rocm", "onnxruntime-qnn", "onnxruntime-training")
_ORT_CPU_PROVIDERS = frozenset({"CPUExecutionProvider", "AzureExecutionProvider"})


def _both_onnxruntime_packages_shown(extracted: Extracted, facts: Mapping[str, Any],
                                     kb: Optional[KnowledgeBase]) -> Optional[str]:
    """pip's output shows the CPU package onnxruntime and an execution-provider package installed in
    one environment: both write the one `onnxruntime` module, so the last installed wins; and the
    module loaded lists only the CPU package's providers (CPU, Azure): the CPU package's files won."""
    available = {p.strip() for p in str(facts.get("available", "")).split(",") if p.strip()}
    if "onnxruntime" not in extracted.installed or not available <= _ORT_CPU_PROVIDERS:
        return None
    other = next((name for name in _ORT_PROVIDER_PACKAGES if name in extracted.installed), None)
    return f"pip's output shows both onnxruntime and {other} installed" if other else None


def _ffmpeg_major_not_supported(extracted: Extracted, facts: Mapping[str, Any],
                                kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The build refused the FFmpeg it found (torchcodec's CMake: ``libavcodec``/``ffmpeg_major``), or
    ffmpeg's own banner shows an FFmpeg major outside the majors the loader says it supports
    (``supported``: torchcodec's "We support versions ...", torchaudio's "Tried versions: [...]")."""
    if isinstance(facts.get("libavcodec"), str):
        return f"the build refused the FFmpeg it found (libavcodec {facts['libavcodec']})"
    if isinstance(facts.get("ffmpeg_major"), str):
        return f"the build refused the FFmpeg it found (FFmpeg {facts['ffmpeg_major']})"
    supported = re.findall(r"\d+", str(facts.get("supported", "")))
    installed = extracted.environment.ffmpeg
    if not supported or not installed or installed.split(".")[0] in supported:
        return None
    return f"ffmpeg shows version {installed}, and this build supports FFmpeg {', '.join(supported)}"


TEXT_CONFIRMATIONS: Dict[str, Check] = {
    "channel_known_upstream": _channel_known_upstream,
    "exclusive_mode_shown": _exclusive_mode_shown,
    "oom_kill_shown": _oom_kill_shown,
    "killed_in_image_build": _killed_in_image_build,
    "overflow_shown": _overflow_shown,
    "shm_full_shown": _shm_full_shown,
    "docker_default_shm_shown": _docker_default_shm_shown,
    "tf32_gpu_shown": _tf32_gpu_shown,
    "download_damaged_shown": _download_damaged_shown,
    "fresh_download_complete_shown": _fresh_download_complete_shown,
    "macos_below_mps_minimum": _macos_below_mps_minimum,
    "apple_silicon_shown": _apple_silicon_shown,
    "address_not_a_host": _address_not_a_host,
    "hip_memory_below_listed_gpus": _hip_memory_below_listed_gpus,
    "rocm_build_lacks_gfx": _rocm_build_lacks_gfx,
    "torch_without_cuda_by_design": _torch_without_cuda_by_design,
    "hsa_override_not_this_gpu": _hsa_override_not_this_gpu,
    "binary_compatible_gpu": _binary_compatible_gpu,
    "gpu_below_build": _gpu_below_build,
    "requested_after_torch_stable_html": _requested_after_torch_stable_html,
    "async_allocator_unsupported_gpu": _async_allocator_unsupported_gpu,
    "resolver_reported_conflict": _resolver_reported_conflict,
    "disjoint_torch_requirements": _disjoint_torch_requirements,
    "toolkit_other_major_shown": _toolkit_other_major_shown,
    "both_onnxruntime_packages_shown": _both_onnxruntime_packages_shown,
    "ffmpeg_major_not_supported": _ffmpeg_major_not_supported,
    "compiled_module_absence_shown": compiled_module_absence_shown,
    "dll_needs_only_vc_runtime": dll_needs_only_vc_runtime,
    "launcher_env_moved": launcher_env_moved,
}
