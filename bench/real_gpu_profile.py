"""Where the time of probe and doctor goes on a real GPU host: the pieces each one waits for.

    PYTHONPATH=src python3 bench/real_gpu_profile.py OUTDIR            the pieces
    PYTHONPATH=src python3 bench/real_gpu_profile.py OUTDIR TAG        the commands, profiled

Writes OUTDIR/pieces.json or OUTDIR/commands-TAG.json (medians of fresh processes) and
OUTDIR/profile-*-TAG.txt (cProfile of the parent process, cumulative). Run with the python3 that
holds a CUDA torch.
"""

from __future__ import annotations

import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List, Sequence

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
SNIPPETS = os.path.join(SRC, "torchsmith", "snippets")


def median_ms(argv: Sequence[str], runs: int = 5) -> float:
    subprocess.run(argv, capture_output=True)
    times: List[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000, 1)


STEPS_NVML = r"""
import json, time
t = time.perf_counter(); marks = {}
def mark(name):
    global t
    now = time.perf_counter(); marks[name] = round((now - t) * 1000, 1); t = now
import pynvml; mark("import pynvml")
pynvml.nvmlInit(); mark("nvmlInit")
pynvml.nvmlSystemGetDriverVersion(); h = pynvml.nvmlDeviceGetHandleByIndex(0); pynvml.nvmlDeviceGetName(h)
pynvml.nvmlDeviceGetCudaComputeCapability(h); pynvml.nvmlDeviceGetMemoryInfo(h); pynvml.nvmlDeviceGetUUID(h)
pynvml.nvmlDeviceGetPciInfo(h); pynvml.nvmlDeviceGetMigMode(h); mark("queries")
pynvml.nvmlShutdown(); mark("nvmlShutdown")
import ctypes
ctypes.CDLL("libnvidia-ml.so.1"); mark("ctypes CDLL libnvidia-ml")
print(json.dumps(marks))
"""

STEPS_TORCH = r"""
import json, time
t = time.perf_counter(); marks = {}
def mark(name):
    global t
    now = time.perf_counter(); marks[name] = round((now - t) * 1000, 1); t = now
import torch; mark("import torch")
torch.ones((8, 8)).matmul(torch.ones((8, 8))).sum(); mark("cpu matmul")
torch.cuda.is_available(); mark("cuda.is_available")
torch.cuda.device_count(); mark("device_count")
torch.cuda.get_device_properties(0); mark("get_device_properties (context)")
a = torch.ones((64, 64), device="cuda"); mark("first tensor on cuda")
float((a @ a).sum().item()); mark("matmul (cuBLAS)")
x = torch.ones((1, 3, 16, 16), device="cuda"); w = torch.ones((4, 3, 3, 3), device="cuda")
torch.nn.functional.conv2d(x, w, padding=1); torch.cuda.synchronize(); mark("conv (cuDNN)")
import torch.distributed as dist; dist.is_nccl_available(); torch.cuda.nccl.version(); mark("nccl version")
print(json.dumps(marks))
"""


def marks(code: str) -> object:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"error": result.stderr[-600:]}


def profile(out: str, name: str, args: Sequence[str]) -> None:
    data = os.path.join(out, f"{name}.prof")
    subprocess.run([sys.executable, "-m", "cProfile", "-o", data, "-m", "torchsmith", *args],
                   capture_output=True)
    with open(os.path.join(out, f"profile-{name}.txt"), "w") as handle:
        stats = pstats.Stats(data, stream=handle)
        stats.sort_stats("cumulative").print_stats(45)
    os.unlink(data)


def teardown_variants(out: str) -> Dict[str, Any]:
    """torch_check.py as shipped (os._exit once its report is out) and with the normal exit."""
    snippet = os.path.join(SNIPPETS, "torch_check.py")
    with open(snippet) as handle:
        text = handle.read()
    normal = os.path.join(out, "torch_check_normal_exit.py")
    with open(normal, "w") as handle:
        handle.write(text.replace("    os._exit(0)\n", ""))
    steps_exit = STEPS_TORCH + "import os, sys; sys.stdout.flush(); os._exit(0)\n"
    result = {
        "torch_check.py (os._exit)": median_ms([sys.executable, snippet], 2),
        "torch_check.py (normal exit)": median_ms([sys.executable, normal], 2),
        "torch steps (normal exit)": median_ms([sys.executable, "-c", STEPS_TORCH], 2),
        "torch steps (os._exit)": median_ms([sys.executable, "-c", steps_exit], 2),
    }
    os.unlink(normal)
    return result


def site_cost(out: str) -> Dict[str, Any]:
    """What the interpreter's own start imports (site, .pth files) and whether bytecode is cached."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True,
                            text=True)
    with open(os.path.join(out, "site-importtime.txt"), "w") as handle:
        handle.write(result.stderr)
    import site
    pth = {d: sorted(f for f in os.listdir(d) if f.endswith(".pth"))
           for d in site.getsitepackages() if os.path.isdir(d)}
    return {"dont_write_bytecode": sys.flags.dont_write_bytecode,
            "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE"), "pth": pth}


def commands(out: str, tag: str) -> Dict[str, Any]:
    """The three commands users time, medians of fresh processes, and their parents' profiles."""
    ts = [sys.executable, "-m", "torchsmith"]
    result = {
        "python -c pass": median_ms([sys.executable, "-c", "pass"], 9),
        "probe --json": median_ms([*ts, "probe", "--json"], 9),
        "doctor --quick --json": median_ms([*ts, "doctor", "--quick", "--json"], 9),
        "import torch": median_ms([sys.executable, "-c", "import torch"], 3),
        "doctor --json": median_ms([*ts, "doctor", "--json"], 3),
    }
    for name, args in (("probe", ["probe", "--json"]), ("quick", ["doctor", "--quick", "--json"]),
                       ("full", ["doctor", "--json"])):
        profile(out, f"{name}-{tag}", args)
    return result


def main() -> None:
    out, tag = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "pieces"
    os.makedirs(out, exist_ok=True)
    py = sys.executable
    if tag != "pieces":  # only the commands, e.g. again once bytecode is compiled
        result = commands(out, tag)
        with open(os.path.join(out, f"commands-{tag}.json"), "w") as handle:
            json.dump(result, handle, indent=2)
        print(json.dumps(result, indent=2))
        return
    pieces = {
        "site": site_cost(out),
        "teardown": teardown_variants(out),
        "python -S -c pass": median_ms([py, "-S", "-c", "pass"]),
        "python -I -S -c pass": median_ms([py, "-I", "-S", "-c", "pass"]),
        "torchsmith -V": median_ms([py, "-m", "torchsmith", "-V"]),
        "nvml_probe.py -IS": median_ms([py, "-IS", os.path.join(SNIPPETS, "nvml_probe.py")]),
        "inspect_env.py": median_ms([py, os.path.join(SNIPPETS, "inspect_env.py")]),
        "nvml steps": marks(STEPS_NVML),
        "torch steps": marks(STEPS_TORCH),
    }
    with open(os.path.join(out, "pieces.json"), "w") as handle:
        json.dump(pieces, handle, indent=2)
    print(json.dumps(pieces, indent=2))


if __name__ == "__main__":
    main()
