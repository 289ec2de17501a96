"""Vendor runtimes' own messages, written from their source: each is read as the cause (or the
family of causes) its source prints it for; a counter-text beside each."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report

# The check PyTorch's MPS notes tell users to run, printed by their scripts when is_built() is True
# and is_available() is False (pytorch/pytorch@1f74873e docs/source/notes/mps.rst); newer copies say 14.0+.
MPS_DOCS = ("MPS not available because the current MacOS version is not 12.3+ and/or you do not have an "
            "MPS-enabled device on this machine.")


def test_mps_docs_check_is_the_mps_unavailable_family() -> None:
    for text in (MPS_DOCS, MPS_DOCS.replace("MacOS version is not 12.3+", "macOS version is not 14.0+")):
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "mps-unavailable" and len(found.candidates) == 3, text
    # an old macOS shown beside it names the cause, as torch's own message does
    assert stated(MPS_DOCS + "\nProductVersion:\t12.2.1") == ["macos-too-old-for-mps"]


def test_mps_docs_other_branch_is_not_read_as_an_old_macos() -> None:
    # Counter-text: is_built() False is a torch built without MPS, which no macOS update changes.
    not_built = "MPS not available because the current PyTorch install was not built with MPS enabled."
    assert "macos-too-old-for-mps" not in stated(not_built + "\nProductVersion:\t12.2.1")
    found = explain_report(not_built, CATALOG, kb=KB).explanations
    assert all(e.signature.id != "mps-unavailable" for e in found)


def test_intel_runtimes_out_of_device_memory_is_the_gpu_out_of_memory() -> None:
    # ze_api.h: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY "insufficient device memory to satisfy call";
    # ur_api.h: UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY (39), the same words
    for text in ("RuntimeError: level_zero backend failed with error: 39 "
                 "(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
                 "RuntimeError: UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
                 "zeMemAllocDevice failed: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"):
        assert stated(text) == ["cuda-out-of-memory"], text
    # Counter-texts: the host's memory, and a status that names no cause, stay the runtime's family.
    for text in ("RuntimeError: UR_RESULT_ERROR_OUT_OF_HOST_MEMORY",
                 "RuntimeError: level_zero backend failed with error: 37 (UR_RESULT_ERROR_UNINITIALIZED)"):
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "intel-gpu-driver-too-old" and found.candidates, text


def test_hip_no_device_status_is_the_no_hip_gpus_family() -> None:
    # hip_runtime_api.h: hipErrorNoDevice (100) "Call to hipGetDeviceCount returned 0 devices", its
    # string "no ROCm-capable device is detected": the status behind torch's "No HIP GPUs are available"
    for text in ("RuntimeError: HIP error: no ROCm-capable device is detected",
                 "hipGetDeviceCount failed: hipErrorNoDevice"):
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "no-hip-gpus-available" and len(found.candidates) == 4, text
    # Counter-text: a GPU that is there but lacks the build's code object is another cause.
    (other,) = explain_report("RuntimeError: HIP error: invalid device function", CATALOG, kb=KB).explanations
    assert other.signature.id != "no-hip-gpus-available"


def test_hip_old_name_of_out_of_memory_is_out_of_memory() -> None:
    # hip_runtime_api.h: hipErrorMemoryAllocation is the old name of hipErrorOutOfMemory (both 2)
    assert stated("hipMalloc failed: hipErrorMemoryAllocation") == ["cuda-out-of-memory"]
    # hipErrorInvalidDevice is also what hipGetDeviceCount returns for a GPU the runtime does not
    # support (torch's "HIP initialization" warning), so the bare status proves no wrong ordinal.
    assert "invalid-device-ordinal" not in stated(
        "UserWarning: HIP initialization: Unexpected error from hipGetDeviceCount(). Error 101: "
        "hipErrorInvalidDevice")
    # Counter-text: a status that names no cause stays the generic one.
    assert stated("hipErrorNotInitialized") == ["gpu-library-status"]
