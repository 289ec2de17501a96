"""A package that constrains torch only through what it depends on (plan/transitive.py,
kb/metaread.follow_dependencies).

Real core metadata (tests/plan/published_meta/, sources in SOURCES.txt): whisperx 3.4.2 asks
for torch>=2.5.1 and pyannote-audio>=3.3.2; pyannote-audio 4.0.0 asks for torch>=2.8.0, 3.4.0
for torch>=2.0.0. Where the index holds only pyannote-audio 4.0.0, whisperx 3.4.2 needs
torch>=2.8 -- which no metadata of whisperx itself says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Sequence, Tuple

import pytest
from tests.plan.plan_hosts import host
from tests.support.pkgindex import build_wheel, serve_index

from torchsmith.cli import main
from torchsmith.kb import load_kb
from torchsmith.kb.metaread import follow_dependencies, read_unknown
from torchsmith.kb.pkgmeta import PackageRecord, ReleaseRecord, core_dependencies, parse_core_metadata
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.resolve import resolve
from torchsmith.versions import version_tuple

META = Path(__file__).resolve().parent / "published_meta"
KB = load_kb(packaged_only=True)
H100 = {"python": "3.11", "gpus": ["9.0:NVIDIA H100"], "driver": "580.65.06"}
H100_HOST = str(Path(__file__).resolve().parent.parent / "hosts" / "linux-x86_64-h100-drv535.json")


def _real(file_prefix: str) -> PackageRecord:
    path = next(META.glob(f"{file_prefix}-*.metadata"))
    text = path.read_text("utf-8")
    parts = path.name[: -len(".whl.metadata")].split("-")
    requires, python = parse_core_metadata(text)
    name = parts[0].replace("_", "-").lower()
    release = ReleaseRecord(parts[1], requires, python, ("-".join(parts[-3:]),), False, "pep658",
                            depends=core_dependencies(text))
    return PackageRecord(name, f"https://index.example/simple/{name}/", "2026-11-26", (release,), live=True)


def _merged(*records: PackageRecord) -> PackageRecord:
    first = records[0]
    return PackageRecord(first.name, first.source, first.retrieved,
                         tuple(r for rec in records for r in rec.releases), live=True)


def _plan(requirements: Sequence[str], *records: PackageRecord) -> Plan:
    request = Request(requirements=tuple(requirements), explicit=True, published=records)
    return resolve(host(**H100), request, KB)  # type: ignore[arg-type]


def _pins(plan: Plan) -> Dict[str, Tuple[int, ...]]:
    return {p.name: version_tuple(p.version) for p in plan.packages}


def test_a_dependency_that_pins_torch_constrains_the_plan_and_the_chain_is_named() -> None:
    whisperx, newest = _real("whisperx-3.4.2"), _real("pyannote_audio-4.0.0")
    assert "pyannote-audio>=3.3.2" in whisperx.releases[0].depends
    plan = _plan(["whisperx", "torch<2.8"], whisperx, newest)
    assert not plan.ok
    said = " ".join([*plan.reasons, *(r.reason for r in plan.rejected)])
    assert "pyannote-audio>=3.3.2 (4.0.0), which needs torch>=2.8.0" in said, said
    fits = _plan(["whisperx"], whisperx, newest)
    assert fits.ok and _pins(fits)["torch"] >= (2, 8)
    assert any("whisperx 3.4.2: Requires-Dist torch>=2.5.1, torchaudio>=2.5.1; needs pyannote-audio>=3.3.2 "
               "(4.0.0), which needs torch>=2.8.0" in r for r in fits.reasons), fits.reasons


def test_one_release_of_the_dependency_that_fits_is_enough() -> None:
    both = _merged(_real("pyannote_audio-4.0.0"), _real("pyannote_audio-3.4.0"))
    plan = _plan(["whisperx", "torch<2.8"], _real("whisperx-3.4.2"), both)
    assert plan.ok, plan.reasons
    assert _pins(plan)["torch"][:2] == (2, 7)
    assert any("pyannote-audio>=3.3.2, whose releases need torch>=2.8.0, torchaudio>=2.8.0 (4.0.0) or "
               "torch>=2.0.0, torchaudio>=2.2.0 (3.4.0)" in r for r in plan.reasons), plan.reasons


def test_a_dependency_that_needs_a_newer_python_is_named() -> None:
    plan = resolve(host(**{**H100, "python": "3.9"}),  # type: ignore[arg-type]
                   Request(requirements=("whisperx",), explicit=True,
                           published=(_real("whisperx-3.4.2"), _real("pyannote_audio-4.0.0"))), KB)
    said = " ".join([*plan.reasons, *(r.reason for r in plan.rejected)])
    assert not plan.ok and "pyannote-audio>=3.3.2 (4.0.0), which needs Python >=3.10" in said, said


def _chain(name: str, version: str, requires: Sequence[str] = (),
           depends: Sequence[str] = ()) -> PackageRecord:
    release = ReleaseRecord(version, tuple(requires), "", ("py3-none-any",), False, "pep658",
                            depends=tuple(depends))
    return PackageRecord(name, f"https://index.example/simple/{name}/", "2026-11-26", (release,), live=True)


def test_the_walk_is_bounded_in_depth_and_cuts_cycles() -> None:
    top = _chain("top", "1.0", depends=["mid>=1"])
    mid = _chain("mid", "1.0", depends=["low"])
    low = _chain("low", "1.0", requires=["torch<2.5"], depends=["top"])  # a cycle back to the top
    plan = _plan(["top"], top, mid, low)
    assert plan.ok and _pins(plan)["torch"] < (2, 5)
    assert any("mid>=1 (1.0), which needs low (1.0), which needs torch<2.5" in r for r in plan.reasons)
    deeper = _chain("low", "1.0", depends=["floor"])
    floor = _chain("floor", "1.0", depends=["base"])  # the third level: the last one read
    base = _chain("base", "1.0", requires=["torch<2.5"])  # the fourth: past the bound
    unbounded = _plan(["top"], top, mid, deeper, floor, base)
    assert unbounded.ok and not any("base" in r for r in unbounded.reasons)
    assert _pins(unbounded).get("torch", (2, 5)) >= (2, 5)  # top is planned without a torch limit


def test_dependencies_are_followed_on_the_index_within_bounds() -> None:
    pages = {"a": ["b", "c"], "b": ["c", "d"], "c": ["a"], "d": ["e"], "e": []}

    def fetch(url: str, timeout: float) -> str:
        name = url.rstrip("/").rsplit("/", 1)[-1]
        if url.endswith(".metadata"):
            name = url.rsplit("/", 1)[-1].split("-")[0]
            lines = [f"Requires-Dist: {dep}" for dep in pages[name]]
            return "\n".join(["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0", *lines]) + "\n"
        wheel = f"{name}-1.0-py3-none-any.whl"
        return json.dumps({"files": [{"filename": wheel, "url": wheel, "core-metadata": True}]})

    index = [("https://index.example/simple/", "test")]
    records, _unread = read_unknown(["a"], (), fetch, index)
    found = follow_dependencies(records, ["d"], fetch, index, depth=3)
    assert sorted(r.name for r in found) == ["b", "c"]  # d is known elsewhere; a is not read again
    assert [r.name for r in follow_dependencies(records, (), fetch, index, depth=3)] == ["b", "c", "d", "e"]
    assert [r.name for r in follow_dependencies(records, (), fetch, index, depth=2)] == ["b", "c", "d"]
    assert [r.name for r in follow_dependencies(records, (), fetch, index, depth=3, most=1)] == ["b"]


@pytest.mark.slow
def test_the_chain_is_read_live_from_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    for prefix in ("whisperx-3.4.2", "pyannote_audio-4.0.0"):
        path = next(META.glob(f"{prefix}-*.metadata"))
        parts = path.name[: -len(".whl.metadata")].split("-")
        requires, python = parse_core_metadata(path.read_text("utf-8"))
        wheel = build_wheel(tmp_path / "simple", parts[0], parts[1], requires=requires,
                            tag="-".join(parts[-3:]), requires_python=python or None)
        wheel.with_name(wheel.name + ".metadata").write_text(path.read_text("utf-8"), encoding="utf-8")
    with serve_index(tmp_path) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.index_url("simple"))
        code = main(["plan", "--json", "--no-confirm", "--host", H100_HOST, "whisperx", "torch<2.8"])
        data = json.loads(capsys.readouterr().out)["data"]
        assert not server.fetched("whisperx") and not server.fetched("pyannote")  # metadata files only
    assert code == 3 and data["status"] == "no-solution"
    said = json.dumps(data)
    assert "pyannote-audio>=3.3.2 (4.0.0), which needs torch>=2.8.0" in said
