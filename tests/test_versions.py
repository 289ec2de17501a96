"""The shared small parsers: version tuples, series, Python tags, and the JSON file readers."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from torchsmith.compat import sm_arch
from torchsmith.errors import InstallError, KnowledgeBaseError, load_data_file, load_json_file
from torchsmith.versions import (
    driver_tuple,
    minor_version,
    python_tag_key,
    sortable_version,
    version_tuple,
)


@pytest.mark.parametrize("text, expected", [
    ("12.6", (12, 6)),
    ("2.6.0a0", (2, 6, 0)),
    # NVIDIA's Jetson builds: the dots of the local label are not release numbers.
    ("2.6.0a0+nv24.08", (2, 6, 0)),
    ("2.0.0a0+8aa34602.nv23.03", (2, 0, 0)),
    ("2.5.1+cu124", (2, 5, 1)),
    ("12.6a.1", (12, 6)),
    ("535.104.05", (535, 104, 5)),
    ("x.1", ()),
    ("", ()),
    (None, ()),
])
def test_version_tuple(text: str, expected: tuple) -> None:
    assert version_tuple(text) == expected


@pytest.mark.parametrize("text", [
    "12.6", "2.6.0a0", "2.6.0a0+nv24.08", "2.0.0a0+8aa34602.nv23.03", "2.5.1+cu124", "535.104.05",
    "2.6.0.post1", "2.6.0rc1", "2.6.0.dev20250101", "1!2.0", "v2.1", " 2.4.0 ", "2.10", "3.13.0b4",
    "36.4.3", "2.0.0.0",
])
def test_version_tuple_is_packagings_release(text: str) -> None:
    assert version_tuple(text) == Version(text).release


def test_version_tuple_orders_releases_as_packaging_does() -> None:
    versions = ["2.10.0", "2.9.1", "2.1", "2.1.0.1", "12.6.3", "12.10", "1.13.1", "2.0.0+cu118", "535.104.05"]
    by_tuple = sorted(versions, key=version_tuple)
    assert by_tuple == sorted(versions, key=lambda v: Version(v).release)
    assert [Version(v) for v in by_tuple] == sorted(Version(v) for v in versions)


@pytest.mark.parametrize("text, expected", [
    ("12.6a.1", (12, 6)), ("550.54.14 (beta)", (550, 54, 14)), ("1" * 19 + ".2", ()), ("9" * 5000, ()),
])
def test_version_tuple_reads_non_pep440_text_by_its_leading_numbers(text: str, expected: tuple) -> None:
    assert version_tuple(text) == expected


def test_driver_tuple_ignores_surrounding_space() -> None:
    assert driver_tuple(" 550.54.14\n") == (550, 54, 14)
    assert driver_tuple(None) == ()


@pytest.mark.parametrize("text, expected", [
    ("12.6.3", "12.6"), ("12.6", "12.6"), ("2.5.1+cu124", "2.5"), (" 36.4.3 ", "36.4"),
])
def test_minor_version(text: str, expected: str) -> None:
    assert minor_version(text) == expected


def test_python_tags_sort_numerically_free_threaded_last() -> None:
    assert sorted(["3.13t", "3.10", "3.9", "3.13"], key=python_tag_key) == ["3.9", "3.10", "3.13", "3.13t"]


def test_an_unparsable_version_sorts_first() -> None:
    assert sorted(["2.1.0", "garbage", "2.10.0", "2.2.0"], key=sortable_version) == [
        "garbage", "2.1.0", "2.2.0", "2.10.0"]


def test_sm_arch() -> None:
    assert sm_arch("8.6") == "sm_86"
    assert sm_arch("12.0") == "sm_120"
    assert sm_arch("9") == "sm_90"


def test_load_json_file_names_what_it_read(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text('{"a": [1]}', encoding="utf-8")
    assert load_json_file(str(good), "the lock") == {"a": [1]}
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a": \xff}')
    with pytest.raises(InstallError, match=r"^the lock .*bad\.json is not valid JSON") as info:
        load_json_file(str(bad), "the lock", InstallError, code="lock-invalid")
    assert info.value.code == "lock-invalid"
    with pytest.raises(KnowledgeBaseError, match=r"^cannot read plan data .*absent\.json: ") as missing:
        load_json_file(str(tmp_path / "absent.json"), "plan data", KnowledgeBaseError)
    assert missing.value.code == "kb-invalid"


def test_load_data_file_checks_and_refuses_in_one_line(tmp_path: Path) -> None:
    def check(data: dict) -> None:
        if data["version"] != 1:
            raise ValueError("wrong version")

    path = tmp_path / "table.json"
    path.write_text('{"version": 1}', encoding="utf-8")
    assert load_data_file(str(path), "test data", check) == {"version": 1}
    for text, why in (('{"version": 2}', "wrong version"), ("[1, 2]", "not a JSON object"),
                      ("{}", "'version'"), ("{oops", "Expecting")):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(KnowledgeBaseError, match=r"^test data table\.json is unusable: ") as info:
            load_data_file(str(path), "test data", check)
        assert why in info.value.message
        assert info.value.hint == "reinstall torchsmith"
