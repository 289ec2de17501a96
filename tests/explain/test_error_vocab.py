"""The vendors' error enums (error_vocab.json) as read from their own files, and explain reading them.

The header excerpts below are quoted from the files tools/error_vocab_refresh.py reads (NVIDIA's
driver_types.h, cudnn_graph.h, curand.h, go-nvml's gen/nvml/nvml.h, NCCL's init.cc, pynvml.py).
"""

from __future__ import annotations

import copy
import importlib.util
import struct
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report
from torchsmith.kb.documents import DATA_DIR, DOCUMENTS, ENUM_TABLES, read_document


def _tool() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "tools" / "error_vocab_refresh.py"
    spec = importlib.util.spec_from_file_location("error_vocab_refresh", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["error_vocab_refresh"] = module
    spec.loader.exec_module(module)
    return module


TOOL = _tool()
VOCAB: Dict[str, Any] = read_document("error_vocab", DATA_DIR, None)
CHECK = DOCUMENTS["error_vocab"][2]


# --- the tables: complete against what was read -----------------------------------------------------


def test_every_enum_table_holds_every_name_its_sources_listed() -> None:
    read = {s["table"] for s in VOCAB["sources"].values() if s.get("names")}
    assert set(ENUM_TABLES) | {"cuda", "nccl", "hip"} <= read
    for source in VOCAB["sources"].values():
        if source.get("names"):
            have = {row["name"] for row in VOCAB[source["table"]]}
            assert set(source["names"]) <= have
            assert source.get("read") and (source.get("sha256") or "github.com/" in source["url"])
    sizes = {table: len(VOCAB[table]) for table in ("cuda", "cuda_driver", "nvml", "cusparse", "cusolver",
                                                    "cufft", "curand")}
    assert sizes["cuda"] >= 130 and sizes["cuda_driver"] >= 100 and sizes["nvml"] >= 30, sizes


def test_a_table_short_of_its_source_fails_validation() -> None:
    CHECK(VOCAB)  # as shipped
    short = copy.deepcopy(VOCAB)
    short["cusparse"] = [r for r in short["cusparse"] if r["name"] != "CUSPARSE_STATUS_ZERO_PIVOT"]
    with pytest.raises(ValueError, match="CUSPARSE_STATUS_ZERO_PIVOT"):
        CHECK(short)
    unsourced = copy.deepcopy(VOCAB)
    unsourced["nvml"][0]["source"] = ["no-such-source"]
    with pytest.raises(ValueError, match="unknown source"):
        CHECK(unsourced)


def test_runtime_rows_carry_the_librarys_own_string_and_the_headers_meaning() -> None:
    rows = {r["name"]: r for r in VOCAB["cuda"]}
    image = rows["cudaErrorNoKernelImageForDevice"]
    assert image["code"] == 209
    assert image["message"] == "no kernel image is available for execution on the device"
    assert "no kernel image available that is suitable for the device" in image["meaning"]
    assert rows["cudaErrorInsufficientDriver"]["message"].startswith("CUDA driver version is insufficient")
    nvml = {r["name"]: r for r in VOCAB["nvml"]}["NVML_ERROR_LIB_RM_VERSION_MISMATCH"]
    assert (nvml["code"], nvml["python_name"]) == (18, "NVMLError_LibRmVersionMismatch")


# --- the tool's readers, on excerpts of the real files --------------------------------------------

DRIVER_TYPES = """
enum __device_builtin__ cudaError
{
    /**
     * The API call returned with no errors.
     */
    cudaSuccess                           =      0,
    /**
     * This indicates that the installed NVIDIA CUDA driver is older than the
     * CUDA runtime library. This is not a supported configuration.
     */
    cudaErrorInsufficientDriver           =     35,
    cudaErrorApiFailureBase               =  10000
};
"""
CUDNN = """
typedef enum {
    CUDNN_STATUS_SUCCESS = 0, /**< Operation completed successfully. @since cuDNN 9.0.0 */
    CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH = 1002, /**< Sub-library version mismatch. @since cuDNN 9.0.0 */
    CUDNN_STATUS_VERSION_MISMATCH CUDNN_DEPRECATED_ENUM = CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH,
        /**< @deprecated Use CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH. @since cuDNN 9.0.0 */
} cudnnStatus_t;
"""
NVML = """
typedef enum nvmlReturn_enum
{
    NVML_SUCCESS = 0,                          //!< The operation was successful
    NVML_ERROR_DRIVER_NOT_LOADED = 9,          //!< NVIDIA driver is not loaded
    NVML_ERROR_UNKNOWN = 999                   //!< An internal driver error occurred
} nvmlReturn_t;
"""


def test_enum_reader_takes_values_comments_and_aliases() -> None:
    rows = TOOL.enum_values(DRIVER_TYPES, "cudaError")
    assert [(r["name"], r["code"]) for r in rows] == [
        ("cudaSuccess", 0), ("cudaErrorInsufficientDriver", 35), ("cudaErrorApiFailureBase", 10000)]
    assert rows[1]["meaning"].startswith("This indicates that the installed NVIDIA CUDA driver is older")
    assert "meaning" not in rows[2]  # no comment, no meaning invented
    cudnn = {r["name"]: r for r in TOOL.enum_values(CUDNN, "cudnnStatus_t")}
    assert cudnn["CUDNN_STATUS_VERSION_MISMATCH"]["code"] == 1002  # an alias takes its target's value
    assert "meaning" not in cudnn["CUDNN_STATUS_VERSION_MISMATCH"]  # "@deprecated Use ...": no meaning
    assert cudnn["CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"]["meaning"] == "Sub-library version mismatch."
    nvml = TOOL.enum_values(NVML, "nvmlReturn_t")
    assert nvml[1] == {"name": "NVML_ERROR_DRIVER_NOT_LOADED", "code": 9,
                       "meaning": "NVIDIA driver is not loaded"}
    with pytest.raises(ValueError):
        TOOL.enum_values(NVML, "cublasStatus_t")


def test_string_readers_take_the_librarys_own_texts() -> None:
    init = """const char* ncclGetErrorString(ncclResult_t code) {
  switch (code) {
  case ncclSuccess:
    return "no error";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  default:
    return "unknown result code";"""
    remote = "remote process exited or there was a network error"
    assert TOOL.nccl_strings(init) == {"ncclSuccess": "no error", "ncclRemoteError": remote}
    pynvml = """NVML_ERROR_DRIVER_NOT_LOADED         = 9
NVML_ERROR_GPU_IS_LOST               = 15
    _errcode_to_string = {
        NVML_ERROR_DRIVER_NOT_LOADED:   "Driver Not Loaded",
        NVML_ERROR_GPU_IS_LOST:         "GPU is lost",
        }"""
    assert TOOL.pynvml_strings(pynvml) == {9: "Driver Not Loaded", 15: "GPU is lost"}
    assert TOOL.pynvml_class("NVML_ERROR_GPU_IS_LOST") == "NVMLError_GpuIsLost"
    # CLR's hipGetErrorString: labels that fall through share the string they reach
    clr = """const char *ihipGetErrorString(hipError_t hip_error) {
  switch (hip_error) {
    case hipErrorOutOfMemory:
    case hipErrorMemoryAllocation:
      return "out of memory";
    case hipErrorNoDevice:
      return "no ROCm-capable device is detected";
    default:
      return "unknown error";"""
    assert TOOL.switch_strings(clr, "const char *ihipGetErrorString") == {
        "hipErrorOutOfMemory": "out of memory", "hipErrorMemoryAllocation": "out of memory",
        "hipErrorNoDevice": "no ROCm-capable device is detected"}


def _elf(strings: List[bytes], table: List[int]) -> bytes:
    """A minimal ELF64 shared object: one PT_LOAD mapping the file at 0, one SHT_RELA section whose
    R_X86_64_RELATIVE entries fill the {int code; char *name; char *string} rows of ``table``."""
    blob = b"\0" * 0x200
    offsets = []
    for text in strings:
        offsets.append(len(blob))
        blob += text + b"\0"
    rows_at = (len(blob) + 7) // 8 * 8
    blob = blob.ljust(rows_at, b"\0")
    relocs = b""
    for i, code in enumerate(table):
        row = rows_at + 24 * i
        blob += struct.pack("<iiQQ", code, 0, 0, 0)
        relocs += struct.pack("<QQq", row + 8, 8, offsets[2 * i])
        relocs += struct.pack("<QQq", row + 16, 8, offsets[2 * i + 1])
    rela_at = len(blob)
    blob += relocs
    sh_at = len(blob)
    blob += b"\0" * 64 + struct.pack("<IIQQQQIIQQ", 0, 4, 0, 0, rela_at, len(relocs), 0, 0, 8, 24)
    header = bytearray(blob[:0x100])
    header[:16] = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    struct.pack_into("<QQ", header, 0x20, 0x40, sh_at)
    struct.pack_into("<HHHH", header, 0x36, 56, 1, 64, 2)
    struct.pack_into("<IIQQQQ", header, 0x40, 1, 5, 0, 0, 0, len(blob))
    return bytes(header) + blob[0x100:]


def test_runtime_strings_are_read_from_the_librarys_table() -> None:
    library = _elf([b"cudaErrorNoDevice", b"no CUDA-capable device is detected",
                    b"cudaErrorLaunchTimeout", b"the launch timed out and was terminated"], [100, 702])
    assert TOOL.runtime_strings(library) == {
        "cudaErrorNoDevice": (100, "no CUDA-capable device is detected"),
        "cudaErrorLaunchTimeout": (702, "the launch timed out and was terminated")}
    with pytest.raises(ValueError):
        TOOL.runtime_strings(b"MZ not an ELF file")


# --- explain reads every name, string and code of them --------------------------------------------


def _errors(text: str) -> List[Any]:
    return [(e.api, e.name, e.code, e.kind) for e in extract(text, KB).gpu_errors]


def test_every_vendors_names_are_read_as_facts() -> None:
    # a name from each table that the hand-written table of before did not have
    text = "\n".join([
        "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH",
        "RuntimeError: cusparse error: CUSPARSE_STATUS_INSUFFICIENT_RESOURCES",
        "RuntimeError: CURAND_STATUS_DOUBLE_PRECISION_REQUIRED",
        "RuntimeError: cuFFT error: CUFFT_INVALID_SIZE",
        "CUDA driver error: CUDA_ERROR_NVLINK_UNCORRECTABLE",
        "pynvml.nvml.NVMLError_GpuIsLost: GPU is lost",
    ])
    assert _errors(text) == [
        ("cudnn", "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", 3007, "arch"),
        ("cusparse", "CUSPARSE_STATUS_INSUFFICIENT_RESOURCES", 11, "other"),
        ("curand", "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED", 106, "other"),
        ("cufft", "CUFFT_INVALID_SIZE", 8, "usage"),
        ("cuda-driver", "CUDA_ERROR_NVLINK_UNCORRECTABLE", 220, "hardware"),
        ("nvml", "NVML_ERROR_GPU_IS_LOST", 15, "hardware"),
    ]


def test_strings_and_codes_are_looked_up_in_the_enums() -> None:
    # cudaGetErrorString's text (libcudart), a library status by number, NVML's string
    assert _errors("RuntimeError: CUDA error: operation not supported on global/shared address space") == [
        ("cuda", "cudaErrorInvalidAddressSpace", 717, "kernel")]
    assert _errors("RuntimeError: cusolver error: 7, when calling `cusolverDnCreate(handle)`") == [
        ("cusolver", "CUSOLVER_STATUS_INTERNAL_ERROR", 7, "internal")]
    assert _errors("Failed to initialize NVML: Driver Not Loaded") == [
        ("nvml", "NVML_ERROR_DRIVER_NOT_LOADED", 9, "driver")]
    # the longest string wins: "invalid device ordinal" is not "invalid device function"'s prefix
    assert _errors("CUDA error: invalid device ordinal")[0][1] == "cudaErrorInvalidDevice"


def test_what_is_not_a_status_is_not_read_as_one() -> None:
    assert _errors("plan = cufftPlan1d(&plan, n, CUFFT_R2C, 1)") == []  # a transform type, not a result
    assert _errors("NVML_ERROR_NOT_A_CODE") == []
    # "CUDA error: CUBLAS_STATUS_..." is cuBLAS's status once, not also an unknown CUDA message
    assert _errors("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm`") == [
        ("cublas", "CUBLAS_STATUS_EXECUTION_FAILED", 13, "kernel")]


# --- causes: where the vendor's meaning proves one, and families where it does not -----------------


def test_a_status_whose_meaning_proves_a_cause_states_it() -> None:
    # nvml.h: NVML_ERROR_LIB_RM_VERSION_MISMATCH "RM detects a driver/library version mismatch"
    assert stated("pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version "
                  "mismatch.") == ["nvml-driver-mismatch"]
    # cudnn_graph.h: cuDNN 9's sub-libraries of two releases; cuda.h: the driver API's assert
    assert stated("RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH") == [
        "cudnn-version-incompatible"]
    assert stated("RuntimeError: CUDA driver error: CUDA_ERROR_ASSERT") == ["device-side-assert"]
    assert stated("Failed to initialize NVML: Driver Not Loaded") == ["nvidia-smi-cannot-reach-driver"]


def test_a_status_that_proves_no_cause_is_its_family_with_candidates() -> None:
    for text in ("pynvml.nvml.NVMLError_Unknown: Unknown Error",
                 "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_SHAPE",
                 "RuntimeError: cusolver error: 7, when calling `cusolverDnCreate(handle)`"):
        (family,) = explain_report(text, CATALOG, kb=KB).explanations
        assert family.signature.id == "gpu-library-status" and len(family.candidates) == 3, text
        assert "documents it as" in family.cause and all(c.check for c in family.candidates)
    (status,) = explain_report("RuntimeError: cusolver error: 7, when calling `cusolverDnCreate(handle)`",
                               CATALOG, kb=KB).explanations
    assert "cuSOLVER returned CUSOLVER_STATUS_INTERNAL_ERROR (status 7)" in status.cause
    # a fault of the board or its memory is its own family, not a cause
    assert stated("pynvml.nvml.NVMLError_GpuIsLost: GPU is lost") == ["gpu-hardware-fault"]
    assert stated("RuntimeError: CUDA error: uncorrectable ECC error encountered") == ["gpu-hardware-fault"]


def test_memory_statuses_are_the_gpus_only_when_the_header_says_device() -> None:
    assert stated("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED") == [
        "cuda-out-of-memory"]
    # host memory is not the GPU's: no out-of-memory cause
    assert stated("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED") == [
        "gpu-library-status"]


NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


def test_no_kernel_image_is_torchs_missing_arch_only_where_the_data_proves_it() -> None:
    # pytorch/pytorch#180101: a cu124 build on an sm_120 GPU; CUDA 12.4's toolkit compiles up to sm_90
    proven = NO_KERNEL + "GPU: NVIDIA GeForce RTX 5080\nPyTorch Version: 2.7.0.dev20250310+cu124 (Nightly)\n"
    (cause,) = explain_report(proven, CATALOG, kb=KB).explanations
    assert cause.signature.id == "arch-not-compiled"  # confirmed_by build_lacks_arch
    assert any("sm_120" in line for line in cause.reasoning)
    # the release's published arch list: 2.3.1 (cu121) starts at sm_50, above a K80's sm_37: the GPU
    # is older than every architecture of the build (reason.gpu_below_build, from the data)
    k80 = NO_KERNEL + "GPU 0: Tesla K80\ntorch.__version__: 2.3.1+cu121\n"
    assert stated(k80) == ["gpu-too-old-for-torch"]
    # counter-case: no torch named
    (family,) = explain_report(NO_KERNEL + "GPU: NVIDIA GeForce RTX 5080\n", CATALOG, kb=KB).explanations
    assert family.signature.id == "no-kernel-image" and len(family.candidates) == 2
    # a build that carries the GPU's code: the other candidate, an extension, is the one left
    carried = NO_KERNEL + "GPU: NVIDIA GeForce RTX 5080\nPyTorch version: 2.7.0+cu128\n"
    assert stated(carried) == ["extension-arch-not-compiled"]
