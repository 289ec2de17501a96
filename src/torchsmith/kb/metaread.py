"""Read packages' published metadata live, from the index the user configured for pip or uv.

Through ``Host.fetch_url`` only: the project page (PEP 503 HTML, or PEP 691 JSON when the index
answers JSON), then, for the newest releases, the separate core-metadata file PEP 658/714
publishes next to a wheel (``<wheel url>.metadata``): never a wheel itself. The user's index
comes from :func:`torchsmith.kb.refresh.configured_indexes`; with none configured nothing is
read (torchsmith assumes no registry) and the plan says it could not check.
"""

from __future__ import annotations

import datetime
from typing import Any, Callable, Collection, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.errors import FetchError
from torchsmith.kb.pkgmeta import (
    PackageRecord,
    canonical,
    core_dependencies,
    parse_core_metadata,
    parse_index_page,
    records_from_files,
    split_filename,
)
from torchsmith.redact import redact, strip_credentials

__all__ = ["follow_dependencies", "read_package", "read_unknown", "with_chains"]

Fetch = Callable[[str, float], str]
SKIP = ("torch", "torchvision", "torchaudio", "tensorflow", "jax")


def read_package(fetch: Fetch, index: str, name: str, *, timeout: float = 5.0, today: str = "",
                 most: int = 8, probe: bool = False, within: Sequence[str] = ()) -> Optional[PackageRecord]:
    """``name``'s record from ``index``; None when the index has no such project (404).

    The core-metadata files of the ``most`` newest releases are read; older releases keep
    their file facts (tags, Requires-Python) with ``metadata: none``. ``probe``: also ask for
    ``<wheel>.metadata`` where the page does not advertise it (an index or proxy that serves
    the file but drops the attribute; the snapshot tool). ``within``: specifiers (``==0.10.2``,
    ``>=3.3,<4``) a dependent asks for: the newest releases within them are the ones read.
    Raises FetchError when the index cannot be read."""
    page = f"{index.rstrip('/')}/{canonical(name)}/"
    try:
        files = parse_index_page(fetch(page, timeout), page)
    except FetchError as exc:
        if exc.status == 404:
            return None
        raise
    except ValueError as exc:  # a JSON page that is not JSON
        raise FetchError(f"{redact(page)}: not an index page ({exc})") from None
    newest: Dict[str, str] = {}  # version -> the metadata URL of one of its wheels
    for entry in files:
        split = split_filename(entry.filename)
        if split is None or not split[2] or not (entry.core_metadata or probe) or entry.yanked:
            continue
        newest.setdefault(split[1], entry.url + ".metadata")
    from packaging.version import InvalidVersion, Version

    def order(version: str) -> Version:
        try:
            return Version(version)
        except InvalidVersion:
            return Version("0")

    metadata: Dict[str, Tuple[Tuple[str, ...], str, str]] = {}
    depends: Dict[str, Tuple[str, ...]] = {}
    for version in _wanted(sorted(newest, key=order, reverse=True), within, most):
        try:
            text = fetch(newest[version], timeout)
        except FetchError:
            continue  # the page promised a file the server does not give: the release stays unread
        requires, requires_python = parse_core_metadata(text)
        metadata[version] = (requires, requires_python, "pep658")
        depends[version] = core_dependencies(text)
    date = today or datetime.date.today().isoformat()
    record = records_from_files(name, files, redact(strip_credentials(page)), date, metadata, depends=depends)
    return PackageRecord(record.name, record.source, record.retrieved, record.releases, live=True)


def read_unknown(names: Sequence[str], known: Sequence[str], fetch: Fetch, indexes: Sequence[Tuple[str, str]],
                 *, timeout: float = 5.0, most: int = 8, probe: bool = False, within: Sequence[str] = ()
                 ) -> Tuple[Tuple[PackageRecord, ...], Tuple[Tuple[str, str], ...]]:
    """(records read, (name, why not) for the rest) for the names no shipped data covers.

    ``indexes``: (url, where it is configured), as ``configured_indexes`` returns them."""
    wanted = [canonical(n) for n in names if canonical(n) not in SKIP and canonical(n) not in known]
    if not wanted:
        return (), ()
    if not indexes:
        why = ("its published metadata is not in the shipped snapshot, and no index-url is configured "
               "for pip or uv (torchsmith reads the index they name, never a default registry; set "
               "PIP_INDEX_URL or index-url in pip.conf to let it read this one)")
        return (), tuple((n, why) for n in wanted)
    records: List[PackageRecord] = []
    unread: List[Tuple[str, str]] = []
    down: Dict[str, str] = {}
    for name in wanted:
        found: Optional[PackageRecord] = None
        misses: List[str] = []
        for url, _where in indexes:
            if url in down:
                misses.append(down[url])
                continue
            try:
                found = read_package(fetch, url, name, timeout=timeout, most=most, probe=probe, within=within)
            except FetchError as exc:
                down[url] = f"{redact(strip_credentials(url))} could not be read ({exc.message})"
                misses.append(down[url])
                continue
            if found is not None:
                break
            misses.append(f"{redact(strip_credentials(url))} has no project {name}")
        if found is not None:
            records.append(found)
        else:
            door = ("; `torchsmith plan` reads it live once the index answers (or point PIP_INDEX_URL "
                    "or index-url in pip.conf at an index that does)" if any(u in down for u, _ in indexes)
                    else "")
            unread.append((name, "its published metadata is not in the shipped snapshot, and "
                           + "; ".join(misses) + door))
    return tuple(records), tuple(unread)


# Following Requires-Dist (whisperx -> pyannote-audio -> lightning -> torch): how far and how wide.
FOLLOW_DEPTH = 3
FOLLOW_MOST = 24  # packages read in all, beyond the requested ones
FOLLOW_SECONDS = 20.0
# The snapshot follows every table package's chains at once (kb refresh, tools/package_snapshot.py).
SNAPSHOT_FOLLOW_MOST = 200
SNAPSHOT_FOLLOW_SECONDS = 300.0


def follow_dependencies(records: Sequence[PackageRecord], known: Sequence[str], fetch: Fetch,
                        indexes: Sequence[Tuple[str, str]], *, depth: int = FOLLOW_DEPTH,
                        most: int = FOLLOW_MOST, seconds: float = FOLLOW_SECONDS,
                        timeout: float = 5.0, probe: bool = False) -> Tuple[PackageRecord, ...]:
    """The records of what ``records`` depend on (their newest releases' Requires-Dist off the torch
    stack), read level by level from the configured index: ``depth`` levels, ``most`` packages,
    within ``seconds``; ``known`` names (the snapshot's, the tables') and cycles are not read.
    What cannot be read is left out: the plan then does not see through it."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    if not indexes:
        return ()
    seen = {r.name for r in records} | {canonical(n) for n in known} | set(SKIP)
    frontier: List[PackageRecord] = list(records)
    found: List[PackageRecord] = []
    start = time.monotonic()
    for _level in range(depth):
        names: List[str] = []
        asked: Dict[str, List[str]] = {}
        for record in frontier:
            for name, spec in _dependency_names(record):
                asked.setdefault(name, []).append(spec)
                if name not in seen:
                    seen.add(name)
                    names.append(name)
        names = names[:max(0, most - len(found))]
        if not names or time.monotonic() - start > seconds:
            break
        with ThreadPoolExecutor(max_workers=min(8, len(names))) as pool:
            read = list(pool.map(lambda n, a=asked: read_unknown(
                [n], (), fetch, indexes, timeout=timeout, most=4, probe=probe, within=a[n])[0], names))
        frontier = [r for rs in read for r in rs]
        found.extend(frontier)
    return tuple(found)


def _dependency_names(record: PackageRecord, newest: int = 3) -> List[Tuple[str, str]]:
    """(name, specifier) the newest read releases require outside any extra."""
    import re

    names: List[Tuple[str, str]] = []
    for release in [r for r in record.releases if r.metadata != "none"][:newest]:
        for line in release.depends:
            if "extra" in line.partition(";")[2]:
                continue
            match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)", line)
            if match and (canonical(match.group(1)), match.group(2).strip()) not in names:
                names.append((canonical(match.group(1)), match.group(2).strip()))
    return names


def _wanted(versions: List[str], within: Sequence[str], most: int) -> List[str]:
    """The releases to read (``versions`` newest first): the ``most`` newest, or, for each
    specifier a dependent asks with, the ``most`` newest it allows (what plan/transitive.py
    looks at)."""
    if not within:
        return versions[:most]
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    chosen: List[str] = []
    for spec in dict.fromkeys(within):
        try:
            allowed = [v for v in versions if SpecifierSet(spec).contains(v, prereleases=True)]
        except InvalidSpecifier:
            allowed = versions
        chosen.extend(v for v in allowed[:most] if v not in chosen)
    return [v for v in versions if v in chosen]


def with_chains(records: Sequence[PackageRecord], fetch: Fetch, indexes: Sequence[Tuple[str, str]], *,
                most: int = FOLLOW_MOST, seconds: float = FOLLOW_SECONDS, timeout: float = 5.0,
                probe: bool = False) -> Tuple[Tuple[PackageRecord, ...], Tuple[PackageRecord, ...]]:
    """(``records`` keeping only the dependencies that lead to torch, the records of the packages
    those lead through), read by :func:`follow_dependencies` (what a live plan reads)."""
    from torchsmith.kb.depchain import compact, leading_names

    followed = follow_dependencies(records, [r.name for r in records], fetch, indexes, most=most,
                                   seconds=seconds, timeout=timeout, probe=probe)
    keep = leading_names([*records, *followed])
    return (tuple(compact(r, keep) for r in records),
            tuple(compact(r, keep, read_only=True) for r in followed if r.name in keep))


def snapshot_names(document: Mapping[str, object]) -> List[str]:
    """Every package the shipped snapshot names (read or found absent)."""
    packages = document.get("packages")
    return [canonical(str(p["name"])) for p in packages if isinstance(p, dict)] \
        if isinstance(packages, list) else []


def refresh_snapshot(packaged: Mapping[str, Any], fetch: Fetch, index: str, *, torch_newest: str,
                     today: str, timeout: float = 20.0, read: Optional[List[Dict[str, object]]] = None,
                     packaged_deps: Optional[Mapping[str, Any]] = None) -> Dict[str, Dict[str, object]]:
    """The snapshot re-read from ``index`` (`kb refresh`): ``{"package_meta.json": ...,
    "package_deps.json": ...}``, the same packages, by name, with the dependencies that lead to
    torch followed as a live plan follows them (``package_deps.json``: what they lead through).

    A release whose index gives no core-metadata file keeps what the packaged snapshot read of
    it; releases older than the packaged snapshot's oldest are left out (it starts at torch 2.0);
    a package the index does not have stays as packaged."""
    from torchsmith.kb.depchain import dependency_document, requirement_name

    packages: List[Dict[str, object]] = []
    fresh: List[PackageRecord] = []
    for old in packaged.get("packages") or []:
        name = str(old["name"])
        try:
            new = read_package(fetch, index, name, timeout=timeout, today=today)
        except FetchError as exc:
            if read is not None:
                read.append({"url": redact(f"{index.rstrip('/')}/{name}/"), "status": exc.message})
            new = None
        if new is None:
            packages.append(dict(old))
            continue
        if read is not None:
            read.append({"url": new.source, "status": "ok", "versions": len(new.releases)})
        fresh.append(new)
        packages.append({"name": name, "source": new.source, "retrieved": today,
                         "releases": _merged(new, old.get("releases", []))})
    kept, through = with_chains(fresh, fetch, [(index, "")], timeout=timeout, most=SNAPSHOT_FOLLOW_MOST,
                                seconds=SNAPSHOT_FOLLOW_SECONDS)
    # A dependency this index did not lead to keeps its packaged reading while a kept release names it.
    earlier = {canonical(str(p["name"])): p for p in (packaged_deps or {}).get("packages") or ()}
    held = {r.name for r in through} | {canonical(str(p["name"])) for p in packages} | set(earlier)
    depends = {(r.name, x.version): x.depends for r in kept for x in r.releases}
    for package in packages:
        for release in package["releases"]:  # type: ignore[attr-defined]
            lines = depends.get((canonical(str(package["name"])), release["version"]),
                                [d for d in release.get("depends", ()) if requirement_name(d) in held])
            release.pop("depends", None)
            if lines:
                release["depends"] = list(lines)
    document = {key: value for key, value in packaged.items() if key != "packages"}
    shown = redact(strip_credentials(index))
    document.update(retrieved=today, index=shown, torch_newest=torch_newest, packages=packages)
    about = str((packaged_deps or {}).get("about") or "The packages the snapshot's requirements lead to "
                "torch through, read as a live plan reads them (`torchsmith kb refresh`).")
    deps = dependency_document(through, held, retrieved=today, index=shown, about=about)
    deps["packages"].extend(_still_named(earlier, packages, {r.name for r in through}))
    return {"package_meta.json": document, "package_deps.json": deps}


def _still_named(earlier: Mapping[str, Mapping[str, Any]], packages: Sequence[Mapping[str, Any]],
                 read: Collection[str]) -> List[Mapping[str, Any]]:
    """The packaged dependency records not read again that a stored ``depends`` still names."""
    from torchsmith.kb.depchain import requirement_name

    named: List[str] = []
    frontier: List[Mapping[str, Any]] = list(packages)
    while frontier:
        package = frontier.pop()
        for release in package.get("releases") or ():
            for line in release.get("depends") or ():
                name = requirement_name(str(line))
                if name in earlier and name not in read and name not in named:
                    named.append(name)
                    frontier.append(earlier[name])
    return [earlier[n] for n in sorted(named)]


def _merged(new: PackageRecord, before_json: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """``new``'s releases as JSON; one it could not read keeps the packaged reading."""
    from torchsmith.kb.pkgmeta import ReleaseRecord

    before = {str(r["version"]): ReleaseRecord.from_json(dict(r)) for r in before_json}
    floor = min((_order(v) for v in before), default=None)
    merged = []
    for release in new.releases:
        if floor is not None and _order(release.version) < floor:
            continue
        kept = before.get(release.version)
        if release.metadata == "none" and kept is not None and kept.metadata != "none":
            merged.append(ReleaseRecord(
                release.version, kept.requires, kept.requires_python or release.requires_python,
                release.wheels, release.sdist, kept.metadata, release.uploaded or kept.uploaded,
                release.url, depends=kept.depends).to_json())
        else:
            merged.append(release.to_json())
    return merged


def _order(version: str) -> Tuple[int, ...]:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version).release
    except InvalidVersion:
        return ()
