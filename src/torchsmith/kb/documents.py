"""The data documents beside the row tables: one door for each of them.

The row tables (releases, GPUs, CUDA …) are typed by :mod:`torchsmith.kb.loader`. The documents
here are smaller, shaped per consumer (the resolver's limits, the renderers' format facts, base
images, build requirements, explain's signatures), and read whole. Each is found in the overlay
directory under its file name when present, else in the packaged ``kb/data``; either way it is
checked before use, so ``--kb DIR`` reaches every table and a corrupt file is one line.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from torchsmith.errors import KnowledgeBaseError, parse_json_bytes, read_json_bytes

__all__ = ["DATA_DIR", "DOCUMENTS", "document_path", "read_document"]

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

Document = Dict[str, Any]
_HINT = "reinstall torchsmith, or fix the file; `torchsmith kb validate` checks a data directory"


def _sourced_rows(data: Document) -> None:
    """``{"sources": {...}, "rows": [{"source": [ids…], …}]}``: every row cites a known source."""
    sources = data.get("sources", {})
    if not isinstance(data.get("rows"), list):
        raise ValueError("expected an object with a 'rows' list")
    for number, row in enumerate(data["rows"]):
        ids = row.get("source") if isinstance(row, dict) else None
        if not ids or any(i not in sources for i in ids):
            raise ValueError(f"row {number} field source: missing or unknown source id")


class _RowsWith:
    """A ``_sourced_rows`` check that also needs ``fields`` (name -> type) in every row: what the
    commands read from the rows, so a missing field is the file's error, not a crash later."""

    def __init__(self, then: Optional[Callable[[Document], None]] = None, **fields: type) -> None:
        self.fields = fields
        self.then = then  # the document's own checks beyond its rows

    def __call__(self, data: Document) -> None:
        _sourced_rows(data)
        for number, row in enumerate(data["rows"]):
            for name, kind in self.fields.items():
                if not isinstance(row.get(name), kind):
                    raise ValueError(f"row {number} field {name}: missing or not a {kind.__name__}")
        if self.then is not None:
            self.then(data)


def _hsa_override(data: Document) -> None:
    _sourced_rows(data)
    for number, row in enumerate(data["rows"]):
        if not (isinstance(row.get("gfx"), list) and isinstance(row.get("override"), str)
                and isinstance(row.get("runs_as"), str)):
            raise ValueError(f"row {number}: needs gfx (a list), override and runs_as")
    if not isinstance(data.get("risk"), str) or any(i not in data["sources"] for i in data["risk_source"]):
        raise ValueError("risk (text) and risk_source (known source ids) are required")


def _formats(data: Document) -> None:
    for key in ("sources", "conda", "pixi", "jetson_torchvision_build"):
        if not isinstance(data.get(key), dict):
            raise ValueError(f"missing table {key!r}")
    for table in ("conda", "pixi", "jetson_torchvision_build", "jetson_numpy", "jetson_cython",
                  "conda_legacy", "conda_compiled", "tensorflow_windows_gpu", "torch_stable_html",
                  "comfyui_cuda_malloc", "rocm_gpu_vram"):
        for source in data[table].get("sources", ()):
            if source not in data["sources"]:
                raise ValueError(f"{table}: unknown source id {source!r}")
    imports = data.get("torch_windows_dll_imports")  # optional: an overlay may predate it
    if imports is not None and (not isinstance(imports.get("dlls"), dict) or any(
            source not in data["sources"] for source in imports.get("sources") or [None])):
        raise ValueError("torch_windows_dll_imports: needs dlls and known sources")


def _containers(data: Document) -> None:
    for table in ("cuda_runtime", "pytorch", "l4t_pytorch", "l4t_jetpack"):
        for row in data[table]:
            if not row.get("image") or row.get("source") not in data["sources"]:
                raise ValueError(f"{table} row without image or known source: {row}")


def _buildreqs(data: Document) -> None:
    from torchsmith.versions import version_tuple

    for row in data["cuda_max_gcc"]:
        if row["source"] not in data["sources"]:
            raise ValueError(f"unknown source {row['source']}")
    if not version_tuple(data["cmake_min"]["version"]):
        raise ValueError("cmake_min.version is not a version")
    arches = data.get("cpp_extension_arches")  # optional: an overlay may predate it
    if arches is not None and (arches.get("source") not in data["sources"] or not all(
            re.fullmatch(r"\d+\.\d[a-z]?", str(a)) for a in arches.get("arches") or [None])):
        raise ValueError("cpp_extension_arches: needs a known source and X.Y[a] arches")


def _signatures(data: Document) -> None:
    # The full check (patterns compile, placeholders known) is explain.catalog.parse_catalog's.
    if not isinstance(data.get("signatures"), list):
        raise ValueError("expected an object with a 'signatures' list")


_LONG_NUMBER = re.compile(r"\d{10,}")


def _package_meta(data: Document) -> None:
    """The published-metadata snapshot: each package with its page, date and releases."""
    for key in ("retrieved", "torch_newest", "index"):
        if not isinstance(data.get(key), str):
            raise ValueError(f"missing {key!r}")
    for number, package in enumerate(data["packages"]):
        for key in ("name", "source", "retrieved"):
            if not isinstance(package.get(key), str) or not package[key]:
                raise ValueError(f"package {number}: missing {key!r}")
        if any(not isinstance(r.get("version"), str) for r in package["releases"]):
            raise ValueError(f"package {package['name']}: a release without a version")
        # A release number of 10 digits or more is no version (and int() of thousands raises).
        if any(_LONG_NUMBER.search(r["version"]) for r in package["releases"]):
            raise ValueError(f"package {package['name']}: a release version with a 10-digit number")
    if _LONG_NUMBER.search(data["torch_newest"]):
        raise ValueError("torch_newest is not a version")


def _package_deps(data: Document) -> None:
    """The packages the snapshot's requirements lead to torch through (kb/depchain.py)."""
    for key in ("retrieved", "index"):
        if not isinstance(data.get(key), str):
            raise ValueError(f"missing {key!r}")
    for number, package in enumerate(data["packages"]):
        if not isinstance(package.get("name"), str) or not isinstance(package.get("releases"), list):
            raise ValueError(f"package {number}: missing 'name' or 'releases'")
        if any(not isinstance(r.get("version"), str) for r in package["releases"]):
            raise ValueError(f"package {package['name']}: a release without a version")


def _torch_requires(data: Document) -> None:
    """torch's own Requires-Dist per release (tools/torch_requires.py), and the top-level names
    its requirements install."""
    for key in ("retrieved", "source"):
        if not isinstance(data.get(key), str):
            raise ValueError(f"missing {key!r}")
    for number, release in enumerate(data.get("releases") or []):
        if not (isinstance(release.get("version"), str) and isinstance(release.get("requires"), list)
                and isinstance(release.get("extras"), list)):
            raise ValueError(f"release {number}: needs version, requires and extras")
    names = (data.get("import_names") or {}).get("names")
    if not data.get("releases") or not isinstance(names, dict):
        raise ValueError("needs releases and import_names.names")


# The vendors' enums beside cuda/hip/nccl (optional: a knowledge-base overlay may predate them).
ENUM_TABLES = ("cuda_driver", "nvml", "cublas", "cusparse", "cusolver", "cufft", "curand", "cudnn",
               "ze", "ur")


def _error_vocab(data: Document) -> None:
    """Vendor error enums (CUDA runtime and driver, HIP, NCCL, NVML, the CUDA libraries, Intel's Level
    Zero and Unified Runtime) and sonames:
    every row names known sources, and a source read as an enum's list of names (tools/
    error_vocab_refresh.py) has a row for each of them: a table is never short of what was read."""
    import re

    sources = data["sources"]
    for table in ("cuda", "hip", "nccl", "sonames", *ENUM_TABLES):
        rows = data.get(table, []) if table in ENUM_TABLES else data[table]  # optional: newer
        for number, row in enumerate(rows):
            if not row.get("source") or any(s not in sources for s in row["source"]):
                raise ValueError(f"{table} row {number}: missing or unknown source id")
            if table == "sonames":
                re.compile(row["regex"])
            elif not isinstance(row.get("code"), int) or not isinstance(row.get("name"), str):
                raise ValueError(f"{table} row {number}: needs an integer code and a name")
    for source_id, source in sources.items():
        listed = source.get("names") or []
        if listed:
            have = {row.get("name") for row in data.get(source["table"], [])}
            short = [name for name in listed if name not in have]
            if short:
                raise ValueError(f"{source['table']}: {len(short)} of the {len(listed)} names "
                                 f"{source_id} lists have no row (first: {short[0]})")
    for number, row in enumerate(data.get("xid", [])):  # optional: the driver's Xid codes that are faults
        if not row.get("source") or any(s not in sources for s in row["source"]):
            raise ValueError(f"xid row {number}: missing or unknown source id")
        if not isinstance(row.get("code"), int) or not row.get("meaning"):
            raise ValueError(f"xid row {number}: needs an integer code and a meaning")
    for table in ("conda_packages", "installer_messages", "installer_options", "source_built_modules"):
        for number, row in enumerate(data.get(table, [])):
            if not row.get("source") or any(s not in sources for s in row["source"]):
                raise ValueError(f"{table} row {number}: missing or unknown source id")
            if table == "installer_messages":
                re.compile(row["regex"])
            elif table == "source_built_modules":
                if not (row.get("module") and row.get("build")):
                    raise ValueError(f"{table} row {number}: needs the module and its build step")
            elif table == "installer_options":
                since = re.fullmatch(r"\d+(?:\.\d+)+", row.get("since", ""))
                if not (row.get("option") and row.get("commands") and since):
                    raise ValueError(f"{table} row {number}: needs option, commands and a since release")
            elif not row.get("packages") or not row.get("why"):
                raise ValueError(f"{table} row {number}: needs packages and why")


def _variant_labels(data: Document) -> None:
    """Recorded variants.json per release (labels -> namespace -> feature -> values) and the Intel
    provider's device table per family: every part cites known sources."""
    sources = data["sources"]
    for row in data["releases"]:
        ids = row.get("source") or [None]
        if not isinstance(row.get("torch"), str) or any(s not in sources for s in ids):
            raise ValueError("a release without torch or with an unknown source id")
        for label, props in row["variants"].items():
            if not isinstance(props, dict) or any(not isinstance(f, dict) for f in props.values()):
                raise ValueError(f"torch {row['torch']} label {label}: expected namespace -> feature "
                                 "-> values")
    families = data["intel_families"]
    if any(s not in sources for s in families["source"]):
        raise ValueError("intel_families: unknown source id")
    preview = data["uv_preview"]  # what uv's own preview was seen to do with such files
    if not preview.get("source") or any(s not in sources for s in preview["source"]):
        raise ValueError("uv_preview: missing or unknown source id")
    if not all(isinstance(r.get("field"), str) and r.get("says") for r in preview["rejects"]):
        raise ValueError("uv_preview: every rejected field needs a field path and what to say")
    if not (preview.get("nvidia_provider") or {}).get("version"):
        raise ValueError("uv_preview: nvidia_provider needs the name and version uv's own provider counts as")
    for row in families["rows"]:
        if not (row.get("label_ips") and row.get("devices")):
            raise ValueError(f"intel family {row.get('family')}: needs label_ips and devices")


def _build_imports_torch(data: Document) -> None:
    for row in data.get("build_imports_torch", ()):
        if not (isinstance(row.get("package"), str) and isinstance(row.get("upto"), str)
                and row.get("source") and all(s in data["sources"] for s in row["source"])):
            raise ValueError(f"build_imports_torch {row.get('package')}: needs package, upto and known "
                             "sources")


# name -> (file in kb/data or the overlay, what it is, its check)
DOCUMENTS: Mapping[str, Tuple[str, str, Callable[[Document], None]]] = {
    "companion_limits": ("companion_limits.json", "companion limits", _RowsWith(package=str)),
    "downstream": ("downstream.json", "downstream pins",
                   _RowsWith(package=str, version=str, then=_build_imports_torch)),
    "hsa_override": ("hsa_override.json", "HSA override table", _hsa_override),
    "manylinux": ("manylinux.json", "manylinux glibc table",
                  _RowsWith(platform=str, first=str, last=str, tag=str, min_glibc=str)),
    "xpu": ("xpu.json", "Intel XPU table", _RowsWith(family=str, patterns=list, first_torch=str)),
    "formats": ("formats.json", "installer format data", _formats),
    "containers": ("containers.json", "container image data", _containers),
    "buildreqs": ("buildreqs.json", "build requirements data", _buildreqs),
    "signatures": ("signatures.json", "failure signatures", _signatures),
    "package_meta": ("package_meta.json", "published package metadata", _package_meta),
    "torch_requires": ("torch_requires.json", "torch's own requirements", _torch_requires),
    "package_deps": ("package_deps.json", "packages requirements lead to torch through", _package_deps),
    "error_vocab": ("error_vocab.json", "error vocabularies (CUDA, HIP, NCCL, NVML, CUDA libraries, sonames)",
                    _error_vocab),
    "variant_labels": ("variant_labels.json", "wheel-variant labels and providers", _variant_labels),
    "wheel_pages": ("wheel_pages.json", "projects' own wheel pages", _RowsWith(id=str, url=str, lists=str)),
}


def _spec(name: str) -> Tuple[str, str, Callable[[Document], None]]:
    if name not in DOCUMENTS:
        raise KnowledgeBaseError(f"no data document {name!r}", code="usage",
                                 hint=f"one of: {', '.join(DOCUMENTS)}")
    return DOCUMENTS[name]


def document_path(name: str, packaged_dir: str, overlay: Optional[str]) -> str:
    """Where document ``name`` is read from: the overlay's file when it has one."""
    file_name = _spec(name)[0]
    if overlay is not None and os.path.isfile(os.path.join(overlay, file_name)):
        return os.path.join(overlay, file_name)
    return os.path.join(packaged_dir, file_name)


def _read(path: str, what: str, check: Callable[[Document], None]) -> Document:
    """One data file, checked; every failure is one line naming the file and the problem."""
    where = f"{what} {os.path.basename(path)}"
    try:
        data = parse_json_bytes(read_json_bytes(path))
    except OSError as exc:
        raise KnowledgeBaseError(f"{where}: cannot read ({exc.strerror or exc})",
                                 context=[f"file: {path}"], hint=_HINT) from exc
    except ValueError as exc:
        raise KnowledgeBaseError(f"{where}: not valid JSON ({exc})", context=[f"file: {path}"],
                                 hint=_HINT) from exc
    try:
        if not isinstance(data, dict):
            rows = " with a 'rows' list" if check is _sourced_rows or isinstance(check, _RowsWith) else ""
            raise ValueError(f"expected an object{rows}, got {type(data).__name__}")
        check(data)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise KnowledgeBaseError(f"{where} is unusable: {exc}", context=[f"file: {path}"],
                                 hint=_HINT) from exc
    return data


def read_document(name: str, packaged_dir: str, overlay: Optional[str]) -> Document:
    """Document ``name``: the overlay's file when it has one, else the packaged file; checked."""
    file_name, what, check = _spec(name)
    path = document_path(name, packaged_dir, overlay)
    if path == os.path.join(packaged_dir, file_name):
        return _read(path, what, check)
    try:
        return _read(path, what, check)
    except KnowledgeBaseError as exc:  # name the overlay: the packaged data is not at fault
        raise KnowledgeBaseError(f"{exc.message} (in the overlay {overlay})",
                                 context=exc.context, hint=f"fix or delete {path}") from exc
