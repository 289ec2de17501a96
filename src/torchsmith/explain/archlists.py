"""Evidence about an architecture list a build refused: what torch's cpp_extension knows. Pure.

torch.utils.cpp_extension checks each entry of TORCH_CUDA_ARCH_LIST (or the detected GPU's
capability) against its own release's ``supported_arches`` and raises ``Unknown CUDA arch (X) or
GPU not supported`` for any other entry. The list grows as NVIDIA adds architectures
(buildreqs.json ``cpp_extension_arches``, read from torch's newest source), so an entry the newest
list holds and an installed torch refused was added after that torch's release. An entry the
newest list lacks proves nothing of the kind: a misspelt entry, a GPU older than torch supports.

Likewise each CUDA release compiles for a list of architectures (arch-support data): a GPU newer
than the newest of them is newer than that release's cuDNN and cuBLAS.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional

from torchsmith.compat import parse_cc
from torchsmith.explain.extract.model import Extracted
from torchsmith.explain.triggers import named_capabilities
from torchsmith.kb import KnowledgeBase

__all__ = ["ARCH_LIST_CONFIRMATIONS"]

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


def _gpu_newer_than_build_cuda(extracted: Extracted, facts: Mapping[str, Any],
                               kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The one GPU the text names (or the capability it prints) is newer than every architecture the
    CUDA release of the named build (+cuXYZ, the image's -cudaX.Y) compiles for."""
    env = extracted.environment
    named = named_capabilities(env, kb) if kb is not None else []
    stated = facts.get("capability") if isinstance(facts.get("capability"), str) else env.capability
    cc = parse_cc(stated or (named[0][1] if len(named) == 1 else None))
    cuda = env.torch_cuda
    support = kb.arch_support(cuda) if kb is not None and cuda else None
    if cc is None or support is None or support.cuda != ".".join(str(cuda).split(".")[:2]):
        return None  # no one GPU, no build named, or a release the data does not list
    digits = support.max_arch.split("_")[-1]
    newest = parse_cc(f"{digits[:-1]}.{digits[-1]}")
    if newest is None or cc <= newest:
        return None
    return (f"compute capability {cc[0]}.{cc[1]} is newer than the newest architecture CUDA {cuda} "
            f"knows, {support.max_arch}, the CUDA release this torch build targets")


ARCH_LIST_CONFIRMATIONS: Dict[str, Callable[[Extracted, Mapping[str, Any], Optional[KnowledgeBase]],
                                            Optional[str]]] = {
    "cpp_extension_arch_added_later": _cpp_extension_arch_added_later,
    "gpu_newer_than_build_cuda": _gpu_newer_than_build_cuda,
}
