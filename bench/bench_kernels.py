"""Benchmark reading torch's kernel list from libtorch_cuda.so against importing torch for it.

    python bench/bench_kernels.py --lib PATH/libtorch_cuda.so [--runs 15]

``--lib`` is a real torch CUDA library (unzip one from a CUDA wheel: ``unzip -j torch-*.whl
torch/lib/libtorch_cuda.so``; ~1 GB). A fake environment whose torch/lib holds it (a symlink) and
whose ``import torch`` would fail is doctored with ``doctor --quick`` on a GPU that library has no
kernels for; ``kb archs`` reads the same library. The reference is
``python -c "import torch; torch.cuda.get_arch_list()"`` in a venv with the CPU torch wheel
(bench_doctor.py builds it): the only way to get the list without the reader. Warm page cache.
Writes bench/results/kernels.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_doctor import _bench_venv, _env, _summary, _wall

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "kernels.json")
VERSION_PY = "__version__ = '2.9.0+cu128'\ncuda = '12.8'\nhip = None\n"


def _fake_env(lib: str) -> str:
    site = tempfile.mkdtemp(prefix="bench-kernels-")
    torch = os.path.join(site, "torch")
    os.makedirs(os.path.join(torch, "lib"))
    with open(os.path.join(torch, "version.py"), "w") as handle:
        handle.write(VERSION_PY)
    with open(os.path.join(torch, "__init__.py"), "w") as handle:
        handle.write("raise ImportError('this benchmark never imports torch')\n")
    os.symlink(os.path.abspath(lib), os.path.join(torch, "lib", "libtorch_cuda.so"))
    return site


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", required=True, help="a real libtorch_cuda.so")
    parser.add_argument("--gpu", default="6.1:GTX 1080", help="a GPU the library lacks kernels for")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--import-runs", type=int, default=5)
    args = parser.parse_args()
    site = _fake_env(args.lib)
    env = dict(_env(), PYTHONPATH=site)
    doctor = [sys.executable, "-m", "torchsmith", "doctor", "--python", sys.executable, "--quick", "--json",
              "--gpu", args.gpu, "--driver", "580.65.06"]
    answer = json.loads(subprocess.run(doctor, capture_output=True, text=True, env=env, check=False).stdout)
    found = [f["code"] for f in answer["data"]["findings"]]
    kernels = answer["data"]["environment"]["kernels"]
    if "arch-not-compiled" not in found:
        sys.exit(f"doctor --quick did not find arch-not-compiled for {args.gpu} (read: {kernels})")

    results: Dict[str, Tuple[List[float], List[float]]] = {}
    import bench_doctor

    original = bench_doctor._env
    bench_doctor._env = lambda: env  # type: ignore[assignment]  # the fake site on sys.path
    try:
        results["doctor --quick (reads the .so)"] = _wall(doctor, args.runs)
        results["kb archs LIB --json"] = _wall(
            [sys.executable, "-m", "torchsmith", "kb", "archs", args.lib, "--json"], args.runs)
    finally:
        bench_doctor._env = original  # type: ignore[assignment]
    torch_python = _bench_venv()
    results["import torch; get_arch_list()"] = _wall(
        [torch_python, "-c", "import torch; torch.cuda.get_arch_list()"], args.import_runs)

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; library {args.lib} "
          f"({os.path.getsize(args.lib) / 1e6:.0f} MB): SASS {' '.join(kernels['sass'])}")
    for name, runs in results.items():
        print(_summary(name, runs))
    reference = statistics.median(results["import torch; get_arch_list()"][0])
    quick = statistics.median(results["doctor --quick (reads the .so)"][0])
    print(f"doctor --quick with the static arch check: {reference / quick:.1f}x faster than import torch")
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as handle:
        json.dump({"library": os.path.basename(args.lib), "library_bytes": os.path.getsize(args.lib),
                   "sass": kernels["sass"], "ptx": kernels["ptx"], "load": os.getloadavg()[0],
                   "median_ms": {k: round(statistics.median(v[0]) * 1000, 1) for k, v in results.items()}},
                  handle, indent=2)
        handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
