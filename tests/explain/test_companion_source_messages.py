"""Compiled companions' own messages, written from their source (torchvision's extension.py, torch_scatter's
__init__.py, flash-attn's setup.py, bitsandbytes' cextension.py, Triton's NVIDIA driver.py, llama-cpp-python's
loader): each names the cause it proves, and the near text beside it does not."""

from __future__ import annotations

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report

_TV_OPS = ("RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision "
           "versions are incompatible, or if you had errors while compiling torchvision from source.")


@pytest.mark.parametrize("text, expected", [
    # torchvision/extension.py _assert_has_ops: _C failed to load inside torchvision's silent try
    (_TV_OPS, "torchvision-ops-missing"),
    # torch_scatter/__init__.py: the extension's CUDA major differs from torch's
    ("RuntimeError: Detected that PyTorch and torch_scatter were compiled with different CUDA versions. "
     "PyTorch has CUDA version 11.8 and torch_scatter has CUDA version 12.1. Please reinstall the "
     "torch_scatter that matches your PyTorch install.", "extension-cuda-mismatch"),
    ("RuntimeError: Detected that PyTorch and torch_sparse were compiled with different CUDA versions. "
     "PyTorch has CUDA version 12.1 and torch_sparse has CUDA version 11.8.", "extension-cuda-mismatch"),
    # flash-attn setup.py: nvcc (CUDA_HOME) is older than the build supports
    ("RuntimeError: FlashAttention is only supported on CUDA 11.7 and above.  Note: make sure nvcc has a "
     "supported version by running nvcc -V.", "nvcc-too-old"),
    # bitsandbytes cextension.py: no libbitsandbytes_cudaXYZ for the CUDA torch reports
    ("RuntimeError: Configured CUDA binary not found at "
     "/env/site-packages/bitsandbytes/libbitsandbytes_cuda132.so", "bitsandbytes-binary-missing"),
    # Triton's NVIDIA driver.py: libcuda.so.1 in neither the ldconfig cache nor LD_LIBRARY_PATH
    ("AssertionError: libcuda.so cannot found!\nPlease make sure GPU is set up and then run "
     "\"/sbin/ldconfig\" (requires sudo) to refresh the linker cache.", "libcuda-missing"),
    # llama-cpp-python wraps ctypes' WinError 126 text
    ("RuntimeError: Failed to load shared library 'C:\\venv\\Lib\\site-packages\\llama_cpp\\lib\\llama.dll': "
     "Could not find module 'C:\\venv\\Lib\\site-packages\\llama_cpp\\lib\\llama.dll' (or one of its "
     "dependencies). Try using the full path with constructor syntax.", "windows-dll-load-failed"),
])
def test_source_message_names_its_cause(text: str, expected: str) -> None:
    assert stated(text)[:1] == [expected]


@pytest.mark.parametrize("text, not_expected", [
    # an older torch_scatter printed 0.0 for its CPU-only build: not a second CUDA version
    ("RuntimeError: Detected that PyTorch and torch_spline_conv were compiled with different CUDA versions. "
     "PyTorch has CUDA version 10.0 and torch_spline_conv has CUDA version 0.0.", "extension-cuda-mismatch"),
    # a build that says it needs CUDA 11.7 without flash-attn's refusal is not nvcc's age
    ("FlashAttention is supported on CUDA 11.7, 11.8 and 12.x", "nvcc-too-old"),
    # bitsandbytes loading a CPU library is not a missing CUDA binary
    ("Loading bitsandbytes native library from: /env/bitsandbytes/libbitsandbytes_cpu.so",
     "bitsandbytes-binary-missing"),
    ("Could not find module 'C:\\app\\plugins\\other.dll' (or one of its dependencies)",
     "windows-dll-load-failed"),
])
def test_near_text_is_not_that_cause(text: str, not_expected: str) -> None:
    assert not_expected not in stated(text)


def test_torchvision_check_names_the_ops_it_could_not_load() -> None:
    """Without an operator named, the cause speaks of torchvision's custom ops, never a '?'."""
    report = explain_report(_TV_OPS, CATALOG, kb=KB)
    cause = report.explanations[0].cause
    assert "torchvision's custom C++ ops" in cause and "?" not in cause
    nms = explain_report("RuntimeError: operator torchvision::nms does not exist", CATALOG, kb=KB)
    assert "(torchvision::nms)" in nms.explanations[0].cause
