"""torch's wording for the CUDA runtime's cudaErrorInitializationError (c10/cuda/CUDAFunctions.cpp):
a family, since the same sentence follows a container or job without a GPU, a driver module that is
not loaded, and CUDA started before a fork; it asserts none of them."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, stated

from torchsmith.explain import find_signatures

FAMILY = "cuda-driver-init-failed"

_LAZY_INIT = ('  File "/opt/conda/lib/python3.11/site-packages/torch/cuda/__init__.py", line 319, '
              "in _lazy_init\n    torch._C._cuda_init()\n")


def test_torchs_driver_initialisation_sentence_is_a_family_with_its_candidates() -> None:
    text = _LAZY_INIT + "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.\n"
    assert stated(text) == [FAMILY]
    found = next(f for f in find_signatures(text, CATALOG) if f.signature.id == FAMILY)
    ids = [c.id for c in found.signature.candidates]
    assert ids == ["container-started-without-gpu-access", "nvidia-kernel-module-not-loaded",
                   "cuda-initialized-before-fork"]


def test_other_initialisation_failures_are_not_this_family() -> None:
    # torch's sentences for other statuses of the same call name their own causes
    assert FAMILY not in stated("RuntimeError: Found no NVIDIA driver on your system. Please check that you "
                                "have an NVIDIA GPU and installed a driver\n")
    assert FAMILY not in stated("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA "
                                "with multiprocessing, you must use the 'spawn' start method\n")
    # another library's own words about a missing GPU
    assert FAMILY not in stated("WARNING: driver initialization failed; you might not have a GPU\n")
