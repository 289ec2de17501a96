"""Record which platforms the index holds torch wheels for, per release (a test's ground truth).

    python tools/pypi_platforms.py [--index URL] [--out PATH]

torch_releases.json's ``pypi_default`` says which build a bare ``pip install torch`` gets from PyPI
on a platform; a platform PyPI holds no wheel of that release for must not be there (PyPI's first
Windows wheels are 1.7.0's: before that, pip on Windows found only the 0.1.2 placeholder). The
record is the project page's file names, read through the PEP 691 JSON API and reduced to our
platform names; tests/kb/test_pypi_platforms.py checks the data against it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from typing import Dict, List

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from package_snapshot import JSON_ACCEPT, _get

from torchsmith.kb.pkgmeta import parse_index_page, split_filename, tag_platforms

RECORD = os.path.join(os.path.dirname(__file__), "..", "tests", "kb", "data", "pypi_torch_platforms.json")


def platforms_per_release(page_text: str, page_url: str) -> Dict[str, List[str]]:
    """Final releases -> our platform names of their wheels (source distributions hold none)."""
    found: Dict[str, List[str]] = {}
    for file in parse_index_page(page_text, page_url):
        parts = split_filename(file.filename)
        if parts is None or not parts[2] or not parts[1].replace(".", "").isdigit():
            continue
        names = found.setdefault(parts[1], [])
        names.extend(p for p in tag_platforms(parts[2].split("-")[2]) if p not in names)
    return {version: sorted(names) for version, names in found.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", default="https://pypi.org/simple")
    parser.add_argument("--out", default=RECORD)
    args = parser.parse_args()
    page_url = f"{args.index.rstrip('/')}/torch/"
    text = _get(page_url, {"Accept": JSON_ACCEPT}).decode("utf-8")
    record = {"source": f"{page_url} (PEP 691 JSON: the wheels' file names)",
              "retrieved": datetime.date.today().isoformat(), "written_by": "tools/pypi_platforms.py",
              "platforms": platforms_per_release(text, page_url)}
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"{len(record['platforms'])} releases -> {args.out}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
