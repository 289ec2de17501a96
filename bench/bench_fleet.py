"""Time `torchsmith fleet` over many recorded node profiles, and profile gathering through Slurm.

    python bench/bench_fleet.py [--nodes 1000] [--runs 5] [--slurm]

Generates --nodes host profiles (a mixed cluster: A100, V100 on an older driver, H100, L40S and
CPU nodes; tests/cluster/profiles.py), writes them as JSON files and times, as the median over
--runs after one warm-up:

- `fleet FILES... --json` in process (load, group, one resolver call per node type + the shared plan);
- the same as a command (`python -m torchsmith fleet ...`), start-up included.

With --slurm it also starts the test cluster of tests/cluster (munged, slurmctld, three slurmds
on this machine; needs root and Debian's slurm-wlm) and times `fleet --slurm` end to end.
Writes bench/results/fleet.json. Exits 1 when the 2 s target for 1,000 profiles is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
RESULTS = os.path.join(ROOT, "bench", "results", "fleet.json")
TARGET_S = 2.0

from tests.cluster.profiles import fleet, write_profiles  # noqa: E402

from torchsmith.cli import main  # noqa: E402


def _median(fn: Callable[[], Any], runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _in_process(args: List[str]) -> Dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args)
    if code != 0:
        raise SystemExit(f"fleet exited with {code}")
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def bench_profiles(nodes: int, runs: int) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        paths = write_profiles(folder, fleet(nodes))
        args = ["fleet", *paths, "--json"]
        doc = _in_process(args)
        in_process = _median(lambda: _in_process(args), runs)
        command = [sys.executable, "-m", "torchsmith", *args]
        as_command = _median(lambda: subprocess.run(command, capture_output=True, check=True), runs)
    return {"nodes": nodes, "node_types": len(doc["data"]["node_types"]),
            "shared_possible": doc["data"]["shared"]["possible"],
            "in_process_s": round(in_process, 3), "command_s": round(as_command, 3)}


def bench_slurm(runs: int) -> Dict[str, Any]:
    from tests.cluster.slurm_cluster import SlurmCluster, SlurmUnavailable

    with tempfile.TemporaryDirectory() as folder:
        cluster = SlurmCluster(folder)
        try:
            started = time.perf_counter()
            cluster.start()
            startup = time.perf_counter() - started
        except SlurmUnavailable as exc:
            cluster.stop()
            return {"skipped": str(exc).splitlines()[0]}
        try:
            os.environ["SLURM_CONF"] = cluster.conf
            probe = f"{shlex.quote(sys.executable)} -m torchsmith probe --json"
            args = ["fleet", "--slurm", "--timeout", "30", "--probe-command", probe, "--json"]
            gathers: List[float] = []

            def once() -> None:
                gathers.append(_in_process(args)["data"]["gather"]["seconds"])

            total = _median(once, runs)
        finally:
            cluster.stop()
    return {"nodes": len(cluster.nodes), "cluster_start_s": round(startup, 2),
            "gather_s": round(statistics.median(gathers[1:]), 3), "fleet_command_s": round(total, 3)}


def run() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--slurm", action="store_true", help="also time gathering through the test cluster")
    args = parser.parse_args()
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    result: Dict[str, Any] = {"date": now, "python": sys.version.split()[0], "cpus": os.cpu_count(),
                              "profiles": bench_profiles(args.nodes, args.runs)}
    if args.slurm:
        result["slurm"] = bench_slurm(args.runs)
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
    p = result["profiles"]
    print(f"fleet over {p['nodes']} profiles ({p['node_types']} node types): "
          f"{p['in_process_s']:.3f}s in process, {p['command_s']:.3f}s as a command (target < {TARGET_S}s)")
    if "slurm" in result:
        s = result["slurm"]
        if "skipped" in s:
            print(f"Slurm: skipped ({s['skipped']})")
        else:
            print(f"Slurm: {s['nodes']} nodes gathered in {s['gather_s']:.3f}s (srun + probe), whole "
                  f"fleet command {s['fleet_command_s']:.3f}s; cluster start {s['cluster_start_s']:.1f}s")
    return 0 if p["command_s"] < TARGET_S or p["nodes"] < 1000 else 1


if __name__ == "__main__":
    sys.exit(run())
