"""Evidence in a text against a signature's cause that its facts show directly: the build, the
platform, the stage or the place of the failure. :data:`TEXT_CONTRADICTIONS` names them;
:data:`torchsmith.explain.reason.CONTRADICTION_CHECKS` adds the ones that reason with the compat
rules (arch lists, driver floors) and the GPUs' vendors; :mod:`.misfires` those against the causes
of widely firing triggers. Pure: no I/O.

Each check takes (what the text shows, the facts its trigger read, the knowledge base) and returns
the evidence in words, or None.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Mapping, Optional

from torchsmith.compat import Variant
from torchsmith.explain.confirmations import Check
from torchsmith.explain.extract.model import Extracted
from torchsmith.explain.misfires import MISFIRE_CONTRADICTIONS
from torchsmith.explain.triggers import failing_package
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
    if env.jetson_torch_image:
        return f"the text runs NVIDIA's torch image for the board ({env.jetson_torch_image})"
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
    wheel for this platform or Python, or the index read never had a torch build the requirement
    allows: that torch cannot be installed here whatever pins it, so the refusal is not pins in
    conflict."""
    unfit = {offer.name for offer in extracted.offers if _NO_FITTING_WHEEL.search(offer.said)}
    needed = {"torch"} | {c.what for c in extracted.conflicts if c.who_name == "torch"}
    shown = sorted(unfit & needed)
    if shown:
        return f"uv says {shown[0]}, which that torch needs, has no wheel for this platform or Python"
    # the index the installer read holds no torch build the requirement allows (extract.listings)
    unpublished = next((e for e in extracted.installer_errors
                        if e.kind == "build-unpublished" and e.package == "torch"), None)
    return f"the index read has no such torch build: {unpublished.meaning}" if unpublished else None


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


def _bf16_query_not_on_cuda(extracted: Extracted, facts: Mapping[str, Any],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """xFormers' "bf16 is only supported on A100+ GPUs" beside its own reason that the query is on
    another device: it adds that remark for a bfloat16 query on any device but CUDA
    (xformers/ops/fmha/common.py not_supported_reasons), so the GPU's age is not shown."""
    device = facts.get("query_device")
    return f"xFormers got the query on device={device}, not on a CUDA GPU" if device else None


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


def _compile_targets_chosen(extracted: Extracted, facts: Mapping[str, Any],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """ptxas refused a feature for the target it compiled for, and the text shows an ahead-of-time build
    (a package's build steps, nvcc, CMake, a compiler's own lines): that build compiles for the targets it
    was told (TORCH_CUDA_ARCH_LIST, -gencode), which may be older than the GPU. Only a compile at run
    time (Triton, NVRTC, numba) targets the GPU it runs on, so only there does the target name the GPU."""
    if facts.get("ptxas_feature") and extracted.build_shown:
        return "the text shows a build, which compiles for the targets it was given, not only the GPU's"
    return None


_GPU_ILLEGAL_INSTRUCTION = ("cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION")


def _gpu_illegal_instruction(extracted: Extracted, facts: Mapping[str, Any],
                             kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The illegal instruction the text reports is a GPU kernel's: CUDA's own status for it
    (cudaErrorIllegalInstruction, 715), not a CPU's SIGILL."""
    named = next((e.name for e in extracted.gpu_errors if e.name in _GPU_ILLEGAL_INSTRUCTION), None)
    return f"CUDA reported {named}: a GPU kernel's illegal instruction, not the CPU's" if named else None


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


def _other_container_tool_shown(extracted: Extracted, facts: Mapping[str, Any],
                                kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The command shown next to the error is another container tool's (nerdctl, ctr, docker...), and
    podman is not named there: any Go tool words a failed stat of a --device path the same way."""
    text = str(facts.get("other_tool_command") or "")
    if not text or facts.get("podman_named"):
        return None
    return f"the command shown is another tool's ({text.strip()[:80]}), not podman's"


# Prefixes whose install scheme puts platform-specific packages in lib64 and pure ones in lib
# (sysconfig's platlibdir=lib64 on Fedora/RHEL-like systems): the system's, /usr/local, a user site,
# and a system tree under another root (Software Collections' /opt/rh/<name>/root/usr).
_LIB64_SPLIT_PREFIX = re.compile(r"(?:(?:/[^/]+)*?/usr(?:/local)?|(?:~|/home/[^/]+|/root)/\.local)")


def _lib64_links_to_lib(extracted: Extracted, facts: Mapping[str, Any],
                        kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch sits under <prefix>/lib64 where the prefix is neither the system's nor a user site: a
    venv (python -m venv links lib64 to lib on 64-bit Linux, CPython Lib/venv/__init__.py, bpo-21197)
    has one site-packages, so a split between lib and lib64 cannot hide the nvidia-* wheels there."""
    prefix = facts.get("lib64_prefix")
    if not isinstance(prefix, str) or _LIB64_SPLIT_PREFIX.fullmatch(prefix):
        return None
    return (f"torch sits under {prefix}/lib64, not the system's or a user site: "
            "in a venv lib64 is a link to lib")


# GCC driver options of nvcc's "Unknown option" shape that no nvcc release accepts (GCC manual:
# Link Options, Directory Options, Overall Options); the f/W/m/O families the pattern already skips.
_GCC_ONLY_OPTIONS = frozenset({
    "-no-pie", "-static-pie", "-static-libgcc", "-shared-libgcc", "-static-libasan", "-static-libtsan",
    "-static-liblsan", "-static-libubsan", "-no-canonical-prefixes", "-print-search-dirs",
    "-print-libgcc-file-name", "-pass-exit-codes", "-no-integrated-cpp"})


def _option_is_host_compilers(extracted: Extracted, facts: Mapping[str, Any],
                              kb: Optional[KnowledgeBase]) -> Optional[str]:
    """nvcc refused a GCC option no nvcc has: the build handed a host-compiler flag to nvcc without
    -Xcompiler/-Xlinker (nvcc docs), which no newer nvcc would accept either."""
    option = facts.get("option")
    if option not in _GCC_ONLY_OPTIONS:
        return None
    return f"{option} is GCC's option, which no nvcc accepts: it reached nvcc without -Xcompiler/-Xlinker"


def _module_looked_up_in_image(extracted: Extracted, facts: Mapping[str, Any],
                               kb: Optional[KnowledgeBase]) -> Optional[str]:
    """modprobe ran in an image build: a container shares the host's kernel but not its files, and kmod
    looks for the module under /lib/modules/<running kernel> of the filesystem it runs in, the image's,
    which holds no modules for the host's kernel (a driver package's install script runs modprobe there)."""
    if not facts.get("image_build"):
        return None
    return "modprobe ran in an image build, where /lib/modules is the image's, not the host's"


TEXT_CONTRADICTIONS: Dict[str, Check] = {
    **MISFIRE_CONTRADICTIONS,
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
    "bf16_query_not_on_cuda": _bf16_query_not_on_cuda,
    "sbsa_jetson_shown": _sbsa_jetson_shown,
    "triton_name_not_torchs": _triton_name_not_torchs,
    "sdpa_refusal_caught": _sdpa_refusal_caught,
    "ptxas_not_tritons": _ptxas_not_tritons,
    "gpu_illegal_instruction": _gpu_illegal_instruction,
    "arch_name_never_compiled": _arch_name_never_compiled,
    "other_container_tool_shown": _other_container_tool_shown,
    "compile_targets_chosen": _compile_targets_chosen,
    "lib64_links_to_lib": _lib64_links_to_lib,
    "option_is_host_compilers": _option_is_host_compilers,
    "module_looked_up_in_image": _module_looked_up_in_image,
}
