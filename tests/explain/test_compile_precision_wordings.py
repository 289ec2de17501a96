"""torch's own wordings for compile, CUDA graphs, determinism, AMP and TF32 (and the tools next to
them): each message shape names its cause; a neighbouring wording does not."""

from __future__ import annotations

from typing import List

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain import find_signatures
from torchsmith.explain.matcher import explain_report


def ids(text: str) -> List[str]:
    return [f.signature.id for f in find_signatures(text, CATALOG)]


@pytest.mark.parametrize("text, expected", [
    # sdp_utils_cpp.cpp (the CPU path) words it with two spaces.
    ("RuntimeError: No available kernel.  Aborting execution.", "sdpa-backend-forced-unavailable"),
    ("UserWarning: TensorFloat32 tensor cores for float32 matrix multiplication available but not enabled. "
     "Consider setting `torch.set_float32_matmul_precision('high')` for better performance.",
     "tf32-matmul-precision-hint"),
    ("You are using a CUDA device ('NVIDIA GeForce RTX 4090') that has Tensor Cores. "
     "To properly utilize them, you should set `torch.set_float32_matmul_precision('medium' | 'high')`",
     "tf32-matmul-precision-hint"),
    ("FutureWarning: `torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
     "`torch.amp.GradScaler('cpu', args...)` instead.", "amp-autocast-api-deprecated"),
    ("FutureWarning: `torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
     "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", "amp-autocast-api-deprecated"),
    # torch 1.7's name for the switch.
    ("RuntimeError: index_add_cuda_ does not have a deterministic implementation, but you set "
     "'torch.set_deterministic(True)'.", "nondeterministic-op-in-deterministic-mode"),
    ("ValueError: Attempting to unscale FP16 gradients.", "grad-scaler-fp16-params"),
    ("RuntimeError: Error: accessing tensor output of CUDAGraphs that has been overwritten "
     "by a subsequent run.",
     "cudagraph-output-overwritten"),
    ("  File \"/venv/lib/site-packages/triton/backends/nvidia/driver.py\", line 23, in libcuda_dirs\n"
     "FileNotFoundError: [Errno 2] No such file or directory: '/sbin/ldconfig'", "nix-no-ldconfig"),
    ("  File \"/venv/lib/site-packages/torch/_inductor/runtime/hints.py\", line 36, in <module>\n"
     "    from triton.compiler.compiler import AttrsDescriptor\n"
     "ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler'",
     "triton-torch-version-mismatch"),
    ("RuntimeError: Python 3.12+ not yet supported for torch.compile", "torch-compile-unsupported-platform"),
    ("RuntimeError: Compiler: cl is not found.", "msvc-build-tools-missing"),
])
def test_torch_wording_names_its_cause(text: str, expected: str) -> None:
    assert expected in ids(text)


@pytest.mark.parametrize("text, not_expected", [
    # With warn_only torch only warns: nothing failed.
    ("UserWarning: median CUDA with indices output does not have a deterministic implementation, but you set "
     "'torch.use_deterministic_algorithms(True, warn_only=True)'.",
     "nondeterministic-op-in-deterministic-mode"),
    # ldconfig failing for another program is not Triton's lookup of libcuda.
    ("subprocess.CalledProcessError: Command '['ldconfig', '-p']' returned non-zero exit status 1.",
     "nix-no-ldconfig"),
    # A Triton name missing with no Inductor frame: who imports it is not shown.
    ("ImportError: cannot import name 'AttrsDescriptor' from 'triton.backends.compiler'",
     "triton-torch-version-mismatch"),
    ("AttributeError: type object 'CompiledKernel' has no attribute 'launch_enter_hook'",
     "triton-torch-version-mismatch"),
    # A triton folder left behind by an uninstall imports as an empty namespace package: a broken install.
    ("  File \"/venv/lib/site-packages/torch/_inductor/runtime/hints.py\", line 36, in <module>\n"
     "ImportError: cannot import name 'AttrsDescriptor' from 'triton' (unknown location)",
     "triton-torch-version-mismatch"),
    ("  File \"/venv/lib/site-packages/torch/_inductor/runtime/hints.py\", line 36, in <module>\n"
     "AttributeError: module 'triton' has no attribute 'language'", "triton-torch-version-mismatch"),
    # Torch built without flash attention warns; that is not "no kernel left".
    ("UserWarning: 1Torch was not compiled with flash attention.", "sdpa-backend-forced-unavailable"),
    # The TF32 deprecation is not a TF32 precision question.
    ("UserWarning: Please use the new API settings to control TF32 behavior, such as "
     "torch.backends.cudnn.conv.fp32_precision = 'tf32'", "tf32-precision"),
    ("RuntimeError: Compiler: g++ is not found.", "msvc-build-tools-missing"),
    ("GradScaler: found inf in gradients, skipping step", "grad-scaler-fp16-params"),
])
def test_neighbouring_wording_does_not(text: str, not_expected: str) -> None:
    assert not_expected not in ids(text)


def test_skip_reason_is_read_as_a_fact() -> None:
    found = find_signatures("skipping cudagraphs due to cpu device (primals_88). Found from :", CATALOG)
    skip = next(f for f in found if f.signature.id == "cudagraphs-skipped-mutated-inputs")
    assert skip.facts["reason"] == "cpu device (primals_88)"


def test_an_inductor_frame_makes_the_triton_import_torchs_not_a_family() -> None:
    text = ("  File \"/venv/lib/site-packages/torch/_inductor/runtime/hints.py\", line 36, in <module>\n"
            "ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler'")
    said = stated(text)
    assert "triton-torch-version-mismatch" in said
    assert "dependency-api-removed" not in said


def test_a_deprecation_warning_is_dropped_next_to_a_failure() -> None:
    text = ("model.py:31: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. "
            "Please use `torch.amp.autocast('cuda', args...)` instead.\n"
            "ValueError: Attempting to unscale FP16 gradients.\n")
    said = stated(text)
    assert "grad-scaler-fp16-params" in said
    assert "amp-autocast-api-deprecated" not in said
    alone = stated(text.splitlines()[0])
    assert alone == ["amp-autocast-api-deprecated"]


@pytest.mark.parametrize("text, macos_min", [
    # torch's MPS checks (aten/src/ATen/native/mps/operations/*.mm), each naming the macOS it needs.
    ("RuntimeError: Tiling of batch matmul for larger than 2**32 entries only available from MacOS15 onwards",
     "15"),
    ("RuntimeError: torch.int32 is only supported on MacOS15+", "15"),
    ("RuntimeError: FFT operations are only supported on MacOS 14+", "14"),
    ("TypeError: MPS complex types are only supported on MacOS 14.0 or newer.", "14.0"),
    ("RuntimeError: MPS bfloat16 type is supported on MacOS 14.0 or newer.", "14.0"),
])
def test_an_mps_check_names_the_macos_it_needs(text: str, macos_min: str) -> None:
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "mps-op-needs-newer-macos"
    assert f"needs macOS {macos_min} or newer" in found.cause
    assert "convolution" not in found.cause


def test_an_mps_fallback_warning_is_not_a_failure() -> None:
    text = "UserWarning: torch.sort is supported by MPS on MacOS 13+, please upgrade. Falling back to CPU\n"
    assert "mps-op-needs-newer-macos" not in stated(text)


@pytest.mark.parametrize("text", [
    # Markdown ate the backticks.
    "FutureWarning: torch.cuda.amp.autocast(args...) is deprecated. Please use torch.amp.autocast('cuda', "
    "args...) instead.",
    # Inductor's generated kernel (its cache path) uses a Triton name this Triton lacks.
    "  File \"/tmp/torchinductor_me/ab/cabc.py\", line 12, in <module>\n"
    "AttributeError: module 'triton.language' has no attribute 'fdiv'",
])
def test_more_wordings_of_the_same_causes(text: str) -> None:
    assert stated(text) in (["amp-autocast-api-deprecated"], ["triton-torch-version-mismatch"])


def test_msvc_without_python_headers_names_them_and_the_windows_step() -> None:
    text = ("C:\\ComfyUI\\python_embeded\\Include\\x.c(1): fatal error C1083: Cannot open include file: "
            "'Python.h': No such file or directory\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "python-headers-missing"
    assert "embeddable Python" in found.fix[0]
    other = 'fatal error C1083: Cannot open include file: "glm/glm.hpp"'
    assert "python-headers-missing" not in stated(other)


def test_the_kernel_reasons_torch_warns_before_giving_up_name_the_restriction() -> None:
    text = ("UserWarning: Flash attention kernel not used because: "
            "(Triggered internally at sdp_utils.cpp:555.)\n"
            "UserWarning: Expected query, key and value to all be of dtype: {Half, BFloat16}.\n")
    assert "sdpa-backend-forced-unavailable" in stated(text)
    # a single reason torch prints when asked (can_use_flash_attention(params, debug=True)) is not it
    assert stated("UserWarning: Flash attention requires q,k,v to have the same last dimension") == []


@pytest.mark.parametrize("innermost", [
    # a user's own Triton kernel that Inductor traced (user-defined Triton kernels) uses an old name
    "  File \"/home/u/kernels/rmsnorm.py\", line 22, in _rms_kernel\n"
    "    y = tl.libdevice.rsqrt(x)\n"
    "AttributeError: module 'triton.language' has no attribute 'libdevice'",
    # another library imports the Triton name while torch.compile runs
    "  File \"/venv/lib/python3.10/site-packages/xformers/ops/fmha/triton_splitk.py\", line 12, in <module>\n"
    "    from triton.ops.matmul_perf_model import early_config_prune\n"
    "ImportError: cannot import name 'early_config_prune' from 'triton.ops.matmul_perf_model'",
])
def test_a_triton_name_used_by_other_code_than_torchs_is_not_the_pairing(innermost: str) -> None:
    inductor = ("Traceback (most recent call last):\n"
                "  File \"/venv/lib/python3.10/site-packages/torch/_inductor/codegen/wrapper.py\", line 900, "
                "in define_user_defined_triton_kernel\n"
                "    kernel.fn(*args)\n")
    report = explain_report(inductor + innermost, CATALOG, kb=KB)
    assert "triton-torch-version-mismatch" not in [e.signature.id for e in report.explanations]
    assert any(sig == "triton-torch-version-mismatch" for sig, _ in report.contradicted)
    # the same name used by torch's own file, or a kernel Inductor wrote, under Triton's frames: the pairing
    torchs = innermost.replace("/home/u/kernels/rmsnorm.py", "/tmp/torchinductor_u/ab/cabc.py").replace(
        "/venv/lib/python3.10/site-packages/xformers/ops/fmha/triton_splitk.py",
        "/venv/lib/python3.10/site-packages/torch/_inductor/runtime/hints.py")
    triton_frame = ("  File \"/venv/lib/python3.10/site-packages/triton/language/__init__.py\", line 5, "
                    "in <module>\n")
    assert "triton-torch-version-mismatch" in stated(inductor + torchs.replace("AttributeError", triton_frame
                                                                                + "AttributeError"))


_SAM2_FALLBACK = (
    "/sam2/modeling/sam/transformer.py:270: UserWarning: Memory efficient kernel not used because: "
    "(Triggered internally at ../aten/src/ATen/native/transformers/cuda/sdp_utils.cpp:718.)\n"
    "/sam2/modeling/sam/transformer.py:270: UserWarning: Flash attention kernel not used because: (Triggered "
    "internally at ../aten/src/ATen/native/transformers/cuda/sdp_utils.cpp:720.)\n"
    "/sam2/modeling/sam/transformer.py:274: UserWarning: Flash Attention kernel failed due to: No available "
    "kernel. Aborting execution.\n"
    "Falling back to all available kernels for scaled_dot_product_attention (which may have a slower "
    "speed).\n")


def test_an_sdpa_refusal_the_caller_caught_is_not_the_failure() -> None:
    # SAM 2 restricts SDPA to flash, catches the refusal, warns and retries with every kernel
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    report = explain_report(_SAM2_FALLBACK + oom, CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["cuda-out-of-memory"]
    assert any(sig == "sdpa-backend-forced-unavailable" for sig, _ in report.contradicted)
    # raised (the same warnings, then the RuntimeError that ended the run): the refusal is the failure
    raised = _SAM2_FALLBACK.splitlines()[0] + "\nRuntimeError: No available kernel. Aborting execution.\n"
    assert stated(raised) == ["sdpa-backend-forced-unavailable"]


# ptxas's refusal of a bf16 instruction for the target it compiled for (PTX ISA: bf16 arithmetic and
# conversions need sm_80); as Triton shows it when its run-time compile fails
_PTXAS_BF16 = "ptxas /tmp/tmpq1x.ptx, line 40; error   : Feature '.bf16' requires .target sm_80 or higher\n"


def test_a_run_time_compile_refused_bf16_names_a_gpu_older_than_ampere() -> None:
    triton = "RuntimeError: Internal Triton PTX codegen error\nptxas stderr:\n" + _PTXAS_BF16
    assert stated(triton) == ["bf16-unsupported-gpu"]
    assert stated('Error: "Feature "bf16" requires .target sm_80 or higher\n') == ["bf16-unsupported-gpu"]


def test_a_build_or_a_gpu_with_bf16_leaves_ptxas_refusal_unexplained() -> None:
    # an ahead-of-time build compiles for the targets it was given (here sm_75), not only the GPU's
    build = ("/usr/local/cuda/bin/nvcc -c csrc/kernel.cu -gencode arch=compute_75,code=sm_75\n" + _PTXAS_BF16
             + "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 255\n")
    assert "bf16-unsupported-gpu" not in stated(build)
    # an A100 has bf16: the target was not the GPU's
    assert "bf16-unsupported-gpu" not in stated("GPU: NVIDIA A100-SXM4-80GB\n" + _PTXAS_BF16)
    # another feature, or another target than sm_80, is not bf16 on a pre-Ampere GPU
    assert "bf16-unsupported-gpu" not in stated(
        "ptxas /tmp/x.ptx, line 9; error   : Feature 'cvt.bf16.f32' requires .target sm_90 or higher\n")
    old_isa = "ptxas error : Feature '.bf16' requires PTX ISA .version 7.0 or later\n"
    assert "bf16-unsupported-gpu" not in stated(old_isa)
