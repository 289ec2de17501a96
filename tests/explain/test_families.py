"""A family's candidates carry cause ids: the catalogue validates them (unique in the family, never
the family's own, kebab-case, no circle of families), `explain --json` carries them, and the field
score counts the misses whose label a stated family held (*narrowed*)."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List

import pytest

from torchsmith.cli import main
from torchsmith.errors import TorchsmithError
from torchsmith.explain import parse_catalog
from torchsmith.explain.families import check_family_graph, family_causes

from .test_catalog import PACKAGED

TOOLS = Path(__file__).resolve().parents[2] / "tools"
SHADOWED = ("ImportError: /env/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: "
            "undefined symbol: ncclCommResume")
DRIVER = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"


def with_candidates(family_id: str, ids: List[str]) -> Dict[str, Any]:
    """The packaged file with the candidates of ``family_id`` given ``ids`` in order."""
    doc = copy.deepcopy(PACKAGED)
    (family,) = [s for s in doc["signatures"] if s["id"] == family_id]
    family["candidates"] = [{"id": i, "cause": f"cause {n}", "check": f"check {n}"}
                            for n, i in enumerate(ids)]
    return doc


def load_error(doc: Any) -> str:
    with pytest.raises(TorchsmithError) as info:
        parse_catalog(doc, "sigs.json")
    assert info.value.code == "explain-data-invalid"
    message = str(info.value)
    assert "\n" not in message and message.startswith("sigs.json: signature")
    return message


def test_every_packaged_candidate_has_an_id_of_its_own() -> None:
    catalog = parse_catalog(PACKAGED)
    families = [s for s in catalog.signatures if s.candidates]
    assert len(families) >= 90
    for family in families:
        ids = [c.id for c in family.candidates]
        assert family.id not in ids and len(set(ids)) == len(ids)


@pytest.mark.parametrize(("ids", "message"), [
    (["driver-too-old", "driver-too-old"], "candidate id 'driver-too-old' appears twice"),
    (["driver-too-old", "driver-insufficient-for-runtime"], "is the family's own id"),
    (["driver-too-old", "No Driver"], "candidate id 'No Driver' is not kebab-case"),
])
def test_a_bad_candidate_id_is_a_one_line_load_error(ids: List[str], message: str) -> None:
    assert message in load_error(with_candidates("driver-insufficient-for-runtime", ids))


def test_a_candidate_without_an_id_is_a_load_error() -> None:
    doc = copy.deepcopy(PACKAGED)
    (family,) = [s for s in doc["signatures"] if s["id"] == "undefined-symbol"]
    del family["candidates"][0]["id"]
    assert "'candidates' must be a list of {\"id\"" in load_error(doc)


def test_a_circle_of_families_is_a_load_error() -> None:
    # driver-insufficient-for-runtime lists no-nvidia-driver, which lists container-started-without-gpu-access
    doc = with_candidates("container-started-without-gpu-access",
                          ["driver-insufficient-for-runtime", "driver-capabilities-lack-utility"])
    with pytest.raises(TorchsmithError) as info:
        parse_catalog(doc, "sigs.json")
    message = str(info.value)
    assert "\n" not in message and "candidate ids form a circle" in message
    assert ("driver-insufficient-for-runtime -> no-nvidia-driver -> container-started-without-gpu-access"
            in message)


def test_a_family_named_by_another_stands_for_its_own_candidates() -> None:
    graph = {"a": ["b", "x"], "b": ["c", "y"], "c": ["z", "w"]}
    check_family_graph(graph)
    closed = family_causes(graph)
    assert closed["a"] == {"b", "x", "c", "y", "z", "w"} and closed["c"] == {"z", "w"}
    with pytest.raises(ValueError, match="a -> b -> c -> a"):
        check_family_graph({**graph, "c": ["a", "w"]})


def test_explain_json_and_text_carry_each_candidates_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--json", "--no-probe", SHADOWED]) == 0
    (match,) = json.loads(capsys.readouterr().out)["data"]["matches"]
    assert match["id"] == "undefined-symbol"
    assert [c["id"] for c in match["candidates"]] == ["extension-abi-mismatch", "cuda-library-shadowed",
                                                       "glibcxx-not-found"]
    assert all(set(c) == {"id", "cause", "check"} and c["cause"] and c["check"] for c in match["candidates"])
    assert main(["explain", "--no-probe", SHADOWED]) == 0
    assert "[cuda-library-shadowed]. Check:" in " ".join(capsys.readouterr().out.split())


def score_module() -> ModuleType:
    sys.path.insert(0, str(TOOLS))
    try:
        spec = importlib.util.spec_from_file_location("explain_score", TOOLS / "explain_score.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(TOOLS))
    return module


def test_narrowed_counts_the_misses_a_stated_familys_candidates_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    labelled = [
        (SHADOWED, "cuda-library-shadowed"),  # a candidate of undefined-symbol
        (SHADOWED, "gpu-exclusive-mode"),  # none of its candidates
        (DRIVER, "no-nvidia-gpu-present"),  # driver-insufficient-for-runtime > no-nvidia-driver > this
        (DRIVER, "driver-too-old"),
        ("RuntimeError: Torch not compiled with CUDA enabled", "torch-not-compiled-with-cuda"),  # named
        ("nothing known here", "driver-too-old"),  # not recognised
    ]
    records = [{"url": f"https://github.com/o/r{n}/issues/1", "repo": f"o/r{n}", "text": text, "cause": cause}
               for n, (text, cause) in enumerate(labelled)]
    corpus = tmp_path / "texts.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    score = score_module()
    monkeypatch.setattr(score, "load", lambda part: list(map(json.loads, corpus.read_text().splitlines())))
    result = score.score_part("dev", tmp_path)
    outcome = (result["named"], result["generic_only"], result["not_recognised"], result["wrong"])
    assert outcome == (1, 4, 1, 0)
    assert result["narrowed"] == 3
    assert [m["narrowed"] for m in result["misses"]] == [True, False, True, True, False]
