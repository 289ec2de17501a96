"""Every data document comes through one door: packaged, or the overlay's file of the same name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb import load_kb
from torchsmith.kb.documents import DOCUMENTS


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_each_packaged_document_loads_and_checks(name: str) -> None:
    assert load_kb(packaged_only=True).document(name)


def test_the_overlay_file_replaces_the_packaged_document(tmp_path: Path) -> None:
    packaged = load_kb(packaged_only=True).document("xpu")
    changed = dict(packaged, rows=packaged["rows"][:1])
    (tmp_path / "xpu.json").write_text(json.dumps(changed), encoding="utf-8")
    assert load_kb(str(tmp_path)).document("xpu")["rows"] == packaged["rows"][:1]
    assert load_kb(packaged_only=True).document("xpu")["rows"] == packaged["rows"]


def test_a_broken_overlay_document_is_one_line_naming_the_overlay(tmp_path: Path) -> None:
    (tmp_path / "containers.json").write_text('{"sources": {}}', encoding="utf-8")
    with pytest.raises(KnowledgeBaseError) as caught:
        load_kb(str(tmp_path)).document("containers")
    assert str(tmp_path) in caught.value.message and "\n" not in caught.value.message


def test_an_unknown_document_name_is_a_usage_error() -> None:
    with pytest.raises(KnowledgeBaseError) as caught:
        load_kb(packaged_only=True).document("nope")
    assert caught.value.code == "usage"
