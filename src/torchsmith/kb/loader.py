"""Reading and validating the data files into rows; merging an overlay over the packaged data.

Each data file is one JSON object whose list-valued keys are *sections* (tables) of rows.
``manifest.json`` holds ``kb_version``, ``schema`` and the ``sources``. A row that is wrong
raises :class:`~torchsmith.errors.KnowledgeBaseError` whose message names the file, the
1-based row number and the field: ``cuda.json#toolkits row 3 field min_driver_linux: ...``.

An overlay directory holds any subset of the same files. Its rows replace packaged rows with
the same key (a whole row: a torch release with all its variants) or are added; its sources
are added to the manifest's.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb import model as m

__all__ = ["DATA_FILES", "SCHEMA", "Dataset", "is_version", "read_dir", "version_key"]

SCHEMA = 1
MANIFEST = "manifest.json"

_KINDS = ("cuda", "rocm", "cpu", "xpu")
_PYTHON_TAG = re.compile(r"^[23]\.\d+t?$")
# A wheel file name without a path, safe in a shell command
_WHEEL_FILE = re.compile(r"^[A-Za-z0-9_]+-[A-Za-z0-9_.+!]+-[a-z0-9_.]+-[a-z0-9_.]+-[a-z0-9_.]+\.whl$")
_ARCH = re.compile(r"^sm_\d+[af]?$")
_PTX = re.compile(r"^compute_\d+[af]?$")  # PTX rows name the virtual architecture

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_GFX = re.compile(r"^gfx[0-9a-f]+$")
_DRIVER = re.compile(r"^\d+(\.\d+){0,2}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DIGITS = re.compile(r"^\d+$")
_CC = re.compile(r"^\d+\.\d$")
_PCI = re.compile(r"^10de:[0-9a-f]{4}$")
# PEP 440 versions as they appear in the data (packaging is not imported: loading must be fast).
# At most 9 digits a number: longer is no version, and int() of thousands of digits raises.
_VERSION = re.compile(r"^v?(\d{1,9}(?:\.\d{1,9})*)(?:[-_.]?(a|b|rc|alpha|beta|c)[-_.]?(\d{0,9}))?"
                      r"(?:[-_.]?(?:post|rev|r)[-_.]?(\d{0,9}))?(?:[-_.]?dev[-_.]?(\d{0,9}))?"
                      r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$", re.IGNORECASE)
_SPEC = re.compile(r"^\s*(?:===|==|!=|<=|>=|~=|<|>)\s*[0-9][0-9a-zA-Z.*+!_-]*\s*"
                   r"(?:,\s*(?:===|==|!=|<=|>=|~=|<|>)\s*[0-9][0-9a-zA-Z.*+!_-]*\s*)*$")
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}


def version_key(text: str) -> Tuple[Any, ...]:
    """An ordering key for a PEP 440 version: release, pre-release, post-release (dev ignored)."""
    match = _VERSION.match(text.strip())
    if match is None:
        raise ValueError(f"not a version: {text!r}")
    release = [int(p) for p in match.group(1).split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    if match.group(2):
        pre: Tuple[int, ...] = (0, _PRE_RANK[match.group(2).lower()], int(match.group(3) or 0))
    else:
        pre = (1,)
    post = -1 if match.group(4) is None else int(match.group(4) or 0)
    return (tuple(release), pre, post)


def is_version(text: str) -> bool:
    return _VERSION.match(text.strip()) is not None


class _Row:
    """Typed access to one JSON row; every failure names file, row and field."""

    def __init__(self, where: str, number: int, data: Any, prefix: str = "") -> None:
        self.where = where
        self.number = number
        self.prefix = prefix
        if not isinstance(data, dict):
            raise self.error("", f"expected an object, got {type(data).__name__}")
        self.data: Dict[str, Any] = data

    def error(self, name: str, problem: str) -> KnowledgeBaseError:
        field_text = f" field {self.prefix}{name}" if name or self.prefix else ""
        return KnowledgeBaseError(f"{self.where} row {self.number}{field_text}: {problem}",
                                  hint="fix or remove the file; `torchsmith kb validate` re-checks it")

    def _get(self, name: str, required: bool) -> Any:
        if name not in self.data or self.data[name] is None:
            if required:
                raise self.error(name, "missing")
            return None
        return self.data[name]

    def text(self, name: str, pattern: Optional[re.Pattern[str]] = None) -> str:
        value = self._get(name, True)
        return self._check_text(name, value, pattern)

    def opt_text(self, name: str, pattern: Optional[re.Pattern[str]] = None) -> Optional[str]:
        value = self._get(name, False)
        return None if value is None else self._check_text(name, value, pattern)

    def _check_text(self, name: str, value: Any, pattern: Optional[re.Pattern[str]]) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(name, f"expected a non-empty string, got {json.dumps(value)}")
        if pattern is not None and not pattern.match(value):
            raise self.error(name, f"{value!r} is not of the form {pattern.pattern}")
        return value

    def version(self, name: str) -> str:
        value = self.text(name)
        if not is_version(value):
            raise self.error(name, f"{value!r} is not a version")
        return value

    def opt_version(self, name: str) -> Optional[str]:
        return None if self._get(name, False) is None else self.version(name)

    def flag(self, name: str) -> bool:
        value = self._get(name, False)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.error(name, f"expected true or false, got {json.dumps(value)}")
        return value

    def texts(self, name: str, pattern: Optional[re.Pattern[str]] = None,
              required: bool = False) -> Tuple[str, ...]:
        value = self._get(name, required)
        if value is None:
            return ()
        return self._check_texts(name, value, pattern)

    def _check_texts(self, name: str, value: Any, pattern: Optional[re.Pattern[str]]) -> Tuple[str, ...]:
        if not isinstance(value, list):
            raise self.error(name, f"expected a list of strings, got {type(value).__name__}")
        for item in value:
            self._check_text(name, item, pattern)
        if len(set(value)) != len(value):
            raise self.error(name, "has a duplicate entry")
        return tuple(value)

    def platform_map(self, name: str, pattern: Optional[re.Pattern[str]] = None,
                     required: bool = False) -> Dict[str, Tuple[str, ...]]:
        value = self._get(name, required)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(name, "expected an object keyed by platform")
        out: Dict[str, Tuple[str, ...]] = {}
        for key, items in value.items():
            self._platform(f"{name}.{key}", key)
            out[key] = self._check_texts(f"{name}.{key}", items, pattern)
        return out

    def platform_text_map(self, name: str) -> Dict[str, str]:
        value = self._get(name, False)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(name, "expected an object keyed by platform")
        for key, item in value.items():
            self._platform(f"{name}.{key}", key)
            self._check_text(f"{name}.{key}", item, None)
        return dict(value)

    def _platform(self, name: str, key: str) -> None:
        if key not in m.WHEEL_PLATFORMS:
            raise self.error(name, f"unknown platform {key!r} (one of {', '.join(m.WHEEL_PLATFORMS)})")

    def platforms(self, name: str) -> Tuple[str, ...]:
        values = self.texts(name, required=True)
        for value in values:
            self._platform(name, value)
        return values

    def sources(self) -> Tuple[str, ...]:
        value = self._get("source", True)
        if isinstance(value, str):
            value = [value]
        ids = self._check_texts("source", value, None)
        if not ids:
            raise self.error("source", "names no source")
        return ids

    def rows(self, name: str) -> List[_Row]:
        value = self._get(name, False)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(name, "expected a list")
        return [_Row(self.where, self.number, item, f"{self.prefix}{name}[{i}].")
                for i, item in enumerate(value)]


# --- one builder per section --------------------------------------------------------------


def _variant(row: _Row, index_base: str) -> m.VariantBuild:
    name = row.text("name")
    kind = row.text("kind")
    if kind not in _KINDS:
        raise row.error("kind", f"{kind!r} is not one of {', '.join(_KINDS)}")
    cuda = row.opt_version("cuda")
    rocm = row.opt_version("rocm")
    if kind == "cuda" and cuda is None:
        raise row.error("cuda", "missing (a cuda variant names its CUDA version)")
    if kind == "rocm" and rocm is None:
        raise row.error("rocm", "missing (a rocm variant names its ROCm version)")
    platforms = row.platforms("platforms")
    sass = row.platform_map("sass", _ARCH)
    ptx = row.platform_map("ptx", _PTX)
    for key in list(sass) + list(ptx):
        if key not in platforms:
            raise row.error("sass", f"arch list for {key}, which is not in platforms")
    return m.VariantBuild(
        name=name, kind=kind, cuda=cuda, rocm=rocm, platforms=platforms,
        index_url=row.opt_text("index_url") or f"{index_base.rstrip('/')}/{name}",
        sass_by_platform=sass, ptx_by_platform=ptx, gfx=row.texts("gfx", _GFX),
        sources=row.sources(), uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
    )


def _release(row: _Row, ctx: _Context) -> m.TorchRelease:
    version = row.version("version")
    variants = tuple(_variant(sub, ctx.index_base) for sub in row.rows("variants"))
    names = [v.name for v in variants]
    for name in names:
        if names.count(name) > 1:
            raise row.error("variants", f"variant {name!r} listed twice")
    default = row.platform_text_map("pypi_default")
    for platform, name in default.items():
        if name not in names:
            raise row.error(f"pypi_default.{platform}",
                            f"names {name!r}, which is not a variant of {version}")
    notes = row.texts("notes")
    return m.TorchRelease(
        version=version, released=row.opt_text("released", _DATE),
        python=row.platform_map("python", _PYTHON_TAG), variants=variants, pypi_default=default,
        torchvision=row.opt_version("torchvision"), torchaudio=row.opt_version("torchaudio"),
        sources=row.sources(), uncertain=row.flag("uncertain"), notes=notes,
    )


def _toolkit(row: _Row, _ctx: _Context) -> m.CudaRelease:
    updates = []
    for sub in row.rows("updates"):
        updates.append((sub.text("label"), sub.opt_text("linux", _DRIVER) or "",
                        sub.opt_text("windows", _DRIVER) or ""))
    return m.CudaRelease(
        version=row.version("version"),
        min_driver_linux=row.opt_text("min_driver_linux", _DRIVER),
        min_driver_windows=row.opt_text("min_driver_windows", _DRIVER),
        minor_compat_min_driver_linux=row.opt_text("minor_compat_min_driver_linux", _DRIVER),
        minor_compat_min_driver_windows=row.opt_text("minor_compat_min_driver_windows", _DRIVER),
        sources=row.sources(), uncertain=row.flag("uncertain"), updates=tuple(updates),
        note=row.opt_text("note") or "",
    )


def _minor_compat(row: _Row, _ctx: _Context) -> m.MinorCompat:
    return m.MinorCompat(
        cuda_major=row.text("cuda_major", _DIGITS),
        min_driver_linux=row.text("min_driver_linux", _DRIVER),
        min_driver_windows=row.text("min_driver_windows", _DRIVER),
        below_driver_branch=row.opt_text("below_driver_branch", _DRIVER),
        limits=row.text("limits"), sources=row.sources(), uncertain=row.flag("uncertain"),
    )


def _driver_branch(row: _Row, _ctx: _Context) -> m.DriverBranch:
    return m.DriverBranch(
        branch=row.text("branch", _DIGITS),
        min_version_linux=row.text("min_version_linux", _DRIVER),
        max_cuda=row.version("max_cuda"), sources=row.sources(), uncertain=row.flag("uncertain"),
    )


def _arch_support(row: _Row, _ctx: _Context) -> m.ArchSupport:
    return m.ArchSupport(
        cuda=row.version("cuda"), min_arch=row.text("min_arch", _ARCH), max_arch=row.text("max_arch", _ARCH),
        archs=row.texts("archs", _ARCH), deprecated=row.texts("deprecated", _ARCH),
        sources=row.sources(), uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
    )


def _gpu(row: _Row, _ctx: _Context) -> m.GpuModel:
    return m.GpuModel(
        name=row.text("name"), compute_capability=row.text("compute_capability", _CC),
        family=row.text("family"), pci_ids=row.texts("pci_ids", _PCI),
        sources=row.sources(), uncertain=row.flag("uncertain"), jetson=row.flag("jetson"),
    )


def _jetpack(row: _Row, _ctx: _Context) -> m.JetPack:
    wheels = []
    for sub in row.rows("wheels"):
        wheels.append(m.JetsonWheel(
            torch=sub.version("torch"), python=sub.text("python", _PYTHON_TAG), url=sub.text("url"),
            torchvision=sub.opt_text("torchvision"), sources=sub.sources(), uncertain=sub.flag("uncertain"),
            filename=sub.opt_text("filename", _WHEEL_FILE),
        ))
    return m.JetPack(
        jetpack=row.text("jetpack"), l4t=row.version("l4t"), cuda=row.version("cuda"),
        cudnn=row.opt_text("cudnn"), python=row.text("python", _PYTHON_TAG), ubuntu=row.text("ubuntu"),
        wheels=tuple(wheels), index_url=row.opt_text("index_url"),
        prerequisites=row.texts("prerequisites"), sources=row.sources(),
        uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
    )


def _gfx_target(row: _Row, _ctx: _Context) -> m.GfxTarget:
    return m.GfxTarget(
        name=row.text("name"), gfx=row.text("gfx", _GFX), family=row.text("family"),
        in_wheels=row.flag("in_wheels"), hsa_override=row.opt_text("hsa_override", _DRIVER),
        sources=row.sources(), uncertain=row.flag("uncertain"),
    )


def _paired(row: _Row, _ctx: _Context) -> m.PairedWheels:
    return m.PairedWheels(
        package=row.text("package"), torch=row.version("torch"), variant=row.text("variant"),
        find_links=row.text("find_links"), versions=row.texts("versions"),
        sources=row.sources(), uncertain=row.flag("uncertain"), packages=row.texts("packages"),
    )


def _requirement(row: _Row, _ctx: _Context) -> m.TorchRequirement:
    spec = row.text("torch")
    if not _SPEC.match(spec):
        raise row.error("torch", f"{spec!r} is not a version specifier")
    return m.TorchRequirement(
        package=row.text("package"), version=row.version("version"), torch=spec,
        variants=row.texts("variants"), sources=row.sources(), uncertain=row.flag("uncertain"),
        note=row.opt_text("note") or "",
    )


def _channel(row: _Row, _ctx: _Context) -> m.CondaChannel:
    return m.CondaChannel(
        channel=row.text("channel"), package=row.text("package"),
        last_version=row.opt_version("last_version"),
        note=row.text("note"), sources=row.sources(), uncertain=row.flag("uncertain"),
    )


def _conda_build(row: _Row, _ctx: _Context) -> m.CondaBuild:
    return m.CondaBuild(
        package=row.text("package"), version=row.version("version"), cuda_versions=row.texts("cuda_versions"),
        platforms=row.platforms("platforms"), sources=row.sources(), uncertain=row.flag("uncertain"),
        note=row.opt_text("note") or "", releases=row.texts("releases"),
        platform_cuda=row.texts("platform_cuda"),
    )


def _framework(row: _Row, _ctx: _Context) -> m.FrameworkBuild:
    return m.FrameworkBuild(
        framework=row.text("framework"), version=row.version("version"), extra=row.opt_text("extra") or "",
        cuda=row.opt_version("cuda"), cudnn=row.opt_text("cudnn"), python=row.texts("python", _PYTHON_TAG),
        min_driver_linux=row.opt_text("min_driver_linux", _DRIVER), platforms=row.platforms("platforms"),
        sources=row.sources(), uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
    )


def _wheel_library(row: _Row) -> m.WheelLibrary:
    count = row.data.get("containers")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise row.error("containers", f"expected a positive number, got {json.dumps(count)}")
    counts = row.data.get("counts") or {}
    if not isinstance(counts, dict) or not all(
            isinstance(k, str) and (_ARCH.match(k) or _PTX.match(k)) and isinstance(v, int) and 0 < v <= count
            for k, v in counts.items()):
        raise row.error("counts", "expected an object of target -> number of containers (1 to containers)")
    return m.WheelLibrary(member=row.text("member"), containers=int(count),
                          sass=row.texts("sass", _ARCH), ptx=row.texts("ptx", _PTX),
                          sass_few=row.texts("sass_few", _ARCH), ptx_few=row.texts("ptx_few", _PTX),
                          counts=dict(counts))


def _wheel_audit(row: _Row, _ctx: _Context) -> m.WheelAudit:
    platform = row.text("platform")
    row._platform("platform", platform)
    return m.WheelAudit(
        id=row.text("id"), file=row.text("file"), sha256=row.text("sha256", _SHA256),
        retrieved=row.text("retrieved", _DATE), torch=row.version("torch"), platform=platform,
        variant=row.text("variant"), python_tags=row.texts("python_tags"),
        platform_tags=row.texts("platform_tags"),
        libraries=tuple(_wheel_library(sub) for sub in row.rows("libraries")),
        sources=row.sources(), uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
    )


def _audit_sources(rows: Sequence[m.WheelAudit]) -> Dict[str, m.Source]:
    """Each audited wheel as a source the release rows cite by its id."""
    return {row.id: m.Source(id=row.id, url=f"https://pypi.org/project/torch/{row.torch}/#files",
                             title=row.title(), retrieved=row.retrieved, note=row.note)
            for row in rows}


# --- sections: how rows are keyed and ordered ----------------------------------------------


def _v(text: str) -> Tuple[Any, ...]:
    return version_key(text)


@dataclass(frozen=True)
class _Section:
    build: Callable[[_Row, Any], Any]
    key: Callable[[Any], Tuple[str, ...]]  # unique per row
    group: Callable[[Any], Tuple[str, ...]]  # ordering applies within a group
    order: Optional[Callable[[Any], Any]]  # newest first = descending; None = any order


DATA_FILES: Dict[str, Dict[str, _Section]] = {
    "torch_releases.json": {
        "releases": _Section(_release, lambda r: (r.version,), lambda r: (), lambda r: _v(r.version)),
    },
    "cuda.json": {
        "toolkits": _Section(_toolkit, lambda r: (r.version,), lambda r: (), lambda r: _v(r.version)),
        "minor_compat": _Section(_minor_compat, lambda r: (r.cuda_major,), lambda r: (),
                                 lambda r: int(r.cuda_major)),
        "driver_branches": _Section(_driver_branch, lambda r: (r.branch,), lambda r: (),
                                    lambda r: int(r.branch)),
        "arch_support": _Section(_arch_support, lambda r: (r.cuda,), lambda r: (), lambda r: _v(r.cuda)),
    },
    "gpus.json": {
        "gpus": _Section(_gpu, lambda r: (normalize_gpu_name(r.name),), lambda r: (),
                         lambda r: _v(r.compute_capability)),
    },
    "jetson.json": {
        "jetpacks": _Section(_jetpack, lambda r: (r.l4t,), lambda r: (), lambda r: _v(r.l4t)),
    },
    "rocm.json": {
        "gfx_targets": _Section(_gfx_target, lambda r: (r.name,), lambda r: (), None),
    },
    "companions.json": {
        "paired_wheels": _Section(_paired, lambda r: (r.package, r.torch, r.variant), lambda r: (r.package,),
                                  lambda r: _v(r.torch)),
        "torch_requirements": _Section(_requirement, lambda r: (r.package, r.version), lambda r: (r.package,),
                                       lambda r: _v(r.version)),
    },
    "conda.json": {
        "channels": _Section(_channel, lambda r: (r.channel, r.package), lambda r: (), None),
        "builds": _Section(_conda_build, lambda r: (r.package, r.version), lambda r: (r.package,),
                           lambda r: _v(r.version)),
    },
    "frameworks.json": {
        "builds": _Section(_framework, lambda r: (r.framework, r.extra, r.version),
                           lambda r: (r.framework, r.extra), lambda r: _v(r.version)),
    },
    "wheel_audits.json": {
        "wheels": _Section(_wheel_audit, lambda r: (r.id,), lambda r: (), lambda r: _v(r.torch)),
    },
}


def normalize_gpu_name(name: str) -> str:
    """``NVIDIA GeForce RTX 4090`` -> ``rtx 4090``: case, vendor and brand prefixes do not matter."""
    words = re.sub(r"[\s_]+", " ", name.strip().lower()).split(" ")
    while words and words[0] in ("nvidia", "geforce", "tesla"):
        words = words[1:]
    return " ".join(words)


# --- reading a directory --------------------------------------------------------------------


@dataclass
class _Context:
    index_base: str


@dataclass
class Dataset:
    """Rows of every section read from one directory (packaged data or an overlay)."""

    path: str
    manifest: Dict[str, Any]
    sources: Dict[str, m.Source]
    sections: Dict[Tuple[str, str], List[Any]]  # (file, section) -> rows, in file order
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
        row = _Row(f"{MANIFEST}#sources", number, value, f"{key}.")
        sources[key] = m.Source(id=key, url=row.text("url"), title=row.text("title"),
                                retrieved=row.text("retrieved", _DATE), note=row.opt_text("note") or "")
    return data, sources


def read_dir(path: str, *, packaged: bool, index_base: str = "") -> Dataset:
    """Read and check every data file in ``path`` (rows typed, unique, newest first)."""
    manifest, sources = _read_manifest(path, required=packaged)
    base = str(manifest.get("torch_index_base") or index_base)
    if packaged and not base:
        raise KnowledgeBaseError(f"{MANIFEST} field torch_index_base: missing")
    ctx = _Context(index_base=base)
    sections: Dict[Tuple[str, str], List[Any]] = {}
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
    sources.update(_audit_sources(sections.get(("wheel_audits.json", "wheels"), [])))
    return Dataset(path=path, manifest=manifest, sources=sources, sections=sections, files=tuple(present))


def _build_rows(label: str, raw: Sequence[Any], spec: _Section, ctx: _Context) -> List[Any]:
    rows: List[Any] = []
    seen: Dict[Tuple[str, ...], int] = {}
    last: Dict[Tuple[str, ...], Any] = {}
    for number, item in enumerate(raw, 1):
        reader = _Row(label, number, item)
        row = spec.build(reader, ctx)
        key = spec.key(row)
        if key in seen:
            raise reader.error("", f"duplicate of row {seen[key]} ({' '.join(key)})")
        seen[key] = number
        if spec.order is not None:
            group = spec.group(row)
            value = spec.order(row)
            if group in last and value > last[group]:
                raise reader.error("", f"out of order: {' '.join(key)} must come before the rows "
                                       "older than it (rows are newest first)")
            last[group] = value
        rows.append(row)
    return rows


def merge(base: Dataset, overlay: Dataset) -> Dataset:
    """``overlay`` rows replace ``base`` rows with the same key; new rows are added in order."""
    sections: Dict[Tuple[str, str], List[Any]] = {}
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
    toolkits = {row.version for row in data.sections[("cuda.json", "toolkits")]}
    releases = data.sections[("torch_releases.json", "releases")]
    versions = {row.version for row in releases}
    for number, release in enumerate(releases, 1):
        for variant in release.variants:
            if variant.cuda and variant.cuda not in toolkits:
                raise KnowledgeBaseError(
                    f"torch_releases.json row {number} field variants.{variant.name}.cuda: CUDA "
                    f"{variant.cuda} has no row in cuda.json#toolkits")
    for number, paired in enumerate(data.sections[("companions.json", "paired_wheels")], 1):
        if not any(v == paired.torch or v.startswith(paired.torch + ".") for v in versions):
            raise KnowledgeBaseError(f"companions.json#paired_wheels row {number} field torch: "
                                     f"no torch release {paired.torch} in torch_releases.json")
    for number, req in enumerate(data.sections[("companions.json", "torch_requirements")], 1):
        if req.torch.startswith("==") and req.torch[2:] not in versions:
            raise KnowledgeBaseError(f"companions.json#torch_requirements row {number} field torch: "
                                     f"no torch release {req.torch[2:]} in torch_releases.json")


def _all_sources(row: Any) -> Tuple[str, ...]:
    refs = tuple(row.sources)
    children: Tuple[Any, ...] = ()
    if isinstance(row, m.TorchRelease):
        children = row.variants
    elif isinstance(row, m.JetPack):
        children = row.wheels
    for child in children:
        refs += tuple(child.sources)
    return refs


def dump_rows(rows: Sequence[Any]) -> List[Mapping[str, Any]]:
    """Rows as plain JSON-able dicts (for `kb show --json`)."""
    from torchsmith.machine import to_plain

    return [to_plain(row) for row in rows]
