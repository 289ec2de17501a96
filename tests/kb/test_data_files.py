"""The packaged JSON files are the source of the data: they load, validate and stay canonical."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.kb import load_kb

DATA = Path(__file__).resolve().parents[2] / "src" / "torchsmith" / "kb" / "data"


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json")), ids=lambda p: p.name)
def test_data_file_keeps_the_canonical_layout(path: Path) -> None:
    # One layout for hand edits keeps diffs reviewable.
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=1, ensure_ascii=False) + "\n"


def test_packaged_data_loads_and_validates() -> None:
    kb = load_kb(packaged_only=True)
    assert kb.releases and not kb.warnings
