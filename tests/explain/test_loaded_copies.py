"""A CUDA library loaded without a versioned symbol: a second copy only where the text proves one.

glibc's "X: undefined symbol: S, version L" says the L loaded is older than X was linked against;
another copy found first, an old CUDA runtime, and a companion built against a newer library than
the wheels beside it all print it. `cuda-library-shadowed` is stated only where X is L's sibling in
one package or torch's own library; otherwise `cuda-library-older-than-build` lists the candidates."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report

_FAMILY = "cuda-library-older-than-build"


def _family_only(text: str) -> bool:
    report = explain_report(text, CATALOG, kb=KB)
    ids = [e.signature.id for e in report.explanations]
    family = next((e for e in report.explanations if e.signature.id == _FAMILY), None)
    return "cuda-library-shadowed" not in ids and family is not None and len(family.candidates) == 3


def test_a_module_of_its_own_lacking_a_cuda_runtime_symbol_is_the_family() -> None:
    # InternLM/lmdeploy#256: turbomind needs cudaFreeAsync (CUDA 11.2); the only libcudart was older.
    text = ("ImportError: /home/u/anaconda3/lib/python3.8/site-packages/lmdeploy/lib/_turbomind.cpython-38-"
            "x86_64-linux-gnu.so: symbol cudaFreeAsync version libcudart.so.11.0 not defined in file "
            "libcudart.so.11.0 with link time reference\n")
    assert _family_only(text)


def test_a_bare_versioned_symbol_or_a_companions_library_is_the_family() -> None:
    # NVIDIA/cuEquivariance#131: the ops binary links a newer cuBLAS than the one torch's env holds.
    assert _family_only("undefined symbol: cublasGemmGroupedBatchedEx, version libcublas.so.12\n")
    companion = ("ImportError: /venv/lib/python3.10/site-packages/cuequivariance_ops/lib/libcue_ops.so: "
                 "undefined symbol: cublasGemmGroupedBatchedEx, version libcublas.so.12\n")
    assert _family_only(companion)
    # a library named like cuBLAS's own is not its sibling
    wrapper = ("OSError: /opt/app/lib/libcublas_wrapper.so: undefined symbol: cublasLtMatmulAlgoGetHeuristic,"
               " version libcublasLt.so.11\n")
    assert _family_only(wrapper)


def test_a_sibling_or_torchs_own_library_proves_a_second_copy() -> None:
    sibling = ("OSError: /venv/lib/python3.10/site-packages/torch/lib/../../nvidia/cublas/lib/"
               "libcublas.so.11: undefined symbol: cublasLtGetStatusString, version libcublasLt.so.11\n")
    assert stated(sibling) == ["cuda-library-shadowed"]
    torch_own = ("ImportError: /x/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: "
                 "cuptiActivityEnableDriverApi, version libcupti.so.12\n")
    (shadowed,) = explain_report(torch_own, CATALOG, kb=KB).explanations
    assert "torch's own" in shadowed.cause


def test_torchs_own_library_after_pip_replaced_its_wheel_is_not_a_second_copy() -> None:
    # Another package's pin installed an older nvidia-cublas-cu12 over torch's: the only copy is older.
    text = ("torch 2.3.0 requires nvidia-cublas-cu12==12.1.3.1; platform_system == \"Linux\" and "
            "platform_machine == \"x86_64\", but you have nvidia-cublas-cu12 12.0.2.224 which is "
            "incompatible.\n"
            "ImportError: /venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
            "cublasGemmStridedBatchedEx_64, version libcublas.so.12\n")
    assert "cuda-library-shadowed" not in stated(text)
    assert _FAMILY in stated(text)
