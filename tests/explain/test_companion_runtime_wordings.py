"""Companions and runtimes beside torch (torchvision, torchcodec, CuPy, TensorRT, onnxruntime, uv's
derivation over torch's own pins): each wording names its cause, and the near-miss beside it does not."""

from __future__ import annotations

from typing import List

import pytest

from torchsmith.explain import catalog_of, find_signatures
from torchsmith.explain.matcher import explain_report
from torchsmith.kb import load_kb

KB = load_kb(packaged_only=True)
CATALOG = catalog_of(KB)


def ids(text: str) -> List[str]:
    return [f.signature.id for f in find_signatures(text, CATALOG)]


def stated(text: str) -> List[str]:
    return [e.signature.id for e in explain_report(text, CATALOG, kb=KB).explanations]


_PRELOADED_TORCH_DLL = (
    'OSError: [WinError 127] The specified procedure could not be found. Error loading '
    '"D:\\env\\lib\\site-packages\\torch\\lib\\cudnn_adv64_9.dll" or one of its dependencies.')


@pytest.mark.parametrize("text, expected", [
    # torchvision's compiled modules (image.so, _C.so) lack a c10/ATen symbol: built for another torch
    ("UserWarning: Failed to load image Python extension: /site-packages/torchvision/image.so: "
     "undefined symbol: _ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12MemoryFormatE",
     "companion-needs-other-torch"),
    ("OSError: /env/lib/python3.10/site-packages/torchvision/_C.so: undefined symbol: "
     "_ZN3c1017RegisterOperatorsD1Ev", "companion-needs-other-torch"),
    # torchvision/io/video.py's own message when `import av` failed
    ("ImportError: PyAV is not installed, and is necessary for the video operations in torchvision.",
     "optional-dependency-not-installed"),
    # torchcodec's ffmpeg_versions.cmake, both of its refusals
    ("CMake Error at ffmpeg_versions.cmake:116 (message):\n  Unsupported libavcodec version: 63",
     "ffmpeg-version-unsupported"),
    ("CMake Error: FFmpeg version 9 is not supported", "ffmpeg-version-unsupported"),
    ("onnx2trt: error while loading shared libraries: libnvinfer.so.5: cannot open shared object file",
     "tensorrt-library-missing"),
    ("ImportError: libnvonnxparser.so.8: cannot open shared object file: No such file or directory",
     "tensorrt-library-missing"),
    ("ImportError: /site-packages/cupy_backends/cuda/api/runtime.cpython-38-x86_64-linux-gnu.so: "
     "undefined symbol: cudaMallocAsync", "cupy-wheel-cuda-mismatch"),
    # uv's derivation: torch's own pin against the user's requirement
    ("Because torch==2.11.0+cu130 depends on cuda-toolkit[cublas]==13.0.2 and you require "
     "cuda-toolkit==13.2.1, we can conclude that your requirements and torch==2.11.0+cu130 are incompatible.",
     "torch-pin-conflict"),
])
def test_wording_names_its_cause(text: str, expected: str) -> None:
    assert expected in ids(text)


@pytest.mark.parametrize("text, not_expected", [
    # a torchvision module missing a symbol that is not torch's: not the torch pairing
    ("/site-packages/torchvision/_C.so: undefined symbol: cudaLaunchKernelExC",
     "companion-needs-other-torch"),
    # torchcodec's loading traceback names each FFmpeg major it tried: no refusal of a version
    ("FFmpeg version 7: Could not find module 'C:\\torchcodec\\libtorchcodec_core7.dll' (or one of its "
     "dependencies).", "ffmpeg-version-unsupported"),
    # found, but of another build: not a missing library
    ("ImportError: /usr/lib/libnvinfer.so.8: undefined symbol: _ZN5nvinfer7ILogger",
     "tensorrt-library-missing"),
    # a C++ symbol of CuPy's own is no CUDA API function
    ("/site-packages/cupy/_core/core.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN4cupy3fooEv",
     "cupy-wheel-cuda-mismatch"),
    # another package's pin, not torch's
    ("Because torchao==0.1.0 depends on numpy==1.26.0 and you require numpy==2.0.0, we can conclude ...",
     "torch-pin-conflict"),
    # torch's DLL failing without a preload before it
    (_PRELOADED_TORCH_DLL, "windows-dll-preloaded-by-other-package"),
])
def test_near_miss_does_not_name_it(text: str, not_expected: str) -> None:
    assert not_expected not in ids(text)


def test_onnxruntime_preload_before_torch_explains_the_cudnn_procedure_error() -> None:
    text = (">>> import onnxruntime\n>>> onnxruntime.preload_dlls(verbose=True)\n"
            "----List of loaded DLLs----\n"
            "D:\\env\\Lib\\site-packages\\nvidia\\cudnn\\bin\\cudnn_graph64_9.dll\n"
            ">>> import torch\n" + _PRELOADED_TORCH_DLL)
    assert stated(text) == ["windows-dll-preloaded-by-other-package"]
    # without the preload, the same error is the cuDNN mix torch's loader shows
    assert "windows-dll-preloaded-by-other-package" not in stated(_PRELOADED_TORCH_DLL)
    assert "cudnn-version-incompatible" in stated(_PRELOADED_TORCH_DLL)


def test_pyav_message_names_torchvision_as_the_importer() -> None:
    text = "ImportError: PyAV is not installed, and is necessary for the video operations in torchvision."
    explanation = next(e for e in explain_report(text, CATALOG, kb=KB).explanations
                       if e.signature.id == "optional-dependency-not-installed")
    assert explanation.cause.startswith("torchvision's own code")
    assert "PyAV" in explanation.cause
