"""Projects' own wheel pages, read by ``kb refresh --wheel-pages`` into the package snapshot.

Projects that publish CUDA builds outside the package index (PyG's ``data.pyg.org/whl``,
OpenMMLab's ``download.openmmlab.com/mmcv/dist``, GitHub release assets) are listed as pages in
``wheel_pages.json``: an entry page or a URL template over the torch builds in the data, how deep
to follow the links it lists, and its source. Which packages they hold is read from the pages:
every wheel or source file they list is parsed by ``kb.pkgmeta`` (name, version, local label,
tags), and the page that lists a file is the find-links page a plan passes to pip. Nothing here
names a package. All I/O goes through the ``fetch`` callable (``Host.fetch_url``).
"""

from __future__ import annotations

import json
import urllib.parse
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from torchsmith.errors import FetchError
from torchsmith.kb.pkgmeta import (
    IndexFile,
    PackageRecord,
    ReleaseRecord,
    files_by_version,
    parse_index_page,
    split_filename,
)

__all__ = ["PAGE", "Budget", "Listed", "apply_wheel_pages", "expand", "merge_records", "read_wheel_pages",
           "records_from_listed"]

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

Fetch = Callable[[str, float], str]
Listed = Tuple[str, IndexFile]  # (the page that lists the file, the file)
MAX_PAGES = 400  # per table row: a runaway page (a link loop, a huge tree) stops here
SECONDS = 120.0  # all pages together: a refresh on a slow or closed network still ends
WORKERS = 8  # pages read at once
PAGE = "wheel page"  # the ``kind`` of what refresh read from a project's page


class Budget:
    """One deadline for every page, and the hosts that did not answer (their other pages are
    skipped: a closed network costs one failed connection per host and worker, not one per page).
    Shared by the worker threads."""

    def __init__(self, seconds: float, clock: Callable[[], float]) -> None:
        import threading

        self.clock = clock
        self.deadline = clock() + seconds
        self.down: Set[str] = set()
        self.skipped: Dict[Tuple[int, str], int] = {}  # (table row, why) -> pages not read
        self.lock = threading.Lock()

    def allows(self, url: str, row: int = 0) -> bool:
        host = urllib.parse.urlparse(url).netloc
        with self.lock:
            why = ("its host did not answer" if host in self.down
                   else "past the deadline" if self.clock() >= self.deadline else "")
            if why:
                self.skipped[(row, why)] = self.skipped.get((row, why), 0) + 1
        return not why

    def timeout(self, timeout: float) -> float:
        return max(0.1, min(timeout, self.deadline - self.clock()))

    def failed(self, url: str, exc: FetchError) -> str:
        if exc.status is None:  # no HTTP answer at all: the host is unreachable from here
            with self.lock:
                self.down.add(urllib.parse.urlparse(url).netloc)
        return "not found" if exc.status == 404 else "failed"


def expand(template: str, builds: Sequence[Tuple[str, str]]) -> List[str]:
    """A URL template over ``(torch release, variant)`` builds: ``{torch}`` (2.5.0), ``{series}``
    (2.5) and ``{variant}`` (cu124); a URL without fields is itself."""
    if "{" not in template:
        return [template]
    urls: List[str] = []
    for torch, variant in builds:
        series = ".".join(torch.split(".")[:2])
        url = template.format(torch=torch, series=series, variant=variant)
        if url not in urls:
            urls.append(url)
    return urls


def _github_assets(text: str, api_url: str) -> List[Listed]:
    """GitHub's "list releases" JSON: each asset with the release's expanded-assets page, which
    pip takes as a find-links page (the API URL itself is not one)."""
    parts = urllib.parse.urlparse(api_url).path.split("/")  # .../repos/{owner}/{repo}/releases
    at = parts.index("repos") if "repos" in parts else 1
    owner_repo = "/".join(parts[at + 1:at + 3])
    found: List[Listed] = []
    releases = json.loads(text)
    for release in releases if isinstance(releases, list) else ():
        if not isinstance(release, dict) or release.get("draft"):
            continue
        page = f"https://github.com/{owner_repo}/releases/expanded_assets/{release.get('tag_name', '')}"
        for asset in release.get("assets") or ():
            name, url = asset.get("name"), asset.get("browser_download_url")
            if isinstance(name, str) and isinstance(url, str) and split_filename(name) is not None:
                found.append((page, IndexFile(name, url, "", False, str(asset.get("updated_at") or "")[:10])))
    return found


def _crawl(entry: str, follow: int, fetch: Fetch, timeout: float, read: List[Dict[str, Any]], *,
           budget: Budget, row: int = 0) -> List[Listed]:
    """The files listed on ``entry`` and on the pages it links to, ``follow`` levels down and
    never above the entry's own directory."""
    root = entry.rsplit("/", 1)[0] + "/"
    queue: List[Tuple[str, int]] = [(entry, 0)]
    seen: Set[str] = {entry}
    found: List[Listed] = []
    while queue and len(seen) <= MAX_PAGES:
        url, depth = queue.pop(0)
        if not budget.allows(url, row):
            continue
        try:
            text = fetch(url, budget.timeout(timeout))
        except FetchError as exc:
            read.append({"url": url, "status": budget.failed(url, exc)})
            continue
        try:
            files = parse_index_page(text, url)
        except ValueError:
            read.append({"url": url, "status": "not a page"})
            continue
        read.append({"url": url, "status": "ok", "files": sum(split_filename(f.filename) is not None
                                                             for f in files)})
        for item in files:
            if split_filename(item.filename) is not None:
                found.append((url, item))
            elif depth < follow and item.url.startswith(root) and item.url not in seen:
                seen.add(item.url)
                queue.append((item.url, depth + 1))
    return found


def _entry(task: Tuple[int, Mapping[str, Any], str], fetch: Fetch, timeout: float,
           budget: Budget) -> Tuple[List[Listed], List[Dict[str, Any]]]:
    """One entry page of one table row: (the files it lists, what was read)."""
    index, row, url = task
    read: List[Dict[str, Any]] = []
    if row.get("shape") != "github-releases":
        return _crawl(url, int(row.get("follow", 0)), fetch, timeout, read, budget=budget, row=index), read
    if not budget.allows(url, index):
        return [], read
    try:
        found = _github_assets(fetch(url, budget.timeout(timeout)), url)
        read.append({"url": url, "status": "ok"})
        return found, read
    except FetchError as exc:
        read.append({"url": url, "status": budget.failed(url, exc)})
    except ValueError:
        read.append({"url": url, "status": "not a page"})
    return [], read


def read_wheel_pages(rows: Sequence[Mapping[str, Any]], fetch: Fetch, *, builds: Sequence[Tuple[str, str]],
                     timeout: float, read: List[Dict[str, Any]], seconds: float = SECONDS,
                     clock: Optional[Callable[[], float]] = None, workers: int = WORKERS) -> List[Listed]:
    """Every file the table's pages list, within ``seconds`` in all, ``workers`` pages at once.
    The rows take turns, newest build first, so a deadline cuts every row's oldest builds, not
    the last rows. A page that fails is noted in ``read``, never fatal; pages left unread
    (deadline, a host that did not answer) are counted there, one line per row and reason."""
    import itertools
    import time
    from concurrent.futures import ThreadPoolExecutor

    budget = Budget(seconds, clock or time.monotonic)
    per_row = [[(i, row, url) for url in expand(str(row["url"]), builds)] for i, row in enumerate(rows)]
    tasks = [t for turn in itertools.zip_longest(*per_row) for t in turn if t is not None]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(lambda task: _entry(task, fetch, timeout, budget), tasks))
    found: List[Listed] = []
    for files, log in results:  # in the tasks' order: the same on every run
        found.extend(files)
        read.extend(dict(entry, kind=PAGE) for entry in log)
    read.extend({"url": str(rows[i]["url"]), "status": f"skipped {count} page(s): {why}", "kind": PAGE}
                for (i, why), count in sorted(budget.skipped.items()))
    return found


def records_from_listed(listed: Sequence[Listed], retrieved: str) -> List[PackageRecord]:
    """One record per package the pages list; one release per version and listing page (the same
    version on a cu121 and a cu124 page are two builds)."""
    from packaging.version import Version

    pages: Dict[str, List[IndexFile]] = {}
    for page, item in listed:
        pages.setdefault(page, []).append(item)
    grouped: Dict[str, Dict[Tuple[str, str], Dict[str, Any]]] = {}
    for page, items in pages.items():
        for (name, version), entry in files_by_version(items).items():
            grouped.setdefault(name, {})[(version, page)] = entry
    records: List[PackageRecord] = []
    for name, releases in sorted(grouped.items()):
        rows = [ReleaseRecord(version, (), "", tuple(sorted(e["wheels"])), e["sdist"], "none", e["up"], page,
                              name) for (version, page), e in releases.items()]
        rows.sort(key=lambda r: (Version(r.version), r.url), reverse=True)
        records.append(PackageRecord(name, rows[0].url, retrieved, tuple(rows)))
    return records


def merge_records(document: Mapping[str, Any], records: Sequence[PackageRecord]) -> Dict[str, Any]:
    """The snapshot with each page-read release added to its package (a package the snapshot
    lacks is added whole); a release already there (same version and page) is kept as it was."""
    out = dict(document)
    packages = [dict(p) for p in document.get("packages", ())]
    by_name = {str(p["name"]): p for p in packages}
    for record in records:
        data = record.to_json()
        known = by_name.get(record.name)
        if known is None:
            data["from_wheel_pages"] = True
            packages.append(data)
            continue
        have = {(str(r["version"]), str(r.get("url", ""))) for r in known["releases"]}
        extra = [r for r in data["releases"] if (r["version"], r.get("url", "")) not in have]
        known["releases"] = list(known["releases"]) + extra
    out["packages"] = packages
    return out


def apply_wheel_pages(packaged: KnowledgeBase, files: Dict[str, Any], rows: Sequence[Mapping[str, Any]],
                      fetch: Fetch, *, timeout: float, date: str, read: List[Dict[str, Any]],
                      seconds: float = SECONDS) -> Dict[str, int]:
    """Read the pages into ``files["package_meta.json"]`` (the refreshed snapshot, else the
    packaged one); returns how many page-read releases each package got."""
    from torchsmith.versions import version_tuple

    builds = [(release.version, variant.name) for release in packaged.releases
              if version_tuple(release.version) >= (2, 0) for variant in release.variants]
    listed = read_wheel_pages(rows, fetch, builds=builds, timeout=timeout, read=read, seconds=seconds)
    records = records_from_listed(listed, date)
    base = files.get("package_meta.json") or packaged.document("package_meta")
    files["package_meta.json"] = merge_records(base, records)
    return {record.name: len(record.releases) for record in records}
