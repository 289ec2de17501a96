"""Evidence about an architecture list a build refused: what torch's cpp_extension knows. Pure.

torch.utils.cpp_extension checks each entry of TORCH_CUDA_ARCH_LIST (or the detected GPU's
capability) against its own release's ``supported_arches`` and raises ``Unknown CUDA arch (X) or
GPU not supported`` for any other entry. The list grows as NVIDIA adds architectures
(buildreqs.json ``cpp_extension_arches``, read from torch's newest source), so an entry the newest
list holds and an installed torch refused was added after that torch's release. An entry the
newest list lacks proves nothing of the kind: a misspelt entry, a GPU older than torch supports.

Likewise each CUDA release compiles for a list of architectures (arch-support data): a GPU newer
than the newest of them is newer than that release's cuDNN and cuBLAS. And each torch build carries a
list (torch_releases.json): where it has compiled code for the GPU, a missing kernel image is another
binary's.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.compat import kernel_for, parse_cc, sm_arch
from torchsmith.explain.extract.model import Environment, Extracted
from torchsmith.explain.triggers import named_capabilities
from torchsmith.kb import KnowledgeBase
from torchsmith.kb.model import VariantBuild
from torchsmith.versions import version_tuple

__all__ = ["ARCH_LIST_CONFIRMATIONS", "every_cuda_variant"]

# Packages that copy torch's check with the same words over their own list (spconv's cumm reads
# CUMM_CUDA_ARCH_LIST): a refusal raised there says nothing of torch's list.
_COPIES = frozenset({"cumm", "spconv"})


def _cpp_extension_arch_added_later(extracted: Extracted, facts: Mapping[str, Any],
                                    kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The refused entry (``+PTX`` aside) is one the newest torch's cpp_extension accepts."""
    entry = facts.get("arch_entry")
    if kb is None or not isinstance(entry, str):
        return None
    if any(frame.package in _COPIES for frame in extracted.frames):
        return None
    table = kb.document("buildreqs").get("cpp_extension_arches") or {}
    arch = entry[:-len("+PTX")] if entry.endswith("+PTX") else entry
    if arch not in (table.get("arches") or ()):
        return None
    return (f"{arch} is among the architectures the newest torch's cpp_extension accepts "
            f"(read {table.get('read', '?')}); a release refuses an entry of it only if made before "
            "it was added")


def _gpus_shown(extracted: Extracted, facts: Mapping[str, Any],
               kb: KnowledgeBase) -> List[Tuple[int, int]]:
    """The capability the text (or the trigger) prints, else that of every GPU it names; [] when a
    name's capability is unknown."""
    env = extracted.environment
    stated = facts.get("capability") if isinstance(facts.get("capability"), str) else env.capability
    if stated:
        cc = parse_cc(stated)
        return [cc] if cc else []
    named = [parse_cc(capability) for _, capability in named_capabilities(env, kb)]
    return [cc for cc in named if cc] if all(named) else []


def _arch_cc(arch: str) -> Optional[Tuple[int, int]]:
    digits = arch.rsplit("_", maxsplit=1)[-1]
    return parse_cc(f"{digits[:-1]}.{digits[-1]}")


def _first_cuda_reaching(cc: Tuple[int, int], kb: KnowledgeBase) -> Optional[str]:
    """The oldest CUDA release of the arch-support data that compiles for ``cc`` or newer."""
    rows = [row for row in kb.arch_support_rows() if (_arch_cc(row.max_arch) or (0, 0)) >= cc]
    return min((row.cuda for row in rows), key=version_tuple, default=None)


def _gpu_newer_than_build_cuda(extracted: Extracted, facts: Mapping[str, Any],
                               kb: Optional[KnowledgeBase]) -> Optional[str]:
    """Every GPU the text names (or the capability it prints) is newer than every architecture the
    CUDA release of the named build (+cuXYZ, the image's -cudaX.Y) compiles for: the first release
    of the arch-support data that compiles for it is newer than the build's. Whichever GPU ran,
    that release's libraries predate it. Jetson GPUs are left out (their CUDA releases are others)."""
    cuda = extracted.environment.torch_cuda
    shown = _gpus_shown(extracted, facts, kb) if kb is not None and cuda else []
    if kb is None or not shown or any(cc in kb.integrated_ccs for cc in shown):
        return None
    cc = min(shown)
    first = _first_cuda_reaching(cc, kb)
    if first is None or version_tuple(first) <= version_tuple(str(cuda)):
        return None
    return (f"compute capability {cc[0]}.{cc[1]} is newer than every architecture CUDA {cuda} compiles "
            f"for; CUDA {first} is the first release that compiles for it")


def _platform(extracted: Extracted) -> str:
    env = extracted.environment
    if env.platform == "windows":
        return "windows-x86_64"
    return "linux-aarch64" if env.machine in ("aarch64", "arm64") else "linux-x86_64"


def every_cuda_variant(env: Environment, kb: KnowledgeBase) -> List[VariantBuild]:
    """Where the text names a torch release but not its variant: each CUDA variant the data has of
    it (any one may be the build installed); [] where it names a variant, another kind or none."""
    release = kb.release(env.torch) if env.torch and not env.torch_cpu_only else None
    if release is None or "+" in (env.torch or "") or env.torch_cuda:
        return []
    return [variant for variant in release.variants if variant.kind == "cuda"]


def _torch_arch_lists(extracted: Extracted, kb: KnowledgeBase) -> Tuple[str, List[Sequence[str]]]:
    """(the build in words, the arch lists it may have): the list torch printed, or the data's list
    of the named release's +cuXYZ variant, or of each CUDA variant of it where the text names none."""
    env = extracted.environment
    printed = [arch for arch in env.arch_list if arch.startswith("sm_")]
    if printed:
        return "torch's own arch list", [printed]
    release = kb.release(env.torch) if env.torch and not env.torch_cpu_only else None
    if release is None or "+rocm" in (env.torch or "") or "+xpu" in (env.torch or ""):
        return "", []
    wanted = f"cu{env.torch_cuda.replace('.', '')}" if env.torch_cuda else None
    lists = [variant.sass(_platform(extracted)) for variant in release.variants
             if variant.kind == "cuda" and (wanted is None or variant.name == wanted)]
    named = f"+{wanted}" if wanted else " (every CUDA variant)"
    return f"torch {release.version}{named}", [archs for archs in lists if archs]


# the CUDA runtime's and driver's errors (extract.gpu); any other library's error in the text points at it
_RUNTIME_APIS = frozenset({"cuda", "cuda-driver"})


def _torch_build_carries_gpu(extracted: Extracted, facts: Mapping[str, Any],
                             kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch has compiled (SASS) code for every GPU the text names (or the capability it prints):
    the arch list torch printed, or the data's list of the torch release the text names (of its
    +cuXYZ variant, or of every CUDA variant where it names none). A kernel-image error then comes
    from another binary: a compiled extension's, unless the text shows another GPU library failing
    (NCCL's kernels, cuBLAS's). Jetson GPUs are left out (their builds are others)."""
    if kb is None or extracted.nccl or any(e.api not in _RUNTIME_APIS for e in extracted.gpu_errors):
        return None  # NCCL's or a CUDA library's own kernels (an old NCCL on a new GPU) are no extension's
    shown = _gpus_shown(extracted, facts, kb)
    build, lists = _torch_arch_lists(extracted, kb)
    if not shown or not lists or any(cc in kb.integrated_ccs for cc in shown):
        return None
    for archs in lists:
        for cc in shown:
            kernel = kernel_for(cc, archs)
            if kernel is None or kernel.how != "sass":
                return None
    gpus = ", ".join(sm_arch(f"{cc[0]}.{cc[1]}") for cc in sorted(set(shown)))
    return f"{build} has compiled code for this GPU ({gpus}): torch's own kernels run on it"


def _extension_own_wording(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The signature's own pattern matched: an extension's own wording of the failure (its call, its
    module search), not the runtime's bare error, whose facts name the library that returned it."""
    if "vendor_library" in facts:
        return None
    if facts.get("kernel"):
        return f"the call that failed, {facts['kernel']}, is the extension's own"
    if facts.get("cc"):
        return f"tinycudann's own search found no module for compute capability {facts['cc']}"
    return "the extension's own message names the failing call"


def _extension_checked_call(extracted: Extracted, facts: Mapping[str, Any],
                            kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The status came from a compiled extension's own check of its call (see ``extract.gpu``): the
    kernel that has no code for this GPU is the extension's, not torch's."""
    call = facts.get("extension_call")
    if not call:
        return None
    return (f"the failing call, {call}, is the extension's own: its check printed the CUDA status as a "
            f"number with the call it wrapped, which torch's checks never do")


ARCH_LIST_CONFIRMATIONS: Dict[str, Callable[[Extracted, Mapping[str, Any], Optional[KnowledgeBase]],
                                            Optional[str]]] = {
    "cpp_extension_arch_added_later": _cpp_extension_arch_added_later,
    "gpu_newer_than_build_cuda": _gpu_newer_than_build_cuda,
    "torch_build_carries_gpu": _torch_build_carries_gpu,
    "extension_own_wording": _extension_own_wording,
    "extension_checked_call": _extension_checked_call,
}
