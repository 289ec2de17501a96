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


def _companion(where: Path, name: str, torch_pin: str) -> Path:
    wheel = where / name
    package, version = name.split("-")[:2]
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"{package}/version.py", f"__version__ = '{version}'\n")
        archive.writestr(f"{package}-{version}.dist-info/METADATA",
                         f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n"
                         f"Requires-Dist: numpy\nRequires-Dist: torch=={torch_pin}\n")
    return wheel


def test_windows_and_macos_wheels_are_audited_against_their_platforms(tmp_path: Path) -> None:
    tool = _tool()
    kb = load_kb(packaged_only=True)
    for name, platform in (("torch-2.15.0-cp315-cp315-win_amd64.whl", "windows-x86_64"),
                           ("torch-2.15.0-cp315-cp315-macosx_14_0_arm64.whl", "macos-arm64")):
        row = tool.audit(str(_wheel(tmp_path, name, None)))
        assert (row["platform"], row["variant"], row["package"]) == (platform, "cpu", "torch")
        assert tool.disagreements(row, kb) == []
    row = tool.audit(str(_wheel(tmp_path, "torch-2.15.0-cp39-cp39-win_amd64.whl", None)))
    assert tool.disagreements(row, kb) == ["python[windows-x86_64] lacks 3.9"]


def test_a_companion_wheels_torch_pin_is_checked_against_the_companion_rows(tmp_path: Path) -> None:
    tool = _tool()
    kb = load_kb(packaged_only=True)
    name = "torchvision-0.24.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    row = tool.audit(str(_companion(tmp_path, name, "2.9.0")))
    assert (row["package"], row["version"], row["torch"]) == ("torchvision", "0.24.0", "2.9.0")
    assert row["variant"] == "cpu"
    assert tool.disagreements(row, kb) == []
    wrong = tool.audit(str(_companion(tmp_path, "torchvision-0.24.0-cp311-cp311-manylinux_2_28_x86_64.whl",
                                      "2.8.0")))
    assert tool.disagreements(wrong, kb) == [
        "torchvision 0.24.0: the row pins torch ==2.9.0, the wheel's metadata torch==2.8.0"]
    assert tool.data_row(row)["id"] == "WHL_torchvision_0.24.0_linux-x86_64"


def test_the_recorded_audits_cover_other_platforms_and_companions() -> None:
    audits = load_kb(packaged_only=True).table("wheel-audits")
    assert {"windows-x86_64", "macos-arm64", "linux-aarch64"} <= {a.platform for a in audits}
    assert {"torchvision", "torchaudio"} <= {a.package for a in audits}
