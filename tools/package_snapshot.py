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

from torchsmith.kb.pkgmeta import (
    IndexFile,
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


def release_metadata(files: List[IndexFile]) -> Tuple[Tuple[str, ...], str, str]:
    wheel = _pick_wheel(files)
    if wheel is None:
        return (), "", "none"
    try:
        if wheel.core_metadata:
            text, how = _get(wheel.url + ".metadata").decode("utf-8", "replace"), "pep658"
        else:
            text, how = wheel_metadata(wheel.url) or "", "wheel"
    except OSError as exc:
        print(f"  {wheel.filename}: {exc}", file=sys.stderr)
        return (), "", "none"
    if not text:
        return (), "", "none"
    requires, requires_python = parse_core_metadata(text)
    return requires, requires_python, how


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
        metadata = dict(zip(recent, pool.map(release_metadata, recent.values())))
    record = records_from_files(name, kept, page, today, metadata)
    print(f"{name}: {len(record.releases)} releases", file=sys.stderr)
    return record.to_json()


def _pre(version: str) -> bool:
    from packaging.version import Version

    return Version(version).is_prerelease


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple"))
    parser.add_argument("--since", default="2023-03-15", help="torch 2.0.0's release date")
    parser.add_argument("--out", default=os.path.join(DATA, "package_meta.json"))
    parser.add_argument("--packages", help="comma-separated names instead of the tables' (test fixtures)")
    args = parser.parse_args()
    today = datetime.date.today().isoformat()
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
                 "METADATA read by range requests). Written by tools/package_snapshot.py; "
                 "`torchsmith kb refresh` updates it."),
        "retrieved": today, "index": args.index, "torch_newest": torch_newest, "torch_source": torch_page,
        "packages": packages,
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    print(f"wrote {args.out}: {len(packages)} packages, torch newest {torch_newest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
