"""Write kb/data/torch_requires.json: what each torch release declares it needs (Requires-Dist).

    python tools/torch_requires.py [--index URL] [--out PATH]

For every final torch release on the index, the core metadata of one wheel per platform family
(Linux x86_64, Linux aarch64, Windows, macOS): its PEP 658 ``.metadata`` file, else the wheel's
METADATA member by range requests (tools/package_snapshot.py's readers). torch writes its
Requires-Dist per platform (the nvidia-* wheels only on Linux, mkl only on Windows for some
releases), so each release keeps the union, each requirement once, without its version range
(the name and its environment marker are what explain reasons with: a module torch's own code
imports that no release requires is an optional dependency, one pip does not install).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import re
import struct
import sys
import urllib.error
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from package_snapshot import DATA, JSON_ACCEPT, _get, _head_length, _pre, wheel_metadata

from torchsmith.kb.pkgmeta import IndexFile, parse_index_page, split_filename
from torchsmith.kb.torch_requires import release_requires


def wheel_top_levels(url: str) -> List[str]:
    """The importable top-level names a wheel installs (its zip's file list, by range requests:
    the central directory only): packages (a directory with files), modules (``x.py``, ``x.*.so``)."""
    tail = _get(url, {"Range": "bytes=-65536"})
    end = tail.rfind(b"PK\x05\x06")
    if end < 0:
        return []
    cd_size, cd_offset = struct.unpack("<II", tail[end + 12:end + 20])
    total = int(_head_length(url))
    start = cd_offset - (total - len(tail))
    directory = tail[start:start + cd_size] if start >= 0 else \
        _get(url, {"Range": f"bytes={cd_offset}-{cd_offset + cd_size - 1}"})
    tops: List[str] = []
    position = 0
    while position + 46 <= len(directory) and directory[position:position + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack("<HHH", directory[position + 28:position + 34])
        name = directory[position + 46:position + 46 + name_len].decode("utf-8", "replace")
        position += 46 + name_len + extra_len + comment_len
        first, slash, _ = name.partition("/")
        module = first.endswith((".py", ".so", ".pyd"))
        if first.endswith((".dist-info", ".data")) or (not slash and not module):
            continue
        top = first.split(".")[0]
        if top and top not in tops:
            tops.append(top)
    return sorted(tops)


def import_names(index: str, distribution: str) -> List[str]:
    """What a distribution installs to import, read from its newest wheel (Linux x86_64 or pure)."""
    page = f"{index.rstrip('/')}/{distribution}/"
    try:
        files = parse_index_page(_get(page, {"Accept": JSON_ACCEPT}).decode("utf-8"), page)
    except urllib.error.HTTPError:
        return []
    wheels = [f for f in files if f.filename.endswith(".whl") and not f.yanked
              and ("none-any" in f.filename or "x86_64" in f.filename)]
    if not wheels:
        return []
    from packaging.version import InvalidVersion, Version

    def key(entry: IndexFile) -> Tuple[object, ...]:
        split = split_filename(entry.filename)
        try:
            return (Version(split[1]) if split else Version("0"), entry.filename)
        except InvalidVersion:
            return (Version("0"), entry.filename)

    try:
        return wheel_top_levels(max(wheels, key=key).url)
    except OSError as exc:
        print(f"  {distribution}: {exc}", file=sys.stderr)
        return []


def _metadata(wheel: IndexFile) -> str:
    try:
        return _get(wheel.url + ".metadata").decode("utf-8", "replace")
    except urllib.error.HTTPError:
        return wheel_metadata(wheel.url) or ""
    except OSError as exc:
        print(f"  {wheel.filename}: {exc}", file=sys.stderr)
        return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="https://pypi.org/simple")
    parser.add_argument("--out", default=os.path.join(DATA, "torch_requires.json"))
    args = parser.parse_args()
    page = f"{args.index.rstrip('/')}/torch/"
    files = parse_index_page(_get(page, {"Accept": JSON_ACCEPT}).decode("utf-8"), page)
    by_version: Dict[str, List[IndexFile]] = {}
    for entry in files:
        split = split_filename(entry.filename)
        if split is None or entry.yanked or not entry.filename.endswith(".whl") or _pre(split[1]):
            continue
        by_version.setdefault(split[1], []).append(entry)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        read = dict(zip(by_version, pool.map(lambda w: release_requires(w, _metadata), by_version.values())))
    from packaging.version import Version

    ordered = sorted(read.items(), key=lambda i: Version(i[0]), reverse=True)
    releases = [{"version": v, **r} for v, r in ordered if r is not None]
    names = sorted({re.split(r"[;\[ ]", r)[0].lower().replace("_", "-")
                    for release in releases for r in release["requires"]})  # type: ignore[attr-defined]
    names.append("torch")  # its own top-level names (torchgen, functorch ship in its wheel)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        imports = dict(zip(names, pool.map(lambda n: import_names(args.index, n), names)))
    document = {
        "about": "What each torch release declares it needs: the Requires-Dist and Provides-Extra of its "
                 "wheels' core metadata (one wheel per platform family, the union kept; version ranges "
                 "dropped, environment markers kept). Written by tools/torch_requires.py.",
        "source": page,
        "retrieved": datetime.date.today().isoformat(),
        "releases": releases,
        "import_names": {"about": "the top-level names torch and each distribution it requires install "
                                  "(the newest wheel's file list), so a module name is told from a "
                                  "distribution's",
                         "names": {n: i for n, i in imports.items() if i}},
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}: {len(releases)} releases, newest {releases[0]['version']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
