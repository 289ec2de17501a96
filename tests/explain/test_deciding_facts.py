"""Readers of the facts that decide a cause, read in each tool's own wording (its source cited),
with the texts where the fact is absent or points elsewhere."""

from __future__ import annotations

import copy

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report
from torchsmith.kb.documents import DATA_DIR, DOCUMENTS, read_document


def _nccl_error(last: str) -> str:
    # torch's getNcclErrorDetailStr (torch/csrc/distributed/c10d/NCCLUtils.cpp): NCCL's interpretation,
    # then "\nLast error:\n" and ncclGetLastError(), NCCL's last WARN (src/misc/socket.cc's connect)
    return ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system "
            "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
            "error. \nLast error:\n" + last + "\n")


def test_nccls_last_error_line_is_its_own_warning_and_names_the_unreachable_peer() -> None:
    for errno in ("No route to host", "Network is unreachable", "Connection timed out"):
        text = _nccl_error(f"socketStartConnect: Connect to 10.1.2.3<40123> failed : {errno}")
        assert "nccl-network-interface" in stated(text), errno
        assert any(errno in w for w in extract(text, KB).nccl["warnings"])
    # Counter-cases: the last error is another call's (shared memory, a CUDA call): the family stays
    for other in ("Error while creating shared memory segment /dev/shm/nccl-4cX2mn (size 9637888)",
                  "Cuda failure 'out of memory'"):
        assert "nccl-network-interface" not in stated(_nccl_error(other)), other
    # a connect failure that is no NCCL error's last line (a download that failed) proves nothing of NCCL
    assert "nccl-network-interface" not in stated(
        "Last error:\nConnect to 10.1.2.3 failed : No route to host\n")


def test_an_extensions_own_cuda_check_names_its_call_so_a_missing_kernel_image_is_its_own() -> None:
    # nvdiffrast's NVDR_CHECK_CUDA_ERROR prints cudaError_t as its number and the call it wrapped
    # (nvdiffrast/common/framework.h); 209 is cudaErrorNoKernelImageForDevice (driver_types.h)
    own = ("    out, out_da = _get_plugin().interpolate_fwd(attr, rast, tri)\n"
           "RuntimeError: Cuda error: 209[cudaLaunchKernel(func, gridSize, blockSize, args, 0, stream);]\n")
    (found,) = explain_report(own, CATALOG, kb=KB).explanations
    assert found.signature.id == "extension-arch-not-compiled" and "cudaLaunchKernel" in found.cause
    (error,) = extract(own, KB).gpu_errors
    assert error.name == "cudaErrorNoKernelImageForDevice" and error.call == "cudaLaunchKernel"
    # Counter-cases: torch's own check prints the status's message and names no call: whose kernel it
    # is stays open (the family); another status of the same check is not a missing kernel image
    torchs = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    assert stated(torchs) == ["no-kernel-image"]
    assert "extension-arch-not-compiled" not in stated(
        "RuntimeError: Cuda error: 2[cudaMalloc(&ptr, bytes);]\n")
    # a number with no call after it is no extension's check
    assert "extension-arch-not-compiled" not in stated("RuntimeError: Cuda error: 209\n")


def test_a_module_only_its_projects_own_build_makes_is_an_extension_never_built_here() -> None:
    # Python's import system: "No module named 'X'" where X is found nowhere on sys.path; the modules
    # read from the projects' setup.py (CUDAExtension), none published on the package index
    for module in ("MultiScaleDeformableAttention", "diff_gaussian_rasterization", "pointnet2_ops"):
        text = f"    import {module}\nModuleNotFoundError: No module named '{module}'\n"
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "extension-not-built" and "no package index publishes it" in found.cause
    assert stated("ImportError: No module named MultiScaleDeformableAttention\n") == ["extension-not-built"]
    # Counter-cases: a module a published wheel installs says nothing of a build; a submodule of a
    # table's module that is missing is that package's own layout (its release), not the build
    assert "extension-not-built" not in stated("ModuleNotFoundError: No module named 'einops'\n")
    assert "extension-not-built" not in stated(
        "ModuleNotFoundError: No module named 'diff_gaussian_rasterization.utils'\n")
    # the name only quoted in prose, not raised
    assert "extension-not-built" not in stated(
        "pip install diff_gaussian_rasterization says No module named torch\n")


def test_a_source_built_module_row_needs_its_source_and_its_build_step() -> None:
    vocab = read_document("error_vocab", DATA_DIR, None)
    check = DOCUMENTS["error_vocab"][2]
    check(vocab)  # as shipped
    for key, value, error in (("source", ["no-such-source"], "unknown source"), ("build", "", "build step")):
        broken = copy.deepcopy(vocab)
        broken["source_built_modules"][0][key] = value
        with pytest.raises(ValueError, match=error):
            check(broken)


def _uv_no_version(dependency: str, torch: str) -> str:
    # uv's resolver report (crates/uv-resolver/src/pubgrub/report.rs): no version at all of what torch pins
    return ("  × No solution found when resolving dependencies:\n"
            f"  ╰─▶ Because there is no version of {dependency} and torch=={torch} depends on {dependency}, "
            f"we can conclude that torch=={torch} cannot be used.\n")


def test_a_local_version_a_variant_torch_pins_is_on_the_pytorch_index_alone() -> None:
    # warehouse's forklift refuses local versions, so pytorch-triton==3.2.0+git0d4682f0 is only where the
    # +cu124 nightly came from
    text = _uv_no_version("pytorch-triton==3.2.0+git0d4682f0", "2.7.0.dev20250105+cu124")
    assert "pytorch-index-not-given" in stated(text)
    (error,) = [e for e in extract(text, KB).installer_errors if e.kind == "index-not-given"]
    assert error.package == "pytorch-triton" and "+git0d4682f0" in error.meaning
    # Counter-cases: a pin with no local label may be on any index (PyPI's triton); a torch with no
    # +variant came from PyPI; a local-labelled package that is not PyTorch's is someone else's index
    for dependency, torch in (("pytorch-triton==3.2.0", "2.7.0.dev20250105+cu124"),
                              ("triton==3.1.0", "2.5.1+cu124"),
                              ("pytorch-triton==3.2.0+git0d4682f0", "2.7.0.dev20250105"),
                              ("mylib==1.0+local", "2.5.1+cu124")):
        assert "pytorch-index-not-given" not in stated(_uv_no_version(dependency, torch)), dependency
