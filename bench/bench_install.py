"""Benchmark `torchsmith install`: time to a verified environment, uv vs pip, cold vs warm cache.

    python bench/bench_install.py [--rounds 3]

Runs the real CLI (a new venv, the plan `torch==2.6.0 torchvision ftfy==6.2.0` for a CPU host)
against the local test index of tests/support (fake torch wheels, so the figures are the tools'
own cost, not the download of 2 GB). Cold: an empty installer cache each round; warm: a cache
filled by the previous round. torchsmith's overhead is the wall time of the whole command minus
what the installer steps, the venv creation and the verify snippet took (issue 5: < 0.5 s).
Writes bench/results/install.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.fixtures import isolated_environ  # noqa: E402 - after the sys.path line
from tests.support.pkgindex import serve_index  # noqa: E402
from tests.support.torchstack import build_standard_indexes  # noqa: E402

REQUIREMENTS = ["torch==2.6.0", "torchvision", "ftfy==6.2.0"]


def one_install(installer: str, index_url: str, cache: Path, work: Path) -> Dict[str, float]:
    env = isolated_environ(cache, dict(os.environ))
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = f"{index_url}/pypi/"
    venv = work / f"venv-{installer}-{time.monotonic_ns()}"
    argv = [sys.executable, "-m", "torchsmith", "install", "--yes", "--json", "--no-gpu",
            "--installer", installer, "--venv", str(venv), "--torch-index", f"{index_url}/pytorch",
            *REQUIREMENTS]
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"install failed ({installer}):\n{proc.stdout}\n{proc.stderr}")
    data = json.loads(proc.stdout)["data"]
    steps = sum(s["seconds"] for s in data["steps"])
    seconds = data["seconds"]
    shutil.rmtree(venv)
    return {
        "wall": wall,
        "installer_steps": steps,
        "environment": seconds.get("environment", 0.0),
        "verify": seconds.get("verify", 0.0),
        "overhead": wall - steps - seconds.get("environment", 0.0) - seconds.get("verify", 0.0),
    }


def bench_snapshot(prefix: str) -> None:
    """Time a snapshot and an exact restore of a real environment (e.g. one with CUDA torch)."""
    from torchsmith.install.snapshot import Snapshot

    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(prefix) for f in fs
               if not os.path.islink(os.path.join(d, f)))
    snapshot = Snapshot(prefix)
    start = time.perf_counter()
    snapshot.take()
    took = time.perf_counter() - start
    start = time.perf_counter()
    snapshot.restore()
    restored = time.perf_counter() - start
    print(f"snapshot of {prefix}: {snapshot.files} files, {size / 2**20:.0f} MiB, "
          f"{snapshot.bytes_copied / 2**20:.1f} MiB copied (the rest hardlinked): "
          f"take {took:.2f} s, restore {restored:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--snapshot-of", metavar="PREFIX",
                        help="only time a snapshot + restore of this environment")
    args = parser.parse_args()
    if args.snapshot_of:
        bench_snapshot(args.snapshot_of)
        return
    results: Dict[str, Dict[str, Dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        work = Path(tmp)
        build_standard_indexes(work / "wheels")
        with serve_index(work / "wheels") as server:
            for installer in ("uv", "pip"):
                for cache_state in ("cold", "warm"):
                    runs: List[Dict[str, float]] = []
                    warm_cache = work / f"cache-{installer}"
                    for round_ in range(args.rounds + (1 if cache_state == "warm" else 0)):
                        cache = warm_cache if cache_state == "warm" else work / f"cold-{installer}-{round_}"
                        run = one_install(installer, server.url, cache, work)
                        if cache_state == "warm" and round_ == 0:
                            continue  # the round that fills the cache
                        runs.append(run)
                    key = f"{installer}-{cache_state}"
                    results[key] = {name: {"median": statistics.median(r[name] for r in runs),
                                           "max": max(r[name] for r in runs)}
                                    for name in runs[0]}
    print(f"{'':10} {'wall':>8} {'installer':>10} {'venv':>8} {'verify':>8} {'overhead':>9}  (median s)")
    for key, row in results.items():
        print(f"{key:10} {row['wall']['median']:8.2f} {row['installer_steps']['median']:10.2f} "
              f"{row['environment']['median']:8.2f} {row['verify']['median']:8.2f} "
              f"{row['overhead']['median']:9.2f}   (overhead max {row['overhead']['max']:.2f})")
    worst = max(row["overhead"]["max"] for row in results.values())
    print(f"torchsmith overhead, worst run: {worst:.2f} s (target < 0.5 s)")
    out = ROOT / "bench" / "results" / "install.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rounds": args.rounds, "python": sys.version.split()[0],
                               "cpus": os.cpu_count(), "results": results}, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
