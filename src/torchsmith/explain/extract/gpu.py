"""CUDA runtime/driver, HIP and NCCL errors by name, code or message, looked up in the vendors'
enums (``error_vocab.json``: ``cuda``, ``cuda_driver``, ``hip``, ``nccl``, ``nvml`` and the CUDA
libraries' statuses), and NCCL's own diagnostics. Pure."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.explain.extract.model import GpuError
from torchsmith.explain.literals import finditer

__all__ = ["LIBRARY_NAMES", "dtypes", "gpu_errors", "nccl_facts"]

_NAMES = re.compile(
    r"\b(?P<name>cudaError[A-Z]\w+|CUDA_ERROR_[A-Z_]+|hipError[A-Z]\w+|nccl(?:Unhandled\w+|"
    r"SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError|InProgress|Timeout)|"
    r"(?:CUBLAS|CUDNN|CUSPARSE|CUSOLVER|CURAND)_STATUS_[A-Z0-9_]+|CUFFT_[A-Z_]+|NVML_ERROR_[A-Z_]+|"
    r"NVMLError_[A-Za-z]+|ZE_RESULT_[A-Z_]+|UR_RESULT_[A-Z_]+)\b"
)
# The table of each enum by its names' prefix (error_vocab.json); the api a GpuError reports; the
# vendor's name of that library, for what a statement says.
_TABLES = (("CUDA_ERROR_", "cuda_driver", "cuda-driver", "the CUDA driver API"), ("hip", "hip", "hip", "HIP"),
           ("nccl", "nccl", "nccl", "NCCL"), ("CUBLAS_", "cublas", "cublas", "cuBLAS"),
           ("CUDNN_", "cudnn", "cudnn", "cuDNN"), ("CUSPARSE_", "cusparse", "cusparse", "cuSPARSE"),
           ("CUSOLVER_", "cusolver", "cusolver", "cuSOLVER"), ("CUFFT_", "cufft", "cufft", "cuFFT"),
           ("CURAND_", "curand", "curand", "cuRAND"), ("NVML", "nvml", "nvml", "NVML"),
           ("ZE_RESULT_", "ze", "ze", "Intel's Level Zero driver"),
           ("UR_RESULT_", "ur", "ur", "Intel's Unified Runtime (SYCL)"),
           ("cuda", "cuda", "cuda", "the CUDA runtime"))
LIBRARY_NAMES = {api: name for _prefix, _table, api, name in _TABLES}
LIBRARY_NAMES["xid"] = "The NVIDIA driver (its Xid report in the kernel log)"
# Tables whose names alone are not all statuses (cuFFT's CUFFT_R2C is a transform type): only rows.
_ROWS_ONLY = frozenset({"cufft", "nvml"})
# The data types a failing call names: cudaDataType_t (library_types.h), cudnnDataType_t, torch's.
_DTYPES = (  # (name, words one of which every match holds, pattern)
    ("bf16", ("16BF", "BFLOAT16", "bfloat16", "BFloat16"),
     re.compile(r"\bCUDA_R_16BF\b|\bCUDNN_DATA_BFLOAT16\b|\btorch\.bfloat16\b|\bBFloat16\b")),
    ("fp16", ("16F", "DATA_HALF", "float16", "half", "Half"),
     re.compile(r"\bCUDA_R_16F\b|\bCUDNN_DATA_HALF\b|\btorch\.(?:float16|half)\b|\bHalf\b")),
)
_CODES = (
    # "CUDA error: no kernel image ..." / "HIP error: invalid device function"; torch's driver API check
    # "CUDA driver error: device not ready" (c10/cuda/driver_api.h: the driver's own string, which is
    # the runtime's message for the same status)
    (
        re.compile(
            r"\b(?P<api>CUDA|HIP|cuda|hip)(?: [Dd]river)? [Ee]rror(?: \(?(?P<code>\d+)\)?)?\s*:\s*[\"'`]?"
            r"(?P<message>[a-zA-Z][^\n]{3,120})"
        ),
        "",
    ),
    # "Error 804: forward compatibility was attempted on non supported HW"
    # (not NCCL's "NCCL Error 2: unhandled system error", whose codes are NCCL's own)
    (re.compile(r"(?<!NCCL )(?<!nccl )\bError (?P<code>\d{1,3}): (?P<message>[a-zA-Z][^\n]{3,120})"), "cuda"),
    (re.compile(r"\bNCCL Error (?P<code>\d{1,2}): (?P<message>[a-zA-Z][^\n]{3,120})"), "nccl"),
    # "CUDA error 209" / "cuda runtime error (209)"
    (re.compile(r"\b(?P<api>CUDA|cuda)(?: runtime)? error \(?(?P<code>\d{1,3})\)?"), ""),
    # A runtime call's status as a number: deviceQuery's "cudaGetDeviceCount returned 100",
    # glog's "Check failed: error == cudaSuccess (803 vs. 0)"
    (re.compile(r"\bcuda[A-Z]\w{2,40}(?:\(\))? returned (?:error )?\(?(?P<code>\d{1,3})\)?"), "cuda"),
    (re.compile(r"== cudaSuccess \((?P<code>\d{1,3}) vs\. 0\)"), "cuda"),
    # NCCL's CUDACHECK: "Cuda failure 'CUDA driver is a stub library'"; its CUCHECK (driver API,
    # NVIDIA/nccl src/include/checks.h) adds the code: "Cuda failure 802 'system not yet initialized'"
    (re.compile(r"Cuda failure (?:(?P<code>\d{1,3}) )?'(?P<message>[a-zA-Z][^'\n]{3,120})'"), "cuda"),
    # ggml's ggml_cuda_init: "failed to initialize CUDA: %s" with cudaGetErrorString; "ROCm" in its
    # HIP builds (ggml-org/llama.cpp@f6d77a1ba0ac794e950bd3abb630b904bdcd8fb8 ggml/src/ggml-cuda/ggml-cuda.cu)
    (re.compile(r"\bfailed to initialize CUDA: (?P<message>[a-zA-Z][^\n]{3,120})"), "cuda"),
    (re.compile(r"\bfailed to initialize ROCm: (?P<message>[a-zA-Z][^\n]{3,120})"), "hip"),
    # ollama's runtime probe: "cudart init failure: %d", cudaError_t's code
    # (ollama/ollama@08f8471dba9846a015b37cc829688aaa4438a78e gpu/gpu_info_cudart.c)
    (re.compile(r"\bcudart init failure: (?P<code>\d{1,3})\b"), "cuda"),
    # The CUDA libraries' statuses as numbers: "cusolver error: 7", "cuBLAS status 13"
    (re.compile(r"\b(?P<api>cublas|cusparse|cusolver|cufft|curand|cudnn)[ _](?:error|status)\b[: =]*\(?"
                r"(?P<code>\d{1,4})\b", re.IGNORECASE), ""),
)
# A compiled extension's own check, which prints cudaError_t as its number and then the call it
# wrapped: nvdiffrast's NVDR_CHECK_CUDA_ERROR, TORCH_CHECK(..., "Cuda error: ", cudaGetLastError(), "[",
# #CUDA_CALL, ";]") (NVlabs/nvdiffrast@2f498f23c7d75c42729b82f09d105b9c66ef1686
# nvdiffrast/common/framework.h; "HIP error: " in its HIP ports). torch's own checks print the status's
# message instead ("CUDA error: no kernel image ...", c10/cuda/CUDAException.h).
_CHECKED_CALL = re.compile(r"\b(?P<api>Cuda|HIP) error: (?P<code>\d{1,3}) ?"
                           r"\[(?P<call>[A-Za-z_][\w:.]{1,60})\(")
# A CUDA status in prose, its code with its message in brackets: 'error 802 ("system not yet
# initialized")'. Read only where the code and the message are one row of the runtime's enum.
_PAIRED = re.compile(r"\b[Ee]rror (?P<code>\d{1,3}) \(\s*[\"'`]"
                     r"(?P<message>[a-zA-Z][^\"'`\n]{3,120})[\"'`]\s*\)")
# NVML as nvidia-smi and pynvml print it: "Failed to initialize NVML: Driver Not Loaded" (read by line);
# libnvidia-container's "nvml error: driver not loaded" (src/driver.c call_nvml, src/error.c)
_NVML = re.compile(r"(?:Failed to initialize NVML|\bNVML(?:Error)?|\bnvml error)\s*:\s*"
                   r"(?P<message>[A-Za-z][^\n]{3,120})")
_NCCL_ERROR = re.compile(
    r"(?:NCCL error in:? [^\n]*?|ProcessGroupNCCL\.cpp:\d+), (?P<message>[^\n]+?)"
    r"(?:, NCCL version (?P<version>[\d.]+))?$",
    re.MULTILINE,
)
_NCCL_VERSION = re.compile(r"NCCL version (?P<version>\d+\.\d+\.\d+)")
_NCCL_IFACE = re.compile(
    r"NET/(?:Socket|IB) : Using \[\d+\](?P<iface>[\w.-]+)|Bootstrap : Using (?P<boot>[\w.-]+)"
)
_NCCL_WARN = re.compile(r"NCCL WARN (?P<warn>[^\n]{3,200})")
# torch appends NCCL's own last warning (ncclGetLastError) to an NCCL error: "...\nLast error:\n<the
# WARN line's text>" (pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp getNcclErrorDetailStr)
_NCCL_LAST = re.compile(r"nccl[A-Z]\w{2,30}: [^\n]{0,300}\n\s{0,8}Last error:[ \t]*\n\s{0,8}"
                        r"(?P<warn>[^\s][^\n]{2,200})")
_NCCL_ENV = re.compile(r"\b(?P<var>NCCL_[A-Z_]+)=(?P<value>\S+)")
# NCCL's INFO line for a setting it read from the environment: "NCCL_IB_DISABLE set by environment to
# 0." (NVIDIA/nccl@f98355115914644c66c369e0abb6f85456c99c05 src/misc/param.cc)
_NCCL_SET = re.compile(r"\b(?P<var>NCCL_[A-Z_]+) set by environment to (?P<value>[^\s,;]+)")
# NCCL's IB transport found no usable port (none listed, none ACTIVE, or none NCCL_IB_HCA selects)
# (NVIDIA/nccl@48bb7fec7953112ff37499a272317f6663f8f600 src/transport/net_ib.cc)
_NCCL_NO_IB = "NET/IB : No device found"


def _by(table: Sequence[Mapping[str, Any]], key: str, value: object) -> Optional[Mapping[str, Any]]:
    return next((row for row in table if row.get(key) == value), None)


def _from_row(api: str, row: Mapping[str, Any], name: Optional[str] = None) -> GpuError:
    return GpuError(
        api, name or row.get("name"), row.get("code"), row.get("message"), row.get("kind"), row.get("meaning")
    )


def _named(name: str, vocab: Mapping[str, Sequence[Mapping[str, Any]]]) -> Optional[GpuError]:
    _prefix, table, api, _name = next(t for t in _TABLES if name.startswith(t[0]))
    key = "python_name" if name.startswith("NVMLError_") else "name"
    row = _by(vocab.get(table, ()), key, name)
    if row is None and table == "cuda_driver":  # an older knowledge base: the runtime rows name it
        row = _by(vocab.get("cuda", ()), "driver_name", name)
        return _from_row(api, row, name) if row else GpuError(api, name)
    if row is None:
        return None if table in _ROWS_ONLY else GpuError(api, name)
    return _from_row(api, row)


def _bare(message: str) -> str:
    """A message as compared: lower case, without its full stop or the article a quote drops."""
    text = message.strip().rstrip(".").lower()
    return text[4:] if text.startswith("the ") else text


_MESSAGES: Dict[int, Tuple[Sequence[Mapping[str, Any]], List[Tuple[str, Mapping[str, Any]]]]] = {}


def _messages(table: Sequence[Mapping[str, Any]]) -> List[Tuple[str, Mapping[str, Any]]]:
    """(the message as compared, its row) for every string a row's library prints, longest first."""
    cached = _MESSAGES.get(id(table))
    if cached is not None and cached[0] is table:
        return cached[1]
    out = []
    for row in table:
        for message in [row.get("message"), *list(row.get("older") or ())]:
            known = _bare(re.sub(r"\s*\(run with [^)]*\)", "", str(message or "")))
            if known:
                out.append((known, row))
    out.sort(key=lambda item: -len(item[0]))
    _MESSAGES[id(table)] = (table, out)
    return out


def _by_message(
    api: str, message: str, code: Optional[str], vocab: Mapping[str, Sequence[Mapping[str, Any]]]
) -> Optional[GpuError]:
    table = vocab.get(api, ())
    text = _bare(message)
    for known, row in _messages(table):
        if text.startswith(known) or (len(text) >= 12 and known.startswith(text)):
            return _from_row(api, row)
    coded = _by(table, "code", int(code)) if code is not None else None
    return _from_row(api, coded) if coded is not None else None


# A runtime's message quoted in prose: "failed with 'no kernel image is available for execution on
# the device'" (cudaGetErrorString's wording, read only where it is a whole message of the enum)
_QUOTED = re.compile(r"[\"'`](?P<message>[a-z][a-z ,/()-]{15,118}[a-z])[\"'`]")


def _quoted(message: str, vocab: Mapping[str, Sequence[Mapping[str, Any]]]) -> Optional[GpuError]:
    text = _bare(message)
    for api in ("cuda", "hip"):
        row = next((row for known, row in _messages(vocab.get(api, ())) if known == text), None)
        if row is not None:
            return _from_row(api, row)
    return None


_INIT = re.compile(r"cudaGetDeviceCount|CUDA initialization:|ggml_cuda_init|init failure: \d")


def _staged(error: GpuError, joined: str, at: int) -> GpuError:
    """The error as CUDA's initialisation reported it, where its line says so."""
    line = joined[joined.rfind("\n", 0, at) + 1:at]
    return replace(error, stage="init") if _INIT.search(line) else error


def _sentence(message: str) -> str:
    """A message read from joined lines ends at its sentence's end."""
    return re.split(r"(?<=[a-z)])\.(?:\s|$)|\s{2,}| CUDA kernel errors| For debugging", message)[0].strip()


# ollama's driver probe: "cuda driver library init failure: %d", cuInit's CUresult
# (ollama/ollama@08f8471dba9846a015b37cc829688aaa4438a78e gpu/gpu_info_nvcuda.c)
_CUINIT = re.compile(r"\bcuda driver library init failure: (?P<code>\d{1,3})\b")
# nvidia-smi when NVML returns no handle for a GPU it enumerated: "Unable to determine the device
# handle for GPU0: 0000:C1:00.0: Unknown Error" (older: "for GPU 0000:01:00.0: Not Found"); the
# last part is nvmlErrorString's (nvml.h), e.g. "GPU is lost" for NVML_ERROR_GPU_IS_LOST
_SMI_HANDLE = re.compile(r"Unable to determine the device handle for (?:GPU|gpu) ?\d*"
                         r"(?::? (?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])?: "
                         r"(?P<message>[A-Za-z][^\n]{3,120})")


# Triton's Intel backend: "Triton Error [ZE]: " and ze_result_t as a number, decimal or hex
# (intel/intel-xpu-backend-for-triton@390eaae6bc8d9f8304c709c176282e5a5e14c22e
# third_party/intel/backend/driver.c)
_TRITON_ZE = re.compile(r"Triton Error \[ZE\]: (?P<code>0x[0-9a-fA-F]{1,8}|\d{1,10})\b")


# The NVIDIA driver's Xid report in the kernel log: "NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen
# off the bus."; the page-retirement form "XID 48 An uncorrectable ..."; "Xid 79" in words
_XID = re.compile(r"\bX[Ii][Dd](?: \((?:PCI:)?[\w:.]{4,20}\))?:? (?P<code>\d{1,3})\b")


def _xids(text: str, table: Sequence[Mapping[str, Any]]) -> List[GpuError]:
    """The Xids the text shows that the table lists (a fault of the GPU's memory, link or bus)."""
    if "xid" not in text.lower():
        return []
    found = []
    for match in _XID.finditer(text):
        row = _by(table, "code", int(match.group("code")))
        if row is not None:
            found.append(GpuError("xid", f"Xid {row['code']}", row["code"], match.group(), row.get("kind"),
                                  f"{row.get('name')}: {row.get('meaning')}"))
    return found


def _checked_calls(joined: str, vocab: Mapping[str, Sequence[Mapping[str, Any]]]) -> List[GpuError]:
    """The statuses an extension's own check printed by number, each with the call it wrapped."""
    found = []
    for match in _CHECKED_CALL.finditer(joined):
        api = match.group("api").lower()
        row = _by(vocab.get(api, ()), "code", int(match.group("code")))
        if row is not None:
            found.append(replace(_from_row(api, row), call=match.group("call")))
    return found


def gpu_errors(text: str, joined: str, vocab: Mapping[str, Sequence[Mapping[str, Any]]]) -> List[GpuError]:
    """Each CUDA / HIP / NCCL error the text names, once, with its code, kind and meaning;
    ``joined`` is the text with its messages joined (:func:`..messages.unwrap`)."""
    found: Dict[Tuple[str, Optional[str]], GpuError] = {}

    def add(error: GpuError) -> None:
        key = (error.api.split("-")[0], error.name or error.message)
        if key not in found and len(found) < 20:
            found[key] = error

    for match in finditer(_NAMES, joined):
        named = _named(match.group("name"), vocab)
        if named is not None:
            add(named)
    for pattern, default_api in _CODES:
        for match in finditer(pattern, joined):
            groups = match.groupdict()
            api = (groups.get("api") or default_api).lower()
            message, code = groups.get("message"), groups.get("code")
            message = _sentence(message) if message else None
            error = _by_message(api, message or "", code, vocab)
            if message and _NAMES.match(message):
                continue  # "CUDA error: CUBLAS_STATUS_...": read by its name
            if error is None and api == "cuda" and message:
                error = _by_message("hip", message, None, vocab)  # HIP texts are CUDA's; keep CUDA
                error = GpuError("cuda", None, None, message.strip(), error.kind if error else None)
            if error is not None:
                add(_staged(error, joined, match.start()))
    for match in finditer(_PAIRED, joined):
        error = _by_message("cuda", match.group("message"), None, vocab)
        if error is not None and error.code == int(match.group("code")):
            add(_staged(error, joined, match.start()))
    for match in _QUOTED.finditer(joined):
        quoted = _quoted(match.group("message"), vocab)
        if quoted is not None:
            add(quoted)
    for error in _xids(text, vocab.get("xid", ())) + _checked_calls(joined, vocab):
        add(error)
    for match in finditer(_CUINIT, joined):
        row = _by(vocab.get("cuda_driver", ()), "code", int(match.group("code")))
        if row is not None:
            add(replace(_from_row("cuda-driver", row), stage="init"))
    for match in _TRITON_ZE.finditer(text):
        row = _by(vocab.get("ze", ()), "code", int(match.group("code"), 0))
        if row is not None:
            add(_from_row("ze", row))
    for match in _SMI_HANDLE.finditer(text):
        handle = _by_message("nvml", _sentence(match.group("message")), None, vocab)
        if handle is not None:
            add(handle)
    for match in finditer(_NVML, text):
        message = _sentence(match.group("message"))
        # the driver's own strings (nvidia-smi's) are not published: kept as read
        add(_by_message("nvml", message, None, vocab) or GpuError("nvml", None, None, message))
    for match in _NCCL_ERROR.finditer(text):
        error = _by_message("nccl", match.group("message"), None, vocab)
        add(error or GpuError("nccl", None, None, match.group("message").strip()))
    return list(found.values())


def dtypes(text: str) -> List[str]:
    """The reduced-precision data types the text's calls name (bf16, fp16)."""
    return [name for name, words, pattern in _DTYPES
            if any(word in text for word in words) and pattern.search(text)]


def nccl_facts(text: str) -> Dict[str, Any]:
    """NCCL's version, the interfaces it used, its warnings and the NCCL_* settings shown."""
    if "NCCL" not in text and "nccl" not in text:
        return {}
    facts: Dict[str, Any] = {}
    version = _NCCL_VERSION.search(text)
    if version:
        facts["version"] = version.group("version")
    interfaces = []
    for match in _NCCL_IFACE.finditer(text):
        iface = match.group("iface") or match.group("boot")
        if iface not in interfaces:
            interfaces.append(iface)
    if interfaces:
        facts["interfaces"] = interfaces[:8]
    warnings = list(dict.fromkeys(m.group("warn").strip()
                                  for pattern in (_NCCL_WARN, _NCCL_LAST) for m in pattern.finditer(text)))
    if warnings:
        facts["warnings"] = warnings[:8]
    if _NCCL_NO_IB in text:
        facts["ib"] = "none found"
    settings = {m.group("var"): m.group("value").strip("'\",;") for m in _NCCL_ENV.finditer(text)}
    for match in _NCCL_SET.finditer(text):
        settings.setdefault(match.group("var"), match.group("value").rstrip("."))
    if settings:
        facts["settings"] = dict(list(settings.items())[:12])
    asked = _ib_asked(settings) if facts.get("ib") else None
    if asked:
        facts["ib_asked"] = asked
    return facts


# What asks NCCL for InfiniBand: IB not disabled, the IB transport by name, a list of HCAs
_IB_ASKED = (("NCCL_IB_DISABLE", ("0",)), ("NCCL_NET", ("IB", "ib")))


def _ib_asked(settings: Mapping[str, str]) -> Optional[str]:
    """The NCCL settings shown that ask for InfiniBand (NCCL_IB_DISABLE=0, NCCL_NET=IB, NCCL_IB_HCA
    set); without one, "NET/IB : No device found" is NCCL's note on a machine without IB."""
    asked = [f"{name}={settings[name]}" for name, values in _IB_ASKED if settings.get(name) in values]
    if settings.get("NCCL_IB_HCA"):
        asked.append(f"NCCL_IB_HCA={settings['NCCL_IB_HCA']}")
    return ", ".join(asked) or None
