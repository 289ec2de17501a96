"""Readers of the facts that decide a cause, read in each tool's own wording (its source cited),
with the texts where the fact is absent or points elsewhere."""

from __future__ import annotations

import copy
import re

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


def _conda_not_found(package: str, channel: str, subdir: str) -> str:
    # conda 4.4 on (conda/exceptions.py PackagesNotFoundError): the packages, then each channel URL searched
    return ("PackagesNotFoundError: The following packages are not available from current channels:\n\n"
            f"  - {package}\n\nCurrent channels:\n\n  - https://conda.anaconda.org/{channel}/{subdir}\n"
            f"  - https://conda.anaconda.org/{channel}/noarch\n")


def test_pytorchs_old_cuda_selector_on_a_mac_has_no_build_for_that_platform() -> None:
    for package, channel in (("cuda80", "soumith"), ("cuda92", "pytorch")):
        text = _conda_not_found(package, channel, "osx-64")
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "conda-no-build-for-platform" and "osx-64" in found.cause
    # Counter-cases: on linux-64 the selector existed (another cause); on a channel the row does not
    # speak for, or where the text names no channel searched, the family stays
    assert "conda-no-build-for-platform" not in stated(_conda_not_found("cuda80", "soumith", "linux-64"))
    assert "conda-no-build-for-platform" not in stated(_conda_not_found("cuda80", "conda-forge", "osx-64"))
    conda_42 = "PackageNotFoundError: Package not found: '' Package missing in current osx-64 channels: \n"
    assert "conda-no-build-for-platform" not in stated(conda_42 + "  - cuda80\n")


def test_the_source_built_pattern_names_exactly_the_tables_modules() -> None:
    # the pattern lists the modules so that no other missing module is matched at all; the table
    # (error_vocab.json source_built_modules) carries each module's source
    table = {row["module"] for row in read_document("error_vocab", DATA_DIR, None)["source_built_modules"]}
    (pattern,) = [p for s in CATALOG.signatures if s.id == "extension-not-built"
                  for p in s.patterns if "not_found" in p.groupindex]
    listed = re.search(r"\(\?P<module>([\w|]+)\)", pattern.pattern)
    assert listed is not None and set(listed.group(1).split("|")) == table


def test_a_kernels_own_arch_check_is_the_no_kernel_image_family() -> None:
    # xformers' fmha kernels and torch's own copy of them (aten/.../mem_eff_attention/kernels) print
    # this when the code that ran was built for an architecture outside the kernel's range: the
    # same string in both, so whose kernel it is stays open (the family, with both candidates)
    text = ("FATAL: kernel `fmha_cutlassF_f32_aligned_64x64_rf_sm80` is for sm80-sm100, but was built "
            "for sm50\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "no-kernel-image" and len(found.candidates) == 2
    # Counter-case: the kernel's range named in prose, with no build shown, is no such check
    assert stated("the fmha kernel is for sm80-sm100 only\n") == []
