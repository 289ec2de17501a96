"""Score plan on its scenario corpus: pass counts per part.

    python tools/plan_score.py [--json] [--part dev|sealed] [-v]

dev: the older corpus (tests/plan/test_published_scenarios.py, read when rules were written)
plus tests/plan/scenarios/dev; sealed: tests/plan/scenarios/sealed, which no rule is written
while looking at. Misses are listed only with -v, and sealed ones only when that part is asked
for by name (--part sealed -v). Metadata of packages in no table comes from the fixtures
(tests/plan/scenario_meta.json, tests/plan/scenarios/meta.json), as a live read would give it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from plan_scenarios import load  # noqa: E402
from tests.plan.scenario_check import miss, plan_of, records_of  # noqa: E402

from torchsmith.kb import load_kb  # noqa: E402

META = [ROOT / "tests" / "plan" / "scenario_meta.json", ROOT / "tests" / "plan" / "scenarios" / "meta.json"]


def corpus() -> Dict[str, List[Dict[str, Any]]]:
    from tests.plan import test_published_scenarios as older

    old = [dict(s, repo=s["source"].split("/")[3] + "/" + s["source"].split("/")[4], url=s["source"])
           for s in older.SCENARIOS]
    return {"dev": old + load("dev"), "sealed": load("sealed")}


def score(parts: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    kb = load_kb(packaged_only=True)
    records = records_of(json.loads(p.read_text("utf-8")) for p in META if p.exists())
    out: Dict[str, Dict[str, Any]] = {}
    for part, scenarios in corpus().items():
        if part not in parts:
            continue
        misses: Dict[str, str] = {}
        for scenario in scenarios:
            records_here = {**records, **{r.name: r for r in scenario.get("records", ())}}
            why = miss(plan_of(scenario, records_here, kb), scenario["expect"])
            if why:
                misses[str(scenario["id"])] = why
        out[part] = {"scenarios": len(scenarios), "passed": len(scenarios) - len(misses),
                     "repositories": len({str(s["repo"]).lower() for s in scenarios}), "misses": misses}
    return out


def _human(result: Mapping[str, Mapping[str, Any]], verbose: bool, asked: Sequence[str]) -> str:
    lines = []
    for part, row in result.items():
        lines.append(f"{part}: {row['passed']}/{row['scenarios']} pass ({row['repositories']} repositories)")
        if verbose and (part == "dev" or part in asked):
            lines.extend(f"  miss {ident}: {why}" for ident, why in row["misses"].items())
    return "\n".join(lines)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--part", choices=("dev", "sealed"), action="append")
    parser.add_argument("-v", action="store_true", help="list the misses (sealed only with --part sealed)")
    args = parser.parse_args(argv)
    parts = args.part or ["dev", "sealed"]
    result = score(parts)
    if not (args.part and "sealed" in args.part and args.v):
        for part in result.values():  # sealed misses are not shown unless asked for by name
            if part is result.get("sealed"):
                part["misses"] = {"(hidden)": f"{len(part['misses'])} misses; --part sealed -v lists them"}
    print(json.dumps(result, indent=1) if args.json else _human(result, args.v, args.part or ()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
