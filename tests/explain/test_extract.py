"""The facts explain reads from a text before matching, on verbatim public texts (each file cites
its thread in its ``# source:`` header), and what the rules conclude from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.explain.test_signatures import read_sample

from torchsmith.cli import main
from torchsmith.explain import catalog_of
from torchsmith.explain.catalog import CONFIRMATIONS, CONTRADICTIONS
from torchsmith.explain.extract import extract
from torchsmith.explain.extract.loader import demangle
from torchsmith.explain.matcher import explain_report
from torchsmith.explain.messages import unwrap
from torchsmith.explain.reason import CONFIRMATION_CHECKS, CONTRADICTION_CHECKS
from torchsmith.kb import load_kb

HERE = Path(__file__).parent
KB = load_kb(packaged_only=True)
CATALOG = catalog_of(KB)


def sample(name: str) -> str:
    return read_sample(HERE / "corpus" / name)[1]


def test_a_python_traceback_gives_the_exception_and_its_frames_packages() -> None:
    read = extract(sample("torch-libs-mixed--1.txt"), KB)
    assert read.exceptions[-1].type == "ImportError"
    assert "undefined symbol" in read.exceptions[-1].message
    assert read.to_json()["frame_packages"] == ["torch"]
    assert read.environment.python == "3.6"


def test_a_missing_soname_names_its_library_and_provider() -> None:
    (library,) = extract(sample("cudnn-library-missing--1.txt"), KB).libraries
    assert (library.soname, library.library, library.major, library.kind) == (
        "libcudnn.so.8", "cuDNN", "8", "cudnn")
    assert library.pip == "nvidia-cudnn-cu12"


def test_a_cuda_runtime_soname_names_its_cuda_major() -> None:
    text = "OSError: libcudart.so.11.0: cannot open shared object file: No such file"
    (library,) = extract(text, KB).libraries
    assert (library.library, library.major, library.pip) == ("CUDA runtime", "11", "nvidia-cuda-runtime-cu11")


def test_an_undefined_symbol_is_demangled_and_its_owner_named() -> None:
    (symbol,) = extract(sample("extension-abi-mismatch--1.txt"), KB).symbols
    assert symbol.demangled == "c10::Error::Error"
    assert symbol.owner_kind == "torch" and symbol.library == "knn.so"
    (nccl,) = extract(sample("undefined-symbol--1.txt"), KB).symbols
    assert (nccl.symbol, nccl.owner, nccl.library) == ("ncclCommResume", "NCCL", "libtorch_cuda.so")


def test_demangle_reads_nested_names() -> None:
    assert demangle("_ZNK3c1010TensorImpl23shallow_copy_and_detachERKNS_15VariableVersionEb") == \
        "c10::TensorImpl::shallow_copy_and_detach"
    assert demangle("cudaGetDeviceCount") is None


def test_cuda_hip_and_nccl_errors_are_looked_up_in_the_vendors_enums() -> None:
    cuda = extract(sample("no-kernel-image--1.txt"), KB).gpu_errors[0]
    assert (cuda.name, cuda.code, cuda.kind) == ("cudaErrorNoKernelImageForDevice", 209, "arch")
    hip = extract(sample("hip-invalid-device-function--1.txt"), KB).gpu_errors[0]
    assert (hip.name, hip.code, hip.kind) == ("hipErrorInvalidDeviceFunction", 98, "arch")
    nccl = extract(sample("nccl-system-error--1.txt"), KB).gpu_errors[0]
    assert (nccl.name, nccl.code) == ("ncclSystemError", 2)
    by_code = extract("RuntimeError: CUDA error 804", KB).gpu_errors[0]
    assert by_code.name == "cudaErrorCompatNotSupportedOnDevice"


def test_nccl_diagnostics_give_version_and_interfaces() -> None:
    text = ("node1:123:123 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
            "node1:123:123 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
            "node1:123:140 [0] NCCL WARN Connect to 10.0.0.2<45123> failed : No route to host\n"
            "NCCL version 2.18.1+cuda12.1\n")
    facts = extract(text, KB).nccl
    assert facts["version"] == "2.18.1" and facts["interfaces"] == ["eth0"]
    assert facts["warnings"] == ["Connect to 10.0.0.2<45123> failed : No route to host"]


def test_compiler_messages_name_their_target() -> None:
    (message,) = extract(sample("nvcc-unsupported-arch--1.txt"), KB).compiler
    assert (message.tool, message.target) == ("nvcc", "compute_89")


def test_resolver_conflicts_are_a_structure() -> None:
    conflicts = extract(sample("torch-pin-conflict--1.txt"), KB).conflicts
    assert [(c.installer, c.who, c.wants) for c in conflicts] == [
        ("pip", "kornia 0.6.0", "torch>=1.8.1"), ("pip", "torchvision 0.13.0", "torch==1.12.0"),
        ("pip", "user", "torch==1.12.1")]
    conda = extract(sample("conda-cuda-driver-too-old--1.txt"), KB)
    assert conda.conflicts[0].wants == "__cuda >=11.0" and conda.environment.driver_cuda == "10.2"


def test_http_failures_give_url_and_status() -> None:
    text = "ERROR: HTTP error 403 while getting https://example.org/simple/torch/x.whl\n"
    (failure,) = extract(text, KB).http
    assert (failure.status, failure.url) == ("403", "https://example.org/simple/torch/x.whl")


def test_a_wrapped_message_is_one_message() -> None:
    text = ("RuntimeError: CUDA error: no kernel image is available for execution on\n"
            "[rank0]: the device\n")
    assert unwrap(text).text.endswith("execution on the device")
    found = [e.signature.id for e in explain_report(text, CATALOG, kb=KB).explanations]
    assert found == ["no-kernel-image"]
    far = "no kernel image is available\n" + "x\n" * 6 + "for execution on the device\n"
    assert not explain_report(far, CATALOG, kb=KB).explanations


def test_the_rules_name_the_release_that_carries_the_arch() -> None:
    text = ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
            "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_80 sm_90.\n"
            "torch version: 2.4.1+cu124\n")
    (item,) = explain_report(text, CATALOG, kb=KB).explanations
    assert any("carries no sm_120" in line and "the first release that does is" in line
               for line in item.reasoning)


def test_a_cause_the_text_disproves_does_not_fire() -> None:
    # The build's own arch list has sm_86: the GPU is not missing from torch.
    text = ("NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the current PyTorch "
            "installation.\nThe current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 "
            "sm_75 sm_80 sm_86.\n")
    report = explain_report(text, CATALOG, kb=KB)
    assert "arch-not-compiled" not in [e.signature.id for e in report.explanations]
    assert report.contradicted[0][0] == "arch-not-compiled" and "sm_86" in report.contradicted[0][1]


def test_every_contradiction_a_signature_may_name_has_a_check() -> None:
    assert set(CONTRADICTION_CHECKS) == set(CONTRADICTIONS)


def test_every_confirmation_a_signature_may_name_has_a_check() -> None:
    # catalog lists the names by hand (validation loads it without the checks' imports)
    assert set(CONFIRMATION_CHECKS) == set(CONFIRMATIONS)


def test_json_shows_what_was_extracted_and_an_unknown_text_says_what_was_read(
        capsys: pytest.CaptureFixture[str]) -> None:
    text = "ImportError: libfoo_bar.so.3: cannot open shared object file: No such file or directory"
    assert main(["explain", "--no-probe", "--json", text]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert data["extracted"]["libraries"] == [{"soname": "libfoo_bar.so.3"}]
    assert not data["recognised"]
    assert data["read"][0] == "The loader could not open libfoo_bar.so.3"
    assert data["checks"][0].startswith("ldconfig -p | grep libfoo_bar")
    assert main(["explain", "--no-probe", text]) == 0
    human = capsys.readouterr().out
    assert "What the text states:" in human and "No cause is guessed" in human


def test_a_library_another_library_asked_for_is_that_extensions() -> None:
    # onnxruntime's CUDA provider asks for CUDA 11's cuBLAS: the extension's CUDA, not torch's.
    # Missing, or another CUDA major installed? The text does not say: the family, with candidates.
    text = ("FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: "
            "cannot open shared object file: No such file or directory")
    (library,) = extract(text, KB).libraries
    assert (library.soname, library.needed_by) == ("libcublasLt.so.11", "libonnxruntime_providers_cuda.so")
    report = explain_report(text, CATALOG, kb=KB)
    (found,) = report.explanations
    assert found.signature.id == "extension-cuda-library-missing" and len(found.candidates) == 2
    assert report.contradicted[0][0] == "cuda-runtime-library-missing"
    # A CUDA of another major in the text proves the mismatch, which accounts for the family.
    report = explain_report(text + "\nnvcc: Cuda compilation tools, release 12.4, V12.4.131\nCUDA 12.4",
                            CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["extension-cuda-mismatch"]
    # nvcc's own version line alone names the installed toolkit (not the driver's "CUDA Version").
    nvcc = "\nnvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n"
    assert [e.signature.id for e in explain_report(text + nvcc, CATALOG, kb=KB).explanations] == [
        "extension-cuda-mismatch"]
    driver = "\n| NVIDIA-SMI 535.54  Driver Version: 535.54  CUDA Version: 12.2 |\n"
    for same_or_driver in (nvcc.replace("12.4", "11.8"), driver):
        (found,) = explain_report(text + same_or_driver, CATALOG, kb=KB).explanations
        assert found.signature.id == "extension-cuda-library-missing"


def test_a_cpu_build_shown_in_conda_list_is_read() -> None:
    text = ("pytorch                   1.11.0              py3.8_cpu_0    pytorch\n"
            "torch.cuda.is_available() returns False on my RTX 3090\n")
    assert extract(text, KB).environment.torch_cpu_only
    ids = [e.signature.id for e in explain_report(text, CATALOG, kb=KB).explanations]
    assert ids == ["torch-not-compiled-with-cuda"]
    assert not extract("No matching distribution found for torch==1.7.0+cpu", KB).environment.torch_cpu_only


def test_conda_forges_cpu_build_strings_in_conda_list_are_a_cpu_build() -> None:
    # conda-forge's pytorch-cpu-feedstock names its CPU builds cpu_<blas>_py3X... (older: cpu_py3X...)
    for build in ("cpu_mkl_py310h1234567_100", "cpu_generic_py312h0a1b2c3_0", "cpu_py311h53e38e9_0"):
        text = f"pytorch                   2.1.0           {build}    conda-forge\n"
        assert extract(text, KB).environment.torch_cpu_only, build
    # its CUDA builds are not
    cuda = "pytorch                   2.5.1           cuda126_mkl_py312h5a6b7c8_300    conda-forge\n"
    assert not extract(cuda, KB).environment.torch_cpu_only
