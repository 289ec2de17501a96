"""Companions and runtimes beside torch (torchvision, torchcodec, CuPy, TensorRT, onnxruntime, uv's
derivation over torch's own pins): each wording names its cause, and the near-miss beside it does not."""

from __future__ import annotations

from typing import List

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain import find_signatures
from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report


def ids(text: str) -> List[str]:
    return [f.signature.id for f in find_signatures(text, CATALOG)]


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
    # torchcodec registers each op's schema and its BackendSelect/CPU kernel in one library
    # (custom_ops.cpp): a schema without its kernel there is a library built for another torch
    ("NotImplementedError: Could not run 'torchcodec_ns::scan_all_streams_to_update_metadata' with "
     "arguments from the 'CPU' backend.", "companion-needs-other-torch"),
    ("but no fallback function is registered for schema torchcodec_ns::create_from_file.",
     "companion-needs-other-torch"),
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
    # torchcodec registers no CUDA kernels of its own: the CUDA backend's absence proves nothing
    ("Could not run 'torchcodec_ns::get_next_frame' with arguments from the 'CUDA' backend.",
     "companion-needs-other-torch"),
    # torchcodec's loading traceback names each FFmpeg major it tried: no refusal of a version
    ("FFmpeg version 7: Could not find module 'C:\\torchcodec\\libtorchcodec_core7.dll' (or one of its "
     "dependencies).", "ffmpeg-version-unsupported"),
    # found, but of another build: not a missing library
    ("ImportError: /usr/lib/libnvinfer.so.8: undefined symbol: _ZN5nvinfer7ILogger",
     "tensorrt-library-missing"),
    # a driver API function (cu*, libcuda) missing: the driver is older than the build, not the wheel's CUDA
    ("ImportError: /site-packages/cupy_backends/cuda/api/driver.cpython-310-x86_64-linux-gnu.so: "
     "undefined symbol: cuMemAddressReserve", "cupy-wheel-cuda-mismatch"),
    # a C++ symbol of CuPy's own is no CUDA API function
    ("/site-packages/cupy/_core/core.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN4cupy3fooEv",
     "cupy-wheel-cuda-mismatch"),
    # another package's pin, not torch's
    ("Because torchao==0.1.0 depends on numpy==1.26.0 and you require numpy==2.0.0, we can conclude ...",
     "torch-pin-conflict"),
    # torch's DLL failing without a preload before it
    (_PRELOADED_TORCH_DLL, "windows-dll-preloaded-by-other-package"),
    # TensorFlow's dso_loader tries TensorRT as an option (TF-TRT) and runs without it: no failure
    ("W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
     "library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or "
     "directory", "tensorrt-library-missing"),
])
def test_near_miss_does_not_name_it(text: str, not_expected: str) -> None:
    assert not_expected not in ids(text)


@pytest.mark.parametrize("text", [
    # the preload named in prose (advice tried or read), not run before torch
    "I read that calling onnxruntime.preload_dlls() first might help, but it did not.\n"
    + _PRELOADED_TORCH_DLL,
    "I tried `onnxruntime.preload_dlls()` too.\n" + _PRELOADED_TORCH_DLL,
    # run before torch, but the DLL was not found at all (126): a preload adds DLLs, it hides none
    ">>> onnxruntime.preload_dlls(cuda=True, cudnn=True, msvc=False)\n>>> import torch\n"
    + _PRELOADED_TORCH_DLL.replace("[WinError 127] The specified procedure",
                                   "[WinError 126] The specified module"),
])
def test_a_preload_that_did_not_run_before_torch_or_a_missing_dll_is_not_it(text: str) -> None:
    assert "windows-dll-preloaded-by-other-package" not in stated(text)


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


_CUPY_NVRTC_12 = ("RuntimeError: CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open "
                  "shared object file: No such file or directory")


def test_cupy_load_failure_alone_is_a_family() -> None:
    # the text shows no CUDA installed: no toolkit and a wheel for another major both fit
    assert stated(_CUPY_NVRTC_12) == ["cupy-cuda-library-missing"]
    explanation = explain_report(_CUPY_NVRTC_12, CATALOG, kb=KB).explanations[0]
    assert len(explanation.candidates) == 2


def test_cupy_load_failure_with_a_toolkit_of_another_major_is_the_wheel_mismatch() -> None:
    text = "$ nvcc --version\nCuda compilation tools, release 13.0, V13.0.48\n" + _CUPY_NVRTC_12
    explanations = explain_report(text, CATALOG, kb=KB).explanations
    assert [e.signature.id for e in explanations] == ["cupy-wheel-cuda-mismatch"]
    assert "nvcc shows CUDA 13.0" in explanations[0].cause  # the cause cites what proved it


@pytest.mark.parametrize("shown", [
    "Cuda compilation tools, release 12.4, V12.4.131",  # the same major: CuPy's library is just not there
    # the driver's newest CUDA, not an installed one
    "| NVIDIA-SMI 580.65.06   Driver Version: 580.65.06   CUDA Version: 13.0 |",
    "torch 2.9.0+cu130",  # torch's nvidia-* wheels are not where CuPy before v14 looks
])
def test_cupy_load_failure_is_not_called_a_mismatch_without_another_toolkit(shown: str) -> None:
    assert "cupy-wheel-cuda-mismatch" not in stated(shown + "\n" + _CUPY_NVRTC_12)


def test_windows_nvrtc_dll_names_its_cuda_major() -> None:
    text = ("RuntimeError: CuPy failed to load nvrtc64_120_0.dll: FileNotFoundError: Could not find module "
            "'nvrtc64_120_0.dll' (or one of its dependencies).")
    library = next(lib for lib in extract(text, KB).libraries if lib.soname == "nvrtc64_120_0.dll")
    assert (library.library, library.major, library.kind) == ("NVRTC", "12", "cuda")
    # with a CUDA 13 toolkit shown, that major decides
    assert "cupy-wheel-cuda-mismatch" in stated("Cuda compilation tools, release 13.0, V13.0.48\n" + text)


def test_uv_derivation_over_torchs_nvidia_wheel_stays_the_shared_wheel_conflict() -> None:
    # the user's other version of an NVIDIA wheel torch pins: not a plain pin conflict on torch
    text = ("  ╰─▶ Because torch==2.5.1 depends on nvidia-cudnn-cu12==9.1.0.70 and you require "
            "nvidia-cudnn-cu12==9.8.0.87, we can conclude that your requirements and torch==2.5.1 are "
            "incompatible.")
    assert stated(text) == ["shared-nvidia-wheel-conflict"]


def test_a_rust_source_build_is_a_family_that_names_the_package() -> None:
    text = ("      running build_rust\n      error: can't find Rust compiler\n"
            "  ERROR: Failed building wheel for tokenizers\n")
    explanation = explain_report(text, CATALOG, kb=KB).explanations[0]
    assert explanation.signature.id == "source-build-needs-rust"
    assert explanation.facts.get("package") == "tokenizers"
    assert len(explanation.candidates) == 3  # asserts none: why no wheel was used is not in the text


def test_xla_cudnn_older_than_its_build_is_a_family() -> None:
    text = ("E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:466] Loaded runtime CuDNN library: 9.1.0 "
            "but source was compiled with: 9.8.0. CuDNN library needs to have matching major version")
    explanation = explain_report(text, CATALOG, kb=KB).explanations[0]
    assert explanation.signature.id == "cudnn-older-than-build"
    assert (explanation.facts["runtime_cudnn"], explanation.facts["compiled_cudnn"]) == ("9.1.0", "9.8.0")
    assert len(explanation.candidates) == 3  # where the older cuDNN came from is not in the message


def test_torchcodecs_loading_traceback_alone_is_the_load_family() -> None:
    text = ("[start of libtorchcodec loading traceback]\nFFmpeg version 7: Could not find module "
            "'C:\\Python313\\site-packages\\torchcodec\\libtorchcodec_core7.dll' (or one of its "
            "dependencies).\n"
            "[end of libtorchcodec loading traceback].")
    assert stated(text) == ["torchcodec-load-failed"]


_ORT_CPU_ONLY = ("UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names."
                 "Available providers: 'AzureExecutionProvider, CPUExecutionProvider'\n")


def test_pip_output_shapes_name_the_installed_distributions() -> None:
    text = ("Package          Version\n---------------- -------\nonnxruntime      1.19.0\n"
            "Onnxruntime_GPU  1.19.0\nThe system is   ready\n[pip3] torch==2.3.1\nName: av\n"
            "Successfully installed coloredlogs-15.0.1 onnxruntime_extensions-0.9.0\n"
            "Requirement already satisfied: numpy>=1.21 in ./venv/lib (1.26.4)\n")
    assert extract(text, KB).installed == ["onnxruntime", "onnxruntime-gpu", "torch", "av", "numpy",
                                           "coloredlogs", "onnxruntime-extensions"]


def test_cpu_onnxruntime_beside_the_gpu_package_is_the_overwrite() -> None:
    text = _ORT_CPU_ONLY + "onnxruntime              1.19.0\nonnxruntime-gpu          1.19.0\n"
    explanations = explain_report(text, CATALOG, kb=KB).explanations
    assert [e.signature.id for e in explanations] == ["onnxruntime-cpu-package-overwrites-gpu"]
    assert "both onnxruntime and onnxruntime-gpu installed" in explanations[0].cause


@pytest.mark.parametrize("shown", [
    "",  # nothing installed shown: a CPU-only install fits as well
    "onnxruntime              1.19.0\n",  # only the CPU package: never the GPU one
    "onnxruntime-gpu          1.19.0\n",  # only the GPU package: its module would list CUDA
])
def test_the_cpu_provider_list_alone_is_the_family(shown: str) -> None:
    assert stated(_ORT_CPU_ONLY + shown) == ["onnxruntime-provider-not-built-in"]


def test_both_packages_with_the_gpu_module_loaded_is_not_the_overwrite() -> None:
    # the GPU package's files won (CUDA listed); OpenVINO is another package's provider
    text = ("UserWarning: Specified provider 'OpenVINOExecutionProvider' is not in available provider names."
            "Available providers: 'TensorrtExecutionProvider, CUDAExecutionProvider, CPUExecutionProvider'\n"
            "onnxruntime              1.19.0\nonnxruntime-gpu          1.19.0\n")
    assert stated(text) == ["onnxruntime-provider-not-built-in"]


_TORCHCODEC_LOAD = (
    "RuntimeError: Could not load libtorchcodec. Likely causes:\n"
    "          1. FFmpeg is not properly installed in your environment. We support\n"
    "             versions 4, 5, 6 and 7.\n"
    "[start of libtorchcodec loading traceback]\n"
    "FFmpeg version 7: libavutil.so.59: cannot open shared object file: No such file or directory\n"
    "[end of libtorchcodec loading traceback].\n")
_TORIO_LOAD = ("ImportError: Failed to intialize FFmpeg extension. Tried versions: ['6', '5', '4', '']. "
               "Enable DEBUG logging to see more details about the error.\n")


@pytest.mark.parametrize("banner, load_error", [
    ("ffmpeg version 8.0 Copyright (c) 2000-2025 the FFmpeg developers\n", _TORCHCODEC_LOAD),
    ("ffmpeg version 7.0.2-full_build-www.gyan.dev Copyright (c) 2000-2024 the FFmpeg developers\n",
     _TORIO_LOAD),
])
def test_an_ffmpeg_major_outside_the_loaders_list_is_unsupported(banner: str, load_error: str) -> None:
    explanations = explain_report(banner + load_error, CATALOG, kb=KB).explanations
    assert [e.signature.id for e in explanations] == ["ffmpeg-version-unsupported"]
    assert "ffmpeg shows version" in explanations[0].cause


def test_the_loaders_own_entries_are_not_the_installed_ffmpeg() -> None:
    # torchcodec's "FFmpeg version 7:" names a build it tried, not what is installed
    assert extract(_TORCHCODEC_LOAD, KB).environment.ffmpeg is None
    assert "ffmpeg-version-unsupported" not in stated(_TORCHCODEC_LOAD)
    # a supported major installed: its libraries are what is missing
    banner = "ffmpeg version 7.1.1 Copyright (c) 2000-2025 the FFmpeg developers\n"
    assert "ffmpeg-version-unsupported" not in stated(banner + _TORCHCODEC_LOAD)
    assert stated(_TORIO_LOAD) == ["torchaudio-ffmpeg-load-failed"]
