"""On a real NVIDIA GPU (opt-in: TORCHSMITH_GPU_TESTS=1, with a CUDA torch in this interpreter):
the full doctor and `watch` behave as the recorded H100 host says they should. Behaviour only,
never seconds: timings belong to bench/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Dict

import pytest

from torchsmith.cli import main
from torchsmith.doctor.inspect import snippet_path
from torchsmith.doctor.loaded import loaded_libraries

pytestmark = pytest.mark.gpu


@pytest.fixture
def cuda_torch() -> Any:
    if os.environ.get("TORCHSMITH_GPU_TESTS") != "1":
        pytest.skip("real-GPU tests are opt-in: TORCHSMITH_GPU_TESTS=1")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible to this torch")
    return torch


def test_the_snippet_reads_the_libraries_it_loaded(cuda_torch: Any) -> None:
    result = subprocess.run([sys.executable, snippet_path("torch_check.py")], capture_output=True,
                            text=True, timeout=600, check=True)
    report: Dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    for device in report["cuda"]["devices"]:
        assert device["matmul_ok"] and device["conv_ok"], device
        assert "small_model" not in device  # no model of its own is timed
    loaded = {lib.stem: lib for lib in loaded_libraries(report["loaded"])}
    assert {"cublas", "cudnn"} <= set(loaded), report["loaded"]
    # cuDNN answers its own version: the one torch reports.
    assert loaded["cudnn"].version_source.startswith("cudnnGetVersion()")
    cudnn = cuda_torch.backends.cudnn.version()
    assert loaded["cudnn"].version == (cudnn // 10000, cudnn % 10000 // 100, cudnn % 100)


def test_the_full_doctor_on_a_healthy_environment(cuda_torch: Any,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    main(["doctor", "--json"])
    data = json.loads(capsys.readouterr().out)["data"]
    codes = {f["code"] for f in data["findings"]}
    assert "gpu-underused" not in codes
    assert data["environment"]["loaded"]["libraries"]
    for finding in data["findings"]:
        assert finding["facts"], finding  # every finding cites what it saw


def test_watch_a_small_job(cuda_torch: Any, capsys: pytest.CaptureFixture[str]) -> None:
    job = ("import torch, time; x = torch.randn(64, 64, device='cuda'); end = time.time() + 4\n"
           "while time.time() < end: (x @ x).sum().item(); time.sleep(0.01)")
    assert main(["watch", "--json", "--", sys.executable, "-c", job]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert data["error"] is None and data["samples"] >= 2
    [device] = data["devices"]
    assert device["memory_mib_peak"] and device["memory_mib_total"]
    assert data["verdict"] is None or data["verdict"]["code"] == "gpu-underused"
