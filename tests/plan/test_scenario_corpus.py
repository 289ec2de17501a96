"""The scenario corpus's new parts (tests/plan/scenarios): well-formed, each scenario in its
repository's part, none the older corpus cites, mostly about packages in no table; the scorer
runs on both parts (a sealed miss is measured, never asserted away)."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Set

import pytest
from tests.plan.plan_hosts import host
from tests.plan.scenario_check import miss, plan_of, well_formed

from torchsmith.kb import load_kb
from torchsmith.plan.model import Request
from torchsmith.plan.published import KNOWN_ELSEWHERE
from torchsmith.plan.request import parse_requirements
from torchsmith.plan.resolve import resolve

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))

import plan_score  # noqa: E402
from explain_field import part_of  # noqa: E402
from plan_scenarios import load, old_corpus  # noqa: E402

KB = load_kb(packaged_only=True)
PARTS = {"dev": load("dev"), "sealed": load("sealed")}
NEW: List[Dict[str, Any]] = PARTS["dev"] + PARTS["sealed"]
FAMILY = {"torch", "torchvision", "torchaudio"}


def _tabled() -> Set[str]:
    """Packages a hand-kept table plans (companions, downstream pins, frameworks)."""
    names = set(KNOWN_ELSEWHERE) | {str(r["package"]) for r in KB.document("downstream")["rows"]}
    return names | {r.package for r in KB.torch_requirements()}


def test_every_scenario_is_well_formed_and_in_its_repositorys_part() -> None:
    old_urls, old_repos = old_corpus()
    for part, scenarios in PARTS.items():
        for scenario in scenarios:
            assert not well_formed(scenario), (scenario["id"], well_formed(scenario))
            assert part_of(scenario["repo"]) == part, scenario["id"]
            assert scenario["url"] not in old_urls, scenario["id"]
            assert part == "dev" or scenario["repo"].lower() not in old_repos, scenario["id"]
    assert len({s["id"] for s in NEW}) == len(NEW)


def test_the_new_corpus_is_big_and_at_least_half_about_untabled_packages() -> None:
    assert len(NEW) >= 20 and PARTS["sealed"] and PARTS["dev"]
    tabled = _tabled()
    untabled = [s for s in NEW
                if {w.name for w in parse_requirements(s["request"])} - FAMILY - tabled]
    assert len(untabled) * 2 >= len(NEW), [s["id"] for s in untabled]


def test_the_scorer_reports_both_parts_and_hides_sealed_misses() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert plan_score.main(["--json", "-v"]) == 0
    result = json.loads(out.getvalue())
    corpus = plan_score.corpus()
    for part in ("dev", "sealed"):
        row = result[part]
        assert row["scenarios"] == len(corpus[part]) and 0 <= row["passed"] <= row["scenarios"]
    assert result["dev"]["scenarios"] >= 40 + len(PARTS["dev"])
    assert result["dev"]["passed"] + len(result["dev"]["misses"]) == result["dev"]["scenarios"]
    assert list(result["sealed"]["misses"]) in ([], ["(hidden)"])  # listed only when asked by name


def test_the_checker_fails_what_the_thread_contradicts() -> None:
    scenario = {"host": {"python": "3.11"}, "request": ["torch==2.8.0"]}
    plan = plan_of(scenario, {}, KB)
    assert miss(plan, {"status": "ok", "torch": "==2.8.0"}) == ""
    assert "expected ==2.7.0" in miss(plan, {"status": "ok", "torch": "==2.7.0"})
    assert "expected no-solution" in miss(plan, {"status": "no-solution"})
    assert "not pinned" in miss(plan, {"status": "ok", "pins": {"torchcodec": ">=0.6"}})


@pytest.mark.parametrize("companion, pin, pairs", [("torchaudio", "2.5.1", "2.5.1"),
                                                   ("torchvision", "0.20.0", "2.5.0")])
def test_a_companion_pin_that_pairs_with_another_torch_says_which(companion: str, pin: str,
                                                                   pairs: str) -> None:
    # From a development scenario (bytedance/video-SALMONN-2#21): the answer names the torch the
    # pinned companion pairs with, and the door keeps the companion with that torch.
    plan = resolve(host(python="3.10", gpus=["9.0"], driver="550.54.14"),
                   Request(requirements=("torch==2.7.1", f"{companion}=={pin}"), explicit=True), KB)
    assert plan.status == "no-solution" and plan.blocker is not None
    assert f"pairs with torch {pairs}" in plan.blocker.detail
    assert any(d.change == f"torch==2.7.1 -> torch=={pairs}" for d in plan.alternatives)
    assert not any("torch==2.14" in d.command for d in plan.alternatives)
