"""Read which DLLs each of torch's Windows DLLs imports, from real torch wheels.

    python tools/windows_dll_imports.py WHEEL ... > table.json

For each wheel (torch-*-win_amd64.whl, e.g. from `pip download --no-deps --only-binary=:all:
--platform win_amd64 --python-version 3.10 torch==X`) the import directory of every torch/lib/*.dll
is read from its PE header (Microsoft's PE format: the import table lists each DLL by name). The
names are sorted into Windows' own DLLs, the Universal CRT (api-ms-win-crt-*), the Visual C++
runtime (the redistributable's DLLs), Python's DLL and the others (torch's own, or another
package's). Prints the formats.json ``torch_windows_dll_imports`` table: per DLL what it needs beyond
Windows itself, in the wheels read, and in which releases it imports each non-Windows DLL.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import struct
import sys
import zipfile
from typing import Dict, List, Set

# Microsoft, "Redistributing Visual C++ files": the DLLs vc_redist.x64.exe installs into System32
VC_RUNTIME = re.compile(r"^(?:msvcp140(?:_\w+)?|vcruntime140(?:_1)?|concrt140|vcomp140|vccorlib140)\.dll$",
                        re.I)
UCRT = re.compile(r"^(?:api-ms-win-crt-[\w-]+|ucrtbase)\.dll$", re.I)
WINDOWS = re.compile(r"^(?:kernel32|advapi32|user32|userenv|ws2_32|psapi|iphlpapi|dbghelp|shell32|ole32|"
                     r"oleaut32|bcrypt|ntdll|wintrust|imagehlp|api-ms-win-(?!crt-)[\w-]+)\.dll$", re.I)
PYTHON = re.compile(r"^python3\d*\.dll$", re.I)


def _rva_to_offset(sections: List[tuple], rva: int) -> int:
    for virtual, size, raw in sections:
        if virtual <= rva < virtual + size:
            return rva - virtual + raw
    raise ValueError(f"RVA {rva:#x} is in no section")


def pe_imports(data: bytes) -> List[str]:
    """The DLL names in a PE image's import directory (data directory 1)."""
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe:pe + 4] != b"PE\0\0":
        raise ValueError("not a PE image")
    sections_count = struct.unpack_from("<H", data, pe + 6)[0]
    optional_size = struct.unpack_from("<H", data, pe + 20)[0]
    optional = pe + 24
    magic = struct.unpack_from("<H", data, optional)[0]
    directories = optional + (112 if magic == 0x20B else 96)  # PE32+ / PE32
    import_rva = struct.unpack_from("<I", data, directories + 8)[0]
    table = optional + optional_size
    sections = []
    for index in range(sections_count):
        _, virtual_size, virtual, raw_size, raw = struct.unpack_from("<8sIIII", data, table + 40 * index)
        sections.append((virtual, max(virtual_size, raw_size), raw))
    names = []
    at = _rva_to_offset(sections, import_rva)
    while True:
        name_rva = struct.unpack_from("<I", data, at + 12)[0]
        if name_rva == 0:
            return names
        start = _rva_to_offset(sections, name_rva)
        names.append(data[start:data.index(b"\0", start)].decode("ascii"))
        at += 20


def classify(names: List[str]) -> Dict[str, object]:
    kinds: Dict[str, Set[str]] = {"vc_runtime": set(), "windows": set(), "python": set(), "other": set()}
    ucrt = False
    for name in names:
        if UCRT.match(name):
            ucrt = True
        elif VC_RUNTIME.match(name):
            kinds["vc_runtime"].add(name.upper())
        elif WINDOWS.match(name):
            kinds["windows"].add(name.lower())
        elif PYTHON.match(name):
            kinds["python"].add(name.lower())
        else:
            kinds["other"].add(name)
    return {**{k: sorted(v) for k, v in kinds.items()}, "ucrt": ucrt}


def main(paths: List[str]) -> int:
    dlls: Dict[str, Dict[str, object]] = {}
    wheels = []
    for path in paths:
        version = os.path.basename(path).split("-")[1]
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        wheels.append({"file": os.path.basename(path), "sha256": digest, "torch": version})
        with zipfile.ZipFile(path) as wheel:
            for member in wheel.namelist():
                match = re.fullmatch(r"torch/lib/([^/]+\.dll)", member)
                if match:
                    read = classify(pe_imports(wheel.read(member)))
                    read.pop("python")  # python3X.dll: the interpreter that imports torch, always there
                    dlls.setdefault(match.group(1), {})[version] = read
    table = {"read": datetime.date.today().isoformat(), "wheels": wheels,
             "dlls": {name: _merge(per_release) for name, per_release in sorted(dlls.items())}}
    json.dump(table, sys.stdout, indent=1)
    print()
    return 0


def _merge(per_release: Dict[str, Dict[str, object]]) -> Dict[str, object]:
    """One row per DLL: what it needs beyond Windows in the releases read (the union), and in which."""
    merged: Dict[str, object] = {"releases": sorted(per_release)}
    for key in ("vc_runtime", "other"):
        merged[key] = sorted({name for row in per_release.values() for name in row[key]})  # type: ignore[attr-defined]
    merged["ucrt"] = any(row["ucrt"] for row in per_release.values())
    # which releases import each DLL of another package or of torch: an import that comes and goes
    # (torch_cpu.dll's mkl_intel_thread.1.dll in 2.3-2.4) is a release's, not the DLL's
    merged["other_in"] = {name: sorted(r for r, row in per_release.items() if name in row["other"])  # type: ignore[operator]
                          for name in merged["other"]}  # type: ignore[attr-defined]
    return merged


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
