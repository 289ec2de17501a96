"""Reading the data files of a directory into rows; merging an overlay over the packaged data.

Each data file is one JSON object whose list-valued keys are *sections* (tables) of rows, each
row read by its builder in :mod:`torchsmith.kb.rows`. ``manifest.json`` holds ``kb_version``,
``schema`` and the ``sources``.

An overlay directory holds any subset of the same files. Its rows replace packaged rows with
the same key (a whole row: a torch release with all its variants) or are added; its sources
are added to the manifest's.
"""

from __future__ import annotations

import os
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Generic,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
    cast,
)

import torchsmith.kb.model as m
import torchsmith.kb.rows as rb
import torchsmith.kb.rows_amd as amd
from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb.rows import is_version, normalize_gpu_name, version_key
from torchsmith.records import dataclass, replace

if TYPE_CHECKING:
    from packaging.version import Version

__all__ = ["DATA_FILES", "SCHEMA", "Dataset", "check_references", "is_version", "merge", "normalize_gpu_name",
           "read_dir", "rows_of", "version_key", "with_minor_compat"]

SCHEMA = 1
MANIFEST = "manifest.json"


# --- sections: how rows are keyed and ordered ----------------------------------------------


# The order of a section's rows: a version, or a number (a CUDA major, a driver branch).
_Ordered = Union["Version", int]
T = TypeVar("T", bound=m.Row)


def _v(text: str) -> Version:
    return version_key(text)


@dataclass(frozen=True)
class _Section(Generic[T]):
    build: Callable[[rb.RowReader, rb.Context], T]
    key: Callable[[T], Tuple[str, ...]]  # unique per row
    group: Callable[[T], Tuple[str, ...]]  # ordering applies within a group
    order: Optional[Callable[[T], _Ordered]]  # newest first = descending; None = any order


def _newest_first(build: Callable[[rb.RowReader, rb.Context], T], key: Callable[[T], Tuple[str, ...]],
                  order: Callable[[T], _Ordered],
                  group: Callable[[T], Tuple[str, ...]] = lambda _row: ()) -> _Section[T]:
    return _Section(build, key, group, order)


# file -> section -> how its rows are read, keyed and ordered. (The row type differs per section.)
DATA_FILES: Dict[str, Dict[str, _Section[Any]]] = {
    "torch_releases.json": {
        "releases": _newest_first(rb.release, lambda r: (r.version,), lambda r: _v(r.version)),
    },
    "cuda.json": {
        "toolkits": _newest_first(rb.toolkit, lambda r: (r.version,), lambda r: _v(r.version)),
        "minor_compat": _newest_first(rb.minor_compat, lambda r: (r.cuda_major,),
                                      lambda r: int(r.cuda_major)),
        "driver_branches": _newest_first(rb.driver_branch, lambda r: (r.branch,), lambda r: int(r.branch)),
        "arch_support": _newest_first(rb.arch_support, lambda r: (r.cuda,), lambda r: _v(r.cuda)),
    },
    "gpus.json": {
        "gpus": _newest_first(rb.gpu, lambda r: (normalize_gpu_name(r.name),),
                              lambda r: _v(r.compute_capability)),
    },
    "jetson.json": {
        "jetpacks": _newest_first(rb.jetpack, lambda r: (r.l4t,), lambda r: _v(r.l4t)),
    },
    "rocm.json": {
        "gfx_targets": _Section(amd.gfx_target, lambda r: (r.name,), lambda r: (), None),
        "therock_indexes": _Section(amd.therock_index, lambda r: (r.index_url,), lambda r: (), None),
    },
    "companions.json": {
        "paired_wheels": _newest_first(rb.paired, lambda r: (r.package, r.torch, r.variant),
                                       lambda r: _v(r.torch), lambda r: (r.package,)),
        "torch_requirements": _newest_first(rb.requirement, lambda r: (r.package, r.version),
                                            lambda r: _v(r.version), lambda r: (r.package,)),
    },
    "conda.json": {
        "channels": _Section(rb.channel, lambda r: (r.channel, r.package), lambda r: (), None),
        "builds": _newest_first(rb.conda_build, lambda r: (r.package, r.version), lambda r: _v(r.version),
                                lambda r: (r.package,)),
    },
    "frameworks.json": {
        "builds": _newest_first(rb.framework, lambda r: (r.framework, r.extra, r.version),
                                lambda r: _v(r.version), lambda r: (r.framework, r.extra)),
    },
    "wheel_audits.json": {
        "wheels": _newest_first(rb.wheel_audit, lambda r: (r.id,), lambda r: _v(r.torch)),
    },
}


# --- reading a directory --------------------------------------------------------------------


@dataclass
class Dataset:
    """Rows of every section read from one directory (packaged data or an overlay)."""

    path: str
    manifest: Dict[str, Any]
    sources: Dict[str, m.Source]
    sections: Dict[Tuple[str, str], List[m.Row]]  # (file, section) -> rows, in file order
    files: Tuple[str, ...]  # the data files present


def _label(file_name: str, section: str) -> str:
    return file_name if len(DATA_FILES[file_name]) == 1 else f"{file_name}#{section}"


def _load_json(path: str, file_name: str) -> Any:
    from torchsmith.errors import parse_json_bytes, read_json_bytes

    try:
        return parse_json_bytes(read_json_bytes(path))
    except OSError as exc:
        raise KnowledgeBaseError(f"{file_name}: cannot read {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise KnowledgeBaseError(f"{file_name}: not valid JSON ({exc})",
                                 context=[f"file: {path}"],
                                 hint="restore the file, or delete the overlay directory") from exc


def _read_manifest(path: str, required: bool) -> Tuple[Dict[str, Any], Dict[str, m.Source]]:
    full = os.path.join(path, MANIFEST)
    if not os.path.exists(full):
        if required:
            raise KnowledgeBaseError(f"{MANIFEST}: missing in {path}")
        return {}, {}
    data = _load_json(full, MANIFEST)
    if not isinstance(data, dict):
        raise KnowledgeBaseError(f"{MANIFEST}: expected an object")
    if "schema" in data and data["schema"] != SCHEMA:
        raise KnowledgeBaseError(f"{MANIFEST} field schema: {data['schema']!r} is not supported "
                                 f"(this torchsmith reads schema {SCHEMA})",
                                 hint="upgrade torchsmith, or run `torchsmith kb refresh` again")
    if required:
        for key in ("kb_version", "schema", "sources"):
            if key not in data:
                raise KnowledgeBaseError(f"{MANIFEST} field {key}: missing")
    if "kb_version" in data and not isinstance(data["kb_version"], str):
        raise KnowledgeBaseError(f"{MANIFEST} field kb_version: expected a string")
    raw = data.get("sources", {})
    if not isinstance(raw, dict):
        raise KnowledgeBaseError(f"{MANIFEST} field sources: expected an object keyed by source id")
    sources: Dict[str, m.Source] = {}
    for number, (key, value) in enumerate(raw.items(), 1):
        row = rb.RowReader(f"{MANIFEST}#sources", number, value, f"{key}.")
        sources[key] = m.Source(id=key, url=row.text("url"), title=row.text("title"),
                                retrieved=row.text("retrieved", rb.DATE), note=row.opt_text("note") or "")
    return data, sources


def read_dir(path: str, *, packaged: bool, index_base: str = "") -> Dataset:
    """Read and check every data file in ``path`` (rows typed, unique, newest first)."""
    manifest, sources = _read_manifest(path, required=packaged)
    base = str(manifest.get("torch_index_base") or index_base)
    if packaged and not base:
        raise KnowledgeBaseError(f"{MANIFEST} field torch_index_base: missing")
    ctx = rb.Context(index_base=base)
    sections: Dict[Tuple[str, str], List[m.Row]] = {}
    present: List[str] = []
    for file_name, specs in DATA_FILES.items():
        full = os.path.join(path, file_name)
        if not os.path.exists(full):
            if packaged:
                raise KnowledgeBaseError(f"{file_name}: missing in {path}")
            continue
        present.append(file_name)
        data = _load_json(full, file_name)
        if not isinstance(data, dict):
            raise KnowledgeBaseError(f"{file_name}: expected an object with {', '.join(specs)}")
        for key in data:
            if key not in specs and isinstance(data[key], list):
                raise KnowledgeBaseError(f"{file_name}: unknown table {key!r} (known: {', '.join(specs)})")
        for section, spec in specs.items():
            raw = data.get(section, [])
            label = _label(file_name, section)
            if not isinstance(raw, list):
                raise KnowledgeBaseError(f"{label}: expected a list of rows")
            sections[(file_name, section)] = _build_rows(label, raw, spec, ctx)
    audits = sections.get(("wheel_audits.json", "wheels"), [])
    sources.update(rb.audit_sources([row for row in audits if isinstance(row, m.WheelAudit)]))
    return Dataset(path=path, manifest=manifest, sources=sources, sections=sections, files=tuple(present))


def _build_rows(label: str, raw: Sequence[object], spec: _Section[T], ctx: rb.Context) -> List[m.Row]:
    rows: List[m.Row] = []
    seen: Dict[Tuple[str, ...], int] = {}
    last: Dict[Tuple[str, ...], _Ordered] = {}
    for number, item in enumerate(raw, 1):
        reader = rb.RowReader(label, number, item)
        row = spec.build(reader, ctx)
        key = spec.key(row)
        if key in seen:
            raise reader.error("", f"duplicate of row {seen[key]} ({' '.join(key)})")
        seen[key] = number
        if spec.order is not None:
            group = spec.group(row)
            try:
                value = spec.order(row)
            except ValueError as exc:  # the field that orders the rows is no version
                raise reader.error("", str(exc)) from None
            if group in last and _after(value, last[group]):
                raise reader.error("", f"out of order: {' '.join(key)} must come before the rows "
                                       "older than it (rows are newest first)")
            last[group] = value
        rows.append(row)
    return rows


def _after(value: _Ordered, previous: _Ordered) -> bool:
    return bool(value > previous)  # type: ignore[operator]  # one section holds one kind


def merge(base: Dataset, overlay: Dataset) -> Dataset:
    """``overlay`` rows replace ``base`` rows with the same key; new rows are added in order."""
    sections: Dict[Tuple[str, str], List[m.Row]] = {}
    for (file_name, section), rows in base.sections.items():
        spec = DATA_FILES[file_name][section]
        extra = overlay.sections.get((file_name, section), [])
        if not extra:
            sections[(file_name, section)] = rows
            continue
        replaced = {spec.key(row): row for row in extra}
        merged = [replaced.pop(spec.key(row), row) for row in rows] + list(replaced.values())
        if spec.order is not None:
            order = spec.order
            groups: Dict[Tuple[str, ...], int] = {}
            for row in merged:
                groups.setdefault(spec.group(row), len(groups))
            merged.sort(key=order, reverse=True)
            merged.sort(key=lambda row: groups[spec.group(row)])
        sections[(file_name, section)] = merged
    manifest = dict(base.manifest)
    manifest.update({k: v for k, v in overlay.manifest.items() if k != "sources"})
    sources = dict(base.sources)
    sources.update(overlay.sources)
    return Dataset(path=overlay.path, manifest=manifest, sources=sources, sections=sections,
                   files=overlay.files)


def check_references(data: Dataset) -> None:
    """Cross-table checks: sources exist, CUDA variants have a toolkit row, companions' torch exists."""
    known = data.sources
    for (file_name, section), rows in data.sections.items():
        label = _label(file_name, section)
        for number, row in enumerate(rows, 1):
            for ref in _all_sources(row):
                if ref not in known:
                    raise KnowledgeBaseError(f"{label} row {number} field source: unknown source id {ref!r} "
                                             f"(not in {MANIFEST})", context=[f"in: {data.path}"])
    toolkits = {row.version for row in rows_of(data, m.CudaRelease)}
    releases = rows_of(data, m.TorchRelease)
    versions = {row.version for row in releases}
    for number, release in enumerate(releases, 1):
        for variant in release.variants:
            if variant.cuda and variant.cuda not in toolkits:
                raise KnowledgeBaseError(
                    f"torch_releases.json row {number} field variants.{variant.name}.cuda: CUDA "
                    f"{variant.cuda} has no row in cuda.json#toolkits")
    for number, paired in enumerate(rows_of(data, m.PairedWheels), 1):
        if not any(v == paired.torch or v.startswith(paired.torch + ".") for v in versions):
            raise KnowledgeBaseError(f"companions.json#paired_wheels row {number} field torch: "
                                     f"no torch release {paired.torch} in torch_releases.json")
    for number, req in enumerate(rows_of(data, m.TorchRequirement), 1):
        if req.torch.startswith("==") and req.torch[2:] not in versions:
            raise KnowledgeBaseError(f"companions.json#torch_requirements row {number} field torch: "
                                     f"no torch release {req.torch[2:]} in torch_releases.json")


def _all_sources(row: m.Row) -> Tuple[str, ...]:
    refs = tuple(row.sources)
    children: Sequence[Union[m.VariantBuild, m.JetsonWheel]] = ()
    if isinstance(row, m.TorchRelease):
        children = row.variants
    elif isinstance(row, m.JetPack):
        children = row.wheels
    for child in children:
        refs += tuple(child.sources)
    return refs


def rows_of(data: Dataset, kind: Type[T]) -> List[T]:
    """The rows of the one section holding ``kind`` (``m.CudaRelease`` -> cuda.json#toolkits)."""
    return cast(List[T], data.sections[m.SECTION_OF[kind]])


def with_minor_compat(data: Dataset) -> None:
    """Each toolkit's minor-version-compatibility floors, from its CUDA major's row of
    cuda.json#minor_compat: the one place that fact is kept."""
    floors = {row.cuda_major: row for row in rows_of(data, m.MinorCompat)}
    toolkits: List[m.Row] = []
    for row in rows_of(data, m.CudaRelease):
        floor = floors.get(row.version.split(".")[0])
        toolkits.append(replace(
            row, minor_compat_min_driver_linux=floor.min_driver_linux if floor else None,
            minor_compat_min_driver_windows=floor.min_driver_windows if floor else None))
    data.sections[m.SECTION_OF[m.CudaRelease]] = toolkits


def dump_rows(rows: Sequence[m.Row]) -> List[Mapping[str, Any]]:
    """Rows as plain JSON-able dicts (for `kb show --json`)."""
    from torchsmith.machine import to_plain

    return [to_plain(row) for row in rows]
