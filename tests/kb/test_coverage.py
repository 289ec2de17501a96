"""`kb validate` fails when a companion table or the package-metadata snapshot stops short."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from torchsmith.cli import main
from torchsmith.kb import DATA_DIR, load_kb
from torchsmith.kb.coverage import coverage_problems


def _snapshot() -> Dict[str, Any]:
    data = json.loads((Path(DATA_DIR) / "package_meta.json").read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def _validate(tmp_path: Path, data: Dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    (tmp_path / "package_meta.json").write_text(json.dumps(data), encoding="utf-8")
    assert main(["kb", "validate", str(tmp_path)]) == 1
    return capsys.readouterr().err.splitlines()[0]


def test_the_shipped_tables_and_snapshot_reach_the_newest_torch() -> None:
    assert coverage_problems(load_kb(packaged_only=True)) == []


def test_a_snapshot_older_than_the_newest_torch_fails(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    data = _snapshot()
    data["torch_newest"] = "2.8.0"
    first = _validate(tmp_path, data, capsys)
    assert "stale data" in first and "saw torch 2.8.0" in first


def test_a_table_package_missing_from_the_snapshot_fails(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    data = _snapshot()
    data["packages"] = [p for p in data["packages"] if p["name"] != "xformers"]
    assert "xformers is in a companion table but not in the package-metadata snapshot" in \
        _validate(tmp_path, data, capsys)


def test_torch_pins_that_stop_before_the_index_fail(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    data = _snapshot()
    xformers = next(p for p in data["packages"] if p["name"] == "xformers")
    xformers["releases"].insert(0, {"version": "0.0.99", "requires": ["torch==2.15.0"], "metadata": "pep658"})
    assert "the xformers torch pins stop at 0.0.35; its index has 0.0.99" in _validate(tmp_path, data, capsys)


def test_a_post_release_the_table_lacks_keeps_the_table_release_pin() -> None:
    # flash-attn 2.8.3.post2 is on its index, the table has 2.8.3: the same torch pin, said so.
    from tests.plan.plan_hosts import host

    from torchsmith.plan.model import Request
    from torchsmith.plan.resolve import resolve

    plan = resolve(host(python="3.11", gpus=["9.0:NVIDIA H100"], driver="580.65.06"),
                   Request(requirements=("flash-attn==2.8.3.post2",), explicit=True),
                   load_kb(packaged_only=True))
    assert plan.ok, plan.reasons
    assert any(p.name == "flash-attn" and p.version == "2.8.3.post2" for p in plan.packages)
    assert any("post-release of 2.8.3" in w for w in plan.warnings)


def test_torch_requirements_read_before_the_newest_torch_fail(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((Path(DATA_DIR) / "torch_requires.json").read_text("utf-8"))
    data["releases"] = [r for r in data["releases"] if not r["version"].startswith(("2.15", "2.14"))]
    (tmp_path / "torch_requires.json").write_text(json.dumps(data), encoding="utf-8")
    assert main(["kb", "validate", str(tmp_path)]) == 1
    assert "torch's requirements" in capsys.readouterr().err and "read up to torch 2.13.0" in \
        "\n".join(coverage_problems(load_kb(str(tmp_path))))
