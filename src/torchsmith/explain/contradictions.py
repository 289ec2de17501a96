"""Evidence in a text against a signature's cause that its facts show directly: the build, the
platform, the stage or the place of the failure. :data:`TEXT_CONTRADICTIONS` names them;
:data:`torchsmith.explain.reason.CONTRADICTION_CHECKS` adds the ones that reason with the compat
rules (arch lists, driver floors) and the GPUs' vendors. Pure: no I/O.

Each check takes (what the text shows, the facts its trigger read, the knowledge base) and returns
the evidence in words, or None.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Mapping, Optional

from torchsmith.compat import Variant
from torchsmith.explain.confirmations import Check
from torchsmith.explain.extract.loader import demangle, symbol_owner
from torchsmith.explain.extract.model import Extracted
from torchsmith.explain.triggers import failing_package, named_capabilities
from torchsmith.kb import KnowledgeBase
from torchsmith.versions import version_tuple

__all__ = ["TEXT_CONTRADICTIONS"]


def _cuda_build_shown(
    extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]
) -> Optional[str]:
    """The build the error comes from is a CUDA build (torch.version.cuda printed beside it)."""
    env = extracted.environment
    if env.torch_cpu_only or not env.torch or not env.torch_cuda or not Variant.parse(f"cu{env.torch_cuda}"):
        return None
    if "+cu" not in env.torch:
        return None
    return f"the text shows a CUDA build of torch ({env.torch})"


def _torch_gpu_build_shown(
    extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]
) -> Optional[str]:
    """The torch in use is shown to be a GPU build: torch.version.cuda (or collect_env's CUDA used
    to build PyTorch) printed as a version, a +cuXYZ label, or NVIDIA's own Jetson build (its
    version ends in .nvYY.MM, as in 2.1.0a0+41361538.nv23.06). A CPU-only wheel prints None."""
    env = extracted.environment
    if env.torch_cpu_only:
        return None
    if env.torch and re.search(r"[+.]nv\d{2}\.\d{2}\b", env.torch):
        return f"the text shows NVIDIA's own torch build ({env.torch})"
    if env.torch_cuda:
        return f"the text shows a torch built with CUDA {env.torch_cuda}"
    return None


def _importer_not_torch(extracted: Extracted, facts: Mapping[str, Any],
                        kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The library was asked for by a compiled extension (the traceback's innermost package), not torch."""
    package = failing_package(extracted)
    if package is None or package in ("torch", "nvidia", "importlib", "ctypes"):
        return None
    return f"the import that failed is {package}'s, a compiled extension, not torch's"


def _on_wsl(extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text comes from WSL, where the GPU is the Windows driver's and Linux-side causes do not hold."""
    if extracted.environment.platform != "wsl":
        return None
    return "the text comes from WSL, where the GPU belongs to the Windows driver"


def _op_on_gpu(extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The kernel the message names is a GPU one ("topk_cuda", "..._cuda_kernel"): not the CPU's."""
    op = str(facts.get("op") or "")
    if not re.search(r"cuda|cudnn|hip|mps", op, re.IGNORECASE):
        return None
    return f"the kernel it names, {op}, is a GPU kernel: this ran on the GPU, not the CPU"


def _oom_not_workload(extracted: Extracted, facts: Mapping[str, Any],
                      kb: Optional[KnowledgeBase]) -> Optional[str]:
    """CUDA's initialisation reported the out-of-memory status: no workload had run yet. (The
    free memory an OOM message prints is no such evidence: fragmentation and HIP's accounting
    leave allocations failing with more than the request free.)"""
    memory = [g for g in extracted.gpu_errors if g.kind == "memory"]
    if not facts.get("requested") and memory and all(g.stage == "init" for g in memory):
        return "CUDA reported out of memory while initialising (cudaGetDeviceCount), before any workload ran"
    return None


def _path_within_max_path(extracted: Extracted, facts: Mapping[str, Any],
                          kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The path a not-found error names is shorter than Windows' MAX_PATH (260 characters with
    its terminating null): no long-path limit was hit (pip itself hints at one only above 260)."""
    path = facts.get("path")
    if not isinstance(path, str):
        return None
    length = len(path.replace("\\\\", "\\"))  # as Python's repr printed it: backslashes doubled
    return f"the path is {length} characters, within Windows' 260" if length < 260 else None


def _loopback_peer_on_one_node(extracted: Extracted, facts: Mapping[str, Any],
                               kb: Optional[KnowledgeBase]) -> Optional[str]:
    """gloo could not connect to a peer at a loopback address in a job the text launches on one node:
    every peer is on this host, so loopback reaches it, and a refused connection is a peer that was
    not listening (it exited), not an interface that reaches no other node."""
    peer = facts.get("peer")
    if not peer or not extracted.environment.one_node:
        return None
    return f"the job runs on one node, where the peer's loopback address {peer} is this host"


def _cuda_error_shown(extracted: Extracted, facts: Mapping[str, Any],
                      kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text names the CUDA status itself (torch prints it after "Unexpected error from
    cudaGetDeviceCount()."): the signature of that status speaks, not the family of them all."""
    named = next((e for e in extracted.gpu_errors if e.api.startswith("cuda") and e.name and e.code), None)
    return f"the text names the CUDA error itself ({named.name}, {named.code})" if named else None


# uv's reason a version has no distribution it can use here (crates/uv-resolver/src/pubgrub/report.rs,
# since astral-sh/uv#1293): wheels only for other platforms or Pythons
_NO_FITTING_WHEEL = re.compile(r"has no wheels with a matching (?:platform|Python ABI|Python implementation) "
                               r"tag")


def _torch_unusable_here(extracted: Extracted, facts: Mapping[str, Any],
                         kb: Optional[KnowledgeBase]) -> Optional[str]:
    """uv's derivation shows that torch itself, or a requirement of the torch it derives, has no
    wheel for this platform or Python: that torch cannot be installed here whatever pins it, so the
    refusal is not pins in conflict."""
    unfit = {offer.name for offer in extracted.offers if _NO_FITTING_WHEEL.search(offer.said)}
    needed = {"torch"} | {c.what for c in extracted.conflicts if c.who_name == "torch"}
    shown = sorted(unfit & needed)
    if not shown:
        return None
    return f"uv says {shown[0]}, which that torch needs, has no wheel for this platform or Python"


def _bf16_emulated_by_torch(extracted: Extracted, facts: Mapping[str, Any],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """A refusal that follows torch.cuda.is_bf16_supported() (autocast's, transformers' own: the
    signature's ``bf16_check``) beside a torch of 2.3 or later: that function then answers True on
    any CUDA GPU that can hold a bfloat16 tensor, emulating it where the GPU has none (pytorch#115924),
    so an older GPU is not what it refused."""
    torch = extracted.environment.torch
    if not facts.get("bf16_check") or not torch or version_tuple(torch)[:2] < (2, 3):
        return None
    return f"torch {torch} reports bfloat16 on GPUs without it (emulated): the refusal is not the GPU's age"


def _wheel_python(facts: Mapping[str, Any]) -> Optional[bool]:
    """Whether the wheel pip fetched for the package it refuses is tagged for the Python it runs
    (``cp315`` for 3.15); None when the facts do not show that wheel, that package and that Python."""
    tag, python = facts.get("wheel_python"), facts.get("python")
    wheel, package = facts.get("wheel_package"), facts.get("package")
    if not (isinstance(tag, str) and isinstance(python, str) and isinstance(wheel, str)
            and isinstance(package, str)):
        return None
    if re.sub(r"[-_.]+", "-", wheel).lower() != re.sub(r"[-_.]+", "-", package).lower():
        return None
    return tag == "".join(python.split(".")[:2])


def _wheel_for_this_python(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The refused package's wheel is tagged for this very Python: its Requires-Python contradicts
    its own tag, a fault of the published file, not of the interpreter."""
    if _wheel_python(facts):
        return (f"the {facts['package']} wheel pip fetched is tagged cp{facts['wheel_python']}, "
                "for this Python")
    return None


def _wheel_not_for_this_python(extracted: Extracted, facts: Mapping[str, Any],
                               kb: Optional[KnowledgeBase]) -> Optional[str]:
    """pip refused a package for the Python it runs ("python" read), and the text does not show a
    wheel of that package tagged for that Python: the refusal is the package's range, not a fault
    of the file."""
    if "python" in facts and not _wheel_python(facts):
        return "no wheel of the refused package tagged for this Python is shown"
    return None


# JetPack 7 (L4T r38) on, and Jetson Thor, run NVIDIA's SBSA CUDA stack (jetson.json's JetPack 7 rows)
_SBSA_JETPACK = re.compile(r"JetPack (?:[7-9]|\d{2})\b|L4T R?(?:3[89]|[4-9]\d)\.|\bR(?:3[89]) \(release\)")


def _sbsa_jetson_shown(extracted: Extracted, facts: Mapping[str, Any],
                       kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The Jetson is on JetPack 7 or later, or is a Jetson Thor: it runs the SBSA CUDA stack, where
    the upstream aarch64 CUDA wheels (cu130 on, PyPI's own from torch 2.11) use its GPU, so a wheel
    not built by NVIDIA for the board is not thereby one without CUDA."""
    env = extracted.environment
    if env.jetson and _SBSA_JETPACK.search(env.jetson):
        return f"the text shows {env.jetson}, which runs the SBSA CUDA stack that upstream wheels support"
    thor = next((g.name for g in env.gpu_models if g.jetson and g.capability
                 and version_tuple(g.capability) >= (10, 0)), None)
    if thor is None:
        return None
    return f"the text names {thor}, which runs the SBSA CUDA stack that upstream wheels support"


def _nvcc_looked_up_without_build(extracted: Extracted, facts: Mapping[str, Any],
                                  kb: Optional[KnowledgeBase]) -> Optional[str]:
    """A shell's "nvcc: command not found" answers the user's own lookup (``nvcc --version``,
    ``which nvcc``, an interactive bash) and the text shows no build: nvcc is absent, but nothing
    was being compiled, so that is not what failed."""
    if not facts.get("nvcc_missing") or not facts.get("nvcc_lookup") or extracted.build_shown:
        return None
    return "nvcc was looked up by hand, and the text shows no build that needed it"


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


# torch's own files (site-packages/torch) and the kernels Inductor writes (torchinductor_<user>/...)
_TORCH_CODE = re.compile(r"[\\/]torch[\\/]|torchinductor_")
_TRITON_CODE = re.compile(r"[\\/]triton[\\/]|^<")  # Triton's own frames, and <frozen importlib...>


def _triton_name_not_torchs(extracted: Extracted, facts: Mapping[str, Any],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The traceback's innermost frame outside Triton is not torch's code nor a kernel Inductor
    wrote: another library's import of Triton, or a user's own Triton kernel that Inductor only
    traced, uses the name (that code against the installed Triton, not torch against Triton)."""
    outside = [frame for frame in extracted.frames if not _TRITON_CODE.search(frame.path)]
    if not outside or _TORCH_CODE.search(outside[-1].path):
        return None
    return f"the code that uses the Triton name is {outside[-1].path}, not torch's"


_SDPA_REFUSAL = "No available kernel"


def _sdpa_refusal_caught(extracted: Extracted, facts: Mapping[str, Any],
                         kb: Optional[KnowledgeBase]) -> Optional[str]:
    """SDPA's refusal shows only inside a warning, never raised: the caller caught it and went on
    (a library that first restricts SDPA to a fused kernel retries with every kernel and warns, as
    SAM 2's transformer.py does), so it is not what failed."""
    warned = [w for w in extracted.warnings + extracted.exceptions
              if w.type.endswith("Warning") and _SDPA_REFUSAL in w.message]
    raised = [e for e in extracted.exceptions
              if not e.type.endswith("Warning") and _SDPA_REFUSAL in e.message]
    if not warned or raised:
        return None
    return f"the refusal shows only in a {warned[0].type} (the caller caught it and went on), never raised"


def _ptxas_not_tritons(extracted: Extracted, facts: Mapping[str, Any],
                       kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The ptxas that refused the architecture is not the one Triton bundles: TRITON_PTXAS_PATH names
    another (Triton then runs that one: triton/backends/nvidia/compiler.py), or the command Triton
    shows ran (its "Repro command:") is a ptxas outside triton/backends."""
    named = facts.get("ptxas_env")
    if isinstance(named, str) and named.strip():
        return f"TRITON_PTXAS_PATH names {named}: Triton ran that ptxas, not the one it bundles"
    ran = facts.get("ptxas_run")
    if isinstance(ran, str) and not re.search(r"triton[\\/]", ran):
        return f"the ptxas that ran is {ran}, not the one Triton bundles"
    return None


_GPU_ILLEGAL_INSTRUCTION = ("cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION")


def _gpu_illegal_instruction(extracted: Extracted, facts: Mapping[str, Any],
                             kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The illegal instruction the text reports is a GPU kernel's: CUDA's own status for it
    (cudaErrorIllegalInstruction, 715), not a CPU's SIGILL."""
    named = next((e.name for e in extracted.gpu_errors if e.name in _GPU_ILLEGAL_INSTRUCTION), None)
    return f"CUDA reported {named}: a GPU kernel's illegal instruction, not the CPU's" if named else None


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


def _arch_name_never_compiled(extracted: Extracted, facts: Mapping[str, Any],
                              kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The architecture name refused is one no CUDA release compiles for (cuda.json arch_support,
    every release's list): a mistyped entry (TORCH_CUDA_ARCH_LIST="7.7"), not a name the module
    was too old to know."""
    name = facts.get("arch_name")
    if not isinstance(name, str) or kb is None:
        return None
    arch = "sm_" + re.sub(r"[a-z]$", "", name).replace(".", "")
    known = {arch for row in kb.table("arch-support") for arch in row.archs}
    if not known or arch in known:
        return None
    return f"no CUDA release compiles for {name} ({arch}): the entry is not an architecture"


def _glibc_shown_new_enough(extracted: Extracted, facts: Mapping[str, Any],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text reports the system's glibc (collect_env, ldd --version) at or past the GLIBC_2.x the
    binary asks for: the glibc that refused it is not that one (another machine or container, a libc
    or loader on LD_LIBRARY_PATH), so the system's glibc is not shown too old."""
    shown, wanted = extracted.environment.glibc, str(facts.get("version") or "")
    if not shown or not wanted.startswith("GLIBC_"):
        return None
    if version_tuple(shown) < version_tuple(wanted[len("GLIBC_"):]):
        return None
    return f"the text shows glibc {shown}, which has {wanted}"


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


def _other_container_tool_shown(extracted: Extracted, facts: Mapping[str, Any],
                                kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The command shown next to the error is another container tool's (nerdctl, ctr, docker...), and
    podman is not named there: any Go tool words a failed stat of a --device path the same way."""
    text = str(facts.get("other_tool_command") or "")
    if not text or facts.get("podman_named"):
        return None
    return f"the command shown is another tool's ({text.strip()[:80]}), not podman's"


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


TEXT_CONTRADICTIONS: Dict[str, Check] = {
    # the wheel pip fetched for the package it refuses: tagged for this Python or not
    "wheel_for_this_python": _wheel_for_this_python,
    "wheel_not_for_this_python": _wheel_not_for_this_python,
    "cuda_build_shown": _cuda_build_shown,
    "torch_gpu_build_shown": _torch_gpu_build_shown,
    "importer_not_torch": _importer_not_torch,
    "on_wsl": _on_wsl,
    "op_on_gpu": _op_on_gpu,
    "oom_not_workload": _oom_not_workload,
    "path_within_max_path": _path_within_max_path,
    "loopback_peer_on_one_node": _loopback_peer_on_one_node,
    "cuda_error_shown": _cuda_error_shown,
    "torch_unusable_here": _torch_unusable_here,
    "bf16_emulated_by_torch": _bf16_emulated_by_torch,
    "sbsa_jetson_shown": _sbsa_jetson_shown,
    "nvcc_looked_up_without_build": _nvcc_looked_up_without_build,
    "build_went_past_compiler_check": _build_went_past_compiler_check,
    "symbol_not_torchs": _symbol_not_torchs,
    "space_exhausted_outside_install": _space_exhausted_outside_install,
    "glibc_shown_new_enough": _glibc_shown_new_enough,
    "fp8_format_of_other_vendor": _fp8_format_of_other_vendor,
    "gpu_newer_than_hopper": _gpu_newer_than_hopper,
    "mkl_symbol_not_ittnotify": _mkl_symbol_not_ittnotify,
    "refused_on_one_node": _refused_on_one_node,
    "xformers_built_for_this_torch": _xformers_built_for_this_torch,
    "torch_cpu_build_shown": _torch_cpu_build_shown,
    "rocm_torch_shown": _rocm_torch_shown,
    "triton_name_not_torchs": _triton_name_not_torchs,
    "sdpa_refusal_caught": _sdpa_refusal_caught,
    "ptxas_not_tritons": _ptxas_not_tritons,
    "gpu_illegal_instruction": _gpu_illegal_instruction,
    "arch_name_never_compiled": _arch_name_never_compiled,
    "other_container_tool_shown": _other_container_tool_shown,
}
