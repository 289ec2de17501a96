"""Benchmark the resolver and `torchsmith plan --json --host FILE`.

    python bench/bench_plan.py [--rounds 15] [--skip-release]

Targets: resolve() under 10 ms per call (issue 4); `plan --json --host FILE` at most 100 ms and
no slower than the first release, 4437a5b (issue 24). The command is timed against yardsticks
of the same run, interleaved round by round: the interpreter's start (`python -c pass`) and the
first release on the recorded H100 profile (the one profile both read; its tree is taken from
git into .bench/). Medians of CPU time (user + system), which load moves little; wall times are
shown too. Writes bench/results/plan.json.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

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


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = "4437a5b"  # the first release
PLAN_BUDGET_MS = 100.0


def _release_tree() -> Optional[str]:
    """The first release's source, from git, once (None where there is no git history)."""
    tree = os.path.join(ROOT, ".bench", f"release-{RELEASE}")
    if not os.path.isdir(os.path.join(tree, "src")):
        archive = subprocess.run(["git", "-C", ROOT, "archive", RELEASE, "src"], capture_output=True,
                                 check=False)
        if archive.returncode != 0:
            return None
        os.makedirs(tree, exist_ok=True)
        subprocess.run(["tar", "-x", "-C", tree], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(tree, "src")], check=False)
    return tree


def _cpu_of_children() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(argv: List[str], env: Dict[str, str]) -> Tuple[float, float]:
    """(CPU ms, wall ms) of one run."""
    cpu, wall = _cpu_of_children(), time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return (_cpu_of_children() - cpu) * 1000, (time.perf_counter() - wall) * 1000


def bench_start(rounds: int, with_release: bool) -> Dict[str, object]:
    """`plan --json --host` against the interpreter's start and the first release, interleaved."""
    # The tests' first capture (what the before-stop hook times) and the recorded H100 profile.
    hosts_dir = os.path.join(ROOT, "tests", "hosts")
    capture = sorted(f for f in os.listdir(hosts_dir) if f.endswith(".json") and "expected" not in f)[0]
    profile = os.path.join(hosts_dir, "real-h100", "profile.json")
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "src")], check=False)
    here = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    plan = [sys.executable, "-m", "torchsmith", "plan", "--json", "--host"]
    runs: Dict[str, Tuple[List[str], Dict[str, str]]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], here),
        f"plan --json --host tests/hosts/{capture}": (
            [*plan, os.path.join(hosts_dir, capture)], here),
        "plan --json --host real-h100/profile.json": ([*plan, profile], here),
    }
    release = _release_tree() if with_release else None
    if release is not None:
        runs[f"{RELEASE}: plan --json --host real-h100/profile.json"] = (
            runs["plan --json --host real-h100/profile.json"][0],
            dict(os.environ, PYTHONPATH=os.path.join(release, "src")))
    samples: Dict[str, List[Tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, (argv, env) in runs.items():
            samples[name].append(_timed(argv, env))
    table = {name: {"median_cpu_ms": round(statistics.median(c for c, _w in got), 1),
                    "median_wall_ms": round(statistics.median(w for _c, w in got), 1), "runs": rounds}
             for name, got in samples.items()}
    start = float(table["python -c pass"]["median_cpu_ms"])
    hook = float(table[f"plan --json --host tests/hosts/{capture}"]["median_cpu_ms"])
    ratios = {"plan_capture_over_python_start_cpu": round(hook / start, 1)}
    met = {"plan_host_within_100ms_cpu": hook <= PLAN_BUDGET_MS}
    if release is not None:
        ours = float(table["plan --json --host real-h100/profile.json"]["median_cpu_ms"])
        theirs = float(table[f"{RELEASE}: plan --json --host real-h100/profile.json"]["median_cpu_ms"])
        ratios["plan_profile_over_first_release_cpu"] = round(ours / theirs, 2)
        met["no_slower_than_first_release"] = ours <= theirs
    for name, row in table.items():
        print(f"{name:58s} {row['median_cpu_ms']:7.1f} ms CPU  {row['median_wall_ms']:7.1f} ms wall")
    for name, value in ratios.items():
        print(f"{name}: {value}x")
    for name, ok in met.items():
        print(f"{'ok  ' if ok else 'MISS'} {name}")
    return {"results": table, "ratios": ratios, "targets_met": met}


def main() -> int:
    import argparse
    import datetime

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--skip-release", action="store_true", help="no paired run of the first release")
    args = parser.parse_args()
    bench_resolve()
    load = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    report = bench_start(args.rounds, not args.skip_release)
    report["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    report["load_average_before"] = load
    path = os.path.join(ROOT, "bench", "results", "plan.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2)
        handle.write("\n")
    print(f"written to {os.path.relpath(path, ROOT)}")
    met = report["targets_met"]
    return 0 if isinstance(met, dict) and all(met.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
