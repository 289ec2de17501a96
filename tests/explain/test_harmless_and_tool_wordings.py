"""Tools' own fixed wordings: harmless warnings said harmless, and errors whose format names their cause."""

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


@pytest.mark.parametrize("text, expected", [
    # xformers/__init__.py logs this when `import triton` fails; the typo'd copy is a reporter's retyping.
    ("WARNING  A matching Triton is not available, some optimizations will not be enabled   __init__.py:61",
     "triton-windows-unsupported"),
    ("UserWarning: 1Torch was not compiled with flash attention. (Triggered internally at ...)",
     "windows-torch-no-flash-sdpa"),
    ("  - package pytorch-cpu-0.4.1-py36_cpu_1 is excluded by strict repo priority",
     "conda-strict-priority-excludes-pin"),
    ("ModuleNotFoundError: No module named 'torch._C._distributed_c10d'; 'torch._C' is not a package",
     "torch-built-without-distributed"),
    ("RuntimeError: CUDA failed with error out of memory", "cuda-out-of-memory"),
    ("Non-zero status code returned while running Conv node. Name:'Conv_0' Status Message: "
     "CUDA error cudaErrorNoKernelImageForDevice:no kernel image is available for execution on the device",
     "extension-arch-not-compiled"),
    ("C:/pytorch\\c10/cuda/CUDAStream.h(261): error C2872: \u201cstd\u201d: ambiguous symbol",
     "torch-header-msvc-std-ambiguous"),
])
def test_fixed_wording_names_its_cause(text: str, expected: str) -> None:
    assert expected in ids(text)


@pytest.mark.parametrize("text, not_expected", [
    # Other tools' Triton notices and a missing triton module alone are not xformers' warning.
    ("Triton is not available, some optimizations will not be enabled.", "triton-windows-unsupported"),
    ("ModuleNotFoundError: No module named 'triton'", "triton-windows-unsupported"),
    # CTranslate2's other CUDA errors are not memory.
    ("RuntimeError: CUDA failed with error invalid argument", "cuda-out-of-memory"),
    ("ModuleNotFoundError: No module named 'torch._C'", "torch-built-without-distributed"),
    # onnxruntime's other CUDA errors are not a missing architecture.
    ("Non-zero status code returned while running Conv node. Name:'Conv_0' Status Message: "
     "CUDA error cudaErrorMemoryAllocation:out of memory", "extension-arch-not-compiled"),
    ("package python-3.7.13-haa1d7c7_1 requires openssl >=1.1.1, but none of the providers can be installed",
     "conda-strict-priority-excludes-pin"),
    # Another ambiguous symbol is not the std namespace clash.
    ("error C2872: 'byte': ambiguous symbol", "torch-header-msvc-std-ambiguous"),
])
def test_neighbouring_wording_does_not(text: str, not_expected: str) -> None:
    assert not_expected not in ids(text)


def test_a_real_error_comes_before_the_harmless_warning() -> None:
    found = ids("UserWarning: 1Torch was not compiled with flash attention.\n"
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert found.index("cuda-out-of-memory") < found.index("windows-torch-no-flash-sdpa")


@pytest.mark.parametrize("warning, harmless_id", [
    ("UserWarning: 1Torch was not compiled with flash attention.", "windows-torch-no-flash-sdpa"),
    ("A matching Triton is not available, some optimizations will not be enabled",
     "triton-windows-unsupported"),
])
def test_a_harmless_warning_is_stated_only_when_no_failure_is(warning: str, harmless_id: str) -> None:
    def stated(text: str) -> List[str]:
        return [e.signature.id for e in explain_report(text, CATALOG, kb=KB).explanations]

    assert stated(warning) == [harmless_id]
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    with_failure = stated(f"{warning}\n{oom}")
    assert "cuda-out-of-memory" in with_failure and harmless_id not in with_failure


@pytest.mark.parametrize("note, note_id", [
    ("You are using a CUDA device ('NVIDIA GeForce RTX 3090') that has Tensor Cores. To properly utilize "
     "them, you should set `torch.set_float32_matmul_precision('medium' | 'high')`",
     "tf32-matmul-precision-hint"),
    ("grad_scaler.py:126: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
     "`torch.amp.GradScaler('cuda', args...)` instead.", "amp-autocast-api-deprecated"),
])
def test_a_harmless_note_is_no_answer_to_an_exception_no_signature_explains(note: str, note_id: str) -> None:
    failure = ("Traceback (most recent call last):\n  File \"train.py\", line 80, in <module>\n"
               "    ds = load(path)\nKeyError: 'label_ids'\n")
    report = explain_report(f"{note}\n{failure}", CATALOG, kb=KB)
    assert report.explanations == []
    assert [sig for sig, _ in report.contradicted] == [note_id]
    assert [e.signature.id for e in explain_report(note, CATALOG, kb=KB).explanations] == [note_id]


def test_an_import_an_availability_check_logged_leaves_the_note_stated() -> None:
    # xformers logs the ImportError it caught beside its own warning (xformers/__init__.py)
    text = ("WARNING  A matching Triton is not available, some optimizations will not be enabled\n"
            "Traceback (most recent call last):\n"
            "  File \"/venv/Lib/site-packages/xformers/__init__.py\", line 57, in _is_triton_available\n"
            "    import triton  # noqa\nModuleNotFoundError: No module named 'triton'\n")
    assert [e.signature.id for e in explain_report(text, CATALOG, kb=KB).explanations] == [
        "triton-windows-unsupported"]
