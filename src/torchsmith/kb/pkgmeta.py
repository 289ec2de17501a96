"""A package's published metadata, read as data: what it asks of torch and what it ships.

Pure parsers, no I/O (:mod:`torchsmith.kb.metaread` fetches):

- an index page, PEP 691 JSON or PEP 503 HTML (with the PEP 658/714 ``core-metadata`` and
  ``requires-python`` attributes) -> :class:`IndexFile` rows;
- a core-metadata file (``METADATA``: ``Requires-Dist``, ``Requires-Python``);
- a wheel file name -> its tags and the platforms they install on;
- a torch/CUDA build encoded in a local version or file name (``+pt28cu128``,
  ``cu12torch2.8cxx11abiTRUE``, ``+cu121``, ``torch2.4-cu121``) -> :class:`TorchBuild`.

:class:`PackageRecord` is one package as the shipped snapshot (``package_meta.json``) and a
live read both hold it: per release, the torch-stack requirements, Requires-Python, the wheel
tags, whether a source distribution exists, and where and when it was read.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from torchsmith.kb.buildlabel import TorchBuild, TorchReleases, packed_torch, torch_build
from torchsmith.records import dataclass

__all__ = [
    "STACK",
    "IndexFile",
    "Inherited",
    "PackageRecord",
    "ReleaseRecord",
    "TorchBuild",
    "TorchReleases",
    "core_dependencies",
    "packed_torch",
    "parse_core_metadata",
    "parse_index_page",
    "tag_platforms",
    "torch_build",
]

# Requirements kept from Requires-Dist: the ones that decide which torch a package runs with.
STACK = ("torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "pytorch-triton-rocm",
         "numpy", "xformers", "flash-attn", "mmcv", "mmengine")

_CANONICAL = re.compile(r"[-_.]+")


def canonical(name: str) -> str:
    return _CANONICAL.sub("-", name).lower()


# --- wheel tags ---------------------------------------------------------------------------


def tag_platforms(platform_tag: str) -> Tuple[str, ...]:
    """Our platform names one wheel platform tag installs on (``any`` -> every platform)."""
    platforms: List[str] = []
    for tag in platform_tag.split("."):
        if tag == "any":
            return ("any",)
        if tag.startswith(("manylinux", "linux", "musllinux")):
            arch = "x86_64" if tag.endswith("x86_64") else "aarch64" if tag.endswith("aarch64") else ""
            if arch:
                platforms.append(f"linux-{arch}")
        elif tag == "win_amd64":
            platforms.append("windows-x86_64")
        elif tag == "win_arm64":
            platforms.append("windows-arm64")
        elif tag.startswith("macosx"):
            arch = tag.split("_", 3)[-1]  # macosx_<major>_<minor>_<arch>; x86_64 holds "_"
            if arch in ("arm64", "universal2"):
                platforms.append("macos-arm64")
            if arch in ("x86_64", "intel", "universal2"):
                platforms.append("macos-x86_64")
    return tuple(dict.fromkeys(platforms))


def glibc_of(platform_tag: str) -> Optional[Tuple[int, int]]:
    """The glibc a manylinux tag needs (manylinux2014 -> 2.17), None for others."""
    legacy = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
    for tag in platform_tag.split("."):
        for prefix, floor in legacy.items():
            if tag.startswith(prefix + "_"):
                return floor
        match = re.match(r"^manylinux_(\d+)_(\d+)_", tag)
        if match:
            return int(match.group(1)), int(match.group(2))
    return None


def python_fits(python_tag: str, abi: str, python: str) -> bool:
    """Whether a wheel's Python/ABI tags install on ``python`` ("3.11", "3.13t"), as pip's
    compatible-tag list has it (``py39`` and ``cp39-abi3`` install on every later 3.x)."""
    free = python.endswith("t")
    major, _, minor_text = python.rstrip("t").partition(".")
    if not minor_text.isdigit():
        return False
    minor = int(minor_text)
    for tag in python_tag.split("."):
        generic = re.match(r"^py(\d)(\d*)$", tag)
        if generic and generic.group(1) == major and abi == "none" and (
                not generic.group(2) or int(generic.group(2)) <= minor):
            return True
        cp = re.match(r"^cp(\d)(\d+)$", tag)
        if not cp or cp.group(1) != major:
            continue
        if abi == "abi3" and not free and int(cp.group(2)) <= minor:
            return True
        if int(cp.group(2)) == minor and (abi == "none" or abi.endswith("t") == free):
            return True
    return False


# --- index pages ----------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexFile:
    """One file an index page lists."""

    filename: str
    url: str
    requires_python: str = ""
    core_metadata: bool = False  # PEP 658/714: ``<url>.metadata`` exists
    uploaded: str = ""
    yanked: bool = False


_ANCHOR = re.compile(r"<a\b([^>]*)>([^<]*)</a>", re.IGNORECASE)
_ATTR = re.compile(r"""([\w-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def parse_index_page(text: str, page_url: str) -> List[IndexFile]:
    """The files of a project page: PEP 691 JSON when the body is JSON, else PEP 503 HTML."""
    import html  # here, as pages are read only live: not on plan's start
    import urllib.parse

    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _parse_json_page(json.loads(stripped), page_url)
    files: List[IndexFile] = []
    for attributes, label in _ANCHOR.findall(text):
        attrs = {m.group(1).lower(): html.unescape(m.group(2) if m.group(2) is not None else m.group(3))
                 for m in _ATTR.finditer(attributes)}
        href = attrs.get("href")
        if not href:
            continue
        url = urllib.parse.urljoin(page_url, href)
        name = urllib.parse.unquote(url.split("#")[0].rsplit("/", 1)[-1]) or html.unescape(label.strip())
        metadata = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata", "false"))
        files.append(IndexFile(name, url.split("#")[0], attrs.get("data-requires-python", ""),
                               metadata not in ("", "false"), "", "data-yanked" in attrs))
    return files


def _parse_json_page(data: Dict[str, Any], page_url: str) -> List[IndexFile]:
    import urllib.parse

    files: List[IndexFile] = []
    for entry in data.get("files", ()):
        if not isinstance(entry, dict) or not entry.get("filename") or not entry.get("url"):
            continue
        metadata = entry.get("core-metadata", entry.get("dist-info-metadata", False))
        files.append(IndexFile(str(entry["filename"]), urllib.parse.urljoin(page_url, str(entry["url"])),
                               str(entry.get("requires-python") or ""), bool(metadata),
                               str(entry.get("upload-time") or "")[:10], bool(entry.get("yanked"))))
    return files


def parse_core_metadata(text: str) -> Tuple[Tuple[str, ...], str]:
    """(Requires-Dist lines on the torch stack, Requires-Python) of a METADATA file."""
    from email.parser import HeaderParser  # ~90 ms of imports: only when metadata is read

    headers = HeaderParser().parsestr(text, headersonly=True)
    kept = tuple(r.strip() for r in headers.get_all("Requires-Dist") or () if _on_stack(r))
    return kept, (headers.get("Requires-Python") or "").strip()


def core_dependencies(text: str) -> Tuple[str, ...]:
    """The Requires-Dist lines of a METADATA file off the torch stack (followed transitively)."""
    from email.parser import HeaderParser

    headers = HeaderParser().parsestr(text, headersonly=True)
    return tuple(r.strip() for r in headers.get_all("Requires-Dist") or () if not _on_stack(r))


def _on_stack(requirement: str) -> bool:
    match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return match is not None and canonical(match.group(1)) in STACK


_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(?:-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)"
                    r"-(?P<plat>[^-]+)\.whl$")
_SDIST = re.compile(r"^(?P<name>.+?)-(?P<version>\d[^-]*)\.(?:tar\.gz|zip|tar\.bz2)$")


def split_filename(filename: str) -> Optional[Tuple[str, str, str]]:
    """(name, version, tag or "" for a source distribution), or None for other files."""
    wheel = _WHEEL.match(filename)
    if wheel:
        return (canonical(wheel.group("name")), wheel.group("version"),
                f"{wheel.group('py')}-{wheel.group('abi')}-{wheel.group('plat')}")
    sdist = _SDIST.match(filename)
    if sdist:
        return canonical(sdist.group("name")), sdist.group("version"), ""
    return None


# --- the record ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Inherited:
    """What a release asks of torch through a dependency (whisperx -> pyannote-audio -> torch)."""

    chain: str  # "pyannote-audio>=4.0.0 (4.0.7), which needs torch>=2.8.0"
    allowed: FrozenSet[str]  # the torch releases (public versions) some release in range allows
    python: str = ""  # the oldest newer Python ("3.10") its releases install on, when the planned one is not


@dataclass(frozen=True)
class ReleaseRecord:
    """One published version (its local label kept: ``2.1.2+pt28cu128`` is its own release)."""

    version: str
    requires: Tuple[str, ...] = ()  # Requires-Dist on the torch stack
    requires_python: str = ""
    wheels: Tuple[str, ...] = ()  # "cp311-cp311-manylinux_2_28_x86_64"
    sdist: bool = False
    metadata: str = "none"  # where ``requires`` came from: "pep658", "wheel", "none" (unread)
    uploaded: str = ""
    url: str = ""  # where its files are listed, when not the package's page (a find-links page)
    project: str = ""  # the project's name, which may encode the build too (spconv-cu120)
    depends: Tuple[str, ...] = ()  # Requires-Dist off the torch stack (read live; followed)
    inherited: Tuple[Inherited, ...] = ()  # the planner's: torch limits reached through ``depends``
    torches: Optional[TorchReleases] = None  # the planner's: what packed digits are read against

    @property
    def public(self) -> str:
        return self.version.split("+", 1)[0]

    @property
    def build(self) -> Optional[TorchBuild]:
        """The build its local label encodes, else its page's URL, else its project's name (a
        name such as ``spconv-cu120`` bundles its own CUDA runtime: any torch of that CUDA major)."""
        for label in (self.version.partition("+")[2], self.url):
            found = torch_build(label, self.torches) if label else None
            if found is not None:
                return found
        named = torch_build(self.project, self.torches) if self.project else None
        if named is not None and named.cuda:
            return TorchBuild(named.torch, named.cuda.split(".")[0], named.rocm, named.cpu,
                              unread=named.unread)
        return named

    def requirement(self, name: str) -> str:
        """The specifier of Requires-Dist on ``name`` outside any extra ("" when none)."""
        return _requirement(self.requires, name)

    def applied(self, environment: Dict[str, str], extras: Sequence[str]) -> ReleaseRecord:
        """This release with only the requirements that apply on ``environment`` (PEP 508 marker
        variables) with ``extras`` asked for, markers dropped: ``torch==2.7.1; extra == "srt"``
        pins torch only for ``sglang[srt]``. A marker that cannot be evaluated is kept."""
        from torchsmith.records import replace

        env = tuple(sorted(environment.items()))
        kept = [_applied(text, env, tuple(extras)) for text in self.requires]
        depends = [_applied(text, env, tuple(extras)) for text in self.depends]
        return replace(self, requires=tuple(k for k in kept if k), depends=tuple(d for d in depends if d))

    def installs_on(self, platform: str, python: str, glibc: Optional[Tuple[int, int]] = None) -> bool:
        """A wheel of this release installs on ``platform`` + ``python`` (and glibc)."""
        return _installs_on(self.wheels, platform, python, glibc)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"version": self.version}
        for key in ("requires", "requires_python", "wheels", "sdist", "metadata", "uploaded", "url",
                    "depends"):
            value = getattr(self, key)
            if value:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out

    @staticmethod
    def from_json(data: Dict[str, Any]) -> ReleaseRecord:
        return ReleaseRecord(str(data["version"]), tuple(data.get("requires", ())),
                             str(data.get("requires_python", "")), tuple(data.get("wheels", ())),
                             bool(data.get("sdist", False)), str(data.get("metadata", "none")),
                             str(data.get("uploaded", "")), str(data.get("url", "")),
                             depends=tuple(data.get("depends", ())))


@dataclass(frozen=True)
class PackageRecord:
    """A package's releases as read from an index page, with where and when."""

    name: str
    source: str  # the page read
    retrieved: str  # the date it was read
    releases: Tuple[ReleaseRecord, ...]  # newest first
    live: bool = False  # read now, not from the shipped snapshot

    @property
    def companion(self) -> bool:
        """Its wheels encode a torch/CUDA build: it pairs with one torch build."""
        return any(r.build is not None for r in self.releases)

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "source": self.source, "retrieved": self.retrieved,
                "releases": [r.to_json() for r in self.releases]}

    def read_against(self, torches: TorchReleases) -> PackageRecord:
        """This record with packed torch digits in its labels read against ``torches``."""
        from torchsmith.records import replace

        return replace(self, releases=tuple(replace(r, torches=torches) for r in self.releases))

    @staticmethod
    def from_json(data: Dict[str, Any], live: bool = False) -> PackageRecord:
        name = canonical(str(data["name"]))
        return PackageRecord(name, str(data["source"]), str(data["retrieved"]),
                             tuple(_named(ReleaseRecord.from_json(r), name) for r in data["releases"]), live)


@lru_cache(maxsize=8192)
def _applied(text: str, environment: Tuple[Tuple[str, str], ...], extras: Tuple[str, ...]) -> str:
    """``text`` without its marker when the marker holds here (or cannot be evaluated), else ""."""
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return ""
    if req.marker is not None:
        env = dict(environment)
        try:
            if not any(req.marker.evaluate({**env, "extra": extra}) for extra in (*extras, "")):
                return ""
        except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
            pass
    return f"{req.name}{req.specifier}"


@lru_cache(maxsize=4096)
def _installs_on(wheels: Tuple[str, ...], platform: str, python: str,
                 glibc: Optional[Tuple[int, int]]) -> bool:
    for tag in wheels:
        py, abi, plat = tag.split("-", 2)
        platforms = tag_platforms(plat)
        if "any" not in platforms and platform not in platforms:
            continue
        floor = glibc_of(plat)
        if glibc is not None and floor is not None and floor > glibc:
            continue
        if python_fits(py, abi, python):
            return True
    return False


@lru_cache(maxsize=4096)
def _requirement(requires: Tuple[str, ...], name: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement

    specs: List[str] = []
    for text in requires:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if canonical(req.name) != name or (req.marker is not None and "extra" in str(req.marker)):
            continue
        specs.append(str(req.specifier) or "*")
    return ",".join(s for s in specs if s != "*") or ("*" if specs else "")


def _named(release: ReleaseRecord, project: str) -> ReleaseRecord:
    from torchsmith.records import replace

    return replace(release, project=project) if torch_build(project) is not None else release


def files_by_version(files: Iterable[IndexFile]) -> Dict[Tuple[str, str], Dict[str, Any]]:
    """(project, version) -> its files not yanked: ``wheels`` (tags), ``sdist``, ``rp`` (the first
    Requires-Python said), ``up`` (the newest upload). Versions packaging cannot read are left out."""
    from packaging.version import InvalidVersion, Version

    grouped: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for entry in files:
        split = split_filename(entry.filename)
        if split is None or entry.yanked:
            continue
        project, version, tag = split
        row = grouped.get((project, version))
        if row is None:
            try:
                Version(version)
            except InvalidVersion:
                continue
            row = grouped[(project, version)] = {"wheels": set(), "sdist": False, "rp": "", "up": ""}
        if tag:
            row["wheels"].add(tag)
        else:
            row["sdist"] = True
        row["rp"] = row["rp"] or entry.requires_python
        row["up"] = max(row["up"], entry.uploaded)
    return grouped


def records_from_files(name: str, files: Sequence[IndexFile], source: str, retrieved: str,
                       metadata: Dict[str, Tuple[Tuple[str, ...], str, str]], *,
                       depends: Optional[Dict[str, Tuple[str, ...]]] = None) -> PackageRecord:
    """Group a page's files by version (local label kept); ``metadata``: version ->
    (requires, requires_python, how it was read); ``depends``: version -> the other requirements."""
    from packaging.version import Version

    releases: List[ReleaseRecord] = []
    for (project, version), row in files_by_version(files).items():
        if project != canonical(name):
            continue
        requires, requires_python, how = metadata.get(version, ((), "", "none"))
        releases.append(_named(ReleaseRecord(version, requires, requires_python or row["rp"],
                                             tuple(sorted(row["wheels"])), row["sdist"], how, row["up"],
                                             depends=(depends or {}).get(version, ())),
                               canonical(name)))
    releases.sort(key=lambda r: Version(r.version), reverse=True)
    return PackageRecord(canonical(name), source, retrieved, tuple(releases))
