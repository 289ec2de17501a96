"""The doctor against a real PyTorch: the CPU torch 2.13.0 wheel from this machine's disk.

The venv is built once per test session and shared by the xdist workers (a lock file guards the
build). Its dependencies come from a local package index, so nothing is downloaded; without the
wheel or that index the tests skip with the reason.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from typing import Dict, Iterator, List

import pytest

from torchsmith.output import ExitCode

pytestmark = pytest.mark.slow

WHEEL = os.environ.get(
    "TORCHSMITH_TEST_TORCH_WHEEL", "/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
)
# torch's own dependencies (sympy, filelock, ...) from a local PEP 503 index.
DEPS_INDEX = os.environ.get("TORCHSMITH_TEST_DEPS_INDEX", "file:///opt/pypi/simple")
GPU_HOST = ("--gpu", "8.6:NVIDIA GeForce RTX 3090", "--driver", "550.54.14")


def _python311() -> str:
    if sys.version_info[:2] == (3, 11):
        return sys.executable
    found = shutil.which("python3.11")
    if not found:
        pytest.skip("the torch wheel on disk is for Python 3.11, and there is no python3.11")
    return found


def _installer_env() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@pytest.fixture(scope="session")
def cpu_torch_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not os.path.exists(WHEEL):
        pytest.skip(f"no CPU torch wheel at {WHEEL} (set TORCHSMITH_TEST_TORCH_WHEEL)")
    if DEPS_INDEX.startswith("file://") and not os.path.isdir(DEPS_INDEX[len("file://") :]):
        pytest.skip(f"no local index for torch's dependencies at {DEPS_INDEX} (TORCHSMITH_TEST_DEPS_INDEX)")
    shared = tmp_path_factory.getbasetemp().parent  # the same for every xdist worker of a session
    venv = shared / "doctor-cpu-torch-2.13.0"
    python = venv / "bin" / "python"
    with open(shared / "doctor-cpu-torch.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (venv / "ready").exists():
                shutil.rmtree(venv, ignore_errors=True)
                subprocess.run([_python311(), "-m", "venv", str(venv)], check=True)
                subprocess.run(
                    [str(python), "-m", "pip", "install", "-q", "--index-url", DEPS_INDEX, WHEEL],
                    check=True,
                    env=_installer_env(),
                    timeout=600,
                )
                (venv / "ready").write_text("ok\n")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    yield str(python)


def _doctor(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "TORCHSMITH_", "LD_LIBRARY", "CUDA_", "VIRTUAL_ENV"))
    }
    return subprocess.run(
        [sys.executable, "-m", "torchsmith", "doctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def _plan_pip_commands(python: str, *host: str) -> List[str]:
    """What `plan` answers for the same environment: doctor's fix is the same stack."""
    result = subprocess.run(
        [sys.executable, "-m", "torchsmith", "plan", "--python", python, *host, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode == 1 and "not in this build" in result.stderr:
        return []
    return list(json.loads(result.stdout)["data"]["commands"]["pip"])


def test_cpu_torch_on_a_gpu_host(cpu_torch_python: str) -> None:
    result = _doctor("--python", cpu_torch_python, "--json", *GPU_HOST)
    assert result.returncode == ExitCode.PROBLEMS_FOUND, result.stderr
    envelope = json.loads(result.stdout)
    assert envelope["status"] == "problems"
    data = envelope["data"]
    first = data["findings"][0]
    assert first["code"] == "cpu-build-on-gpu-host"
    assert first["severity"] == "error"
    assert first["title"] == "torch 2.13.0+cpu is a CPU-only build, but this host has 1 NVIDIA GPU(s)"
    assert {
        "text": "torch 2.13.0+cpu, a CPU build (torch.version.cuda is None)",
        "source": "import torch",
    } in first["facts"]
    # The fix is the plan's pip command for this host, run with this environment's interpreter.
    plan = _plan_pip_commands(cpu_torch_python, *GPU_HOST)
    if plan:
        assert first["fix"] == [c.replace("python -m pip", f"{cpu_torch_python} -m pip", 1) for c in plan]
        assert "--index-url https://download.pytorch.org/whl/cu12" in first["fix"][0]
    else:
        assert first["fix"] == [
            f"torchsmith plan --python {cpu_torch_python}",
            f"torchsmith install --python {cpu_torch_python}",
        ]
    # The dynamic checks really imported torch.
    env = data["environment"]
    assert env["import"]["status"] == "ok"
    assert env["torch"] == {
        "version": "2.13.0+cpu",
        "variant": "cpu",
        "accelerator": "cpu",
        "cuda": None,
        "hip": None,
        "path": env["torch"]["path"],
    }
    assert env["cuda"]["available"] is False


def test_cpu_torch_on_a_cpu_host_is_healthy(cpu_torch_python: str) -> None:
    result = _doctor("--python", cpu_torch_python, "--json", "--no-gpu")
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)["data"]
    assert data["healthy"] is True
    assert [f["severity"] for f in data["findings"]] in ([], ["info"])  # at most: the guard is off
    assert data["environment"]["import"]["status"] == "ok"
    assert data["environment"]["import"]["import_seconds"] > 0


def test_quick_reads_the_real_wheel_without_importing(cpu_torch_python: str) -> None:
    result = _doctor("--python", cpu_torch_python, "--json", "--quick", "--no-gpu")
    assert result.returncode == 0, result.stderr
    env = json.loads(result.stdout)["data"]["environment"]
    assert env["inspected"] == "static"
    assert env["torch"]["version"] == "2.13.0+cpu"
    # The real libc10.so names the libstdc++ it needs; this machine's provides at least that.
    libstdcxx = env["libstdcxx"]
    assert libstdcxx["glibcxx_max"] and libstdcxx["path"].endswith("libstdc++.so.6")
