"""The field corpus (tests/explain/field/): its schema, citations and split invariants.

No score thresholds here: tools/explain_score.py reports recall and wrong causes per part.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Dict, List, Set

from tests.explain.test_signatures import CATALOG, read_sample

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
FIELD = HERE / "field"
README = FIELD / "README.md"
KEYS = {"url", "repo", "cause", "text", "also", "fix"}


def _field_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("explain_field", ROOT / "tools" / "explain_field.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("explain_field", module)
    spec.loader.exec_module(module)
    return module


FIELD_MODULE = _field_module()
PARTS: Dict[str, List[Dict[str, object]]] = {part: FIELD_MODULE.load(part) for part in ("dev", "sealed")}
ALL = [record for records in PARTS.values() for record in records]


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _new_cause_ids() -> Set[str]:
    """The cause ids README.md lists as having no family in the catalogue yet."""
    section = README.read_text(encoding="utf-8").split("## Causes with no family yet", 1)[1]
    return set(re.findall(r"^- `([a-z0-9-]+)`", section, flags=re.M))


def test_every_line_is_one_json_object_with_the_schema() -> None:
    for part in PARTS:
        for number, line in enumerate(FIELD_MODULE.part_file(part).read_text("utf-8").splitlines(), 1):
            record = json.loads(line)
            where = f"{part}:{number}"
            assert set(record) <= KEYS and {"url", "repo", "cause", "text"} <= set(record), where
            assert isinstance(record["text"], str) and record["text"].strip(), where
            assert isinstance(record.get("also", []), list), where


def test_every_text_cites_its_thread_and_its_repository() -> None:
    for record in ALL:
        url = str(record["url"])
        assert url.startswith("https://github.com/"), url
        assert FIELD_MODULE.repo_of(url) == record["repo"], url


def test_the_split_is_by_repository_and_seals_at_least_30_percent() -> None:
    for part, records in PARTS.items():
        for record in records:
            assert FIELD_MODULE.part_of(str(record["repo"])) == part, record["url"]
    dev = {str(r["repo"]).lower() for r in PARTS["dev"]}
    sealed = {str(r["repo"]).lower() for r in PARTS["sealed"]}
    assert not dev & sealed
    assert len(sealed) >= 0.3 * len(dev | sealed), (len(sealed), len(dev))


def test_no_text_is_there_twice_or_already_in_the_old_corpus() -> None:
    # A signature sample may later be copied from a development text (it then cites
    # the same thread): that is allowed for the development part only. A sealed text
    # must never reach the older corpus, whatever it cites.
    old: Dict[str, Set[str]] = {}
    for path in sorted((HERE / "corpus").glob("*.txt")) + sorted((HERE / "public").glob("*.txt")):
        headers, body = read_sample(path)
        old.setdefault(_normal(body), set()).update(headers.get("source", []))
    old_urls = {url for urls in old.values() for url in urls}
    seen: Set[str] = set()
    for part, records in PARTS.items():
        for record in records:
            text = _normal(str(record["text"]))
            assert text not in seen, record["url"]
            seen.add(text)
            copied_from_dev = part == "dev" and old.get(text, set()) <= {record["url"]}
            assert text not in old or copied_from_dev, record["url"]
            assert record["url"] not in old_urls or copied_from_dev, record["url"]


def test_every_label_is_a_family_unknown_or_a_listed_new_cause() -> None:
    families = {sig.id for sig in CATALOG.signatures}
    allowed = families | _new_cause_ids() | {"unknown"}
    labels = {str(r["cause"]) for r in ALL} | {str(a) for r in ALL for a in r.get("also") or []}  # type: ignore[attr-defined]
    assert labels <= allowed, sorted(labels - allowed)


def test_unknown_labels_stay_a_minority() -> None:
    for part, records in PARTS.items():
        unknown = sum(1 for r in records if r["cause"] == "unknown")
        assert unknown * 3 <= len(records), (part, unknown, len(records))


def test_a_block_header_with_an_empty_last_field_keeps_its_cause_clean() -> None:
    blocks = ("@@ https://github.com/a/b/issues/1 | unknown | \nsome text\n"
              "@@ https://github.com/a/b/issues/2 | x,y | a | b\nt\n")
    first, second = FIELD_MODULE._blocks(blocks)
    assert first["cause"] == "unknown" and "fix" not in first
    assert (second["cause"], second["also"], second["fix"]) == ("x", ["y"], "a | b")


def test_the_audit_of_dev_misses_cites_dev_records_only() -> None:
    """field/audit/ judges dev texts only: a sealed text must never be quoted where rules are written."""
    dev = {str(record["url"]) for record in PARTS["dev"]}
    sealed = {str(record["url"]) for record in PARTS["sealed"]}
    for path in (FIELD / "audit").glob("*.tsv"):
        header, *rows = path.read_text(encoding="utf-8").splitlines()
        assert header.split("\t")[:4] == ["url", "label", "stated", "verdict"]
        for row in rows:
            url, _label, _stated, verdict, words, *_ = row.split("\t")
            assert url in dev and url not in sealed, url
            assert verdict in {"D", "P", "N", "X"} and words in {"W", "-"}, row[:120]
