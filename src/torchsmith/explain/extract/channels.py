"""conda's PackagesNotFoundError read as facts: the packages missing, the channels searched (each
with its subdir: the platform conda solved for), and what the data proves about each package.

A cause is stated only when the text and the data together prove it (``error_vocab.json``
``conda_packages``, each row with its source): the subdir searched is one its publisher never
builds for; the version asked for was never published on the channels that publish the package.
Anything else stays a fact read, with the check that tells it apart. Pure.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from torchsmith.explain.extract.model import CondaSearch, MissingPackage
from torchsmith.versions import version_tuple

__all__ = ["conda_checks", "conda_missing", "conda_search"]

# conda 4.4 on: "Current channels:"; conda 4.3 (conda/exceptions.py PackageNotFoundError): "Packages
# missing in current channels:" then "We have searched for the packages in the following channels:";
# conda 4.2: "Package(s) missing in current <subdir> channels:", the subdir solved for in the message.
_BLOCK = re.compile(r"PackagesNotFoundError|packages are not available from current channels"
                    r"|missing in current (?:[a-z0-9]+-[a-z0-9_]+ )?channels")
_CURRENT = re.compile(r"^\s*(?:Current channels|We have searched for the packages in the following channels):"
                      r"\s*\n(?P<block>(?:[ \t]*\n|[ \t]*-[ \t]*\S[^\n]*\n?){1,60})", re.MULTILINE)
_ANACONDA_ORG = re.compile(r"https?://conda\.anaconda\.org/")
_MISSING_IN = re.compile(r"missing in current (?P<subdir>[a-z0-9]+-[a-z0-9_]+) channels")
_PLATFORM = re.compile(r"^\s*[Pp]latform:\s*(?P<subdir>[a-z0-9]+-[a-z0-9_]+)\s*$", re.MULTILINE)
_SUBDIRS = frozenset({"linux-64", "linux-32", "linux-aarch64", "linux-ppc64le", "linux-s390x", "linux-armv6l",
                      "linux-armv7l", "osx-64", "osx-arm64", "win-64", "win-32", "win-arm64", "noarch"})
_SPEC = re.compile(r"^(?:(?P<channel>[\w.-]+)::)?(?P<name>[A-Za-z0-9_][\w.-]*)\s*"
                   r"(?:\[version=['\"]?(?P<bracket>[^'\"\]]+)['\"]?\]|(?P<version>[=<>!~][^\s\[]*))?")


def _channel(url: str) -> Tuple[str, Optional[str]]:
    """(channel name, subdir) of a searched channel URL or name."""
    parts = [p for p in re.sub(r"^\w+://[^/]+/?", "", url.strip().rstrip("/")).split("/") if p]
    subdir = parts[-1] if parts and parts[-1] in _SUBDIRS else None
    if subdir:
        parts = parts[:-1]
    if "label" in parts:  # conda.anaconda.org/<channel>/label/<label>/<subdir>
        parts = parts[:parts.index("label")]
    if parts[:1] == ["pkgs"]:  # repo.anaconda.com/pkgs/main: the defaults channels
        parts = parts[:2]
    return "/".join(parts) or url.strip(), subdir


def conda_search(text: str) -> Optional[CondaSearch]:
    """The channels a PackagesNotFoundError says were searched, and the platform solved for."""
    if not _BLOCK.search(text):
        return None
    channels: List[str] = []
    hosted: List[str] = []
    subdirs: List[str] = []
    listed = _CURRENT.search(text)
    if listed is not None:
        for line in listed.group("block").splitlines():
            entry = line.strip()[1:].strip()
            if not entry:
                continue
            name, subdir = _channel(entry)
            channels.append(name)
            if _ANACONDA_ORG.match(entry) or "://" not in entry:
                hosted.append(name)
            if subdir and subdir != "noarch":
                subdirs.append(subdir)
    for platform in (_PLATFORM.search(text), _MISSING_IN.search(text)):
        if platform is not None and platform.group("subdir") in _SUBDIRS:
            subdirs.append(platform.group("subdir"))
    return CondaSearch(tuple(dict.fromkeys(channels)), tuple(dict.fromkeys(subdirs)), listed is not None,
                       hosted=tuple(dict.fromkeys(hosted)))


def _spec(requirement: str) -> Tuple[str, Optional[str]]:
    """(package name, the release it pins): "11.8" from "pytorch-cuda=11.8", "==11.8*", "[version='11.8']"."""
    requirement = requirement.split("->", 1)[0].strip()
    match = _SPEC.match(requirement)
    if match is None:
        return requirement, None
    raw = match.group("bracket") or match.group("version") or ""
    pinned = re.fullmatch(r"={0,2}\s*(\d+(?:\.\d+)*)(?:\.?\*)?", raw.strip())
    return match.group("name").lower(), pinned.group(1) if pinned else None


def _major_minor(version: str) -> Tuple[int, ...]:
    return version_tuple(version)[:2]


def _from_floor(row: Mapping[str, Any], version: Optional[str]) -> bool:
    """The release asked for (or, unpinned, every release the row lists) is at or past the row's
    ``from_version``, compared to the floor's precision ("11": the major, "9.1": major.minor)."""
    floor = row.get("from_version")
    if not floor:
        return True
    depth = len(version_tuple(floor))
    versions = [version] if version else list(row.get("versions", ()))
    return bool(versions) and all(version_tuple(v)[:depth] >= version_tuple(floor) for v in versions)


def _platform_cause(row: Mapping[str, Any], version: Optional[str],
                    search: CondaSearch) -> Optional[Tuple[Optional[str]]]:
    """(the subdir shown, or None where the list names none) when the row proves this platform has
    no build: a subdir it never builds for, or one outside the only ones it builds for. With no
    subdir shown: the pinned release is one the row's channels publish, one of them was searched on
    anaconda.org itself (a mirror may lack files), and only some platforms have it, so the platform
    solved for is not one of those."""
    unless, only_for = set(row.get("unless_channels", ())), set(row.get("when_searched", ()))
    if any(c.rsplit("/", 1)[-1] in unless for c in search.channels) or not _from_floor(row, version):
        return None
    if only_for and not any(c.rsplit("/", 1)[-1] in only_for for c in search.channels):
        return None  # the row speaks of those channels' packages alone: one of them must be searched
    subdirs = set(search.subdirs)
    never = [s for s in search.subdirs if s in row.get("never_subdirs", ())]
    only = row.get("only_subdirs", ())
    outside = [s for s in search.subdirs if only and s not in only]
    if len(subdirs) == 1 and (never or outside):
        return ((never or outside)[0],)
    if not subdirs and only and version and set(search.hosted) & set(row.get("channels", ())):
        return (None,)
    return None


def _cause(name: str, version: Optional[str], rows: Sequence[Mapping[str, Any]],
           search: CondaSearch) -> Optional[MissingPackage]:
    for row in rows:
        if name not in row.get("packages", ()):
            continue
        sources = tuple(row.get("source", ()))
        platform = _platform_cause(row, version, search)
        if platform is not None:
            return MissingPackage(name, version, "platform", str(row["why"]), subdir=platform[0],
                                  sources=sources)
        published = list(row.get("channels", ()))
        versions = list(row.get("versions", ()))
        if version and versions and (not search.channels or set(search.channels) & set(published)) \
                and _major_minor(version) not in {_major_minor(v) for v in versions}:
            # Newer than every version published: the channel stopped (its own family of causes).
            newer = all(_major_minor(version) > _major_minor(v) for v in versions) and row.get("ended")
            return MissingPackage(name, version, "ended" if newer else "version", str(row["why"]),
                                  versions=tuple(versions), sources=sources)
    return None


def conda_checks(not_found: Sequence[str], search: Optional[CondaSearch],
                 rows: Sequence[Mapping[str, Any]]) -> Optional[CondaSearch]:
    """The search with the commands that tell, for each missing package, who publishes it where."""
    if search is None:
        return None
    checks: List[str] = []
    subdir = search.subdirs[0] if search.subdirs else None
    for requirement in not_found[:3]:
        name, _ = _spec(requirement)
        own = [str(row["check"]) for row in rows if name in row.get("packages", ()) and row.get("check")]
        if own:
            checks.extend(own)
        elif "conda-forge" not in search.channels:
            where = f" --platform {subdir}" if subdir else ""
            checks.append(f"conda search -c conda-forge '{name}'{where}  (whether conda-forge, not searched, "
                          "has it)")
        else:
            checks.append(f"conda search '{name}' --info  (the versions and platforms the channels have)")
    return dataclasses.replace(search, checks=tuple(dict.fromkeys(checks)))


def conda_missing(not_found: Sequence[str], search: Optional[CondaSearch],
                  rows: Sequence[Mapping[str, Any]]) -> List[MissingPackage]:
    """For each package the channels did not have, the cause the data proves (none: not listed)."""
    if search is None:
        return []
    found: List[MissingPackage] = []
    for requirement in not_found:
        name, version = _spec(requirement)
        cause = _cause(name, version, rows, search)
        if cause is not None:
            found.append(cause)
    return found
