"""`torchsmith kb info|show` in process, and the loader's own version ordering."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

from torchsmith.cli import main
from torchsmith.kb import DATA_DIR
from torchsmith.kb.loader import version_key
from torchsmith.kb.model import TABLE_FILES


def test_info_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "info", "--json"]) == 0
    envelope = json.loads(capsys.readouterr().out)
    data = envelope["data"]
    manifest = json.loads((Path(DATA_DIR) / "manifest.json").read_text(encoding="utf-8"))
    assert envelope["kb_version"] == data["kb_version"] == manifest["kb_version"]
    assert data["overlay"] is None
    assert (data["newest_release"], data["oldest_release"]) == ("2.15.0", "1.0.0")
    assert set(data["tables"]) == set(TABLE_FILES)
    assert data["tables"]["releases"]["rows"] >= 50


@pytest.mark.parametrize("table", sorted(TABLE_FILES))
def test_show_every_table(table: str, capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCHSMITH_COLUMNS")  # 80 columns, as piped
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["kb", "show", table, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["data"]["rows"]
    assert rows and all(row["sources"] for row in rows)
    assert main(["kb", "show", table]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(f"({len(rows)} rows; ? = unverified; `--json` for every field and source)")
    assert "('" not in out and "=(" not in out  # no Python reprs
    assert all(len(line) <= 80 or len(line.split()) == 1 for line in out.splitlines())  # a URL is whole


def test_show_gpus_reads_like_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "show", "gpus"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "family" in line)
    assert header.split()[:2] == ["?", "name"]
    assert re.search(r"^ +GeForce GTX 1080 +6\.1 +Pascal ", out, re.M)


def test_show_an_unknown_table_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "show", "mmcv"]) == 2
    assert "invalid choice: 'mmcv'" in capsys.readouterr().err


def test_kb_option_names_a_missing_overlay(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "info", "--kb", "/nonexistent/overlay"]) == 1
    assert "error[kb-invalid]: knowledge base overlay /nonexistent/overlay: no such directory" in \
        capsys.readouterr().err


_VERSIONS = st.builds(
    lambda release, pre, post: ".".join(map(str, release)) + pre + post,
    st.lists(st.integers(0, 12), min_size=1, max_size=4),
    st.sampled_from(["", "a0", "a1", "b2", "rc1", "rc10"]),
    st.sampled_from(["", ".post1", ".post3"]),
)


@given(_VERSIONS, _VERSIONS)
def test_version_key_orders_like_packaging(a: str, b: str) -> None:
    pa, pb = Version(a), Version(b)
    ka, kb = version_key(a), version_key(b)
    assert (ka < kb) == (pa < pb)
    assert (ka == kb) == (pa == pb)


def test_version_key_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="not a version"):
        version_key("2.x")
    assert version_key("2.0.0a0+8aa34602.nv23.03") < version_key("2.0.0")
