"""What can only be seen from outside: tools that hang or flood, FIFOs where files should be, a
real Ctrl-C. Each runs ``python -m torchsmith`` with fake tools first on PATH; its bound (``bound``)
is a limit past which the run counts as a hang, not a timing check."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict

import pytest
from tests.robustness.harness import check, judge, record, run_subprocess

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fake tools are sh scripts; FIFOs")

GPU_ROW = "0, NVIDIA H100 80GB HBM3, 9.0, 81559, GPU-1, 00000000:04:00.0, Disabled, 535.129.03"


def _tool(directory: Path, name: str, body: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _env(tmp_path: Path, **extra: str) -> Dict[str, str]:
    return {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
            "TORCHSMITH_CACHE_DIR": str(tmp_path / "cache"), **extra}


def test_fifos_where_version_files_are(tmp_path: Path) -> None:
    cuda, rocm = tmp_path / "cuda", tmp_path / "rocm"
    (cuda / "include").mkdir(parents=True)
    (rocm / ".info").mkdir(parents=True)
    for fifo in (cuda / "version.json", cuda / "version.txt", cuda / "include" / "cuda.h",
                 rocm / ".info" / "version", rocm / ".info" / "version-dev"):
        os.mkfifo(fifo)
    env = _env(tmp_path, CUDA_HOME=str(cuda), ROCM_PATH=str(rocm))
    outcome = run_subprocess(["probe", "--json"], env=env,
                             label="probe <FIFOs at the CUDA and ROCm version files>")
    check(outcome)


def test_every_tool_hangs_and_the_probe_still_answers(tmp_path: Path) -> None:
    rocm = tmp_path / "rocm"
    for name in ("nvidia-smi", "rocminfo", "rocm_agent_enumerator", "amd-smi", "hipconfig", "nvcc"):
        _tool(tmp_path / "bin", name, "exec sleep 600\n")
    _tool(rocm / "bin", "rocminfo", "exec sleep 600\n")
    outcome = run_subprocess(["probe", "--json"], label="probe <every tool hangs>",
                             env=_env(tmp_path, ROCM_PATH=str(rocm), TORCHSMITH_PROBE_BUDGET="3"))
    check(outcome)
    notes = " ".join(n["problem"] for n in json.loads(outcome.stdout)["data"]["notes"])
    assert "did not answer in time" in notes or "time budget" in notes


def test_floods_and_garbage_from_every_tool(tmp_path: Path) -> None:
    rocm = tmp_path / "rocm"
    (rocm / ".info").mkdir(parents=True)
    (rocm / ".info" / "version").write_text("6.3.1\n")
    _tool(tmp_path / "bin", "nvidia-smi", f"yes '{GPU_ROW}' | head -c 50000000\n")
    _tool(rocm / "bin", "rocminfo", "head -c 3000000 /dev/urandom\n")
    _tool(tmp_path / "bin", "amd-smi", "printf '['; yes '[' | head -c 200000 | tr -d '\\n'\n")
    outcome = run_subprocess(["probe", "--json"], label="probe <50 MB of nvidia-smi rows, binary rocminfo>",
                             env=_env(tmp_path, ROCM_PATH=str(rocm)))
    check(outcome)
    assert len(outcome.stdout) < 3_000_000
    gpus = json.loads(outcome.stdout)["data"]["nvidia"]["gpus"]
    assert 0 < len(gpus) <= 256


def test_explain_a_device_from_outside(tmp_path: Path) -> None:
    check(run_subprocess(["explain", "--no-probe", "--file", "/dev/zero"], env=_env(tmp_path),
                         label="explain --file /dev/zero"))


@pytest.mark.slow
def test_explain_a_stream_of_zeros(tmp_path: Path) -> None:
    check(run_subprocess(["explain", "--no-probe", "--json", "-"], env=_env(tmp_path),
                         stdin=b"\0" * 40_000_000, label="explain - <40 MB of NUL>"))


def test_a_real_ctrl_c_while_a_tool_hangs(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    _tool(tmp_path / "bin", "nvidia-smi", f"echo > '{marker}'\nexec sleep 600\n")
    # Python's own Ctrl-C handler, whatever disposition this test process inherited (a shell
    # starts background jobs with SIGINT ignored, and a child would inherit that).
    start = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "sys.argv = ['torchsmith', 'probe', '--json']; "
             "runpy.run_module('torchsmith', run_name='__main__')")
    proc = subprocess.Popen([sys.executable, "-c", start],
                            env=_env(tmp_path, TORCHSMITH_PROBE_BUDGET="120"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(1200):  # wait, boundedly, until torchsmith is inside the hanging tool
            if marker.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert marker.exists(), "the probe never ran nvidia-smi"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    outcome = record(judge(["probe", "--json"], proc.returncode, out.decode(), err.decode()),
                     "probe <a real SIGINT while nvidia-smi hangs>")
    check(outcome)
    assert proc.returncode == 130
