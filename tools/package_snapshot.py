"""Write kb/data/package_meta.json: the published metadata of the packages the data's tables name.

    python tools/package_snapshot.py [--index URL] [--since 2023-03-15] [--out PATH]

Which packages: every package named in companions.json (torch_requirements, paired_wheels) and
downstream.json, read from those files (not a list kept here), plus torch itself (its newest
release dates the snapshot). For each, the PEP 691 JSON page of the index; for each release
uploaded since ``--since`` (torch 2.0's release date), the Requires-Dist and Requires-Python of
one wheel: its PEP 658 ``.metadata`` file when the index serves one, else the wheel's
``*.dist-info/METADATA`` member read by HTTP range requests (the zip's central directory, then
that member: a few kilobytes, never the whole wheel). Source-only releases keep their file
facts with ``metadata: none``.

Each release keeps the Requires-Dist off the torch stack that lead to torch (``depends``),
followed as a live plan follows them (``torchsmith.kb.metaread.with_chains``: the newest
releases' requirements, three levels deep, each package's PEP 658 files only); the packages
they lead through go to ``package_deps.json``. ``--depends-only`` adds just that to the
existing snapshot (its other readings unchanged).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import struct
import sys
import urllib.error
import urllib.request
import zlib
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from torchsmith.errors import FetchError
from torchsmith.kb.metaread import SNAPSHOT_FOLLOW_MOST, SNAPSHOT_FOLLOW_SECONDS, with_chains
from torchsmith.kb.pkgmeta import (
    IndexFile,
    PackageRecord,
    core_dependencies,
    parse_core_metadata,
    parse_index_page,
    records_from_files,
    split_filename,
)

DATA = os.path.join(os.path.dirname(__file__), "..", "src", "torchsmith", "kb", "data")
JSON_ACCEPT = "application/vnd.pypi.simple.v1+json"


def _get(url: str, headers: Optional[Dict[str, str]] = None, timeout: float = 60) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "torchsmith-snapshot", **(headers or {})})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body: bytes = response.read()
        return body


def table_packages() -> List[str]:
    names: List[str] = []
    with open(os.path.join(DATA, "companions.json"), encoding="utf-8") as handle:
        companions = json.load(handle)
    for row in companions["torch_requirements"]:
        names.append(row["package"])
    for row in companions["paired_wheels"]:
        for text in row.get("versions") or ():
            package, _, version = text.rpartition(" ")
            names.append(package if package and version else row["package"])
        names.append(row["package"])
        names.extend(row.get("packages") or ())
    with open(os.path.join(DATA, "downstream.json"), encoding="utf-8") as handle:
        names.extend(row["package"] for row in json.load(handle)["rows"])
    return sorted({n.replace("_", "-").lower() for n in names if n and n != "pyg"})


def wheel_metadata(url: str) -> Optional[str]:
    """The METADATA member of the wheel at ``url``, by range requests only."""
    tail = _get(url, {"Range": "bytes=-65536"})
    end = tail.rfind(b"PK\x05\x06")
    if end < 0:
        return None
    cd_size, cd_offset = struct.unpack("<II", tail[end + 12:end + 20])
    total = int(_head_length(url))
    start_in_tail = cd_offset - (total - len(tail))
    directory = tail[start_in_tail:start_in_tail + cd_size] if start_in_tail >= 0 else \
        _get(url, {"Range": f"bytes={cd_offset}-{cd_offset + cd_size - 1}"})
    position = 0
    while position + 46 <= len(directory) and directory[position:position + 4] == b"PK\x01\x02":
        method, = struct.unpack("<H", directory[position + 10:position + 12])
        comp_size, = struct.unpack("<I", directory[position + 20:position + 24])
        name_len, extra_len, comment_len = struct.unpack("<HHH", directory[position + 28:position + 34])
        local_offset, = struct.unpack("<I", directory[position + 42:position + 46])
        name = directory[position + 46:position + 46 + name_len].decode("utf-8", "replace")
        position += 46 + name_len + extra_len + comment_len
        if not (name.endswith(".dist-info/METADATA") and name.count("/") == 1):
            continue
        chunk = _get(url, {"Range": f"bytes={local_offset}-{local_offset + 30 + 1024 + comp_size}"})
        lname, lextra = struct.unpack("<HH", chunk[26:30])
        data = chunk[30 + lname + lextra:30 + lname + lextra + comp_size]
        raw = zlib.decompress(data, -15) if method == 8 else data
        return raw.decode("utf-8", "replace")
    return None


def _head_length(url: str) -> str:
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "torchsmith-snapshot"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return str(response.headers["Content-Length"])


def _pick_wheel(files: List[IndexFile]) -> Optional[IndexFile]:
    wheels = [f for f in files if f.filename.endswith(".whl")]
    wheels.sort(key=lambda f: ("x86_64" not in f.filename, "linux" not in f.filename, f.filename))
    return wheels[0] if wheels else None


Metadata = Tuple[Tuple[str, ...], str, str, Tuple[str, ...]]  # requires, Requires-Python, how, depends


def release_metadata(files: List[IndexFile]) -> Metadata:
    """One wheel's core metadata: its PEP 658 file (an index may serve it without advertising
    it), else the wheel's METADATA member by range requests."""
    wheel = _pick_wheel(files)
    if wheel is None:
        return (), "", "none", ()
    try:
        text, how = _get(wheel.url + ".metadata").decode("utf-8", "replace"), "pep658"
    except urllib.error.HTTPError:
        text, how = "", "wheel"
    except OSError as exc:
        print(f"  {wheel.filename}: {exc}", file=sys.stderr)
        return (), "", "none", ()
    try:
        text = text or wheel_metadata(wheel.url) or ""
    except OSError as exc:
        print(f"  {wheel.filename}: {exc}", file=sys.stderr)
        return (), "", "none", ()
    if not text:
        return (), "", "none", ()
    requires, requires_python = parse_core_metadata(text)
    return requires, requires_python, how, core_dependencies(text)


def fetch_text(url: str, timeout: float) -> str:
    """``Host.fetch_url``'s contract over urllib (the follower reads through it). A wheel's
    PEP 658 file the index does not serve is read from the wheel's METADATA by range requests."""
    try:
        return _get(url, {"Accept": JSON_ACCEPT}, timeout=timeout).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        if exc.code == 404 and url.endswith(".whl.metadata"):
            try:
                text = wheel_metadata(url[:-len(".metadata")])
            except OSError:
                text = None
            if text:
                return text
        raise FetchError(f"{url}: HTTP {exc.code}", status=exc.code) from None
    except OSError as exc:
        raise FetchError(f"{url}: {exc}") from None


def snapshot_package(index: str, name: str, since: str, today: str) -> Dict[str, object]:
    page = f"{index.rstrip('/')}/{name}/"
    try:
        files = parse_index_page(_get(page, {"Accept": JSON_ACCEPT}).decode("utf-8"), page)
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            raise
        print(f"{name}: not on {index}", file=sys.stderr)
        return {"name": name, "source": page, "retrieved": today, "releases": [],
                "note": "not on this index (published elsewhere: its own pages or release assets)"}
    by_version: Dict[str, List[IndexFile]] = {}
    for entry in files:
        split = split_filename(entry.filename)
        if split is None or entry.yanked:
            continue
        by_version.setdefault(split[1], []).append(entry)
    recent = {v: fs for v, fs in by_version.items()
              if max(f.uploaded for f in fs) >= since and not _pre(v)}
    kept = [f for fs in recent.values() for f in fs]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        read = dict(zip(recent, pool.map(release_metadata, recent.values())))
    metadata = {v: m[:3] for v, m in read.items()}
    record = records_from_files(name, kept, page, today, metadata, depends={v: m[3] for v, m in read.items()})
    print(f"{name}: {len(record.releases)} releases", file=sys.stderr)
    return record.to_json()


def _pre(version: str) -> bool:
    from packaging.version import Version

    return Version(version).is_prerelease


def depends_of(index: str, package: Dict[str, object]) -> Dict[str, Tuple[str, ...]]:
    """version -> Requires-Dist off the stack, for the releases the snapshot read (``--depends-only``)."""
    name = str(package["name"])
    page = f"{index.rstrip('/')}/{name}/"
    files = parse_index_page(_get(page, {"Accept": JSON_ACCEPT}).decode("utf-8"), page)
    read = {str(r["version"]) for r in package["releases"]  # type: ignore[attr-defined]
            if r.get("metadata", "none") != "none"}
    by_version: Dict[str, List[IndexFile]] = {}
    for entry in files:
        split = split_filename(entry.filename)
        if split is not None and split[1] in read and not entry.yanked:
            by_version.setdefault(split[1], []).append(entry)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        found = dict(zip(by_version, pool.map(release_metadata, by_version.values())))
    print(f"{name}: dependencies of {len(found)} releases", file=sys.stderr)
    return {v: m[3] for v, m in found.items()}


def with_dependency_chains(document: Dict[str, object], index: str, today: str,
                           depends: Dict[str, Dict[str, Tuple[str, ...]]]) -> Dict[str, object]:
    """``package_deps.json``; ``document``'s releases keep only the dependencies that lead to torch."""
    from torchsmith.kb.depchain import dependency_document

    packages: List[Dict[str, object]] = document["packages"]  # type: ignore[assignment]
    records = []
    for package in packages:
        for release in package["releases"]:  # type: ignore[attr-defined]
            lines = depends.get(str(package["name"]), {}).get(str(release["version"]))
            if lines:
                release["depends"] = list(lines)
        records.append(PackageRecord.from_json(package))
    kept, through = with_chains(records, fetch_text, [(index, "")], timeout=60, probe=True,
                                most=SNAPSHOT_FOLLOW_MOST, seconds=SNAPSHOT_FOLLOW_SECONDS)
    by_name = {r.name: r for r in kept}
    for package in packages:
        record = by_name[PackageRecord.from_json(package).name]
        lines_of = {r.version: r.depends for r in record.releases}
        for release in package["releases"]:  # type: ignore[attr-defined]
            release.pop("depends", None)
            if lines_of.get(str(release["version"])):
                release["depends"] = list(lines_of[str(release["version"])])
    held = {r.name for r in through} | set(by_name)
    print(f"chains to torch lead through: {', '.join(sorted(r.name for r in through)) or 'nothing'}",
          file=sys.stderr)
    return dependency_document(through, held, retrieved=today, index=index, about=(
        "The packages the snapshot's Requires-Dist lead to torch through (the releases whose PEP 658 "
        "files were read, without wheel tags), followed as a live plan follows them. Written by "
        "tools/package_snapshot.py; `torchsmith kb refresh` updates it."))


DEPENDS_SAID = "`depends`: the other requirements that lead to torch (package_deps.json)"


def _write(path: str, document: Dict[str, object]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1, ensure_ascii=False)
        handle.write("\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple"))
    parser.add_argument("--since", default="2023-03-15", help="torch 2.0.0's release date")
    parser.add_argument("--out", default=os.path.join(DATA, "package_meta.json"))
    parser.add_argument("--deps-out", default=os.path.join(DATA, "package_deps.json"))
    parser.add_argument("--packages", help="comma-separated names instead of the tables' (test fixtures)")
    parser.add_argument("--depends-only", action="store_true",
                        help="add the dependency chains to the existing --out snapshot, nothing else")
    args = parser.parse_args()
    today = datetime.date.today().isoformat()
    if args.depends_only:
        with open(args.out, encoding="utf-8") as handle:
            document = json.load(handle)
        depends = {str(p["name"]): depends_of(args.index, p) for p in document["packages"] if p["releases"]}
        deps = with_dependency_chains(document, args.index, today, depends)
        if DEPENDS_SAID not in document["about"]:
            document["about"] = document["about"].rstrip(".") + f"; {DEPENDS_SAID} ({today})."
        _write(args.out, document)
        _write(args.deps_out, deps)
        return 0
    torch_page = f"{args.index.rstrip('/')}/torch/"
    torch_files = parse_index_page(_get(torch_page, {"Accept": JSON_ACCEPT}).decode("utf-8"), torch_page)
    torch_record = records_from_files("torch", torch_files, torch_page, today, {})
    torch_newest = next(r.version for r in torch_record.releases if not _pre(r.version))
    names = args.packages.split(",") if args.packages else table_packages()
    packages = [snapshot_package(args.index, name, args.since, today) for name in names]
    document = {
        "about": ("Published metadata of the packages " + (args.packages or "the companion and downstream "
                  "tables name") + f", every release uploaded since {args.since}"
                  " (PEP 691 pages; Requires-Dist from PEP 658 files or the wheel's "
                 "METADATA read by range requests; " + DEPENDS_SAID + "). "
                 "Written by tools/package_snapshot.py; `torchsmith kb refresh` updates it."),
        "retrieved": today, "index": args.index, "torch_newest": torch_newest, "torch_source": torch_page,
        "packages": packages,
    }
    depends = {str(p["name"]): {str(r["version"]): tuple(r.pop("depends", ())) for r in p["releases"]}
               for p in packages}
    deps = with_dependency_chains(document, args.index, today, depends)
    _write(args.out, document)
    _write(args.deps_out, deps)
    print(f"wrote {args.out}: {len(packages)} packages, torch newest {torch_newest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
