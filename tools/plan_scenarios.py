"""The scenario corpus of plan: public threads about installing torch with a package or on a
platform, each with what the thread established, split by source repository.

    python tools/plan_scenarios.py add < scenarios.jsonl   # file new scenarios into dev/ or sealed/
    python tools/plan_scenarios.py count                   # scenarios and repositories per part

The data lives in tests/plan/scenarios/{dev,sealed}/scenarios.jsonl (one JSON object a line, see
tests/plan/scenarios/README.md). The split is the explain field corpus's (tools/explain_field.py
``part_of``): the SHA-256 of the lower-cased ``owner/name`` seals a repository, so every scenario
of a repository is in one part and a repository's part is known before its threads are read.
A thread the older corpus (tests/plan/test_published_scenarios.py) cites is refused, and so is a
sealed one from a repository that corpus cites (its threads were read when rules were written).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Dict, List, Set, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from explain_field import GITHUB, PARTS, part_of, read_jsonl, repo_of

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "tests" / "plan" / "scenarios"
OLD = ROOT / "tests" / "plan" / "test_published_scenarios.py"
KEYS = {"id", "url", "facts", "host", "request", "expect"}


def part_file(part: str) -> Path:
    return SCENARIOS / part / "scenarios.jsonl"


def load(part: str) -> List[Dict[str, object]]:
    return read_jsonl(part_file(part))


def old_corpus() -> Tuple[Set[str], Set[str]]:
    """(thread URLs, repositories) the older scenario corpus cites."""
    urls = set(re.findall(r"https://github\.com/[^\s\"']+", OLD.read_text("utf-8")))
    return urls, {repo_of(u).lower() for u in urls if GITHUB.match(u)}


def add(lines: List[str]) -> int:
    old_urls, old_repos = old_corpus()
    have = {str(s["id"]) for part in PARTS for s in load(part)}
    added = 0
    for line in (x for x in lines if x.strip()):
        scenario = json.loads(line)
        missing = KEYS - set(scenario)
        if missing:
            raise ValueError(f"{scenario.get('id', '?')}: missing {', '.join(sorted(missing))}")
        url, ident = str(scenario["url"]), str(scenario["id"])
        repo = repo_of(url)
        part = part_of(repo)
        if url in old_urls or (part == "sealed" and repo.lower() in old_repos):
            print(f"skipped {ident}: {repo} is read by the older corpus", file=sys.stderr)
            continue
        if ident in have:
            print(f"skipped {ident}: already filed", file=sys.stderr)
            continue
        scenario["repo"] = repo
        path = part_file(part)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(scenario, ensure_ascii=False) + "\n")
        have.add(ident)
        added += 1
    return added


def count() -> Dict[str, Dict[str, int]]:
    return {part: {"scenarios": len(load(part)), "repositories": len({str(s["repo"]) for s in load(part)})}
            for part in PARTS}


def main(argv: List[str]) -> int:
    if argv[:1] == ["add"]:
        print(f"added {add(sys.stdin.read().splitlines())}", file=sys.stderr)
        return 0
    if argv[:1] == ["count"]:
        print(json.dumps(count(), indent=1))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
