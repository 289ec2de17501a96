"""tools/confirm_frameworks.py: a framework row is confirmed from the index's files or flagged, and a
row with neither is refused by the loader."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List

import pytest
from tests.kb.conftest import edit_json
from tests.support.pkgindex import build_wheel

from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb import load_kb

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    path = ROOT / "tools" / "confirm_frameworks.py"
    spec = importlib.util.spec_from_file_location("confirm_frameworks", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(*paths: Path) -> List[Dict[str, Any]]:
    return [{"filename": p.name, "url": p.as_uri()} for p in paths]


def _jax_index(tmp_path: Path, plugin_versions: List[str]) -> Dict[str, List[Dict[str, Any]]]:
    """A JAX release whose cuda13 extra pins a plugin, and the plugin wheels the index really has."""
    jax = build_wheel(tmp_path, "jax", "0.7.0", requires=[
        'jaxlib<=0.7.0,>=0.7.0', 'jax-cuda13-plugin[with-cuda]<=0.7.0,>=0.7.0 ; extra == "cuda13"'])
    with zipfile.ZipFile(jax, "a") as archive:  # the extra declared, as jax's METADATA does
        text = archive.read("jax-0.7.0.dist-info/METADATA").decode() + "Provides-Extra: cuda13\n"
        archive.writestr("jax-0.7.0.dist-info/METADATA.extra", text)
    plugins = [build_wheel(tmp_path, "jax-cuda13-plugin", v, tag="cp312-cp312-manylinux_2_27_x86_64")
               for v in plugin_versions]
    jaxlib = build_wheel(tmp_path, "jaxlib", "0.7.0", tag="cp312-cp312-manylinux_2_27_x86_64")
    return {"jax": _files(jax), "jax-cuda13-plugin": _files(*plugins), "jaxlib": _files(jaxlib)}


def _read_local(file: Dict[str, Any]) -> str:
    with zipfile.ZipFile(file["url"][len("file://"):]) as archive:
        names = archive.namelist()
        member = next((n for n in names if n.endswith("METADATA.extra")), None) or next(
            n for n in names if n.endswith("METADATA"))
        return archive.read(member).decode()


ROW = {"framework": "jax", "version": "0.7.0", "extra": "cuda13", "python": ["3.12"],
       "platforms": ["linux-x86_64"]}


def test_a_declared_extra_whose_plugin_has_no_wheel_is_not_confirmed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _tool()
    monkeypatch.setattr(tool, "metadata", _read_local)
    found = tool.confirm(ROW, "unused", _jax_index(tmp_path, ["0.7.2"]))
    assert tool.disagreements(ROW, found) == [
        "requires jax-cuda13-plugin[with-cuda]<=0.7.0,>=0.7.0, and jax-cuda13-plugin has no 0.7.0 wheel on "
        "the index"]
    row = dict(ROW)
    tool._record(row, found, tool.disagreements(ROW, found), "https://index.example/simple", "2026-11-26")
    assert row["uncertain"] is True and "not confirmed from the index" in row["note"]


def test_a_row_whose_files_exist_is_confirmed_with_its_tags(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _tool()
    monkeypatch.setattr(tool, "metadata", _read_local)
    found = tool.confirm(ROW, "unused", _jax_index(tmp_path, ["0.7.0"]))
    assert tool.disagreements(ROW, found) == []
    assert found["python"] == {"3.12"} and found["platforms"] == {"linux-x86_64"}
    wider = dict(ROW, python=["3.12", "3.14"])
    assert tool.disagreements(wider, found) == ["python 3.14: no wheel with that tag"]
    row = dict(ROW)
    tool._record(row, found, [], "https://index.example/simple", "2026-11-26")
    assert "jax_cuda13_plugin-0.7.0-cp312-cp312-manylinux_2_27_x86_64.whl" in row["confirmed_from"]["files"]


def test_every_packaged_framework_row_is_confirmed_or_uncertain() -> None:
    kb = load_kb(packaged_only=True)
    for row in kb.framework_builds("jax") + kb.framework_builds("tensorflow"):
        assert row.confirmed_from or row.uncertain, (row.framework, row.version, row.extra)
    assert not [r for r in kb.framework_builds("jax") if r.extra == "cuda13" and r.version == "0.7.0"]


def test_a_row_neither_confirmed_nor_uncertain_is_refused(data_copy: Path) -> None:
    edit_json(data_copy, "frameworks.json", lambda d: d["builds"][0].pop("confirmed_from"))
    with pytest.raises(KnowledgeBaseError, match="field confirmed_from: missing"):
        load_kb(packaged_dir=str(data_copy), packaged_only=True)


def test_a_companions_torch_pin_is_read_from_its_wheels_metadata(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _tool()
    monkeypatch.setattr(tool, "metadata", _read_local)
    wheel = build_wheel(tmp_path, "xformers", "0.0.31", requires=["torch==2.7.1", "numpy",
                                                                    'pytest ; extra == "test"'],
                        tag="cp39-abi3-manylinux_2_28_x86_64")
    cache = {"xformers": _files(wheel)}
    row = {"package": "xformers", "version": "0.0.31", "torch": "==2.7.1"}
    assert tool.confirm_requirement(row, "unused", cache) == ([wheel.name], [])
    _files_read, problems = tool.confirm_requirement(dict(row, torch="==2.7.0"), "unused", cache)
    assert problems == ["torch ==2.7.0: the wheel's Requires-Dist says torch ==2.7.1"]
    assert tool.torch_spec("Requires-Dist: torch (<2.9,>=2.4)\n") == "<2.9,>=2.4"
    assert tool.torch_spec("Requires-Dist: torchvision==0.20\n") is None


def test_every_packaged_companion_pin_is_confirmed_or_uncertain() -> None:
    kb = load_kb(packaged_only=True)
    names = ("torchvision", "torchaudio", "xformers", "flash-attn")
    rows = [r for name in names for r in kb.torch_requirements(name)]
    assert rows and all(r.confirmed_from or r.uncertain for r in rows)
    assert sum(1 for r in rows if r.confirmed_from) > len(rows) // 2


def test_find_links_companion_rows_not_read_from_their_pages_are_uncertain(data_copy: Path) -> None:
    kb = load_kb(packaged_only=True)
    rows = kb.table("paired-wheels")
    assert rows and all(r.confirmed_from or r.uncertain for r in rows)
    edit_json(data_copy, "companions.json", lambda d: d["paired_wheels"][0].pop("uncertain"))
    with pytest.raises(KnowledgeBaseError, match="paired_wheels row 1 field confirmed_from: missing"):
        load_kb(packaged_dir=str(data_copy), packaged_only=True)
