"""``doctor --quick`` reads the installed torch's kernels from libtorch_cuda.so, without importing it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Dict

import pytest
from tests.doctor.envs import path_env, write_torch
from tests.doctor.test_doctor_envs import BROKEN_INIT, codes, run_doctor

V100 = ("--quick", "--gpu", "7.0:Tesla V100", "--driver", "580.65.06")


def _env_with_kernels(tmp_path: Path, library: Path) -> Dict[str, str]:
    site = tmp_path / "site"
    torch = write_torch(site, "2.9.0+cu130", cuda="13.0", init=BROKEN_INIT)  # importing it would fail
    (torch / "lib").mkdir()
    shutil.copy(library, torch / "lib" / "libtorch_cuda.so")
    return path_env(site)


@pytest.mark.slow
def test_quick_doctor_finds_arch_not_compiled_from_the_library(
    tmp_path: Path, nvcc_libs: Dict[str, Path], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = _env_with_kernels(tmp_path, nvcc_libs["libplain.so"])  # sm_75 sm_90a sm_120f, PTX 80 90a
    _, data = run_doctor(capsys, monkeypatch, env, *V100)
    assert codes(data).get("arch-not-compiled") == "error"
    finding = next(f for f in data["findings"] if f["code"] == "arch-not-compiled")
    compiled = next(f for f in finding["facts"] if f["text"].startswith("compiled for:"))
    assert compiled["text"] == "compiled for: sm_75 sm_90a sm_120f compute_80 compute_90a"
    assert compiled["source"].startswith("fatbin headers of ")
    assert compiled["source"].endswith("libtorch_cuda.so")
    assert data["environment"]["kernels"]["sass"] == ["sm_75", "sm_90a", "sm_120f"]


@pytest.mark.slow
def test_quick_doctor_accepts_a_gpu_the_ptx_covers(
    tmp_path: Path, nvcc_libs: Dict[str, Path], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = _env_with_kernels(tmp_path, nvcc_libs["libplain.so"])
    _, data = run_doctor(capsys, monkeypatch, env, "--quick", "--gpu", "8.6:RTX 3090",
                           "--driver", "580.65.06")
    assert "arch-not-compiled" not in codes(data)  # compute_80 PTX is JIT-compiled for 8.6
    assert data["environment"]["kernels"]["ptx"] == ["compute_80", "compute_90a"]


def test_unreadable_library_is_reported_not_raised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"\x7fELF truncated")
    env = _env_with_kernels(tmp_path, junk)
    _, data = run_doctor(capsys, monkeypatch, env, *V100)
    assert "arch-not-compiled" not in codes(data)
    assert "not an ELF or PE binary" in data["environment"]["kernels"]["error"]
