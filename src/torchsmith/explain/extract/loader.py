"""The dynamic loader's complaints: a library it could not open (and who provides it), a symbol
it could not resolve (demangled, and whose it is). Pure: the soname table is data
(``error_vocab.json``, ``sonames``)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.explain.extract.model import MissingLibrary, UndefinedSymbol
from torchsmith.explain.literals import finditer

__all__ = ["demangle", "missing_libraries", "symbol_owner", "undefined_symbols"]

# Each name starts where a word starts (the look-behind): a megabyte-long word is scanned once,
# not once per position.
_LIB = r"(?<![\w.+-])(?P<lib>[\w.+-]+\.(?:so(?:\.[\d.]+)?|dll|dylib)|lib[\w+-]+\.so[\w.]*)"
_MISSING = (
    re.compile(_LIB + r"\s*:\s*cannot open shared(?: object file)?"),  # a pasted message may stop there
    re.compile(
        r"(?:Could not (?:load (?:dynamic )?library|locate)|Unable to load|cannot load|error loading)"
        r"\s+['\"`]?"
        r"(?:[^'\"`\s]*[\\/])?" + _LIB,
        re.IGNORECASE,
    ),
    # The loader's complaint in words: "Couldn't open CUDA library X", "could not load `X`",
    # "failed to find the shared library X", cuda-python's "Failed to dlopen X".
    re.compile(
        r"(?:couldn't|could not|can't|cannot|unable to|failed to) (?:open|load|find|locate|dlopen)"
        r"(?: the)?(?: CUDA| dynamic| shared| DLL)?(?: library| module| file)?:?\s+['\"`]?"
        r"(?:[^'\"`\s]*[\\/])?" + _LIB,
        re.IGNORECASE,
    ),
    re.compile(r"(?:Could not find module|Error loading) ['\"](?:[^'\"]*[\\/])?" + _LIB),
    re.compile(r"Library not loaded:\s*(?:@rpath/|\S*/)?" + _LIB),
    # CTranslate2's stubs open cuBLAS, NCCL and MPI at first use and say so in their own words
    # (OpenNMT/CTranslate2 src/cuda/cublas_stub.cc, nccl_stub.cc, mpi_stub.cc)
    re.compile(r"\bLibrary " + _LIB + r" is not found or cannot be loaded"),
    re.compile(_LIB + r"\s*=>\s*not found"),
    # Python's ImportError from dlopen is "<soname>: cannot open shared object file: ..." (dlerror);
    # a report may keep only the name: an ImportError whose whole message is a library's name.
    re.compile(r"^\s*(?:ImportError|OSError): " + _LIB + r"\s*$", re.MULTILINE),
    re.compile(r"ld(?:\.lld)?: cannot find -l(?P<link>[\w+-]+)"),
    # make / ninja: a library the link step needs is not there
    re.compile(r"No rule to make target ['`](?:[^'`\n]*/)?" + _LIB + r"'"),
    re.compile(r"ninja: error: '(?:[^'\n]*/)?" + _LIB + r"', needed by"),
)
# The linker's and the build tools' shapes above: a library missing when a binary is *built*, not
# when one is loaded (MissingLibrary.problem "link"): the run-time causes do not apply.
_LINK_TIME = frozenset(_MISSING[-3:])
# glibc's loader (elf/dl-lookup.c) on its own: the file was found, but it lacks the symbol version
# the caller was linked against ("symbol S version V not defined in file X with link time reference";
# older glibc puts a comma after S): a library of another release than the one built against.
_VERSION_NOT_DEFINED = re.compile(
    r"symbol [\w@.$]+,? version \S+ not defined in file " + _LIB + r" with link time reference")
_UNDEFINED = re.compile(
    r"(?:(?<![^\s:'\"])(?P<lib>[^\s:'\"]+\.(?:so[\w.]*|dylib|pyd))\s*:\s*)?"
    r"undefined symbol:?\s*(?P<symbol>[\w@.$]+)(?:, version (?P<version>[A-Z]+_[\d.]*\d))?"
)
_UNDEFINED_REF = re.compile(r"undefined reference to [`'](?P<symbol>[^'`\n]+)'")
# The version a symbol asks for ("hypot@GLIBC_2.35", "..., version GLIBCXX_3.4.29"): whose it is.
_VERSIONED = re.compile(r"@@?(?P<version>[A-Z]+_[\d.]*\d)$")
_VERSION_OWNERS = (("GLIBC_", "glibc", "glibc (the C library)"),
                   ("GLIBCXX_", "libstdcxx", "libstdc++ (the C++ standard library)"),
                   ("CXXABI_", "libstdcxx", "libstdc++ (the C++ standard library)"))


def _soname_row(
    soname: str, table: Sequence[Mapping[str, Any]]
) -> Tuple[Optional[Mapping[str, Any]], Dict[str, str]]:
    for row in table:
        match = re.fullmatch(str(row["regex"]) + r"(?:\.\d+)*", soname)  # libcudart.so.11.0
        if match:
            return row, {k: v for k, v in match.groupdict().items() if v}
    return None, {}


def describe_library(soname: str, table: Sequence[Mapping[str, Any]]) -> MissingLibrary:
    row, groups = _soname_row(soname, table)
    if row is None:
        return MissingLibrary(soname)

    def fill(value: Any) -> Optional[str]:
        if not isinstance(value, str):
            return None
        text = value
        for name, part in groups.items():
            text = text.replace("{" + name + "}", part)
        return None if "{" in text else text

    return MissingLibrary(
        soname,
        row.get("library"),
        groups.get("major") or groups.get("minor"),
        row.get("kind"),
        fill(row.get("provider")),
        fill(row.get("pip")),
        fill(row.get("conda")),
    )


_BECAUSE = re.compile(r"['\"`]?\.?\s*(?:with error|Error)\s*:\s*" + _LIB + r"\s*:\s*cannot open shared")
# Windows' message for 1455 as FormatMessage prints it in the user's language (zh-CN, ja-JP) too
_NOT_MISSING = re.compile(r"WinError (?!12[67])\d+|paging file|页面文件太小|ページング ファイルが小さすぎる")
_PROCEDURE = re.compile(r"WinError 127|procedure could not be found")
# glibc's loader: "Error: X.so: symbol S, version V not defined in file Y.so with link time reference"
_SYMBOL_VERSION = re.compile(
    r"['\"`]?\.?\s*(?:with error|Error)\s*:\s*[^\n]{0,600}?, version \S+ not defined in file ")


# dlerror's reasons for a file it found but could not load (glibc elf/dl-load.c): not a missing library
_UNREADABLE = re.compile(
    r"[^\n]{0,120}?(?:cannot read file data|invalid ELF header|wrong ELF class|file too short)")


# "Could not load library A. Error: B: undefined symbol: S": A was found and opened
_FOUND_BUT_SYMBOL = re.compile(r"['\"`]?\.?\s*(?:with error|Error)\s*:\s*[^\n]{0,600}?: undefined symbol")


def _problem(text: str, match: re.Match[str]) -> Optional[str]:
    """What is wrong with the library matched: None when it is not this library's fault (the
    loader names another one it needed: "Could not load library A. Error: B: cannot open ...";
    Windows failed for another reason, WinError 1455, the paging file); "incompatible" when it
    was found but a procedure in it was not (Windows error 127); else "missing"."""
    after = text[match.end():match.end() + 40]
    before = text[max(0, match.start() - 300):match.start()]
    if re.match(r"['\"`]?[.\s]*Error code 127\b", after) or _PROCEDURE.search(before + after):
        return "incompatible"
    if _SYMBOL_VERSION.match(text, match.end()):  # the loader: a library it loaded is of another release
        return "incompatible"
    if _UNREADABLE.match(text, match.end()):
        return "unreadable"  # the file is there (a directory, another architecture, cut short)
    if _FOUND_BUT_SYMBOL.match(text, match.end()):
        return None  # found: a library it loaded lacks a symbol (glibc's "undefined symbol")
    because = _BECAUSE.match(text, match.end())
    if because and because.group("lib") != match.groupdict().get("lib"):
        return None
    return None if _NOT_MISSING.search(before) else "missing"


# "Failed to load library A with error: B: cannot open ...", "Could not load library A. Error: B: ..."
_NEEDED_BY = re.compile(
    r"(?:Failed to load library|Could not load library|Error loading)\s+['\"]?(?:[^'\"\s]*[\\/])?"
    r"(?P<by>[\w.+-]+\.(?:so[\w.]*|dll|dylib))['\"]?\.?\s*(?:with error|Error)\s*:\s*"
    + _LIB + r"\s*:\s*cannot open")


def _needed_by(text: str) -> Dict[str, str]:
    """Missing library -> the library that asked; not a library that failed to load itself
    ("Could not load library X. Error: X: cannot open": the sentence's full stop is not the name's)."""
    pairs = ((m.group("lib").rstrip("."), m.group("by").rstrip(".")) for m in _NEEDED_BY.finditer(text))
    return {lib: by for lib, by in pairs if lib != by}


# The words the loader's complaint in words (_MISSING[2]) needs, lower-cased: a log with none of them
# is not scanned for it.
_PROSE_WORDS = ("couldn't", "could not", "can't", "cannot", "unable to", "failed to")


def missing_libraries(text: str, table: Sequence[Mapping[str, Any]]) -> List[MissingLibrary]:
    """Each library the text says could not be loaded, once, with its provider when known."""
    found: Dict[str, MissingLibrary] = {}
    lower = text.lower()
    prose = any(word in lower for word in _PROSE_WORDS)
    for pattern in _MISSING:
        if pattern is _MISSING[2] and not prose:
            continue
        for match in finditer(pattern, text):
            groups = match.groupdict()
            soname = groups.get("lib") or f"lib{groups.get('link')}.so"
            soname = soname.rstrip(".")
            problem = "link" if pattern in _LINK_TIME else _problem(text, match)
            if problem is None:
                continue
            if soname not in found and len(found) < 20:
                found[soname] = dataclasses.replace(
                    describe_library(soname, table), problem=None if problem == "missing" else problem)
    if not found and "not defined in file" in text:  # else read with the library that failed to load
        for match in _VERSION_NOT_DEFINED.finditer(text):
            soname = match.group("lib")
            if soname not in found and len(found) < 20:
                found[soname] = dataclasses.replace(describe_library(soname, table), problem="incompatible")
    asked_by = _needed_by(text)
    return [dataclasses.replace(lib, needed_by=asked_by.get(lib.soname)) for lib in found.values()]


# --- undefined symbols -------------------------------------------------------------------

_SUBSTITUTIONS = {"St": "std", "Sa": "std::allocator", "Sb": "std::basic_string", "Ss": "std::string"}


def _source_name(symbol: str, at: int) -> Tuple[Optional[str], int]:
    match = re.match(r"\d+", symbol[at:])
    if not match:
        return None, at
    length = int(match.group())
    start = at + len(match.group())
    return symbol[start : start + length], start + length


def demangle(symbol: str) -> Optional[str]:
    """The qualified name of an Itanium-mangled C++ symbol (``_ZN3c104cuda...`` ->
    ``c10::cuda::...``); its parameters are left out. None when it is not mangled."""
    if not symbol.startswith("_Z"):
        return None
    at = 2
    if symbol.startswith("_ZN"):
        at = 3
        parts: List[str] = []
        while at < len(symbol) and symbol[at] in "rVKL":  # qualifiers
            at += 1
        while at < len(symbol) and symbol[at] != "E":
            if symbol[at : at + 2] in _SUBSTITUTIONS:
                parts.append(_SUBSTITUTIONS[symbol[at : at + 2]])
                at += 2
                continue
            if symbol[at] == "I":  # template arguments: stop at the name so far
                break
            if symbol[at : at + 2] in ("C1", "C2", "D0", "D1", "D2"):
                parts.append(("~" if symbol[at] == "D" else "") + (parts[-1] if parts else ""))
                at += 2
                continue
            name, at_next = _source_name(symbol, at)
            if name is None:
                break
            parts.append(name)
            at = at_next
        return "::".join(parts) or None
    name, _ = _source_name(symbol, at)
    return name


# A symbol's namespace or prefix -> whose it is (kind, who).
_OWNERS: Tuple[Tuple[str, str, str], ...] = (
    (r"^(?:c10|at|torch|caffe2|_ZN3c10|THP|THC|TH[A-Z]\w+)(?:::|$)", "torch", "PyTorch (c10/ATen/torch)"),
    (r"^(?:pybind11)(?:::|$)", "torch", "pybind11 (a compiled extension's binding layer)"),
    # torch's stable C ABI: plain C names (torch/csrc/stable/c/shim.h, inductor's aoti_torch/c/shim.h)
    (r"^(?:aoti_)?torch_[a-z]\w*$", "torch", "PyTorch's stable C ABI (its C shim)"),
    (
        r"^(?:__cuda|cuda[A-Z]\w*|cu[A-Z]\w+_v\d|cuGetProcAddress|cudaGetDriverEntryPoint)",
        "cuda",
        "the CUDA runtime or driver",
    ),
    (r"^(?:cublas\w*)", "cuda", "cuBLAS"),
    (r"^(?:cudnn\w*)", "cudnn", "cuDNN"),
    (r"^(?:nccl\w*)", "nccl", "NCCL"),
    (r"^(?:__nvJitLink\w*|nvJitLink\w*)", "cuda", "nvJitLink"),
    (r"^(?:cusparse\w*|cufft\w*|curand\w*|cusolver\w*)", "cuda", "a CUDA math library"),
    (r"^(?:hip\w+|__hip\w*|hsa_\w+|roc\w+|miopen\w*)", "rocm", "ROCm (HIP/HSA)"),
    (r"^(?:iJIT_\w+|mkl_\w+|MKL_\w+)", "mkl", "Intel MKL / ittnotify"),
    (r"^(?:GOMP_\w+|omp_\w+|__kmpc_\w+)", "openmp", "the OpenMP runtime"),
    (r"^(?:Py\w+|_Py\w+)", "python", "the Python C API"),
    (r"^(?:std|__cxx11|__gnu_cxx)(?:::|$)", "libstdcxx", "libstdc++ (the C++ standard library)"),
)
# A std:: name made of torch's types (std::vector<at::Tensor>) is torch's interface, not libstdc++'s.
_TORCH_TYPES = re.compile(r"\d(?:at|c10|torch|caffe2)\d|N2at|N3c10|N5torch")


def symbol_owner(symbol: str, demangled: Optional[str],
                 version: Optional[str] = None) -> Tuple[Optional[str], Optional[str]]:
    """(kind, who) of a symbol, from the version it asks for, its namespace or its prefix."""
    for prefix, kind, who in _VERSION_OWNERS:
        if version and version.startswith(prefix):
            return kind, who
    if _TORCH_TYPES.search(symbol) and symbol.startswith("_ZNS"):
        return "torch", "PyTorch (c10/ATen/torch)"
    if "__cxx11" in symbol:  # in either ABI's libstdc++ since GCC 5: the two sides chose different ABIs
        return "libstdcxx-abi", "libstdc++'s C++11 ABI (_GLIBCXX_USE_CXX11_ABI)"
    for name in (demangled, symbol):
        if not name:
            continue
        for pattern, kind, who in _OWNERS:
            if re.search(pattern, name):
                return kind, who
    return None, None


def undefined_symbols(text: str) -> List[UndefinedSymbol]:
    found: Dict[str, UndefinedSymbol] = {}
    for pattern in (_UNDEFINED, _UNDEFINED_REF):
        for match in finditer(pattern, text):
            raw = match.group("symbol").rstrip(".,")
            versioned = _VERSIONED.search(raw)
            version = match.groupdict().get("version") or (versioned.group("version") if versioned else None)
            symbol = raw.split("@")[0]
            if symbol in found or len(found) >= 20:
                continue
            if pattern is _UNDEFINED_REF:
                demangled: Optional[str] = re.sub(r"\(.*", "", symbol) if "(" in symbol else symbol
            else:
                demangled = demangle(symbol)
            kind, who = symbol_owner(symbol, demangled, version)
            library = match.groupdict().get("lib")
            found[symbol] = UndefinedSymbol(
                symbol,
                demangled if demangled != symbol else None,
                who,
                kind,
                library.rsplit("/", 1)[-1] if library else None,
                version,
            )
    return list(found.values())
