"""The field corpus of explain: public error texts, each citing its thread, split by repository.

    python tools/explain_field.py add < blocks.txt    # file new texts into dev/ or sealed/
    python tools/explain_field.py count               # texts and repositories per part

The data lives in tests/explain/field/{dev,sealed}/texts.jsonl (one JSON object a line, see
tests/explain/field/README.md). Which part a text belongs to depends only on its source
repository: ``part_of(repo)`` hashes the lower-cased ``owner/name`` (SHA-256, first 8 hex digits
mod 100) and seals the repositories that fall below SEALED_PERCENT. So every text of a repository
is in one part, the split needs no list to keep, and a new repository's part is known in advance.

Input blocks for ``add`` (the text between two headers is kept verbatim, wrapping included)::

    @@ https://github.com/owner/name/issues/123 | cause-id[,also-id...] | accepted fix (optional)
    the error text as posted
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

ROOT = Path(__file__).resolve().parents[1]
FIELD = ROOT / "tests" / "explain" / "field"
PARTS = ("dev", "sealed")
SEALED_PERCENT = 40  # of repositories, by hash; the invariant tested is >= 30 % sealed
GITHUB = re.compile(r"^https://github\.com/([^/\s]+/[^/\s]+)/(?:issues|pull|discussions)/(\d+)")


def part_of(repo: str) -> str:
    """``sealed`` or ``dev``, from the repository name alone."""
    digest = hashlib.sha256(repo.strip().lower().encode("utf-8")).hexdigest()
    return "sealed" if int(digest[:8], 16) % 100 < SEALED_PERCENT else "dev"


def part_file(part: str) -> Path:
    return FIELD / part / "texts.jsonl"


def read_jsonl(path: Path) -> List[Dict[str, object]]:
    """The records of a JSON-lines file; none when it does not exist yet."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(part: str) -> List[Dict[str, object]]:
    return read_jsonl(part_file(part))


def repo_of(url: str) -> str:
    match = GITHUB.match(url)
    if not match:
        raise ValueError(f"not a GitHub thread URL: {url}")
    return match.group(1)


def _blocks(text: str) -> Iterator[Dict[str, object]]:
    header = None
    body: List[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("@@ "):
            if header is not None:
                yield _record(header, "".join(body))
            header, body = line[3:].strip(), []
        elif header is not None:
            body.append(line)
    if header is not None:
        yield _record(header, "".join(body))


def _record(header: str, body: str) -> Dict[str, object]:
    # " | " separates the fields; an empty last field leaves a bare trailing "|" once stripped
    fields = [f.strip() for f in re.split(r"\s\|(?:\s|$)", header, maxsplit=2)]
    url, causes = fields[0], [c.strip() for c in fields[1].split(",") if c.strip()]
    record: Dict[str, object] = {"url": url, "repo": repo_of(url), "cause": causes[0]}
    if causes[1:]:
        record["also"] = causes[1:]
    if len(fields) > 2 and fields[2]:
        record["fix"] = fields[2]
    record["text"] = body.strip("\n") + "\n"
    return record


def normal(text: str) -> str:
    """A text with its whitespace runs collapsed and lower-cased: how duplicates are found."""
    return re.sub(r"\s+", " ", text).strip().lower()


def old_corpus() -> Tuple[Set[str], Set[str]]:
    """The threads the older corpus (tests/explain/corpus, public) cites, and its texts (normalised)."""
    urls: Set[str] = set()
    texts: Set[str] = set()
    for folder in ("corpus", "public"):
        for path in sorted((FIELD.parent / folder).glob("*.txt")):
            body = []
            for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
                if line.startswith("# source:"):
                    urls.add(line.split(":", 1)[1].strip())
                elif not line.startswith("# "):
                    body.append(line)
            texts.add(normal("".join(body)))
    return urls, texts


def add(text: str) -> int:
    parts = {part: load(part) for part in PARTS}
    old, old_texts = old_corpus()
    seen = {normal(str(r["text"])) for records in parts.values() for r in records} | old_texts
    added = 0
    for record in _blocks(text):
        key = normal(str(record["text"]))
        if record["url"] in old:
            print(f"skipped, already in the old corpus: {record['url']}", file=sys.stderr)
            continue
        if key in seen:
            print(f"skipped, the same text is already there: {record['url']}", file=sys.stderr)
            continue
        seen.add(key)
        parts[part_of(str(record["repo"]))].append(record)
        added += 1
    for part, records in parts.items():
        records.sort(key=lambda r: (str(r["repo"]).lower(), str(r["url"]), str(r["text"])))
        path = part_file(part)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                                for r in records), encoding="utf-8")
    return added


def count() -> Dict[str, Dict[str, int]]:
    out = {}
    for part in PARTS:
        records = load(part)
        out[part] = {"texts": len(records), "repos": len({str(r["repo"]).lower() for r in records})}
    return out


def main(argv: List[str]) -> int:
    if argv[:1] == ["add"]:
        print(f"added {add(sys.stdin.read())}")
    print(json.dumps(count()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
