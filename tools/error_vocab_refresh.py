"""Regenerate the vendors' error enums in src/torchsmith/kb/data/error_vocab.json from the vendors' own files.

    python tools/error_vocab_refresh.py --wheels DIR --nccl GITDIR --nvml GITDIR --hip GITDIR \
        --clr GITDIR [--level-zero GITDIR --unified-runtime GITDIR] [--write]

DIR holds NVIDIA's wheels, fetched by name with `pip download --no-deps` (nvidia-cuda-runtime,
nvidia-cuda-runtime-cu12, nvidia-cuda-runtime-cu11, nvidia-cublas, nvidia-cusparse,
nvidia-cusolver, nvidia-cufft, nvidia-curand, nvidia-cudnn-cu13, nvidia-ml-py); GITDIR a clone of
NVIDIA/nccl, NVIDIA/go-nvml (whose gen/nvml/nvml.h is NVIDIA's NVML header), ROCm/HIP (hipError_t),
ROCm/clr (hipGetErrorString's strings), and for Intel GPUs oneapi-src/level-zero (ze_result_t) and
oneapi-src/unified-runtime (ur_result_t). What is read:

- each enum from its header (names, codes and the header's own comment on each value: the
  documented meaning);
- the CUDA runtime's own error strings (what cudaGetErrorString returns) from libcudart's table of
  {code, name, string}, for every runtime release given (older strings are kept as ``older``);
- ncclGetErrorString's strings from NCCL's init.cc; pynvml's own strings and exception classes.

The table in error_vocab.json is a cache of what was read: each source records where it was read
(a wheel's file name and sha256, or repo@commit:path), the date, and the list of names its enum
had, so that ``kb validate`` fails when a table stops short of its source. Rows keep the
hand-written fields this tool does not read (``kind`` where set by hand, ``driver_name``, the
cuBLAS and cuDNN 8 meanings taken from NVIDIA's API references). Without --write it prints what
would change.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

DATA = Path(__file__).resolve().parent.parent / "src" / "torchsmith" / "kb" / "data" / "error_vocab.json"

# table -> (wheel project, member path's tail, enum type name) read from headers
HEADERS: Dict[str, List[Tuple[str, str, str]]] = {
    "cuda": [("nvidia-cuda-runtime", "include/driver_types.h", "cudaError"),
             ("nvidia-cuda-runtime-cu12", "include/driver_types.h", "cudaError"),
             ("nvidia-cuda-runtime-cu11", "include/driver_types.h", "cudaError")],
    "cuda_driver": [("nvidia-cuda-runtime", "include/cuda.h", "cudaError_enum"),
                    ("nvidia-cuda-runtime-cu12", "include/cuda.h", "cudaError_enum"),
                    ("nvidia-cuda-runtime-cu11", "include/cuda.h", "cudaError_enum")],
    "cublas": [("nvidia-cublas", "include/cublas_api.h", "cublasStatus_t")],
    "cusparse": [("nvidia-cusparse", "include/cusparse.h", "cusparseStatus_t")],
    "cusolver": [("nvidia-cusolver", "include/cusolver_common.h", "cusolverStatus_t")],
    "cufft": [("nvidia-cufft", "include/cufft.h", "cufftResult")],
    "curand": [("nvidia-curand", "include/curand.h", "curandStatus")],
    "cudnn": [("nvidia-cudnn-cu13", "include/cudnn_graph.h", "cudnnStatus_t")],
}
RUNTIME_LIBS = [("nvidia-cuda-runtime", "lib/libcudart.so.13"),
                ("nvidia-cuda-runtime-cu12", "lib/libcudart.so.12"),
                ("nvidia-cuda-runtime-cu11", "lib/libcudart.so.11.0")]
NCCL_HEADER, NCCL_STRINGS = "src/nccl.h.in", "src/init.cc"
NVML_HEADER = "gen/nvml/nvml.h"
HIP_HEADER, HIP_STRINGS = "include/hip/hip_runtime_api.h", "hipamd/src/hip_error.cpp"
# Intel GPUs: Level Zero's ze_result_t (oneapi-src/level-zero) and the Unified Runtime's ur_result_t
# (oneapi-src/unified-runtime), which SYCL and so torch's XPU build report
ZE_HEADER, UR_HEADER = "include/ze_api.h", "include/unified-runtime/ur_api.h"

# Our classification of a status (the vendors' enums have none): what the explain rules key on.
# First match wins; hand-set kinds in the data are kept.
KINDS = [
    ("usage", r"_IRS_(?:PARAMS|INFOS)_"),  # cuSOLVER's iterative-refinement parameters: the caller's
    ("host-memory", r"HOST_ALLOCATION"),  # the CPU's memory, not the GPU's
    ("init", r"_STATUS_NOT_INITIALIZED$|^NVML_ERROR_UNINITIALIZED$"),
    ("memory", r"MemoryAllocation|OUT_OF_MEMORY|OutOfMemory|ALLOC(?:ATION)?_FAILED|"
               r"DEVICE_ALLOCATION|NVML_ERROR_MEMORY"),
    ("driver", r"InsufficientDriver|CallRequiresNewerDriver|StubLibrary|STUB_LIBRARY|SystemDriverMismatch|"
               r"SYSTEM_DRIVER_MISMATCH|CompatNotSupported|COMPAT_NOT_SUPPORTED|JitCompilerNotFound|"
               r"JIT_COMPILER_NOT_FOUND|UnsupportedPtxVersion|UNSUPPORTED_PTX_VERSION|DRIVER_NOT_LOADED|"
               r"LIB_RM_VERSION_MISMATCH|INCOMPATIBLE_CUDA_DRIVER|LIBRARY_NOT_FOUND|FUNCTION_NOT_FOUND"),
    ("version", r"VERSION_MISMATCH|VersionMismatch|INCOMPATIBLE_CUDART"),
    ("arch", r"NoKernelImageForDevice|NO_BINARY_FOR_GPU|InvalidKernelImage|INVALID_IMAGE|"
             r"InvalidDeviceFunction|ARCH_MISMATCH|InvalidPtx|INVALID_PTX|UnsupportedPtx"),
    ("kernel", r"IllegalAddress|ILLEGAL_ADDRESS|LaunchOutOfResources|LAUNCH_OUT_OF_RESOURCES|LaunchTimeout|"
               r"LAUNCH_TIMEOUT|Assert$|_ASSERT$|IllegalInstruction|ILLEGAL_INSTRUCTION|MisalignedAddress|"
               r"MISALIGNED_ADDRESS|LaunchFailure|LAUNCH_FAILED|HardwareStackError|HARDWARE_STACK_ERROR|"
               r"InvalidAddressSpace|INVALID_ADDRESS_SPACE|InvalidPc|INVALID_PC|EXECUTION_FAILED|EXEC_FAILED|"
               r"LAUNCH_FAILURE"),
    ("hardware", r"ECCUncorrectable|ECC_UNCORRECTABLE|GPU_IS_LOST|CORRUPTED_INFOROM|RESET_REQUIRED|"
                 r"INSUFFICIENT_POWER|IRQ_ISSUE|NvlinkUncorrectable|NVLINK_UNCORRECTABLE|Contained$|_CONTAINED$"),
    ("device", r"NoDevice|NO_DEVICE|InvalidDevice$|INVALID_DEVICE$|DevicesUnavailable|DEVICE_UNAVAILABLE|"
               r"InitializationError|^CUDA_ERROR_NOT_INITIALIZED$|GPU_NOT_FOUND|DeviceNotLicensed|"
               r"DEVICE_NOT_LICENSED"),
    ("system", r"OperatingSystem|OPERATING_SYSTEM|SystemNotReady|SYSTEM_NOT_READY|Unknown$|_UNKNOWN$|"
               r"NO_PERMISSION|NotPermitted|NOT_PERMITTED"),
    ("unsupported", r"NOT_SUPPORTED|NotSupported|NOT_IMPLEMENTED"),
    ("internal", r"INTERNAL_ERROR"),
    ("usage", r"INVALID_VALUE|InvalidValue|BAD_PARAM|INVALID_ARGUMENT|INVALID_PLAN|INVALID_TYPE|INVALID_SIZE|"
              r"OUT_OF_RANGE|TYPE_ERROR|LENGTH_NOT_MULTIPLE|UNALIGNED_DATA"),
]


def kind_of(name: str) -> str:
    return next((kind for kind, pattern in KINDS if re.search(pattern, name)), "other")


# --- reading the files ---------------------------------------------------------------------------


def _clean(doc: str) -> str:
    """A header comment as one line of prose."""
    text = re.sub(r"^\s*\*+ ?", "", doc, flags=re.M)
    text = re.sub(r'\\ref\s+\S+\s+"([^"]*)"', r"\1", text)  # Doxygen's \ref target "label": the label
    text = re.sub(r"@since\s+\S+(?:\s+[\d.]*\d)?|\\deprecated|@deprecated|\\ref |\\p |::", " ", text)
    text = re.sub(r"\\note\b", "Note:", text)
    return re.sub(r"\s+", " ", text).strip(" *")


_TOKEN = re.compile(
    r"/\*\*<(?P<post1>.*?)\*/|//[!/]<(?P<post2>[^\n]*)|/\*\*(?P<pre>.*?)\*/|/\*.*?\*/|//[^\n]*"
    r"|(?P<name>[A-Za-z_]\w*)(?:\s+[A-Z_]+)?\s*=\s*(?P<value>[A-Za-z0-9_x()+ -]+?)\s*(?=[,}/\n])",
    re.S,
)


def enum_values(source: str, enum: str) -> List[Dict[str, Any]]:
    """The enum's values in order: name, code and the header's comment on it (``meaning``)."""
    start = re.search(rf"\benum\s+(?:\w+\s+)?{re.escape(enum)}\s*\{{", source)  # an attribute between
    if start is None:  # typedef enum { ... } NAME;
        closing = re.search(rf"\}}\s*{re.escape(enum)}\s*;", source)
        if closing is None:
            raise ValueError(f"enum {enum} not found")
        begin = source.rfind("enum", 0, closing.start())
        body = source[source.index("{", begin) + 1:closing.start()]
    else:
        body = source[start.end():source.index("}", start.end())]  # an enum's body has no braces
    rows: List[Dict[str, Any]] = []
    codes: Dict[str, int] = {}
    pending: Optional[str] = None
    for token in _TOKEN.finditer(body):
        post = token.group("post1") or token.group("post2")
        if token.group("pre") is not None:
            pending = token.group("pre")
        elif post is not None and rows:  # on the value's line or the lines after it
            rows[-1]["meaning"] = f"{rows[-1].get('meaning', '')} {_clean(post)}".strip()
        elif token.group("name"):
            value = token.group("value").strip()
            code = codes[value] if value in codes else int(value, 0)
            codes[token.group("name")] = code
            row: Dict[str, Any] = {"name": token.group("name"), "code": code}
            if pending:
                row["meaning"] = _clean(pending)
            pending = None
            rows.append(row)
    for row in rows:
        if not row.get("meaning") or row["meaning"].startswith(("Use ", "please transition")):
            row.pop("meaning", None)
    return rows


def runtime_strings(library: bytes) -> Dict[str, Tuple[int, str]]:
    """libcudart's own table of {int code, const char *name, const char *string} (what
    cudaGetErrorName / cudaGetErrorString return): name -> (code, string). ELF64 little-endian;
    the pointers are R_X86_64_RELATIVE relocations."""
    if library[:4] != b"\x7fELF" or library[4] != 2:
        raise ValueError("not an ELF64 file")
    phoff, shoff = struct.unpack_from("<QQ", library, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", library, 0x36)
    loads = []
    for i in range(phnum):
        kind, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", library, phoff + i * phentsize)
        if kind == 1:
            loads.append((vaddr, offset, filesz))

    def file_offset(vaddr: int) -> Optional[int]:
        return next((o + vaddr - va for va, o, size in loads if va <= vaddr < va + size), None)

    def string(vaddr: int) -> str:
        at = file_offset(vaddr)
        return "" if at is None else library[at:library.index(b"\0", at)].decode("latin-1")

    pointers: Dict[int, int] = {}
    for i in range(shnum):
        _, kind, _, _, offset, size = struct.unpack_from("<IIQQQQ", library, shoff + i * shentsize)
        if kind == 4:  # SHT_RELA
            for at in range(offset, offset + size, 24):
                slot, info, addend = struct.unpack_from("<QQq", library, at)
                if info & 0xFFFFFFFF == 8:  # R_X86_64_RELATIVE
                    pointers[slot] = addend
    table: Dict[str, Tuple[int, str]] = {}
    for slot, target in pointers.items():
        name = string(target)
        if not re.fullmatch(r"cuda(?:Error[A-Z]\w+|Success)", name) or slot + 8 not in pointers:
            continue
        code_at = file_offset(slot - 8)
        if code_at is not None:
            table[name] = (struct.unpack_from("<i", library, code_at)[0], string(pointers[slot + 8]))
    return table


def switch_strings(source: str, function: str) -> Dict[str, str]:
    """A C function's ``switch``: each case label -> the string literal it returns (labels that
    fall through to one return share it); up to its ``default:``."""
    start = re.search(rf"\b{re.escape(function)}\s*\([^)]*\)\s*\{{", source)
    if start is None:
        raise ValueError(f"{function} not found")
    body = source[start.end():]
    body = body[:body.index("default:")] if "default:" in body else body[:body.index("\n}")]
    out: Dict[str, str] = {}
    pending: List[str] = []
    for token in re.finditer(r'case\s+(\w+)\s*:|return\s+"((?:[^"\\]|\\.)*)"\s*;', body):
        if token.group(1):
            pending.append(token.group(1))
        else:
            out.update((name, token.group(2)) for name in pending)
            pending = []
    return out


def nccl_strings(source: str) -> Dict[str, str]:
    return switch_strings(source, "const char* ncclGetErrorString")


def pynvml_strings(source: str) -> Dict[int, str]:
    """pynvml's NVMLError._errcode_to_string: what its exceptions print without the library."""
    codes = {name: int(value) for name, value in re.findall(r"^(NVML_ERROR_\w+)\s*=\s*(\d+)", source, re.M)}
    block = source[source.index("_errcode_to_string = {"):]
    block = block[:block.index("}")]
    return {codes[name]: text for name, text in re.findall(r'(NVML_ERROR_\w+):\s*"([^"]*)"', block)}


def pynvml_class(name: str) -> str:
    """pynvml's exception class for a code: NVML_ERROR_DRIVER_NOT_LOADED -> NVMLError_DriverNotLoaded."""
    words = name[len("NVML_ERROR_"):].split("_")
    return "NVMLError_" + "".join(w.title() for w in words)


# --- the sources ---------------------------------------------------------------------------------


class Wheels:
    def __init__(self, folder: Path) -> None:
        self.files: Dict[str, Path] = {}
        for wheel in sorted(folder.glob("*.whl")):
            project = wheel.name.split("-")[0].replace("_", "-").lower()
            self.files[project] = wheel

    def read(self, project: str, tail: str) -> Tuple[bytes, str, Dict[str, str]]:
        wheel = self.files[project]
        with zipfile.ZipFile(wheel) as archive:
            member = next(n for n in archive.namelist() if n.endswith(tail))
            data = archive.read(member)
        version = wheel.name.split("-")[1]
        source = {"url": f"https://pypi.org/project/{project}/{version}/", "file": f"{wheel.name}:{member}",
                  "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}
        return data, member, source


def git_read(repo: Path, path: str) -> Tuple[str, str]:
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    text = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], check=True, capture_output=True,
                          text=True).stdout
    return text, commit


def _merge(rows: Dict[str, Dict[str, Any]], fresh: List[Dict[str, Any]], source_id: str) -> None:
    for row in fresh:
        have = rows.setdefault(row["name"], {"code": row["code"], "name": row["name"], "source": []})
        if "meaning" in row and "meaning" not in have:
            have["meaning"] = row["meaning"]
        if source_id not in have["source"]:
            have["source"].append(source_id)


def read_hip(hip: Path, clr: Path, today: str) -> Tuple[List[Dict[str, Any]], Dict[str, Dict[str, Any]]]:
    """hipError_t from HIP's header, hipGetErrorString's strings from CLR (ROCm's runtime)."""
    header, commit = git_read(hip, HIP_HEADER)
    fresh = enum_values(header, "hipError_t")
    source, clr_commit = git_read(clr, HIP_STRINGS)
    strings = switch_strings(source, "const char *ihipGetErrorString")
    sources = {"hip-header": {"url": f"https://github.com/ROCm/HIP/blob/{commit}/{HIP_HEADER}", "read": today,
                              "what": "enum hipError_t", "table": "hip", "names": [r["name"] for r in fresh]},
               "hip-strings": {"url": f"https://github.com/ROCm/clr/blob/{clr_commit}/{HIP_STRINGS}",
                               "read": today, "what": "hipGetErrorString texts"}}
    rows = []
    for value in fresh:
        row = {**value, "source": ["hip-header"]}
        if value["name"] in strings:
            row["message"], row["source"] = strings[value["name"]], ["hip-header", "hip-strings"]
        rows.append(row)
    return rows, sources


def _slash_comments(header: str) -> str:
    """A header whose values carry their comment on the lines before, each "/// ...", with those
    lines as one /** ... */ comment (what enum_values reads as the next value's meaning)."""
    return re.sub(r"(?:^[ \t]*///(?!<)[^\n]*\n)+",
                  lambda m: "/** " + " ".join(line.strip()[3:].strip() for line in m.group().splitlines())
                  + " */\n", header, flags=re.M)


def read_intel(level_zero: Path, unified_runtime: Path,
               today: str) -> Tuple[Dict[str, List[Dict[str, Any]]], Dict[str, Dict[str, Any]]]:
    """ze_result_t from Level Zero's header, ur_result_t from the Unified Runtime's."""
    tables: Dict[str, List[Dict[str, Any]]] = {}
    sources: Dict[str, Dict[str, Any]] = {}
    for table, repo, path, enum, owner in (
            ("ze", level_zero, ZE_HEADER, "_ze_result_t", "oneapi-src/level-zero"),
            ("ur", unified_runtime, UR_HEADER, "ur_result_t", "oneapi-src/unified-runtime")):
        header, commit = git_read(repo, path)
        fresh = [r for r in enum_values(_slash_comments(header), enum)
                 if not r["name"].endswith("FORCE_UINT32")]
        source_id = f"{owner.split('/')[1]}-header"
        sources[source_id] = {"url": f"https://github.com/{owner}/blob/{commit}/{path}", "read": today,
                              "what": f"enum {enum.lstrip('_')}: names, values and the header's comment"
                                      " on each",
                              "table": table, "names": [r["name"] for r in fresh]}
        tables[table] = [{**r, "source": [source_id]} for r in fresh]
    return tables, sources


def read_all(wheels: Wheels, nccl: Path, nvml: Path, today: str) -> Tuple[Dict[str, List[Dict[str, Any]]],
                                                                            Dict[str, Dict[str, Any]]]:
    tables: Dict[str, List[Dict[str, Any]]] = {}
    sources: Dict[str, Dict[str, Any]] = {}
    for table, headers in HEADERS.items():
        rows: Dict[str, Dict[str, Any]] = {}
        for project, tail, enum in headers:
            data, _, where = wheels.read(project, tail)
            fresh = enum_values(data.decode("latin-1"), enum)
            source_id = f"{project}:{tail.split('/')[-1]}"
            sources[source_id] = {**where, "read": today, "what": f"enum {enum}: names, values and the "
                                  f"header's comment on each", "table": table,
                                  "names": [r["name"] for r in fresh]}
            _merge(rows, fresh, source_id)
        tables[table] = list(rows.values())
    runtime = {r["name"]: r for r in tables["cuda"]}
    for project, tail in RUNTIME_LIBS:
        data, _, where = wheels.read(project, tail)
        strings = runtime_strings(data)
        source_id = f"{project}:{tail.split('/')[-1]}"
        sources[source_id] = {**where, "read": today, "table": "cuda", "names": sorted(strings),
                              "what": "the runtime's own {code, name, string} table (cudaGetErrorName, "
                                      "cudaGetErrorString)"}
        for name, (code, text) in strings.items():
            row = runtime.setdefault(name, {"code": code, "name": name, "source": []})
            if "message" not in row:
                row["message"] = text
            elif text != row["message"] and text not in row.get("older", []):
                row.setdefault("older", []).append(text)
            if source_id not in row["source"]:
                row["source"].append(source_id)
    tables["cuda"] = sorted(runtime.values(), key=lambda r: r["code"])
    header, commit = git_read(nccl, NCCL_HEADER)
    init, _ = git_read(nccl, NCCL_STRINGS)
    strings = nccl_strings(init)
    fresh = [r for r in enum_values(header, "ncclResult_t") if r["name"] != "ncclNumResults"]
    sources["nccl-header"] = {"url": f"https://github.com/NVIDIA/nccl/blob/{commit}/{NCCL_HEADER}",
                              "read": today, "what": "enum ncclResult_t", "table": "nccl",
                              "names": [r["name"] for r in fresh]}
    sources["nccl-strings"] = {"url": f"https://github.com/NVIDIA/nccl/blob/{commit}/{NCCL_STRINGS}",
                               "read": today, "what": "ncclGetErrorString texts"}
    tables["nccl"] = [{**r, "message": strings[r["name"]], "source": ["nccl-header", "nccl-strings"]}
                      for r in fresh if r["name"] in strings]
    header, commit = git_read(nvml, NVML_HEADER)
    fresh = enum_values(header, "nvmlReturn_t")
    sources["nvml-header"] = {"url": f"https://github.com/NVIDIA/go-nvml/blob/{commit}/{NVML_HEADER}",
                              "read": today, "what": "enum nvmlReturn_t (NVIDIA's nvml.h)", "table": "nvml",
                              "names": [r["name"] for r in fresh]}
    data, _, where = wheels.read("nvidia-ml-py", "pynvml.py")
    texts = pynvml_strings(data.decode("utf-8"))
    sources["pynvml"] = {**where, "read": today, "what": "pynvml's NVMLError strings and exception classes"}
    tables["nvml"] = []
    for value in fresh:
        row = {**value, "python_name": pynvml_class(value["name"]), "source": ["nvml-header", "pynvml"]}
        if row["code"] in texts:
            row["message"] = texts[row["code"]]
        tables["nvml"].append(row)
    return tables, sources


# --- into the data file --------------------------------------------------------------------------

KEEP = ("kind", "driver_name", "message")  # hand-set fields a fresh read does not replace


def update(document: Dict[str, Any], tables: Dict[str, List[Dict[str, Any]]],
           sources: Dict[str, Dict[str, Any]]) -> List[str]:
    changes: List[str] = []
    document["sources"].update(sources)
    runtime_kinds = {r["driver_name"]: r["kind"] for r in document.get("cuda", []) if r.get("driver_name")}
    for table, fresh in tables.items():
        old = {(r["name"], r["code"]): r for r in document.get(table, [])}
        # a name of another release (cuDNN 8's code, CUresult beside the runtime's): its hand-set kind
        kinds = {**(runtime_kinds if table == "cuda_driver" else {}),
                 **{name: r["kind"] for (name, _), r in old.items() if r.get("kind")}}
        merged: List[Dict[str, Any]] = []
        for row in fresh:
            before = old.pop((row["name"], row["code"]), None)
            if before is None:
                changes.append(f"{table}: + {row['name']} ({row['code']})")
                row.setdefault("kind", kinds.get(row["name"]) or kind_of(row["name"]))
            else:
                for key in KEEP:
                    if key in before and (key != "message" or "message" not in row):
                        row[key] = before[key]
                if before.get("meaning") and "meaning" not in row:
                    row["meaning"] = before["meaning"]
                row["source"] = list(dict.fromkeys(before["source"] + row["source"]))
            row["kind"] = row.get("kind") or kind_of(row["name"])
            merged.append(row)
        # rows of older releases (cuDNN 8's codes) stay, with their sources, first: a name alone reads as
        # the release most texts with it come from
        merged = list(old.values()) + merged
        order = ["code", "name", "message", "older", "kind", "meaning", "driver_name", "python_name",
                 "source"]
        document[table] = [{k: r[k] for k in sorted(r, key=lambda k: order.index(k) if k in order else 99)}
                           for r in merged]
    return changes


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wheels", type=Path, required=True)
    parser.add_argument("--nccl", type=Path, required=True, help="a git dir of NVIDIA/nccl")
    parser.add_argument("--nvml", type=Path, required=True, help="a git dir of NVIDIA/go-nvml")
    parser.add_argument("--hip", type=Path, required=True, help="a git dir of ROCm/HIP")
    parser.add_argument("--clr", type=Path, required=True, help="a git dir of ROCm/clr")
    parser.add_argument("--level-zero", type=Path, help="a git dir of oneapi-src/level-zero")
    parser.add_argument("--unified-runtime", type=Path, help="a git dir of oneapi-src/unified-runtime")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    tables, sources = read_all(Wheels(args.wheels), args.nccl, args.nvml, today)
    tables["hip"], hip_sources = read_hip(args.hip, args.clr, today)
    sources.update(hip_sources)
    if args.level_zero and args.unified_runtime:
        intel, intel_sources = read_intel(args.level_zero, args.unified_runtime, today)
        tables.update(intel)
        sources.update(intel_sources)
    document = json.loads(DATA.read_text(encoding="utf-8"))
    changes = update(document, tables, sources)
    for line in changes:
        print(line)
    print(", ".join(f"{t}: {len(document[t])}" for t in tables))
    if args.write:
        DATA.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
