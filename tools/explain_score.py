"""Score the current `explain` on the field corpus, per part (dev, sealed).

    python tools/explain_score.py                 # both parts, a table
    python tools/explain_score.py --json          # the numbers as JSON
    python tools/explain_score.py -v              # and every miss and wrong cause of dev/

Misses of the sealed part are listed only when asked by name (--part sealed -v): whoever writes
signatures, extractors or rules must not read them.

Each text runs through `torchsmith explain --json --no-probe` (in process: the same code path as
the command line). The causes it states are the ids of its matches. For a text whose label is a
cause (not ``unknown``):

- *named*: the label is among the stated causes (recall = named / labelled texts); *by-fam*
  counts the named texts whose label's id spoke as a family (it listed candidates and asserted
  none of them): the id matches, but the text did not prove that cause;
- *wrong*: a stated cause is neither the label, nor one of the text's ``also`` causes, nor a
  generic family (families whose own statement says the text does not prove the cause: GENERIC,
  and every match that carries ``candidates``, i.e. asserts none of them);
- *generic only*: no wrong cause, but not the label either: only generic families or the
  text's ``also`` causes were stated;
- *narrowed*: the generic-only texts whose label is a candidate id of a stated family (a
  candidate id that is itself a family stands for its own candidates too): the family's list held
  the thread's cause, and the text did not prove which. It is counted within generic only and
  changes no other column;
- *not recognised*: nothing was stated.

Texts labelled ``unknown`` (the thread never established a cause) count against no one; the
report says how many of them explain recognised and with which causes. No thresholds here: the
tests check the corpus, not the score.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import AbstractSet, Dict, List, Mapping, Sequence, Set, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from explain_field import PARTS, load

UNKNOWN = "unknown"
# Families that name a kind of failure without claiming its cause; never counted as wrong.
GENERIC = frozenset({"undefined-symbol", "nccl-system-error", "extension-build-failed",
                     "cuda-unknown-error"})


def stated_causes(text: str, workdir: Path) -> Tuple[List[str], Set[str], Set[str]]:
    """The cause ids `torchsmith explain --json --no-probe` states for ``text``, those of them
    that are families (their match lists candidates and asserts none), and the candidate ids
    those families list."""
    from torchsmith.cli import main as torchsmith

    path = workdir / "text.log"
    path.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = torchsmith(["explain", "--json", "--no-probe", "--file", str(path)])
    try:
        report = json.loads(out.getvalue())
    except ValueError:
        report = {}
    if code:  # e.g. signatures.json fails validation: a score of 0 named would hide it
        errors = [str(e.get("message")) for e in report.get("errors") or []]
        raise SystemExit(f"explain exited {code}: {'; '.join(errors) or err.getvalue().strip()[:500]}")
    data = report.get("data") or {}
    causes: List[str] = []
    families: Set[str] = set()
    held: Set[str] = set()
    for match in data.get("matches") or []:
        held.update(str(c.get("id")) for c in match.get("candidates") or [])
        for key in ("id", "family", "cause_id"):
            value = match.get(key)
            if isinstance(value, str) and value not in causes:
                causes.append(value)
            if isinstance(value, str) and match.get("candidates"):
                families.add(value)
    return causes, families, held


def family_causes() -> Mapping[str, AbstractSet[str]]:
    """Each family's candidate ids with those of the families among them (the packaged catalogue)."""
    from torchsmith.explain.catalog import catalog_of

    return catalog_of(None).family_causes()


def narrowed(record: Dict[str, object], held: AbstractSet[str],
             closure: Mapping[str, AbstractSet[str]]) -> bool:
    """The label is among the candidate ids ``held`` by the stated families, or their families'."""
    label = str(record["cause"])
    return any(label == cause or label in closure.get(cause, ()) for cause in held)


def judge(record: Dict[str, object], causes: Sequence[str], families: AbstractSet[str] = frozenset()) -> str:
    label = str(record["cause"])
    allowed = {label, *[str(a) for a in record.get("also") or []]} | GENERIC | families  # type: ignore[attr-defined]
    if label == UNKNOWN:
        return "unknown-recognised" if causes else "unknown-not-recognised"
    if any(cause not in allowed for cause in causes):
        return "wrong"
    if label in causes:
        return "named"
    return "generic-only" if causes else "not-recognised"


def score_part(part: str, workdir: Path) -> Dict[str, object]:
    records = load(part)
    outcomes: Counter[str] = Counter()
    named_and_wrong = 0
    named_by_family = 0  # the label's id spoke as a family (candidates, no cause asserted)
    narrowed_count = 0  # generic only, and a stated family's candidates held the label
    closure = family_causes()
    misses: List[Dict[str, object]] = []
    unknown_causes: Counter[str] = Counter()
    for record in records:
        causes, families, held = stated_causes(str(record["text"]), workdir)
        verdict = judge(record, causes, families)
        in_family = verdict == "generic-only" and narrowed(record, held, closure)
        narrowed_count += in_family
        if verdict == "wrong" and record["cause"] in causes:
            named_and_wrong += 1
        if verdict in ("named", "wrong") and record["cause"] in causes and record["cause"] in families:
            named_by_family += 1
        outcomes[verdict] += 1
        if verdict == "unknown-recognised":
            unknown_causes.update(causes)
        if verdict in ("wrong", "generic-only", "not-recognised"):
            misses.append({"url": record["url"], "label": record["cause"], "stated": causes,
                           "verdict": verdict, "narrowed": in_family})
    labelled = sum(1 for r in records if r["cause"] != UNKNOWN)
    named = outcomes["named"] + named_and_wrong
    return {
        "texts": len(records),
        "repos": len({str(r["repo"]).lower() for r in records}),
        "labelled": labelled,
        "unknown": len(records) - labelled,
        "named": named,
        "named_by_family": named_by_family,
        "recall": round(named / labelled, 3) if labelled else None,
        "wrong": outcomes["wrong"],
        "generic_only": outcomes["generic-only"],
        "narrowed": narrowed_count,
        "not_recognised": outcomes["not-recognised"],
        "unknown_recognised": outcomes["unknown-recognised"],
        "unknown_stated": dict(unknown_causes.most_common()),
        "misses": misses,
    }


def _print_table(results: Dict[str, Dict[str, object]], verbose: bool, show_sealed: bool) -> None:
    print(f"{'part':<7} {'texts':>5} {'repos':>5} {'labelled':>8} {'named':>5} {'recall':>6} "
          f"{'by-fam':>6} {'wrong':>5} {'generic':>7} {'narrowed':>8} "
          f"{'not-rec':>7} {'unknown':>7} {'unk-rec':>7}")
    for part, r in results.items():
        recall = "-" if r["recall"] is None else f"{float(r['recall']):.1%}"  # type: ignore[arg-type]
        print(f"{part:<7} {r['texts']:>5} {r['repos']:>5} {r['labelled']:>8} {r['named']:>5} "
              f"{recall:>6} {r['named_by_family']:>6} {r['wrong']:>5} {r['generic_only']:>7} "
              f"{r['narrowed']:>8} "
              f"{r['not_recognised']:>7} {r['unknown']:>7} {r['unknown_recognised']:>7}")
    if verbose:
        for part, r in results.items():
            if part == "sealed" and not show_sealed:
                continue  # no rule is written while looking at the sealed texts
            for miss in r["misses"]:  # type: ignore[attr-defined]
                print(f"{part}: {miss['verdict']:<14} label={miss['label']} "
                      f"stated={','.join(miss['stated']) or '-'} {miss['url']}")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=PARTS, action="append",
                        help="score only this part (repeatable; default: both)")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="list every wrong cause and miss of the dev part (of the sealed "
                             "part only with --part sealed)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = {part: score_part(part, Path(tmp)) for part in args.part or PARTS}
    show_sealed = args.part is not None and "sealed" in args.part
    if args.json:
        for part, r in results.items():
            if not args.verbose or (part == "sealed" and not show_sealed):
                r.pop("misses")
        print(json.dumps(results, indent=2, sort_keys=True))
    else:
        _print_table(results, args.verbose, show_sealed)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
