"""One data row read and checked: the typed reader and one builder per table.

A row that is wrong raises :class:`~torchsmith.errors.KnowledgeBaseError` whose message names
the file, the 1-based row number and the field: ``cuda.json#toolkits row 3 field
min_driver_linux: ...``. Versions are ordered by ``packaging.version.Version`` (PEP 440).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import torchsmith.kb.model as m
from torchsmith.errors import KnowledgeBaseError
from torchsmith.records import dataclass

if TYPE_CHECKING:
    from packaging.version import Version

__all__ = [
    "DATE",
    "GFX_PATTERN",
    "Context",
    "RowReader",
    "arch_support",
    "audit_sources",
    "channel",
    "conda_build",
    "driver_branch",
    "framework",
    "gpu",
    "is_version",
    "jetpack",
    "minor_compat",
    "normalize_gpu_name",
    "paired",
    "release",
    "requirement",
    "toolkit",
    "version_key",
    "wheel_audit",
]

_KINDS = ("cuda", "rocm", "cpu", "xpu")
_PYTHON_TAG = re.compile(r"^[23]\.\d+t?$")
# A wheel file name without a path, safe in a shell command
_WHEEL_FILE = re.compile(r"^[A-Za-z0-9_]+-[A-Za-z0-9_.+!]+-[a-z0-9_.]+-[a-z0-9_.]+-[a-z0-9_.]+\.whl$")
_ARCH = re.compile(r"^sm_\d+[af]?$")
_PTX = re.compile(r"^compute_\d+[af]?$")  # PTX rows name the virtual architecture

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
GFX_PATTERN = re.compile(r"^gfx[0-9a-f]+$")
_DRIVER = re.compile(r"^\d+(\.\d+){0,2}$")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DIGITS = re.compile(r"^\d+$")
_CC = re.compile(r"^\d+\.\d$")
_PCI = re.compile(r"^10de:[0-9a-f]{4}$")
# PEP 440 versions as they appear in the data (packaging is not imported: loading must be fast).
# At most 9 digits a number: longer is no version, and int() of thousands of digits raises.
_SPEC = re.compile(r"^\s*(?:===|==|!=|<=|>=|~=|<|>)\s*[0-9][0-9a-zA-Z.*+!_-]*\s*"
                   r"(?:,\s*(?:===|==|!=|<=|>=|~=|<|>)\s*[0-9][0-9a-zA-Z.*+!_-]*\s*)*$")
# No release number has 10 digits: a longer run is garbage (and int() of thousands of digits raises).
_LONG_NUMBER = re.compile(r"\d{10,}")


@lru_cache(maxsize=8192)
def version_key(text: str) -> Version:
    """The PEP 440 ordering of a version in the data (``packaging.version.Version``).

    Raises ValueError ``not a version: '2.x'`` for anything else."""
    from packaging.version import InvalidVersion, Version

    stripped = text.strip()
    if _LONG_NUMBER.search(stripped.split("+", 1)[0]):
        raise ValueError(f"not a version: {_shown(text)}")
    try:
        return Version(stripped)
    except InvalidVersion:
        raise ValueError(f"not a version: {_shown(text)}") from None


def _shown(text: str) -> str:
    """A value quoted in an error: bounded, so a 5,000-digit field gives one short line."""
    return repr(text) if len(text) <= 40 else repr(text[:40]) + f"… ({len(text)} characters)"


def is_version(text: str) -> bool:
    try:
        version_key(text)
    except ValueError:
        return False
    return True


@dataclass
class Context:
    """What a builder needs beyond its row: the torch index a variant's URL defaults to."""

    index_base: str


class RowReader:
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

    def moved(self, name: str, home: str) -> None:
        """A field whose fact now lives elsewhere: refused, not silently ignored."""
        if name in self.data:
            raise self.error(name, f"no longer read here: the fact lives in {home}")

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
        for item in value:  # the checks of _check_text inline (12,000 strings a load), it words a failure
            if not (isinstance(item, str) and item.strip() and (pattern is None or pattern.match(item))):
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

    def rows(self, name: str) -> List[RowReader]:
        value = self._get(name, False)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(name, "expected a list")
        return [RowReader(self.where, self.number, item, f"{self.prefix}{name}[{i}].")
                for i, item in enumerate(value)]


# --- one builder per section --------------------------------------------------------------


def _variant(row: RowReader, index_base: str) -> m.VariantBuild:
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
    _no_empty_arch_list(row, kind, sass, ptx)
    return m.VariantBuild(
        name=name, kind=kind, cuda=cuda, rocm=rocm, platforms=platforms,
        index_url=row.opt_text("index_url") or f"{index_base.rstrip('/')}/{name}",
        sass_by_platform=sass, ptx_by_platform=ptx, gfx=row.texts("gfx", GFX_PATTERN),
        sources=row.sources(), uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
        rocm_sdk=row.opt_text("rocm_sdk") or "", unverified=_unverified(row, platforms),
    )


def _unverified(row: RowReader, platforms: Tuple[str, ...]) -> Tuple[str, ...]:
    values = row.texts("unverified")
    for value in values:
        if value not in platforms:
            raise row.error("unverified", f"{value!r} is not one of the build's platforms")
    return values


def _no_empty_arch_list(row: RowReader, kind: str, sass: Dict[str, Tuple[str, ...]],
                        ptx: Dict[str, Tuple[str, ...]]) -> None:
    """An empty list says "runs on no GPU"; a build whose targets are not known yet leaves the
    field out and is `uncertain` (a multi-arch build lists what its packages cover)."""
    for platform, archs in sass.items():
        if not archs and not ptx.get(platform):  # PTX only is a real build; nothing at all is not
            raise row.error(f"sass.{platform}", "empty arch list: name the SASS targets the build "
                                                "carries, or leave the platform out while unknown")
    if "gfx" in row.data and not row.data["gfx"]:
        raise row.error("gfx", "empty arch list: name the gfx targets the build covers (a multi-arch "
                               "build: every target its device packages cover), or leave it out "
                               "while unknown")
    if kind == "rocm" and "gfx" not in row.data and not row.flag("uncertain"):
        raise row.error("gfx", "missing: a rocm build names its gfx targets, or is marked uncertain")


def release(row: RowReader, ctx: Context) -> m.TorchRelease:
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
        version=version, released=row.opt_text("released", DATE),
        python=row.platform_map("python", _PYTHON_TAG), variants=variants, pypi_default=default,
        torchvision=row.opt_version("torchvision"), torchaudio=row.opt_version("torchaudio"),
        sources=row.sources(), uncertain=row.flag("uncertain"), notes=notes,
    )


def toolkit(row: RowReader, _ctx: Context) -> m.CudaRelease:
    for name in ("minor_compat_min_driver_linux", "minor_compat_min_driver_windows"):
        row.moved(name, "cuda.json#minor_compat (one floor per CUDA major)")
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


def minor_compat(row: RowReader, _ctx: Context) -> m.MinorCompat:
    return m.MinorCompat(
        cuda_major=row.text("cuda_major", _DIGITS),
        min_driver_linux=row.text("min_driver_linux", _DRIVER),
        min_driver_windows=row.text("min_driver_windows", _DRIVER),
        below_driver_branch=row.opt_text("below_driver_branch", _DRIVER),
        limits=row.text("limits"), sources=row.sources(), uncertain=row.flag("uncertain"),
    )


def driver_branch(row: RowReader, _ctx: Context) -> m.DriverBranch:
    return m.DriverBranch(
        branch=row.text("branch", _DIGITS),
        min_version_linux=row.text("min_version_linux", _DRIVER),
        max_cuda=row.version("max_cuda"), sources=row.sources(), uncertain=row.flag("uncertain"),
    )


def arch_support(row: RowReader, _ctx: Context) -> m.ArchSupport:
    return m.ArchSupport(
        cuda=row.version("cuda"), min_arch=row.text("min_arch", _ARCH), max_arch=row.text("max_arch", _ARCH),
        archs=row.texts("archs", _ARCH), deprecated=row.texts("deprecated", _ARCH),
        sources=row.sources(), uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
    )


def gpu(row: RowReader, _ctx: Context) -> m.GpuModel:
    return m.GpuModel(
        name=row.text("name"), compute_capability=row.text("compute_capability", _CC),
        family=row.text("family"), pci_ids=row.texts("pci_ids", _PCI),
        sources=row.sources(), uncertain=row.flag("uncertain"), jetson=row.flag("jetson"),
    )


def jetpack(row: RowReader, _ctx: Context) -> m.JetPack:
    wheels = []
    for sub in row.rows("wheels"):
        wheels.append(m.JetsonWheel(
            torch=sub.version("torch"), python=sub.text("python", _PYTHON_TAG), url=sub.text("url"),
            torchvision=sub.opt_text("torchvision"), sources=sub.sources(), uncertain=sub.flag("uncertain"),
            filename=sub.opt_text("filename", _WHEEL_FILE), l4t=sub.opt_text("l4t", _SPEC) or "",
        ))
    return m.JetPack(
        jetpack=row.text("jetpack"), l4t=row.version("l4t"), cuda=row.version("cuda"),
        cudnn=row.opt_text("cudnn"), python=row.text("python", _PYTHON_TAG), ubuntu=row.text("ubuntu"),
        wheels=tuple(wheels), index_url=row.opt_text("index_url"),
        prerequisites=row.texts("prerequisites"), sources=row.sources(),
        uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
        no_wheels=row.opt_text("no_wheels") or "",
    )


def paired(row: RowReader, _ctx: Context) -> m.PairedWheels:
    return m.PairedWheels(
        package=row.text("package"), torch=row.version("torch"), variant=row.text("variant"),
        find_links=row.text("find_links"), versions=row.texts("versions"),
        sources=row.sources(), uncertain=row.flag("uncertain"), packages=row.texts("packages"),
        confirmed_from=_confirmed_from(row),
    )


def requirement(row: RowReader, _ctx: Context) -> m.TorchRequirement:
    spec = row.text("torch")
    if not _SPEC.match(spec):
        raise row.error("torch", f"{spec!r} is not a version specifier")
    return m.TorchRequirement(
        package=row.text("package"), version=row.version("version"), torch=spec,
        variants=row.texts("variants"), sources=row.sources(), uncertain=row.flag("uncertain"),
        note=row.opt_text("note") or "", confirmed_from=_confirmed_from(row),
    )


def channel(row: RowReader, _ctx: Context) -> m.CondaChannel:
    return m.CondaChannel(
        channel=row.text("channel"), package=row.text("package"),
        last_version=row.opt_version("last_version"),
        note=row.text("note"), sources=row.sources(), uncertain=row.flag("uncertain"),
    )


def conda_build(row: RowReader, _ctx: Context) -> m.CondaBuild:
    return m.CondaBuild(
        package=row.text("package"), version=row.version("version"), cuda_versions=row.texts("cuda_versions"),
        platforms=row.platforms("platforms"), sources=row.sources(), uncertain=row.flag("uncertain"),
        note=row.opt_text("note") or "", releases=row.texts("releases"),
        platform_cuda=row.texts("platform_cuda"),
    )


def framework(row: RowReader, _ctx: Context) -> m.FrameworkBuild:
    return m.FrameworkBuild(
        framework=row.text("framework"), version=row.version("version"), extra=row.opt_text("extra") or "",
        cuda=row.opt_version("cuda"), cudnn=row.opt_text("cudnn"), python=row.texts("python", _PYTHON_TAG),
        min_driver_linux=row.opt_text("min_driver_linux", _DRIVER), platforms=row.platforms("platforms"),
        sources=row.sources(), uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
        confirmed_from=_confirmed_from(row),
    )


def _confirmed_from(row: RowReader) -> Tuple[str, ...]:
    """The index files a row was confirmed from; a row with none must be `uncertain`."""
    value = row.data.get("confirmed_from")
    if value is None:
        if not row.flag("uncertain"):
            raise row.error("confirmed_from", "missing: confirm the row from the package index's files "
                                              "(tools/confirm_frameworks.py --write) or mark it uncertain")
        return ()
    if not isinstance(value, dict):
        raise row.error("confirmed_from", "expected an object with index, files and read")
    sub = RowReader(row.where, row.number, value, f"{row.prefix}confirmed_from.")
    sub.text("index")
    sub.text("read", DATE)
    files = sub.texts("files", _WHEEL_FILE, required=True)
    if not files:
        raise sub.error("files", "names no file")
    return files


def _wheel_library(row: RowReader) -> m.WheelLibrary:
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


def wheel_audit(row: RowReader, _ctx: Context) -> m.WheelAudit:
    platform = row.text("platform")
    row._platform("platform", platform)
    return m.WheelAudit(
        id=row.text("id"), file=row.text("file"), sha256=row.text("sha256", _SHA256),
        retrieved=row.text("retrieved", DATE), torch=row.version("torch"), platform=platform,
        variant=row.text("variant"), python_tags=row.texts("python_tags"),
        platform_tags=row.texts("platform_tags"),
        libraries=tuple(_wheel_library(sub) for sub in row.rows("libraries")),
        sources=row.sources(), uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
        package=row.opt_text("package") or "torch", version=row.opt_version("version") or "",
    )


def audit_sources(rows: Sequence[m.WheelAudit]) -> Dict[str, m.Source]:
    """Each audited wheel as a source the release rows cite by its id."""
    return {row.id: m.Source(id=row.id, url=f"https://pypi.org/project/{row.package}/"
                                           f"{row.version or row.torch}/#files",
                             title=row.title(), retrieved=row.retrieved, note=row.note)
            for row in rows}


def normalize_gpu_name(name: str) -> str:
    """``NVIDIA GeForce RTX 4090`` -> ``rtx 4090``: case, vendor and brand prefixes do not matter."""
    words = re.sub(r"[\s_]+", " ", name.strip().lower()).split(" ")
    while words and words[0] in ("nvidia", "geforce", "tesla"):
        words = words[1:]
    return " ".join(words)


