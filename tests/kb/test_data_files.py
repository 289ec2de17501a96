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


def test_the_probe_takes_jetson_compute_capabilities_from_the_gpu_table() -> None:
    """One home for "module -> compute capability": the jetson rows of gpus.json."""
    from torchsmith.kb import load_kb
    from torchsmith.probe.jetson import compute_capability_of, module_from_soc

    rows = [g for g in load_kb(packaged_only=True).gpus if g.jetson]
    assert rows
    for gpu in rows:
        assert compute_capability_of(gpu.name.replace("Jetson ", "", 1)) == gpu.compute_capability
    orin = {g.compute_capability for g in rows if "Orin" in g.name}
    assert module_from_soc(["nvidia,tegra234"]) == ("Orin", orin.pop())
    assert compute_capability_of("Nano/TX1") == "5.3" and compute_capability_of("Warp 9") is None
