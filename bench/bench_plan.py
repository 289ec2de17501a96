"""Benchmark the resolver and `torchsmith plan --json`.

    python bench/bench_plan.py            # resolve() per call, and the CLI's wall time

Targets (issue 4): resolve() under 10 ms per call; `plan --json` under 250 ms median wall.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.plan.plan_hosts import host

from torchsmith.kb import load_kb
from torchsmith.plan.model import Request
from torchsmith.plan.resolve import resolve

HOSTS = {
    "gtx1080-drv580": {"gpus": ["6.1:GTX 1080"], "driver": "580.65.06"},
    "v100+b200": {"gpus": ["7.0:V100", "10.0:B200"], "driver": "580.65.06"},
    "rtx5070ti-torch<2.7": {"gpus": ["12.0:RTX 5070 Ti"], "driver": "580.65.06"},
    "cpu-only": {},
    "macos-x86_64": {"platform": "macos-x86_64"},
    "jetson-jp51": {"platform": "linux-aarch64", "python": "3.8", "jetson": "35.2.1"},
    "rocm-gfx1031": {"rocm_gfx": ["gfx1031"]},
}


def bench_resolve(rounds: int = 200) -> None:
    start = time.perf_counter()
    kb = load_kb()
    print(f"load_kb: {(time.perf_counter() - start) * 1000:.1f} ms (first load)")
    for name, spec in HOSTS.items():
        machine = host(**spec)
        request = Request(requirements=("torch<2.7",) if "<2.7" in name else Request().requirements)
        first = time.perf_counter()
        resolve(machine, request, kb)
        cold = time.perf_counter() - first
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            resolve(machine, request, kb)
            times.append(time.perf_counter() - t)
        print(f"resolve {name:22s} median {statistics.median(times) * 1000:6.2f} ms  "
              f"p95 {sorted(times)[int(rounds * 0.95)] * 1000:6.2f} ms  first {cold * 1000:6.2f} ms")


def bench_cli(rounds: int = 15) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "host.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(host(**HOSTS["gtx1080-drv580"]).to_json(), handle)
        argv = [sys.executable, "-m", "torchsmith", "plan", "--host", path, "--json"]
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=True)
            times.append(time.perf_counter() - t)
        baseline = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], capture_output=True, check=True)
            baseline.append(time.perf_counter() - t)
    print(f"plan --json --host: median {statistics.median(times) * 1000:.0f} ms wall "
          f"(bare interpreter start {statistics.median(baseline) * 1000:.0f} ms)")


if __name__ == "__main__":
    bench_resolve()
    bench_cli()
