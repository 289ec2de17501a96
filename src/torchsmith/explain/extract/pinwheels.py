"""A pinned release that publishes no wheel for the interpreter's Python. Pure.

pip's "(from versions: ...)" lists only the releases with a file that installs into the running
interpreter (its finder drops a wheel whose tags or Requires-Python do not fit,
``src/pip/_internal/index/package_finder.py``), so a pinned release absent from the listing is one
of several causes. Two facts make it this one:

- the text shows which Python pip ran under: in pip's own words, ``pip X from PATH (python 3.10)``
  (``pip --version``), ``python --version``'s line, the location of a requirement it found
  installed (``Requirement already satisfied: ... in .../python3.12/site-packages``), or the tag of
  a wheel it fetched for another requirement (``torch-2.5.1+cu121-cp313-cp313-...whl``), all of them
  agreeing (not the Python the torch releases pip listed point to: ``indexes.listing_python`` states
  that as a fact, with its caveat); where none does, pip's list of releases it skipped for their
  Requires-Python bounds it: the interpreter lies outside every range listed, and the pin must lack
  a wheel for each Python that leaves;
- the data says every release the pin allows publishes no wheel for that Python on any platform:
  torch's from ``torch_releases.json`` (the indexes' wheels), the others' from the package
  snapshot (``package_meta.json``: each release's wheel tags on PyPI; the PyTorch indexes carry the
  same builds under +labels), and none of them ships a source distribution pip could build.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from torchsmith.explain.extract.model import InstallerError
from torchsmith.refusal.model import split_requirement
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.refusal import Refusal
    from torchsmith.refusal.model import Missing

__all__ = ["pin_lacks_python_wheel", "pip_pythons", "pythons_outside_ignored"]

# pip's own lines that name its interpreter (src/pip/_internal/utils/misc.py get_pip_version; the
# installed distribution's location in "Requirement already satisfied: <req> in <location>";
# network/download.py logs each file it fetches, whose name carries its Python tag).
_PIP_VERSION = re.compile(r"\bpip \d+(?:\.\d+)+ from [^\n]{1,400}? \(python (?P<v>3\.\d{1,2})\)")
_SATISFIED = re.compile(r"^Requirement already satisfied: [^\n]{1,300}? in [^\n]{0,300}?[\\/]python"
                        r"(?P<v>3\.\d{1,2})[\\/](?:site|dist)-packages\b", re.MULTILINE)
# the same on Windows, where the interpreter's folder names the version without its dot (Python312)
_SATISFIED_WINDOWS = re.compile(r"^Requirement already satisfied: [^\n]{1,300}? in [^\n]{0,300}?[\\/]python3"
                                r"(?P<v>\d{1,2})[\\/]lib[\\/]site-packages\b", re.MULTILINE | re.IGNORECASE)
# `python --version` / `python -V` printed alone on its line
_VERSION_LINE = re.compile(r"^Python (?P<v>3\.\d{1,2})\.\d+\s*$", re.MULTILINE)
_FETCHED = re.compile(r"^\s*(?:Downloading|Using cached) \S{0,400}?-cp3(?P<v>\d{1,2})-cp3(?P=v)-",
                      re.MULTILINE)
_SOURCES = ("https://github.com/pypa/pip/blob/24.0/src/pip/_internal/index/package_finder.py",
            "https://github.com/pypa/pip/blob/24.0/src/pip/_internal/utils/misc.py")
_WHEEL_PYTHON = re.compile(r"(?:cp|py)(?P<major>\d)(?P<minor>\d{0,2})")
# pip's list of the releases (of any package it looked at) whose Requires-Python the interpreter does
# not satisfy (resolution/resolvelib/factory.py, _report_single_requirement_conflict): the interpreter
# lies outside every range listed.
_IGNORED = re.compile(r"Ignored the following versions that require a different python version: ([^\n]+)")
_IGNORED_ENTRY = re.compile(r"(?:^|;)\s*\S+ Requires-Python ([^;]+)")


def pip_pythons(text: str) -> Set[str]:
    """Every Python pip's own lines say it ran under (one, where they agree)."""
    found = {m.group("v") for p in (_PIP_VERSION, _SATISFIED, _VERSION_LINE) for m in p.finditer(text)}
    return found | {f"3.{m.group('v')}" for p in (_FETCHED, _SATISFIED_WINDOWS) for m in p.finditer(text)}


def pythons_outside_ignored(text: str) -> List[str]:
    """The Python minors (3.0 to 3.19) that lie outside every Requires-Python range pip says it
    skipped: the interpreter is one of them. Empty where pip lists none."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import Version

    ranges = []
    for line in _IGNORED.finditer(text):
        for entry in _IGNORED_ENTRY.finditer(line.group(1)):
            try:
                ranges.append(SpecifierSet(entry.group(1).strip()))
            except InvalidSpecifier:
                continue
    if not ranges:
        return []
    return [f"3.{minor}" for minor in range(20)
            if any(all(not r.contains(Version(f"3.{minor}.{patch}")) for r in ranges) for patch in range(31))]


def _fits(tag: str, python: str) -> bool:
    """Whether a wheel's ``python-abi-platform`` tag installs on CPython ``python`` (3.12)."""
    parts = tag.split("-")
    if len(parts) < 3:
        return True  # unreadable: assume it fits, so nothing is claimed
    interpreters, abi = parts[0], parts[1]
    minor = int(python.split(".")[1])
    for interpreter in interpreters.split("."):
        match = _WHEEL_PYTHON.fullmatch(interpreter)
        if match is None or match.group("major") != "3":
            continue
        if not match.group("minor") or interpreter.startswith("py"):
            return True  # py3: any Python 3
        wheel_minor = int(match.group("minor"))
        if wheel_minor == minor or (abi == "abi3" and wheel_minor <= minor):
            return True
    return False


def _matching(spec: str, versions: Sequence[str]) -> List[str]:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    base = re.sub(r"\+[\w.]+", "", spec)  # the data holds releases, not their +labels
    try:
        wanted = SpecifierSet(base)
    except InvalidSpecifier:
        return []
    out = []
    for version in versions:
        try:
            if wanted.contains(Version(version), prereleases=False):
                out.append(version)
        except InvalidVersion:
            continue
    return out


def _torch_pythons(kb: KnowledgeBase) -> Dict[str, Optional[Tuple[str, ...]]]:
    """torch release -> every Python it publishes wheels for, on any platform."""
    return {r.version: tuple(sorted({p for ps in r.python.values() for p in ps})) for r in kb.releases}


def _snapshot_pythons(kb: KnowledgeBase, name: str, python: str) -> Dict[str, Optional[Tuple[str, ...]]]:
    """A snapshot package's release -> () where none of its wheels fits ``python`` and it has no
    source distribution; None where one fits (or the release's files are not all known)."""
    out: Dict[str, Optional[Tuple[str, ...]]] = {}
    for package in kb.document("package_meta").get("packages", ()):
        if package.get("name") != name:
            continue
        for release in package.get("releases", ()):
            wheels = release.get("wheels") or ()
            fits = not wheels or release.get("sdist") or any(_fits(str(w), python) for w in wheels)
            out[str(release["version"])] = None if fits else ()
    return out


def _releases_without(name: str, spec: str, python: str, kb: KnowledgeBase) -> Optional[List[str]]:
    """The releases ``spec`` allows, where every one of them lacks a wheel for ``python`` (None:
    none is known, or one has a wheel for it)."""
    table = _torch_pythons(kb) if name == "torch" else _snapshot_pythons(kb, name, python)
    allowed = _matching(spec, list(table))
    if not allowed:
        return None
    for version in allowed:
        pythons = table[version]
        if pythons is None or python in pythons:
            return None
    return sorted(allowed, key=version_tuple)


def _listing_agrees(refusal: Refusal, kb: KnowledgeBase, named: Optional[str]) -> Optional[str]:
    """The Python the torch releases pip listed point to (``indexes.listing_python``), where the text
    names that same Python elsewhere (``named``: "Python 3.8.20", a frame's site-packages): the listing
    alone could be a mirror's partial copy, and the words alone need not be pip's interpreter."""
    from torchsmith.explain.extract.indexes import listing_python

    read = listing_python(refusal, kb) if named else None
    return named if read is not None and read[0] == named else None


def pin_lacks_python_wheel(text: str, refusal: Refusal, kb: Optional[KnowledgeBase],
                           named_python: Optional[str] = None) -> List[InstallerError]:
    """A requirement pip found no version of, whose every allowed release lacks a wheel for the
    Python pip's own lines name (or, where they name none, the Python both its listing of torch
    releases and the text's own words point to: ``named_python``)."""
    if kb is None or not refusal.unavailable:
        return []
    named = pip_pythons(text)
    if len(named) > 1:
        return []  # two Pythons: which one ran pip?
    said = "its own lines say so" if named else \
        "the torch releases it listed are exactly those with wheels for it, and the text names it"
    python = named.pop() if named else _listing_agrees(refusal, kb, named_python)
    if python is None:
        return _lacks_for_every_possible_python(text, refusal, kb)
    for missing, name, spec in _none_allowed_listed(refusal):
        releases = _releases_without(name, spec, python, kb)
        if not releases:
            continue
        shown, where = _releases_in_words(name, releases)
        meaning = (f"pip ran under Python {python} ({said}), and {name} {shown} — every "
                   f"release {name}{spec} allows — publishes no wheel for Python {python} on any platform "
                   f"({where}), so pip lists none of them")
        return [InstallerError("pip", "pin-lacks-python-wheel", missing.said, meaning, name, _SOURCES)]
    return []


def _none_allowed_listed(refusal: Refusal) -> Iterator[Tuple[Missing, str, str]]:
    """(the requirement, its name, its specifier) for each pip found none of while it listed no
    release the specifier allows: not a wheel it lacked for this interpreter otherwise."""
    for missing in refusal.unavailable:
        name, spec, _ = split_requirement(missing.said)
        if missing.installer == "pip" and spec and name and \
                not any(_matching(spec, [v.split("+")[0]]) for v in missing.listed):
            yield missing, name, spec


def _lacks_for_every_possible_python(text: str, refusal: Refusal, kb: KnowledgeBase) -> List[InstallerError]:
    """Where pip names no interpreter: a pin whose every allowed release lacks a wheel for each Python
    pip's list of skipped Requires-Python ranges leaves possible."""
    possible = pythons_outside_ignored(text)
    if not possible:
        return []
    for missing, name, spec in _none_allowed_listed(refusal):
        found = [_releases_without(name, spec, python, kb) for python in possible]
        if not all(found):
            continue
        releases = sorted({r for rs in found if rs for r in rs}, key=version_tuple)
        shown, where = _releases_in_words(name, releases)
        meaning = (f"pip skipped releases for their Requires-Python, so it ran under a Python outside all "
                   f"of those ranges ({_minors(possible)}), and {name} {shown} publishes no wheel for any "
                   f"of them on any platform ({where}), so pip lists none of them")
        return [InstallerError("pip", "pin-lacks-python-wheel", missing.said, meaning, name, _SOURCES)]
    return []


def _releases_in_words(name: str, releases: Sequence[str]) -> Tuple[str, str]:
    """('2.0.1' or '1.13.0 to 2.0.1', where the wheel lists were read) for a message."""
    shown = releases[0] if len(releases) == 1 else f"{releases[0]} to {releases[-1]}"
    return shown, "torch's release data" if name == "torch" else "each release's wheels on PyPI"


def _minors(pythons: Sequence[str]) -> str:
    """3.5, 3.6, 3.11 ... 3.19 -> '3.5 to 3.6, or 3.11 and later'."""
    minors = [int(p.split(".")[1]) for p in pythons]
    runs: List[Tuple[int, int]] = []
    for minor in minors:
        if runs and runs[-1][1] == minor - 1:
            runs[-1] = (runs[-1][0], minor)
        else:
            runs.append((minor, minor))
    words = [f"3.{a} and later" if b == 19 else (f"3.{a}" if a == b else f"3.{a} to 3.{b}") for a, b in runs]
    return ", or ".join(words)
