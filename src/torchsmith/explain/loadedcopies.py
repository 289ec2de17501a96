"""Evidence that a CUDA library lacking a versioned symbol is a second copy, not the only one. Pure.

glibc's loader says "X: undefined symbol: S, version L" (or "X: symbol S version L not defined in
file L with link time reference", elf/dl-lookup.c) when the L it loaded is older than the one X was
linked against. That alone does not say why the older L is there: another copy found first (a
system CUDA on LD_LIBRARY_PATH), or the only copy installed being too old for X (an old CUDA
runtime, or a companion's binary built against a newer library than the wheels beside it).
Two readings of the text prove a second copy:

- X and L are libraries of one package, shipped and upgraded together (cuBLAS's libcublas and
  libcublasLt, cuDNN's sub-libraries, NVRTC and its builtins, cuFFT and cuFFTW): one release of
  the package never lacks its own sibling's symbols, so two releases are mixed;
- X is torch's own library (libtorch*, libc10*): torch's install pins the CUDA libraries it was
  built with (its wheels' exact nvidia-* requirements, its conda recipe's), so an older L is not the
  one it installed; unless the installer shows another package replacing that wheel.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Mapping, Optional

from torchsmith.explain.extract.model import Extracted
from torchsmith.kb import KnowledgeBase

__all__ = ["LOADED_COPY_CONFIRMATIONS"]

# Libraries one NVIDIA package ships together: cuBLAS (libcublas, libcublasLt), cuDNN (libcudnn and
# its sub-libraries libcudnn_ops_infer, libcudnn_cnn_train, libcudnn_graph...), NVRTC (libnvrtc,
# libnvrtc-builtins), cuFFT (libcufft, libcufftw): the CUDA Toolkit's and cuDNN's lists of files
# (docs.nvidia.com/cuda/cuda-toolkit-release-notes, "CUDA Toolkit Major Component Versions";
# docs.nvidia.com/deeplearning/cudnn, "cuDNN library ... sub-libraries").
_ONE_PACKAGE = (
    re.compile(r"libcublas(?:Lt)?\.so"),
    re.compile(r"libcudnn(?:_[a-z_]+)?\.so"),
    re.compile(r"libnvrtc(?:-builtins)?\.so"),
    re.compile(r"libcufftw?\.so"),
)
_TORCH_OWN = re.compile(r"lib(?:torch|c10|caffe2)(?:_\w+)?\.so")


def _same_package(library: str, lib: str) -> bool:
    return library.partition(".so")[0] != lib.partition(".so")[0] and any(
        family.match(library) and family.match(lib) for family in _ONE_PACKAGE)


def _other_copy_loaded(extracted: Extracted, facts: Mapping[str, Any],
                       kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The library that lacks the symbol is proven a second copy: a sibling of the same package
    asked for it, or torch's own library did (see the module's doc)."""
    library, lib = str(facts.get("library") or ""), str(facts.get("lib") or "")
    if not library or not lib or facts.get("loaded") != lib:
        return None  # the asking library read from another line than the message's
    if _same_package(library, lib):
        return (f"{library} and {lib} come from one package of one release, so the {lib} loaded is "
                "a copy of another release")
    if _TORCH_OWN.match(library):
        if any(error.kind == "nvidia-wheel-shared" for error in extracted.installer_errors):
            return None  # another package's pin replaced the wheel torch installed: the only copy
        return (f"{library} is torch's own, and torch's install pins the CUDA libraries it was built "
                f"with, so the {lib} loaded is not the one it installed")
    return None


LOADED_COPY_CONFIRMATIONS: Dict[str, Callable[[Extracted, Mapping[str, Any], Optional[KnowledgeBase]],
                                              Optional[str]]] = {
    "other_copy_loaded": _other_copy_loaded,
}
