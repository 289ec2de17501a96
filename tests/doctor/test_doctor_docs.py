"""docs/findings.md names every code the checks can emit, and nothing they cannot."""

from __future__ import annotations

import re
from pathlib import Path

import torchsmith.doctor.checks as checks

ROOT = Path(__file__).resolve().parents[2]


def emitted_codes() -> set:
    # The checks are a package of themed modules.
    source = "".join(p.read_text(encoding="utf-8") for p in Path(checks.__file__).parent.glob("*.py"))
    return set(re.findall(r'Finding\(\s*"([a-z0-9-]+)"', source))


def test_every_finding_code_is_documented() -> None:
    codes = emitted_codes()
    assert {"cpu-build-on-gpu-host", "torch-import-hangs", "companion-abi-mismatch"} <= codes
    doc = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `([a-z0-9-]+)`(?: / `([a-z0-9-]+)`)? \|", doc, re.M))
    documented = {c for pair in table for c in pair if c}
    assert documented == codes
    headings = {c for line in re.findall(r"^## (.+)$", doc, re.M) for c in line.split(" / ")}
    assert codes <= headings


def test_doctor_doc_states_the_exit_codes() -> None:
    doc = (ROOT / "docs" / "doctor.md").read_text(encoding="utf-8")
    assert "| 4 | problems found" in doc
    assert "| 0 | healthy" in doc
