"""Benchmark ``torchsmith doctor``: the quick check's wall time, and the full check against torch's import.

Targets (issue 24): ``doctor --quick`` under 250 ms median wall and at least 10x faster than its
yardstick of the same run, ``python -c "import torch; torch.cuda.get_arch_list()"``; the full
doctor within the time of ``python -c "import torch"`` plus 1 s. Results: bench/results/doctor.json.

    python bench/bench_doctor.py [--python ENV_PYTHON] [--runs 15] [--full-runs 5]

Without ``--python`` it builds (once, cached in the temp dir) a venv holding the CPU torch
wheel from /opt/wheels, with torch's dependencies from the local index /opt/pypi/simple.
Each command runs as a fresh process, after one warm-up run (warm page cache).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Sequence, Tuple

WHEEL = os.environ.get(
    "TORCHSMITH_TEST_TORCH_WHEEL", "/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
)
DEPS_INDEX = os.environ.get("TORCHSMITH_TEST_DEPS_INDEX", "file:///opt/pypi/simple")
QUICK_TARGET = 0.250
FULL_MARGIN = 1.0
# doctor --quick must beat the import that reads the same list by at least this much (issue 24).
ARCH_SPEEDUP = 10.0
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "doctor.json")


def _env() -> Dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "TORCHSMITH_"))}


def _wall(argv: Sequence[str], runs: int) -> Tuple[List[float], List[float]]:
    """(wall seconds, CPU seconds of the process and its children) per run."""
    subprocess.run(argv, capture_output=True, env=_env(), check=False)  # warm-up
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=_env(), check=False)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return walls, cpus


def _bench_venv() -> str:
    venv = os.path.join(tempfile.gettempdir(), "torchsmith-bench-cpu-torch")
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(os.path.join(venv, "ready")):
        return python
    if not os.path.exists(WHEEL):
        sys.exit(f"no torch wheel at {WHEEL}: pass --python of an environment with torch")
    shutil.rmtree(venv, ignore_errors=True)
    base = sys.executable if sys.version_info[:2] == (3, 11) else shutil.which("python3.11")
    if not base:
        sys.exit("the wheel is for Python 3.11 and there is no python3.11: pass --python")
    subprocess.run([base, "-m", "venv", venv], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--index-url", DEPS_INDEX, WHEEL], check=True, env=env
    )
    with open(os.path.join(venv, "ready"), "w") as handle:
        handle.write("ok\n")
    return python


def _summary(name: str, runs: Tuple[List[float], List[float]]) -> str:
    walls, cpus = runs
    return (
        f"{name:<28} wall median {statistics.median(walls) * 1000:6.0f} ms "
        f"(min {min(walls) * 1000:5.0f}, max {max(walls) * 1000:5.0f})  "
        f"CPU median {statistics.median(cpus) * 1000:6.0f} ms  n={len(walls)}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", help="the environment to inspect (default: a venv with CPU torch)")
    parser.add_argument("--runs", type=int, default=15, help="runs of the quick doctor")
    parser.add_argument(
        "--full-runs", type=int, default=5, help="runs of the full doctor and of import torch"
    )
    args = parser.parse_args()
    python = args.python or _bench_venv()
    doctor = [sys.executable, "-m", "torchsmith", "doctor", "--python", python, "--no-gpu", "--json"]

    quick = _wall([*doctor, "--quick"], args.runs)
    full = _wall(doctor, args.full_runs)
    import_torch = _wall([python, "-c", "import torch"], args.full_runs)
    arch = _wall([python, "-c", "import torch; torch.cuda.get_arch_list()"], args.full_runs)
    start = _wall([python, "-c", "pass"], args.runs)

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(_summary("doctor --quick", quick))
    print(_summary("doctor (imports torch)", full))
    print(_summary("python -c 'import torch'", import_torch))
    print(_summary("import torch; get_arch_list()", arch))
    print(_summary("python -c pass", start))
    speedup = statistics.median(arch[0]) / statistics.median(quick[0])
    print(f"doctor --quick is {speedup:.1f}x faster than import torch; get_arch_list() "
          f"(target >= {ARCH_SPEEDUP:.0f}x): {'PASS' if speedup >= ARCH_SPEEDUP else 'FAIL'}")
    _write(quick, full, import_torch, arch, start)
    quick_ok = statistics.median(quick[0]) < QUICK_TARGET and speedup >= ARCH_SPEEDUP
    budget = statistics.median(import_torch[0]) + FULL_MARGIN
    full_ok = statistics.median(full[0]) < budget
    print(f"quick target < {QUICK_TARGET * 1000:.0f} ms: {'PASS' if quick_ok else 'FAIL'}")
    print(
        f"full target < import torch + {FULL_MARGIN:.0f} s = {budget * 1000:.0f} ms: "
        f"{'PASS' if full_ok else 'FAIL'}"
    )
    return 0 if quick_ok and full_ok else 1


def _write(*runs: Tuple[List[float], List[float]]) -> None:
    import json

    names = ("doctor_quick", "doctor_full", "import_torch", "import_torch_arch_list", "python_startup")
    data = {name: {"median_ms": round(statistics.median(w) * 1000, 1),
                   "median_cpu_ms": round(statistics.median(c) * 1000, 1), "runs": len(w)}
            for name, (w, c) in zip(names, runs)}
    data["load_average"] = round(os.getloadavg()[0], 2)
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")


if __name__ == "__main__":
    sys.exit(main())
