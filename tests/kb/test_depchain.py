"""Requires-Dist chains to torch kept in the snapshot, so they are followed offline exactly as
live (kb/depchain.py, kb/metaread.with_chains and refresh_snapshot, plan/published.py's lookup).

Real core metadata for the chain (tests/plan/published_meta/, sources in SOURCES.txt): whisperx
3.4.2 asks for pyannote-audio>=3.3.2, whose 4.0.0 asks for torch>=2.8.0.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Sequence

import pytest
from tests.support.pkgindex import build_wheel, serve_index

from torchsmith.cli import main
from torchsmith.host.live import LiveHost
from torchsmith.kb import load_kb
from torchsmith.kb.coverage import coverage_problems
from torchsmith.kb.depchain import compact, depends_problems, leading_names, requirement_name
from torchsmith.kb.metaread import follow_dependencies, read_unknown, refresh_snapshot
from torchsmith.kb.pkgmeta import PackageRecord, ReleaseRecord, parse_core_metadata

META = Path(__file__).resolve().parent.parent / "plan" / "published_meta"
H100_HOST = str(Path(__file__).resolve().parent.parent / "hosts" / "linux-x86_64-h100-drv535.json")
KB = load_kb(packaged_only=True)


def _record(name: str, *releases: ReleaseRecord) -> PackageRecord:
    return PackageRecord(name, f"https://index.example/simple/{name}/", "2026-11-26", releases)


def _release(version: str, requires: Sequence[str] = (), depends: Sequence[str] = (),
             metadata: str = "pep658", wheels: Sequence[str] = ("py3-none-any",)) -> ReleaseRecord:
    return ReleaseRecord(version, tuple(requires), "", tuple(wheels), False, metadata, depends=tuple(depends))


def test_only_requirements_that_lead_to_a_torch_limit_are_kept() -> None:
    top = _record("top", _release("2.0", ["torch"], ["mid>=1", "plain", "top[x]; extra == 'dev'",
                                                     "opt>=1; extra == 'fast'"]))
    mid = _record("mid", _release("1.0", depends=["low"]))
    low = _record("low", _release("1.0", ["torch<2.5"]))
    plain = _record("plain", _release("1.0", ["torch"], ["requests"]))  # a bare torch limits nothing
    cuda_only = _record("rt-cu12", replace(_release("1.0"), project="rt-cu12"))  # CUDA only: torch free
    assert cuda_only.releases[0].build is not None
    opt = _record("opt", _release("1.0", ["torch==2.4.0"]))
    unread = _record("unread", _release("1.0", ["torch==2.4.0"], metadata="none"))
    keep = leading_names([top, mid, low, plain, cuda_only, opt, unread])
    assert keep == {"top", "mid", "low", "opt"}
    kept = compact(top, keep)
    # The user may ask for top[fast]: its extra's line stays; the self-reference does not.
    assert kept.releases[0].depends == ("mid>=1", "opt>=1; extra == 'fast'")
    stored = compact(_record("mid", _release("1.0", depends=["low", "opt; extra == 'x'"]), _release(
        "0.9", metadata="none")), keep, read_only=True)
    assert [r.version for r in stored.releases] == ["1.0"] and stored.releases[0].depends == ("low",)
    assert stored.releases[0].wheels == ()


def test_the_stored_lists_are_checked_by_kb_validate() -> None:
    assert depends_problems(KB.document("package_meta"), KB.document("package_deps")) == []
    assert not [p for p in coverage_problems(KB) if "depends" in p]
    snapshot = {"packages": [{"name": "top", "releases": [
        {"version": "1.0", "depends": ["mid>=1", "not a requirement!", "torch>=2", "ghost>=1"]}]}]}
    deps = {"packages": [{"name": "mid", "releases": [{"version": "1.0", "depends": "low"}]}]}
    problems = depends_problems(snapshot, deps)
    assert any("'not a requirement!' is no requirement" in p for p in problems)
    assert any("depends on torch, which is on the torch stack" in p for p in problems)
    assert any("depends on ghost, which is in no stored record" in p for p in problems)
    assert any("package_deps: mid 1.0: depends is not a list" in p for p in problems)


def test_the_shipped_snapshot_keeps_chains_compact() -> None:
    snapshot, deps = KB.document("package_meta"), KB.document("package_deps")
    held = {p["name"] for p in deps["packages"]}
    assert held and deps["retrieved"] and deps["index"]
    for package in deps["packages"]:
        assert package["source"].endswith(f"/{package['name']}/") and package["retrieved"]
        assert all("wheels" not in r and r.get("metadata") != "none" for r in package["releases"])
    lines = [d for p in snapshot["packages"] for r in p["releases"] for d in r.get("depends", ())]
    assert lines  # vllm's pins on packages that pin torch themselves
    assert {requirement_name(d) for d in lines} <= held | {p["name"] for p in snapshot["packages"]}


def test_a_dependency_is_read_at_the_releases_its_dependent_asks_for() -> None:
    versions = ["3.0", "2.9", "2.8", "2.7", "2.6", "1.0"]
    read: List[str] = []

    def fetch(url: str, timeout: float) -> str:
        if url.endswith(".metadata"):
            name, version = url.rsplit("/", 1)[-1].split("-")[:2]
            read.append(f"{name}-{version}")
            depends = "Requires-Dist: dep==1.0\n" if name == "top" else ""
            return f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{depends}"
        name = url.rstrip("/").rsplit("/", 1)[-1]
        files = [{"filename": f"{name}-{v}-py3-none-any.whl", "url": f"{name}-{v}-py3-none-any.whl",
                  "core-metadata": True} for v in (versions if name == "dep" else ["1.0"])]
        return json.dumps({"files": files})

    index = [("https://index.example/simple/", "test")]
    records, _ = read_unknown(["top"], (), fetch, index)
    found = follow_dependencies(records, (), fetch, index)
    assert "dep-1.0" in read and "dep-2.6" not in read  # the pinned old release, not the newest four
    assert [r.version for r in found[0].releases if r.metadata != "none"] == ["1.0"]


def _chain_index(root: Path) -> None:
    for prefix in ("whisperx-3.4.2", "pyannote_audio-4.0.0"):
        path = next(META.glob(f"{prefix}-*.metadata"))
        parts = path.name[: -len(".whl.metadata")].split("-")
        requires, python = parse_core_metadata(path.read_text("utf-8"))
        wheel = build_wheel(root / "simple", parts[0], parts[1], requires=requires, tag="-".join(parts[-3:]),
                            requires_python=python or None)
        wheel.with_name(wheel.name + ".metadata").write_text(path.read_text("utf-8"), encoding="utf-8")


def _said(data: Dict[str, Any]) -> Dict[str, Any]:
    """What must be equal offline and live: the answer and its words, less where it was read."""
    def clean(text: str) -> str:
        return text.split(" [source:")[0]

    return {"status": data["status"], "packages": data["packages"],
            "reasons": [clean(r) for r in data["reasons"]],
            "rejected": [clean(r["reason"]) for r in data["rejected"]],
            "blocker": data["blocker"] and data["blocker"]["code"]}


@pytest.mark.slow
def test_a_chain_planned_offline_from_the_snapshot_equals_the_live_plan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _chain_index(tmp_path)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    for name in ("PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    argv = ["plan", "--json", "--no-confirm", "--host", H100_HOST]
    packaged = KB.document("package_meta")
    asked = {**packaged, "packages": [*packaged["packages"], {"name": "whisperx", "source": "-",
                                                             "retrieved": "-", "releases": []}]}
    with serve_index(tmp_path) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.index_url("simple"))
        live = {}
        for extra in ([], ["torch<2.8"]):
            assert main([*argv, "whisperx", *extra]) in (0, 3)
            live[tuple(extra)] = json.loads(capsys.readouterr().out)["data"]
        # What `kb refresh` writes, read from the same index (the table packages are not on it).
        files = refresh_snapshot(asked, LiveHost().fetch_url, server.index_url("simple"),
                                 torch_newest=packaged["torch_newest"], today="2026-11-26", timeout=10)
        monkeypatch.delenv("PIP_INDEX_URL")
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    for name, document in files.items():
        (overlay / name).write_text(json.dumps(document), encoding="utf-8")
    assert [p["name"] for p in files["package_deps.json"]["packages"]] == ["pyannote-audio"]
    assert depends_problems(files["package_meta.json"], files["package_deps.json"]) == []
    for extra, online in live.items():
        assert main([*argv, "--kb", str(overlay), "whisperx", *extra]) in (0, 3)
        offline = json.loads(capsys.readouterr().out)["data"]
        assert _said(offline) == _said(online)
        assert not any("could not check" in w for w in offline["warnings"])  # nothing left to read
        if offline["status"] == "ok":  # planned from the snapshot, and said so
            assert any("snapshot of 2026-11-26" in r for r in offline["reasons"])
            assert any("pyannote-audio>=3.3.2" in r for r in offline["reasons"])
    blocked = live[("torch<2.8",)]
    assert blocked["status"] == "no-solution"
    assert "pyannote-audio>=3.3.2 (4.0.0), which needs torch>=2.8.0" in json.dumps(blocked)
