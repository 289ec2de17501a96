"""tools/verify_wheels.py: what a wheel carries against the release rows, and the audits it records."""

from __future__ import annotations

import importlib.util
import json
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Dict, Optional

import pytest

from torchsmith.kb import load_kb

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_wheels", ROOT / "tools" / "verify_wheels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wheel(where: Path, name: str, cuda: Optional[str], library: Optional[Path] = None) -> Path:
    wheel = where / name
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("torch/version.py", f"from typing import Optional\ncuda: Optional[str] = {cuda!r}\n")
        if library is not None:
            archive.write(library, "torch/lib/libtorch_cuda.so")
    return wheel


def test_a_cpu_wheel_where_the_data_says_cuda_is_a_disagreement(tmp_path: Path) -> None:
    tool = _tool()
    wheel = _wheel(tmp_path, "torch-2.14.0-cp312-cp312-manylinux_2_28_x86_64.whl", None)
    row = tool.audit(str(wheel))
    assert (row["torch"], row["platform"], row["variant"]) == ("2.14.0", "linux-x86_64", "cpu")
    assert row["libs"] == []
    assert tool.disagreements(row, load_kb(packaged_only=True)) == [
        "pypi_default[linux-x86_64] is 'cu130', the PyPI wheel is cpu"]


def test_unknown_release_and_python_tag(tmp_path: Path) -> None:
    tool = _tool()
    row = tool.audit(str(_wheel(tmp_path, "torch-9.9.9-cp312-cp312-manylinux_2_28_x86_64.whl", "13.0")))
    assert tool.disagreements(row, load_kb(packaged_only=True)) == ["torch 9.9.9: no release row"]
    row = tool.audit(str(_wheel(tmp_path, "torch-2.14.0-cp36-cp36m-manylinux_2_28_x86_64.whl", None)))
    assert "python[linux-x86_64] lacks 3.6" in tool.disagreements(row, load_kb(packaged_only=True))


@pytest.mark.slow
def test_sass_disagreement_and_recorded_audit(tmp_path: Path, nvcc_libs: Dict[str, Path]) -> None:
    tool = _tool()
    wheel = _wheel(tmp_path, "torch-2.14.0-cp312-cp312-manylinux_2_28_x86_64.whl", "13.0",
                   nvcc_libs["libplain.so"])
    row = tool.audit(str(wheel))
    problems = tool.disagreements(row, load_kb(packaged_only=True))
    assert problems == [
        "cu130 sass[linux-x86_64] is sm_75 sm_80 sm_86 sm_90 sm_100 sm_120, "
        "the wheel's torch/lib/libtorch_cuda.so has sm_75 sm_90a sm_120f",
        "cu130 ptx[linux-x86_64] is (none), "
        "the wheel's torch/lib/libtorch_cuda.so has compute_80 compute_90a"]
    data = tmp_path / "wheel_audits.json"
    tool.write_data([row], str(data))
    written = json.loads(data.read_text())["wheels"]
    assert [(r["id"], r["sha256"], r["libraries"][0]["sass"]) for r in written] == [
        ("WHL_2.14.0_linux-x86_64", row["sha256"], ["sm_75", "sm_90a", "sm_120f"])]
