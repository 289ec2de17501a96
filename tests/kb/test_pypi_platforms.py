"""torch_releases.json's pypi_default against the platforms PyPI holds torch wheels for.

The record (tests/kb/data/pypi_torch_platforms.json) is written by tools/pypi_platforms.py from
the index's own file names; the data may name a PyPI build only where that release has a wheel.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parents[2]
RECORD = json.loads((REPO / "tests" / "kb" / "data" / "pypi_torch_platforms.json").read_text())
RELEASES = json.loads((REPO / "src" / "torchsmith" / "kb" / "data" / "torch_releases.json").read_text())


def test_pypi_default_names_only_platforms_pypi_has_wheels_for() -> None:
    recorded: Dict[str, List[str]] = RECORD["platforms"]
    wrong = [f"{row['version']}: {platform}" for row in RELEASES["releases"]
             for platform in row["pypi_default"] if platform not in recorded.get(row["version"], [])]
    assert not wrong, f"pypi_default names a platform PyPI has no wheel for (re-record with " \
                      f"tools/pypi_platforms.py if the data is newer than {RECORD['retrieved']}): {wrong}"


def test_the_record_reaches_the_datas_newest_release() -> None:
    newest = RELEASES["releases"][0]["version"]
    assert newest in RECORD["platforms"], f"the record ({RECORD['retrieved']}) stops short of {newest}"


def test_windows_wheels_on_pypi_begin_with_1_7() -> None:
    windows = {v for v, platforms in RECORD["platforms"].items() if "windows-x86_64" in platforms}
    assert "1.7.0" in windows and not windows & {"1.5.1", "1.6.0"}


def test_the_recorder_reads_platforms_from_file_names() -> None:
    sys.path.insert(0, str(REPO / "tools"))
    from pypi_platforms import platforms_per_release

    page = json.dumps({"meta": {"api-version": "1.0"}, "name": "torch", "files": [
        {"filename": name, "url": f"https://example.invalid/{name}", "hashes": {}} for name in (
            "torch-1.6.0-cp38-cp38-manylinux1_x86_64.whl", "torch-1.6.0-cp38-none-macosx_10_9_x86_64.whl",
            "torch-1.7.0-cp38-cp38-win_amd64.whl", "torch-0.1.2.post2.tar.gz",
            "torch-2.0.0rc1-cp310-cp310-win_amd64.whl")]})
    assert platforms_per_release(page, "https://example.invalid/simple/torch/") == {
        "1.6.0": ["linux-x86_64", "macos-x86_64"], "1.7.0": ["windows-x86_64"]}
