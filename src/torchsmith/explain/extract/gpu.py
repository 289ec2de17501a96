"""CUDA runtime/driver, HIP and NCCL errors by name, code or message, looked up in the vendors'
enums (``error_vocab.json``: ``cuda``, ``hip``, ``nccl``), and NCCL's own diagnostics. Pure."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.explain.extract.model import GpuError

__all__ = ["dtypes", "gpu_errors", "nccl_facts"]

_NAMES = re.compile(
    r"\b(?P<name>cudaError[A-Z]\w+|CUDA_ERROR_[A-Z_]+|hipError[A-Z]\w+|nccl(?:Unhandled\w+|"
    r"SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError|InProgress|Timeout)|"
    r"CUBLAS_STATUS_[A-Z_]+|CUDNN_STATUS_[A-Z_]+)\b"
)
# The data types a failing call names: cudaDataType_t (library_types.h), cudnnDataType_t, torch's.
_DTYPES = (  # (name, words one of which every match holds, pattern)
    ("bf16", ("16BF", "BFLOAT16", "bfloat16", "BFloat16"),
     re.compile(r"\bCUDA_R_16BF\b|\bCUDNN_DATA_BFLOAT16\b|\btorch\.bfloat16\b|\bBFloat16\b")),
    ("fp16", ("16F", "DATA_HALF", "float16", "half", "Half"),
     re.compile(r"\bCUDA_R_16F\b|\bCUDNN_DATA_HALF\b|\btorch\.(?:float16|half)\b|\bHalf\b")),
)
_CODES = (
    # "CUDA error: no kernel image ..." / "HIP error: invalid device function"
    (
        re.compile(
            r"\b(?P<api>CUDA|HIP|cuda|hip) error(?: \(?(?P<code>\d+)\)?)?\s*:\s*"
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
    # NCCL's CUDACHECK: "Cuda failure 'CUDA driver is a stub library'"
    (re.compile(r"Cuda failure '(?P<message>[a-zA-Z][^'\n]{3,120})'"), "cuda"),
)
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
_NCCL_ENV = re.compile(r"\b(?P<var>NCCL_[A-Z_]+)=(?P<value>\S+)")


def _by(table: Sequence[Mapping[str, Any]], key: str, value: object) -> Optional[Mapping[str, Any]]:
    return next((row for row in table if row.get(key) == value), None)


def _from_row(api: str, row: Mapping[str, Any], name: Optional[str] = None) -> GpuError:
    return GpuError(
        api, name or row.get("name"), row.get("code"), row.get("message"), row.get("kind"), row.get("meaning")
    )


def _named(name: str, vocab: Mapping[str, Sequence[Mapping[str, Any]]]) -> GpuError:
    if name.startswith("CUDA_ERROR_"):
        row = _by(vocab.get("cuda", ()), "driver_name", name)
        return _from_row("cuda-driver", row, name) if row else GpuError("cuda-driver", name)
    api = ("hip" if name.startswith("hip") else "nccl" if name.startswith("nccl") else
           "cublas" if name.startswith("CUBLAS") else "cudnn" if name.startswith("CUDNN") else "cuda")
    named = _by(vocab.get(api, ()), "name", name)
    return _from_row(api, named) if named else GpuError(api, name)


def _by_message(
    api: str, message: str, code: Optional[str], vocab: Mapping[str, Sequence[Mapping[str, Any]]]
) -> Optional[GpuError]:
    table = vocab.get(api, ())
    text = message.strip().rstrip(".").lower()
    for row in table:
        known = re.sub(r"\s*\(run with [^)]*\)", "", str(row.get("message") or "")).rstrip(".").lower()
        if known and (text.startswith(known) or (len(text) >= 12 and known.startswith(text))):
            return _from_row(api, row)
    coded = _by(table, "code", int(code)) if code is not None else None
    return _from_row(api, coded) if coded is not None else None


_INIT = re.compile(r"cudaGetDeviceCount|CUDA initialization:")


def _staged(error: GpuError, joined: str, at: int) -> GpuError:
    """The error as CUDA's initialisation reported it, where its line says so."""
    line = joined[joined.rfind("\n", 0, at) + 1:at]
    return replace(error, stage="init") if _INIT.search(line) else error


def _sentence(message: str) -> str:
    """A message read from joined lines ends at its sentence's end."""
    return re.split(r"(?<=[a-z)])\.(?:\s|$)|\s{2,}| CUDA kernel errors| For debugging", message)[0].strip()


def gpu_errors(text: str, joined: str, vocab: Mapping[str, Sequence[Mapping[str, Any]]]) -> List[GpuError]:
    """Each CUDA / HIP / NCCL error the text names, once, with its code, kind and meaning;
    ``joined`` is the text with its messages joined (:func:`..messages.unwrap`)."""
    found: Dict[Tuple[str, Optional[str]], GpuError] = {}

    def add(error: GpuError) -> None:
        key = (error.api.split("-")[0], error.name or error.message)
        if key not in found and len(found) < 20:
            found[key] = error

    for match in _NAMES.finditer(joined):
        add(_named(match.group("name"), vocab))
    for pattern, default_api in _CODES:
        for match in pattern.finditer(joined):
            groups = match.groupdict()
            api = (groups.get("api") or default_api).lower()
            message, code = groups.get("message"), groups.get("code")
            message = _sentence(message) if message else None
            error = _by_message(api, message or "", code, vocab)
            if error is None and api == "cuda" and message:
                error = _by_message("hip", message, None, vocab)  # HIP texts are CUDA's; keep CUDA
                error = GpuError("cuda", None, None, message.strip(), error.kind if error else None)
            if error is not None:
                add(_staged(error, joined, match.start()))
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
    warnings = list(dict.fromkeys(m.group("warn").strip() for m in _NCCL_WARN.finditer(text)))
    if warnings:
        facts["warnings"] = warnings[:8]
    settings = {m.group("var"): m.group("value").strip("'\",;") for m in _NCCL_ENV.finditer(text)}
    if settings:
        facts["settings"] = dict(list(settings.items())[:12])
    return facts
