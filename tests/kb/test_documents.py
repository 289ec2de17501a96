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


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_validate_names_the_bad_document_of_an_overlay(name: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from torchsmith.cli import main

    file_name = DOCUMENTS[name][0]
    (tmp_path / file_name).write_text('{"sources": {}, "rows": [{"source": ["nope"]}], "signatures": 1}',
                                      encoding="utf-8")
    assert main(["kb", "validate", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error[kb-invalid]: ") and file_name in err.splitlines()[0]
    assert str(tmp_path) in err.splitlines()[0] and "Traceback" not in err


def test_validate_checks_signatures_as_explain_reads_them(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from torchsmith.cli import main

    packaged = json.loads(Path(load_kb(packaged_only=True).document_path("signatures")).read_text("utf-8"))
    packaged["signatures"][2]["patterns"] = ["(unclosed"]
    (tmp_path / "signatures.json").write_text(json.dumps(packaged), encoding="utf-8")
    assert load_kb(str(tmp_path)).document("signatures")  # the shape is fine: only explain's check sees it
    assert main(["kb", "validate", str(tmp_path)]) == 1
    first = capsys.readouterr().err.splitlines()[0]
    sig_id = packaged["signatures"][2]["id"]
    assert first.startswith("error[kb-invalid]: ") and f"signature {sig_id!r}" in first
    assert f"(in the overlay {tmp_path})" in first


def test_validate_reports_the_documents_it_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from torchsmith.cli import main

    packaged = load_kb(packaged_only=True).document("xpu")
    (tmp_path / "xpu.json").write_text(json.dumps(packaged), encoding="utf-8")
    assert main(["kb", "validate", "--json", str(tmp_path)]) == 0
    documents = json.loads(capsys.readouterr().out)["data"]["documents"]
    assert set(documents) == set(DOCUMENTS)
    assert documents["xpu"] == str(tmp_path / "xpu.json")
    assert documents["formats"] == load_kb(packaged_only=True).document_path("formats")


def test_explain_signatures_file_still_wins_over_the_data(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from torchsmith.cli import main

    packaged = json.loads(Path(load_kb(packaged_only=True).document_path("signatures")).read_text("utf-8"))
    mine = dict(packaged, signatures=[dict(packaged["signatures"][0], id="only-in-my-file",
                                           title="only in my file", patterns=["MYFILE-E1 failed"])])
    mine["signatures"][0].pop("supersedes", None)
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(mine), encoding="utf-8")
    assert main(["explain", "--no-probe", "--signatures", str(path), "MYFILE-E1 failed"]) == 0
    assert "only in my file" in capsys.readouterr().out
    assert main(["explain", "--no-probe", "MYFILE-E1 failed"]) == 0
    assert "only in my file" not in capsys.readouterr().out
