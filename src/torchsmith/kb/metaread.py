"""Read packages' published metadata live, from the index the user configured for pip or uv.

Through ``Host.fetch_url`` only: the project page (PEP 503 HTML, or PEP 691 JSON when the index
answers JSON), then, for the newest releases, the separate core-metadata file PEP 658/714
publishes next to a wheel (``<wheel url>.metadata``): never a wheel itself. The user's index
comes from :func:`torchsmith.kb.refresh.configured_indexes`; with none configured nothing is
read (torchsmith assumes no registry) and the plan says it could not check.
"""

from __future__ import annotations

import datetime
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.errors import FetchError
from torchsmith.kb.pkgmeta import (
    PackageRecord,
    canonical,
    parse_core_metadata,
    parse_index_page,
    records_from_files,
    split_filename,
)
from torchsmith.redact import redact, strip_credentials

__all__ = ["read_package", "read_unknown"]

Fetch = Callable[[str, float], str]
SKIP = ("torch", "torchvision", "torchaudio", "tensorflow", "jax")


def read_package(fetch: Fetch, index: str, name: str, *, timeout: float = 5.0, today: str = "",
                 most: int = 8) -> Optional[PackageRecord]:
    """``name``'s record from ``index``; None when the index has no such project (404).

    The core-metadata files of the ``most`` newest releases are read; older releases keep
    their file facts (tags, Requires-Python) with ``metadata: none``. Raises FetchError when
    the index cannot be read."""
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
        if split is None or not split[2] or not entry.core_metadata or entry.yanked:
            continue
        newest.setdefault(split[1], entry.url + ".metadata")
    from packaging.version import InvalidVersion, Version

    def order(version: str) -> Version:
        try:
            return Version(version)
        except InvalidVersion:
            return Version("0")

    metadata: Dict[str, Tuple[Tuple[str, ...], str, str]] = {}
    for version in sorted(newest, key=order, reverse=True)[:most]:
        try:
            requires, requires_python = parse_core_metadata(fetch(newest[version], timeout))
        except FetchError:
            continue  # the page promised a file the server does not give: the release stays unread
        metadata[version] = (requires, requires_python, "pep658")
    date = today or datetime.date.today().isoformat()
    record = records_from_files(name, files, redact(strip_credentials(page)), date, metadata)
    return PackageRecord(record.name, record.source, record.retrieved, record.releases, live=True)


def read_unknown(names: Sequence[str], known: Sequence[str], fetch: Fetch, indexes: Sequence[Tuple[str, str]],
                 *, timeout: float = 5.0) -> Tuple[Tuple[PackageRecord, ...], Tuple[Tuple[str, str], ...]]:
    """(records read, (name, why not) for the rest) for the names no shipped data covers.

    ``indexes``: (url, where it is configured), as ``configured_indexes`` returns them."""
    wanted = [canonical(n) for n in names if canonical(n) not in SKIP and canonical(n) not in known]
    if not wanted:
        return (), ()
    if not indexes:
        why = ("its published metadata is not in the shipped snapshot, and no package index is configured "
               "for pip or uv (set PIP_INDEX_URL or index-url in pip.conf to let torchsmith read it)")
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
                found = read_package(fetch, url, name, timeout=timeout)
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
            unread.append((name, "its published metadata is not in the shipped snapshot, and "
                           + "; ".join(misses)))
    return tuple(records), tuple(unread)


def snapshot_names(document: Mapping[str, object]) -> List[str]:
    """Every package the shipped snapshot names (read or found absent)."""
    packages = document.get("packages")
    return [canonical(str(p["name"])) for p in packages if isinstance(p, dict)] \
        if isinstance(packages, list) else []


def refresh_snapshot(packaged: Mapping[str, Any], fetch: Fetch, index: str, *, torch_newest: str,
                     today: str, timeout: float = 20.0, read: Optional[List[Dict[str, object]]] = None
                     ) -> Dict[str, object]:
    """The snapshot document re-read from ``index`` (`kb refresh`): the same packages, by name.

    A release whose index gives no core-metadata file keeps what the packaged snapshot read of
    it; releases older than the packaged snapshot's oldest are left out (it starts at torch 2.0);
    a package the index does not have stays as packaged."""
    from torchsmith.kb.pkgmeta import ReleaseRecord

    packages: List[Dict[str, object]] = []
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
        before = {str(r["version"]): ReleaseRecord.from_json(r) for r in old.get("releases", [])}
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
                    release.url).to_json())
            else:
                merged.append(release.to_json())
        packages.append({"name": name, "source": new.source, "retrieved": today, "releases": merged})
    document = {key: value for key, value in packaged.items() if key != "packages"}
    document.update(retrieved=today, index=redact(strip_credentials(index)), torch_newest=torch_newest,
                    packages=packages)
    return document


def _order(version: str) -> Tuple[int, ...]:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version).release
    except InvalidVersion:
        return ()
