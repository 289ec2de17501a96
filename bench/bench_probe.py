"""Time torchsmith's start-up and `probe --json` against PyTorch's collect_env and nvidia-smi.

    python bench/bench_probe.py [--runs 15] [--rounds 30] [--hook-repeats 5] [--before REV]
                                [--torch-runs 3] [--skip-torch]

Prints a table and writes bench/results/probe.json. Issue 24's budget, `probe --json` at most 4x
the interpreter's start, is measured two ways, both against `python -c pass` of the same run:

- paired: --rounds rounds, each running `python -c pass` and `probe --json` (and, with
  --before REV, the probe of that git revision, taken from git into .bench/) one after the
  other, the order reversed every round; medians of wall time and of the child's CPU time
  (user + system, which load moves little);
- as the before-stop hook does: the median wall time of 5 runs of each, one command after the
  other, --hook-repeats times (each ratio and their median are kept).

Also measured, as median wall time over --runs (after one warm-up run):

- `torchsmith --version` with this interpreter;
- the same and `probe --json` in a clean venv (.bench/venv-clean, torchsmith installed editable)
  and, when this is a venv and torchsmith imports there, with the base interpreter: start-up
  hooks in the base interpreter's site-packages (a .pth importing certifi on the project's
  machines) do not run in a venv, so all are shown;
- `python -m torch.utils.collect_env` in .bench/venv-torch with `pip install torch==2.13.0`
  (pip's own configuration is left alone, so the wheel on this machine's disk is used);
- `nvidia-smi` when it is on PATH.

Exits 1 when a target is missed; it is not a pytest test because timings on shared machines are
noise, not failures.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, ".bench")
RESULTS = os.path.join(ROOT, "bench", "results", "probe.json")
TORCH_SPEC = "torch==2.13.0"
TARGETS_MS = {"version": 100.0, "probe": 200.0}
SPEEDUP_TARGET = 10.0
STARTUP_RATIO_TARGET = 4.0


def _venv_python(venv: str) -> str:
    sub = "Scripts" if sys.platform == "win32" else "bin"
    return os.path.join(venv, sub, "python.exe" if sys.platform == "win32" else "python")


def _base_python() -> str:
    """The interpreter this one was made from (a venv's base), for making new venvs."""
    name = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    candidate = os.path.join(sys.base_prefix, "Scripts" if sys.platform == "win32" else "bin", name)
    return candidate if os.path.exists(candidate) else sys.executable


def _imports_torchsmith(python: str) -> bool:
    return subprocess.run([python, "-c", "import torchsmith"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False).returncode == 0


def _run(argv: List[str], env: Optional[Dict[str, str]] = None) -> None:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)


def _ensure_clean_venv() -> str:
    venv = os.path.join(WORK, "venv-clean")
    python = _venv_python(venv)
    if not os.path.exists(python):
        _run([_base_python(), "-m", "venv", venv])
        _run([python, "-m", "pip", "install", "-q", "-e", ROOT])
    return python


def _ensure_torch_venv() -> str:
    venv = os.path.join(WORK, "venv-torch")
    python = _venv_python(venv)
    if not os.path.exists(python):
        _run([_base_python(), "-m", "venv", venv])
        _run([python, "-m", "pip", "install", "-q", TORCH_SPEC])
    return python


def _time(argv: List[str], runs: int) -> Dict[str, object]:
    env = dict(os.environ)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    samples = []
    cpu_samples = []
    for _ in range(runs):
        cpu_before = _children_cpu()
        started = time.perf_counter()
        result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env, check=False)
        samples.append((time.perf_counter() - started) * 1000)
        cpu_samples.append((_children_cpu() - cpu_before) * 1000)
        if result.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} exited with {result.returncode}")
    return {
        "command": " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a for a in argv),
        "runs": runs,
        "median_ms": round(statistics.median(samples), 1),
        "min_ms": round(min(samples), 1),
        "max_ms": round(max(samples), 1),
        # CPU time (user + system) of the process and its children: what a quiet machine's
        # wall time approaches when the command does not wait on I/O; little moved by load.
        "median_cpu_ms": round(statistics.median(cpu_samples), 1),
    }


def _children_cpu() -> float:
    try:
        import resource
    except ImportError:  # Windows
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _load() -> Optional[List[float]]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):  # Windows
        return None


def _one(argv: List[str], env: Optional[Dict[str, str]] = None) -> Tuple[float, float]:
    """(wall ms, CPU ms of the child) of one run."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return (time.perf_counter() - started) * 1000, (_children_cpu() - cpu_before) * 1000


def _paired(runs: Dict[str, Tuple[List[str], Dict[str, str]]], rounds: int) -> Dict[str, Dict[str, object]]:
    """Each command once a round, the order reversed every other round; medians."""
    for argv, env in runs.values():  # warm-up: page cache, bytecode
        _one(argv, env)
    samples: Dict[str, List[Tuple[float, float]]] = {name: [] for name in runs}
    order = list(runs)
    for round_number in range(rounds):
        for name in order if round_number % 2 == 0 else reversed(order):
            samples[name].append(_one(*runs[name]))
    return {name: {"command": " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a
                                       for a in runs[name][0]),
                   "runs": rounds,
                   "median_ms": round(statistics.median(w for w, _c in got), 1),
                   "median_cpu_ms": round(statistics.median(c for _w, c in got), 1)}
            for name, got in samples.items()}


def _as_the_hook_does(python: str, repeats: int) -> Dict[str, object]:
    """The before-stop hook's figure: median wall time of 5 runs of each, one after the other."""
    def median_of_5(argv: List[str]) -> float:
        return statistics.median(_one(argv)[0] for _ in range(5))

    ratios = []
    for _ in range(repeats):
        start = median_of_5([python, "-c", "pass"])
        probe = median_of_5([python, "-m", "torchsmith", "probe", "--json"])
        ratios.append(round(probe / start, 2))
    return {"ratios": ratios, "median_ratio": round(statistics.median(ratios), 2)}


def _revision_tree(revision: str) -> str:
    """The source of a git revision, in .bench/, bytecode compiled."""
    tree = os.path.join(WORK, f"probe-{revision}")
    if not os.path.isdir(os.path.join(tree, "src")):
        archive = subprocess.run(["git", "-C", ROOT, "archive", revision, "src"], capture_output=True,
                                 check=True)
        os.makedirs(tree, exist_ok=True)
        subprocess.run(["tar", "-x", "-C", tree], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(tree, "src")], check=False)
    return tree


def _top_imports(python: str, limit: int = 6) -> List[Dict[str, object]]:
    """The costliest imports of `torchsmith --version` (cumulative microseconds, -X importtime)."""
    result = subprocess.run([python, "-X", "importtime", "-m", "torchsmith", "--version"],
                            capture_output=True, text=True, check=False)
    rows = []
    for line in result.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append({"module": parts[2].strip(), "cumulative_us": int(parts[1].strip())})
    rows.sort(key=lambda r: -int(str(r["cumulative_us"])))
    return rows[:limit]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=30, help="paired rounds of the start-up ratio")
    parser.add_argument("--hook-repeats", type=int, default=5,
                        help="times the before-stop hook's own measurement is repeated")
    parser.add_argument("--before", metavar="REV", help="also time the probe of this git revision, paired")
    parser.add_argument("--torch-runs", type=int, default=3)
    parser.add_argument("--skip-torch", action="store_true", help="do not build or time collect_env")
    args = parser.parse_args()

    os.makedirs(WORK, exist_ok=True)
    # Bytecode first: under PYTHONDONTWRITEBYTECODE a changed module is compiled on every run.
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "src")], check=False)
    load_before = _load()
    results: Dict[str, Dict[str, object]] = {}
    this = sys.executable
    results["version"] = _time([this, "-m", "torchsmith", "--version"], args.runs)
    # Paired, with the same PYTHONPATH for every command (a revision's tree goes there).
    here = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    paired_runs = {"python_startup": ([this, "-c", "pass"], here),
                   "probe": ([this, "-m", "torchsmith", "probe", "--json"], here)}
    if args.before:
        tree = _revision_tree(args.before)
        paired_runs["probe_before"] = (paired_runs["probe"][0],
                                       dict(os.environ, PYTHONPATH=os.path.join(tree, "src")))
    results.update(_paired(paired_runs, args.rounds))
    if args.before:
        results["probe_before"]["revision"] = args.before
    hook = _as_the_hook_does(this, args.hook_repeats)
    clean = _ensure_clean_venv()
    results["version_clean_venv"] = _time([clean, "-m", "torchsmith", "--version"], args.runs)
    results["probe_clean_venv"] = _time([clean, "-m", "torchsmith", "probe", "--json"], args.runs)
    results["python_startup_clean_venv"] = _time([clean, "-c", "pass"], args.runs)
    # The base interpreter runs its own site-packages' .pth files at every start-up (on the
    # project's machines one imports certifi); a venv does not.
    base = _base_python()
    if sys.prefix != sys.base_prefix:
        results["python_startup_base"] = _time([base, "-c", "pass"], args.runs)
        if _imports_torchsmith(base):
            results["version_base"] = _time([base, "-m", "torchsmith", "--version"], args.runs)
            results["probe_base"] = _time([base, "-m", "torchsmith", "probe", "--json"], args.runs)
    if not args.skip_torch:
        torch_python = _ensure_torch_venv()
        results["collect_env"] = _time([torch_python, "-m", "torch.utils.collect_env"],
                                       args.torch_runs)
    smi = shutil.which("nvidia-smi")
    if smi:
        results["nvidia_smi"] = _time([smi], args.runs)

    probe_ms = float(str(results["probe"]["median_ms"]))
    # The yardstick of the same run: the interpreter's own start (issue 24: probe <= 4x it).
    start_ms = float(str(results["python_startup"]["median_ms"]))
    ratios = {"probe_over_python_startup": round(probe_ms / start_ms, 2),
              "probe_over_python_startup_cpu": round(
                  float(str(results["probe"]["median_cpu_ms"]))
                  / max(float(str(results["python_startup"]["median_cpu_ms"])), 0.1), 2),
              "probe_over_python_startup_as_the_hook_does": float(str(hook["median_ratio"]))}
    if "probe_before" in results:
        for unit, key in (("", "median_ms"), ("_cpu", "median_cpu_ms")):
            ratios[f"probe_before_over_python_startup{unit}"] = round(
                float(str(results["probe_before"][key])) / float(str(results["python_startup"][key])), 2)
    if "collect_env" in results:
        ratios["collect_env_over_probe"] = round(
            float(str(results["collect_env"]["median_ms"])) / probe_ms, 1)
    if "nvidia_smi" in results:
        ratios["nvidia_smi_over_probe"] = round(
            float(str(results["nvidia_smi"]["median_ms"])) / probe_ms, 2)
    met = {
        "version_under_100ms": float(str(results["version"]["median_ms"])) < TARGETS_MS["version"],
        "probe_under_200ms": probe_ms < TARGETS_MS["probe"],
        "probe_within_4x_python_startup": ratios["probe_over_python_startup"] <= STARTUP_RATIO_TARGET,
        "probe_within_4x_python_startup_cpu": ratios["probe_over_python_startup_cpu"] <= STARTUP_RATIO_TARGET,
        "probe_within_4x_python_startup_as_the_hook_does":
            float(str(hook["median_ratio"])) <= STARTUP_RATIO_TARGET,
    }
    if "collect_env_over_probe" in ratios:
        met["probe_10x_faster_than_collect_env"] = ratios["collect_env_over_probe"] >= SPEEDUP_TARGET
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "cpu_count": os.cpu_count(), "nvidia_smi": bool(smi),
                    # Other work on the machine inflates every figure: say how busy it was.
                    "load_average_before": load_before, "load_average_after": _load()},
        "results": results,
        "as_the_hook_does": hook,
        "ratios": ratios,
        "targets_met": met,
        "version_top_imports": _top_imports(this),
    }
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2)
        handle.write("\n")

    width = max(len(name) for name in results)
    print(f"{'measurement':<{width}}  median ms     min ms  cpu ms  runs")
    for name, row in results.items():
        print(f"{name:<{width}}  {row['median_ms']:>9}  {row.get('min_ms', '-'):>9}  "
              f"{row['median_cpu_ms']:>6}  {row['runs']:>4}")
    for name, value in ratios.items():
        print(f"{name}: {value}x")
    for name, ok in met.items():
        print(f"{'ok  ' if ok else 'MISS'} {name}")
    print(f"written to {os.path.relpath(RESULTS, ROOT)}")
    return 0 if all(met.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
