"""The verify snippet in a child interpreter: against the fake torch (every branch) and, in one
slow test, against the real CPU torch 2.13.0 wheel on this machine's disk."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from tests.support.faketorch import fake_companion_files, fake_torch_files
from tests.support.torchstack import ARCHES

from torchsmith.host.live import LiveHost
from torchsmith.install.verify import architecture_check, verify


def _site(tmp_path: Path, files: Dict[str, str]) -> Path:
    site = tmp_path / "site"
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return site


def _verify(site: Path, expect: str, imports: List[str] = (), cc: Optional[str] = None) -> dict:  # type: ignore[assignment]
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    if cc:
        env["TORCHSMITH_FAKE_CUDA_CC"] = cc
    return verify(LiveHost(env), sys.executable, expect, list(imports), timeout=60)


def _failed(report: dict) -> Dict[str, str]:
    return {c["name"]: c["detail"] for c in report["checks"] if not c["ok"]}


def test_cpu_build_passes_on_cpu_and_computes(tmp_path: Path) -> None:
    site = _site(tmp_path, {**fake_torch_files("2.6.0+cpu", None, []),
                            **fake_companion_files("torchvision", "0.21.0+cpu", "2.6.0+cpu")})
    report = _verify(site, "cpu", ["torchvision"])
    assert report["ok"], report
    assert [c["name"] for c in report["checks"]] == ["import torch", "matmul", "conv2d", "import torchvision"]
    assert report["torch"] == "2.6.0+cpu" and report["device"] == "cpu"


def test_a_cpu_build_on_a_gpu_host_fails_with_the_reason(tmp_path: Path) -> None:
    site = _site(tmp_path, fake_torch_files("2.6.0+cpu", None, []))
    report = _verify(site, "cuda", cc="8.6")
    assert not report["ok"]
    assert "CPU build" in _failed(report)["cuda available"]


def test_cuda_build_on_a_gpu_it_was_compiled_for(tmp_path: Path) -> None:
    site = _site(tmp_path, fake_torch_files("2.6.0+cu126", "12.6", ARCHES["cu126"]))
    report = _verify(site, "cuda", cc="8.6")
    assert report["ok"], report
    assert report["device"] == "cuda" and report["device_arch"] == "sm_86"
    assert {c["name"]: c["detail"] for c in report["checks"]}["architecture"] == "SASS for sm_86"
    # Same major, newer minor: sm_86 SASS runs on 8.9.
    assert _verify(site, "cuda", cc="8.9")["ok"]


def test_a_gpu_newer_than_the_build_fails_on_the_arch(tmp_path: Path) -> None:
    site = _site(tmp_path, fake_torch_files("2.6.0+cu126", "12.6", ARCHES["cu126"]))
    failed = _failed(_verify(site, "cuda", cc="12.0"))
    assert "sm_120 is not in torch's compiled list" in failed["architecture"]


def test_a_torch_that_cannot_import_is_reported_not_raised(tmp_path: Path) -> None:
    broken = "raise OSError('libcudnn.so.9: cannot open shared object file')\n"
    site = _site(tmp_path, {"torch/__init__.py": broken})
    report = _verify(site, "cpu")
    assert not report["ok"]
    assert "libcudnn.so.9" in _failed(report)["import torch"]


def test_a_companion_built_for_another_torch_fails(tmp_path: Path) -> None:
    site = _site(tmp_path, {**fake_torch_files("2.7.1+cpu", None, []),
                            **fake_companion_files("torchvision", "0.21.0+cpu", "2.6.0+cpu")})
    failed = _failed(_verify(site, "cpu", ["torchvision"]))
    assert "torchvision::nms does not exist" in failed["import torchvision"]


def test_wrong_numbers_fail_the_matmul(tmp_path: Path) -> None:
    files = fake_torch_files("2.6.0+cpu", None, [])
    files["torch/__init__.py"] = files["torch/__init__.py"].replace(
        "sum(x * y for x, y in zip(row, col))", "sum(x * y for x, y in zip(row, col)) + 1")
    failed = _failed(_verify(_site(tmp_path, files), "cpu"))
    assert "expected" in failed["matmul"] and "conv2d" not in failed


def test_a_hung_torch_import_times_out(tmp_path: Path) -> None:
    site = _site(tmp_path, {"torch/__init__.py": "import time\ntime.sleep(30)\n"})
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(site)}
    report = verify(LiveHost(env), sys.executable, "cpu", [], timeout=1.0)
    assert not report["ok"] and "did not answer in time" in report["checks"][0]["detail"]


def test_arch_rules_are_compats() -> None:
    assert architecture_check((9, 0), ["sm_80", "sm_90"]) == (True, "SASS for sm_90")
    assert architecture_check((8, 6), ["sm_80"]) == (True, "SASS for sm_80 (same major, binary compatible)")
    assert not architecture_check((8, 0), ["sm_86"])[0]  # never runs newer-minor SASS
    assert architecture_check((12, 0), ["sm_90", "compute_90"])[1].startswith("PTX compute_90")
    assert not architecture_check((6, 1), ["sm_70", "compute_70"])[0]
    # What the copy in the snippet got wrong: arch-specific SASS serves its own GPU only, and an
    # integrated GPU (Jetson) runs only SASS of its exact capability.
    assert architecture_check((9, 0), ["sm_90a"]) == (True, "SASS for sm_90a")
    assert not architecture_check((10, 0), ["sm_90a"])[0]
    assert not architecture_check((8, 7), ["sm_86"], integrated=True)[0]


@pytest.mark.slow
def test_verify_passes_with_the_real_cpu_torch(tmp_path: Path) -> None:
    wheels = glob.glob("/opt/wheels/torch-2.13.0+cpu-cp311-*.whl")
    local_index = "/opt/pypi/simple"
    if sys.version_info[:2] != (3, 11) or not wheels or not os.path.isdir(local_index):
        pytest.skip("needs Python 3.11, /opt/wheels/torch-2.13.0+cpu and the local /opt/pypi index")
    from uv import find_uv_bin

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update({"UV_NO_CONFIG": "1", "UV_CACHE_DIR": str(tmp_path / "uv-cache")})
    venv = tmp_path / "real"
    uv = str(find_uv_bin())
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True, env=env)
    # Only local sources: the wheel on disk, and its dependencies from the local file index.
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
                    "--index-url", f"file://{local_index}", wheels[0]], check=True, env=env)
    report = verify(LiveHost(env), str(venv / "bin" / "python"), "cpu", [], timeout=300)
    assert report["ok"], report
    assert report["torch"] == "2.13.0+cpu" and report["torch_cuda"] is None
    # The same snippet, asked for a GPU this machine does not have, says so.
    report = verify(LiveHost(env), str(venv / "bin" / "python"), "cuda", [], timeout=300)
    assert _failed(report)["cuda available"].startswith("torch.cuda.is_available() is False")
