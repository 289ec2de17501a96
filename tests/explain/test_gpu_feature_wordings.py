"""GPU-feature refusals read in their tools' own wording (FP8 compute, TensorRT's architecture
check), each with the neighbouring text that must not be read the same way."""

from __future__ import annotations

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report

FP8 = "fp8-unsupported-gpu"
TRT = "tensorrt-too-old-for-gpu"


def test_each_fp8_refusal_wording_names_the_fp8_cause() -> None:
    refusals = [
        # aten/src/ATen/native/cuda/Blas.cpp (_scaled_mm_out_cuda)
        "RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability"
        " >= 9.0 or 8.9, or ROCm MI300+\n",
        # transformer_engine/pytorch/fp8.py (check_fp8_support)
        "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.\n",
        # vllm model loader: the quantization method's get_min_capability()
        "ValueError: The quantization method fp8 is not supported for the current GPU."
        " Minimum capability: 90. Current capability: 86.\n",
        # triton/language/semantic.py: the fp8 dtypes an architecture has
        "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are"
        " ('fp8e4b15', 'fp8e5')\")\n",
        "ERROR: FP8 models require a GPU with Compute Capability 8.9 or higher (e.g., RTX 4090)."
        " Your GPU's capability is 8.6.\n",
    ]
    for text in refusals:
        assert stated(text) == [FP8], text


def test_other_quantization_methods_and_fp8_prose_are_not_fp8_refusals() -> None:
    awq = ("ValueError: The quantization method awq is not supported for the current GPU."
           " Minimum capability: 75. Current capability: 70.\n")
    assert FP8 not in stated(awq)
    assert FP8 not in stated("Loading the FP8 checkpoint on an H100 (compute capability 9.0)\n")
    assert FP8 not in stated("type fp8e5 is supported in this architecture\n")


def test_tensorrt_architecture_refusals_name_a_tensorrt_too_old_for_the_gpu() -> None:
    old = ("[E] [TRT] 1: [caskUtils.cpp::trtSmToCask::147] Error Code 1: Internal Error"
           " (Unsupported SM: 0x809)\n")
    older = ("[E] [TRT] ../rtSafe/cuda/caskUtils.cpp (80) - Assertion Error in trtSmToCask: 0"
             " (Unsupported SM.)\n")
    new = ("[E] Error[9]: IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error"
           " (Target GPU SM 120 is not supported by this TensorRT release.)\n")
    for text in (old, older, new):
        assert stated(text) == [TRT], text
    assert TRT not in stated("[E] [TRT] Error Code 1: Internal Error (Unsupported SM)\n"
                             "unrelated line mentioning trtSmToCask\n")


def test_the_mps_convolution_limit_names_a_macos_older_than_15_1() -> None:
    # aten/src/ATen/native/mps/operations/Convolution.mm checks it only on macOS < 15.1
    text = ("NotImplementedError: Output channels > 65536 not supported at the MPS device. As a temporary"
            " fix, you can set the environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1`\n")
    assert stated(text) == ["mps-op-needs-newer-macos"]
    assert stated("Output channels > 65536 in this layer\n") == []


def test_the_cudnn_plan_warning_is_a_harmless_warning_not_a_library_status() -> None:
    warning = ("UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:"
               " cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED"
               " (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n")
    assert stated(warning) == ["cudnn-plan-failed-warning"]
    other_status = warning.replace("CUDNN_STATUS_NOT_SUPPORTED", "CUDNN_STATUS_EXECUTION_FAILED")
    assert "cudnn-plan-failed-warning" not in stated(other_status)


def test_a_ptxas_triton_ran_that_lacks_the_arch_is_a_triton_older_than_the_gpu() -> None:
    # Triton's bundled ptxas-blackwell, and its PTXASError wording (backends/nvidia/compiler.py)
    bundled = "ptxas-blackwell fatal   : Value 'sm_110a' is not defined for option 'gpu-name'\n"
    codegen = ("triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n"
               "`ptxas` stderr:\n(EngineCore_0 pid=9492) ptxas fatal   : Value 'sm_121a' is not defined"
               " for option 'gpu-name'\n")
    assert stated(bundled) == ["triton-predates-gpu-arch"]
    assert stated(codegen) == ["triton-predates-gpu-arch"]
    # a bare ptxas line: nvcc's build, Triton and XLA all run ptxas, so it is a family
    bare = "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n"
    assert stated(bare) == ["ptxas-unknown-gpu-arch"]
    bundled_path = ("Command '['/venv/lib/python3.12/site-packages/triton/backends/nvidia/bin/ptxas', '-v',"
                    " '--gpu-name=sm_121a', '/tmp/k.ptx']' returned non-zero exit status 255.\n" + bare)
    assert stated(bundled_path) == ["triton-predates-gpu-arch"]
    assert stated("nvcc fatal   : Unsupported gpu architecture 'compute_121a'\n") == ["nvcc-unsupported-arch"]


@pytest.mark.parametrize("shown", [
    # Triton's own repro line names the ptxas it ran: a toolkit's, not the one it bundles
    "\nRepro command: /usr/local/cuda-12.4/bin/ptxas -lineinfo -v --gpu-name sm_120 /tmp/k.ptx -o /tmp/k.o\n",
    # TRITON_PTXAS_PATH names the ptxas Triton runs (backends/nvidia/compiler.py)
    "export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas\n",
])
def test_a_ptxas_triton_ran_that_is_not_its_own_is_not_an_old_triton(shown: str) -> None:
    codegen = ("triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n"
               "`ptxas` stderr:\nptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'\n")
    text = shown + codegen if shown.startswith("export") else codegen + shown
    report = explain_report(text, CATALOG, kb=KB)
    assert "triton-predates-gpu-arch" not in [e.signature.id for e in report.explanations]
    assert any(sig == "triton-predates-gpu-arch" for sig, _ in report.contradicted)
    bundled = shown.replace("/usr/local/cuda-12.4/bin/ptxas",
                            "/venv/site-packages/triton/backends/nvidia/bin/ptxas")
    if not shown.startswith("export"):  # Triton's own ptxas in the repro line: the Triton release
        assert stated(codegen + bundled) == ["triton-predates-gpu-arch"]


def test_a_capitalised_undefined_nvjitlink_symbol_is_the_nvjitlink_mismatch() -> None:
    text = "Undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12\n"
    assert stated(text) == ["nvjitlink-mismatch"]
    assert stated("Undefined symbol: cublasLtCreate\n") != ["nvjitlink-mismatch"]


def test_a_raised_hiplt_architecture_check_is_that_torch_release_s_bug() -> None:
    # aten/src/ATen/native/cuda/Blas.cpp (2.5-era): isSupportedHipLtROCmArch raised, fixed by pytorch#138267
    text = "!!! Exception during processing !!! Attempting to use hipBLASLt on a unsupported architecture!\n"
    assert stated(text) == ["torch-release-bug"]
    later = "Attempting to use hipBLASLt on an unsupported architecture! Overriding blas backend to hipblas\n"
    assert "torch-release-bug" not in stated(later)


def test_a_kernel_architecture_guard_that_trapped_is_the_library_release_s_gap() -> None:
    # vLLM csrc/cutlass_extensions/common.hpp: enable_sm120_only prints this, then traps
    text = "This kernel only supports sm120.\ncudaErrorLaunchFailure: unspecified launch failure\n"
    assert stated(text) == ["companion-release-bug"]
    assert "companion-release-bug" not in stated("cudaErrorLaunchFailure: unspecified launch failure\n")
