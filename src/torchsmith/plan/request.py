"""What the user asked for, read from the command line, a requirements file or a pyproject.

Requirement strings are parsed with :mod:`packaging`; anything it refuses becomes a one-line
:class:`~torchsmith.errors.RequirementError` naming the string and where it came from.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from torchsmith.errors import RequirementError
from torchsmith.host.files import NotAFileError, read_whole
from torchsmith.records import dataclass

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

__all__ = [
    "Wanted",
    "constrained",
    "parse_requirement",
    "parse_requirements",
    "read_pyproject",
    "read_requirements_file",
]


@dataclass(frozen=True)
class Wanted:
    """One parsed requirement: ``torchvision==0.16.*`` -> name, specifier, extras."""

    name: str  # canonical: "torch-scatter", "flash-attn"
    spec: str  # the version specifier as text, "" for any ("<2.7,>=2.1")
    extras: FrozenSet[str]
    text: str  # as the user wrote it
    origin: str = "command line"
    optional: bool = False  # only wanted with an extra (``; extra == "dev"``)

    def allows(self, version: str, prereleases: bool = False) -> bool:
        """Whether ``version`` (public part; a local label is ignored) meets the specifier."""
        public = version.split("+", 1)[0]
        if not self.spec:
            return True
        try:
            return self.specifier.contains(public, prereleases=prereleases or None)
        except ValueError:
            return False

    @property
    def specifier(self) -> SpecifierSet:
        return _specifier_set(self.spec)


@lru_cache(maxsize=256)
def _specifier_set(spec: str) -> SpecifierSet:
    # Imported on use: packaging.specifiers pulls in packaging.tags, which costs start-up time.
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(spec)


_BARE_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


def canonical_name(name: str) -> str:
    """PEP 503 normalisation (``Torch_Scatter`` -> ``torch-scatter``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirement(text: str, origin: str = "command line") -> Wanted:
    """One requirement string, or a one-line :class:`RequirementError`."""
    stripped = text.strip()
    if not stripped:
        raise RequirementError(f"empty requirement ({origin})")
    if _BARE_NAME.match(stripped):  # the common case, without loading the full grammar
        return Wanted(canonical_name(stripped), "", frozenset(), stripped, origin)
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(stripped)
    except InvalidRequirement as exc:
        first = str(exc).splitlines()[0] if str(exc) else "unparsable"
        raise RequirementError(
            f"not a requirement: {stripped!r} ({origin}): {first}",
            hint="write it as pip does, e.g. torch>=2.4 or torchvision==0.19.*",
        ) from exc
    if req.url:
        raise RequirementError(
            f"direct URL requirements are not planned: {stripped!r} ({origin})",
            hint="name the package and a version instead; torchsmith picks the wheel",
        )
    return Wanted(
        name=canonical_name(req.name),
        spec=str(req.specifier),
        extras=frozenset(e.lower() for e in req.extras),
        text=stripped,
        origin=origin,
        optional=req.marker is not None and "extra" in str(req.marker),
    )


def parse_requirements(texts: Sequence[str], origin: str = "command line",
                       origins: Optional[Mapping[str, str]] = None) -> Tuple[Wanted, ...]:
    """Parse and merge: two lines for one package become one specifier (``torch>=2``, ``torch<3``).
    ``origins``: where a text is written, when not ``origin`` (a requirements file's line)."""
    merged: Dict[str, Wanted] = {}
    for text in texts:
        wanted = parse_requirement(text, (origins or {}).get(text, origin))
        if wanted.optional:
            continue
        previous = merged.get(wanted.name)
        if previous is None:
            merged[wanted.name] = wanted
            continue
        merged[wanted.name] = Wanted(
            name=wanted.name,
            spec=",".join(s for s in (previous.spec, wanted.spec) if s),
            extras=previous.extras | wanted.extras,
            text=f"{previous.text}, {wanted.text}",
            origin=previous.origin,
        )
    return tuple(merged.values())


def constrained(wanted: Sequence[Wanted], constraints: Sequence[Tuple[str, str]]) -> Tuple[Wanted, ...]:
    """``wanted`` narrowed by the user's pip/uv constraints, ``(requirement, where)`` each: a
    constraint on a package not asked for adds nothing; one on a package asked for joins its
    specifier, and the cap it makes names where it is written."""
    by_name = {w.name: w for w in wanted}
    for text, where in constraints:
        cap = parse_requirement(text, where)
        have = by_name.get(cap.name)
        if have is None or not cap.spec:
            continue
        by_name[cap.name] = Wanted(
            name=have.name, spec=",".join(s for s in (have.spec, cap.spec) if s), extras=have.extras,
            text=f"{have.text}, {cap.text}" if have.spec else cap.text,
            origin=f"{have.origin}; {where}" if have.spec else where)
    return tuple(by_name.values())


_OPTION_WITH_VALUE = re.compile(r"^(-r|--requirement|-c|--constraint)\s*=?\s*(\S+)$")


# A requirements file or pyproject is a few kilobytes; a FIFO, a device or a huge file is a mistake,
# and reading it whole would hang or exhaust memory.
MAX_REQUIREMENTS_BYTES = 4 * 1024 * 1024
MAX_REQUIREMENTS_DEPTH = 32  # -r inside -r inside ... (pip has no limit; a loop or a bomb is an error here)
MAX_REQUIREMENT_LINES = 10_000
MAX_REQUIREMENTS_FILES = 256


def _read_text(path: str, label: str) -> str:
    try:
        raw = read_whole(path, MAX_REQUIREMENTS_BYTES)
    except NotAFileError:
        raise RequirementError(f"cannot read {label}: not a regular file (a FIFO, device or socket)") \
            from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise RequirementError(f"cannot read {label}: {reason}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RequirementError(f"{label} is not UTF-8 text") from None


def read_requirements_file(path: str, origins: Optional[Dict[str, str]] = None) -> List[str]:
    """The requirement lines of a pip requirements file (``-r`` includes followed); ``origins``
    gets the file and line of each (``reqs.txt:3``), which a cap's reason names.

    Index options (``--index-url``...) are dropped: the plan decides where torch comes from.
    Bounded: each file's size, the nesting depth, the files read and the lines kept.
    """
    lines: List[str] = []
    _read_requirements_into(lines, path, frozenset(), [0], origins)
    return lines


def _read_requirements_into(lines: List[str], path: str, chain: FrozenSet[str], files_read: List[int],
                            origins: Optional[Dict[str, str]]) -> None:
    real = os.path.realpath(path)
    if real in chain:
        return
    if len(chain) >= MAX_REQUIREMENTS_DEPTH:
        raise RequirementError(f"requirements file {path}: -r files nested more than "
                               f"{MAX_REQUIREMENTS_DEPTH} deep")
    files_read[0] += 1
    if files_read[0] > MAX_REQUIREMENTS_FILES:
        raise RequirementError(f"requirements file {path}: more than {MAX_REQUIREMENTS_FILES} -r files")
    raw = _read_text(path, f"requirements file {path}")
    for number, line in enumerate(raw.replace("\\\n", "").splitlines(), start=1):
        text = re.sub(r"(^|\s)#.*$", "", line).strip()
        if not text:
            continue
        option = _OPTION_WITH_VALUE.match(text)
        if option:
            if option.group(1) in ("-r", "--requirement"):
                nested = os.path.join(os.path.dirname(path), option.group(2))
                _read_requirements_into(lines, nested, chain | {real}, files_read, origins)
            continue  # constraints files narrow, they do not ask for packages
        if text.startswith("-"):
            continue
        parse_requirement(text, f"{path}:{number}")  # fail early with the line number
        lines.append(text)
        if origins is not None:
            origins.setdefault(text, f"{path}:{number}")
        if len(lines) > MAX_REQUIREMENT_LINES:
            raise RequirementError(f"requirements file {path}: more than {MAX_REQUIREMENT_LINES} "
                                   "requirements")


def read_pyproject(path: str) -> List[str]:
    """``[project].dependencies`` of a pyproject.toml (the packages a project needs)."""
    text = _read_text(path, path)
    data = _load_toml(text, path)
    if data is None:
        deps = _dependencies_without_toml_parser(text, path)
    else:
        project = data.get("project")
        if not isinstance(project, dict):
            raise RequirementError(f"{path} has no [project] table",
                                   hint="pass the requirements on the command line or with -r")
        deps = project.get("dependencies", [])
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise RequirementError(f"{path}: [project].dependencies must be a list of strings")
    for dep in deps:
        parse_requirement(dep, path)
    return list(deps)


def _load_toml(text: str, path: str) -> Optional[Dict[str, Any]]:
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        try:
            import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:
            return None
    try:
        loaded: Dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RequirementError(f"{path} is not valid TOML: {exc}") from exc
    return loaded


def _dependencies_without_toml_parser(text: str, path: str) -> List[str]:
    """Python < 3.11 without tomli: read the one array we need from the [project] table."""
    section = re.search(r"(?ms)^\[project\]\s*$(.*?)(?=^\[)", text + "\n[end]")
    if not section:
        raise RequirementError(f"{path} has no [project] table")
    array = re.search(r"(?ms)^dependencies\s*=\s*\[(.*?)\]", section.group(1))
    if not array:
        return []
    body = re.sub(r"#.*$", "", array.group(1), flags=re.M)
    return [m.group(2) for m in re.finditer(r"(['\"])(.*?)\1", body)]
