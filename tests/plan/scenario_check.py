"""One scenario of the plan corpus: the machine and request a thread describes, planned, and
checked against what the thread established (shared by the tests and tools/plan_score.py)."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping

from packaging.specifiers import SpecifierSet
from tests.plan.plan_hosts import host

from torchsmith.kb import KnowledgeBase
from torchsmith.kb.pkgmeta import PackageRecord, canonical
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.request import parse_requirements
from torchsmith.plan.resolve import resolve

EXPECT_KEYS = {"status", "torch", "variant", "pins", "text", "prebuilt"}
HOST_KEYS = {"platform", "python", "gpus", "driver", "rocm_gfx", "rosetta", "intel"}


def records_of(documents: Iterable[Mapping[str, Any]]) -> Dict[str, PackageRecord]:
    """Package records of metadata documents (package_meta's shape), as live reads."""
    return {canonical(str(p["name"])): PackageRecord.from_json(p, live=True)
            for document in documents for p in document["packages"]}


def plan_of(scenario: Mapping[str, Any], records: Mapping[str, PackageRecord], kb: KnowledgeBase) -> Plan:
    machine = host(**scenario["host"])
    names = {w.name for w in parse_requirements(list(scenario["request"]))}
    request = Request(requirements=tuple(scenario["request"]), explicit=True, allow_prerelease=False,
                      published=tuple(records[n] for n in sorted(names) if n in records))
    return resolve(machine, request, kb)


def _meets(expected: str, got: str) -> bool:
    if expected[:1] in "<>=!~":
        return bool(got) and SpecifierSet(expected).contains(got.split("+")[0], prereleases=True)
    return (got if "+" in expected else got.split("+")[0]) == expected


def miss(plan: Plan, expect: Mapping[str, Any]) -> str:
    """Why the plan does not meet the expectation; "" when it does."""
    said = "\n".join([*plan.reasons, *plan.warnings, str(plan.blocker), *(r.reason for r in plan.rejected)])
    if plan.status != expect["status"]:
        return f"status {plan.status}, expected {expect['status']}"
    pins = {p.name: p.version + (p.local_version or "") for p in plan.packages}
    problems: List[str] = []
    if "torch" in expect and not _meets(str(expect["torch"]), pins.get("torch", "")):
        problems.append(f"torch {pins.get('torch') or 'not planned'}, expected {expect['torch']}")
    if "variant" in expect and plan.variant != expect["variant"]:
        problems.append(f"variant {plan.variant}, expected {expect['variant']}")
    for name, version in dict(expect.get("pins", {})).items():
        if not _meets(str(version), pins.get(name, "")):
            problems.append(f"{name} {pins.get(name) or 'not pinned'}, expected {version}")
    for name in expect.get("prebuilt", ()):
        pin = next((p for p in plan.packages if p.name == name), None)
        if pin is None or pin.variant == "source":
            problems.append(f"{name}: no prebuilt wheel planned")
    if "text" in expect and str(expect["text"]) not in said:
        problems.append(f"the answer does not say {expect['text']!r}")
    return "; ".join(problems)


def well_formed(scenario: Mapping[str, Any]) -> str:
    """What is wrong with a scenario record; "" when nothing."""
    for key in ("id", "url", "repo", "facts", "host", "request", "expect"):
        if not scenario.get(key):
            return f"missing {key}"
    if set(scenario["host"]) - HOST_KEYS:
        return f"unknown host keys {sorted(set(scenario['host']) - HOST_KEYS)}"
    if set(scenario["expect"]) - EXPECT_KEYS or scenario["expect"].get("status") not in ("ok", "no-solution"):
        return "expect needs a status (ok | no-solution) and only " + ", ".join(sorted(EXPECT_KEYS))
    return ""
