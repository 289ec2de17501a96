#!/usr/bin/env bash
# Records a real NVIDIA GPU host for fixtures: probe, the full and quick doctor, `watch` on three
# jobs, the opt-in real-GPU tests and the timings issue 24 budgets. Run from the repository root on
# a machine whose python3 holds a CUDA torch; torchsmith runs from source. Every step goes on after
# a failure (each is bounded by `timeout`), so one bad step still leaves the others' outputs.
#
#     bash bench/real_gpu_record.sh OUTDIR
set -u
out=${1:?usage: real_gpu_record.sh OUTDIR}
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TORCHSMITH_COLUMNS=120
ts=("$py" -m torchsmith)
step() { echo "== $(date +%T) $*"; }

step host
{ nvidia-smi; nvidia-smi -q | grep -iE 'MIG Mode|Current *:|Persistence|Product Name' ; } > "$out/nvidia-smi.txt" 2>&1
timeout 120 "$py" - > "$out/torch-info.txt" 2>&1 <<'EOF'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
print("arch_list", torch.cuda.get_arch_list())
print("device", torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
EOF

"$py" -m pip list --format=freeze > "$out/pip-list.txt" 2>&1; uname -a >> "$out/nvidia-smi.txt"

step probe
timeout 60 "${ts[@]}" probe --record "$out/probe" > "$out/probe.txt" 2>&1
timeout 60 "${ts[@]}" probe --json > "$out/probe.json" 2> "$out/probe.stderr"

step doctor
timeout 240 "${ts[@]}" doctor --json > "$out/doctor-full.json" 2> "$out/doctor-full.stderr"
timeout 240 "${ts[@]}" doctor -v --color never > "$out/doctor-full.txt" 2>&1
timeout 60 "${ts[@]}" doctor --quick --json > "$out/doctor-quick.json" 2> "$out/doctor-quick.stderr"
# The GPU hidden from the process, as an empty CUDA_VISIBLE_DEVICES does: the doctor must say so.
CUDA_VISIBLE_DEVICES= timeout 240 "${ts[@]}" doctor --json > "$out/doctor-hidden-gpu.json" 2> "$out/doctor-hidden-gpu.stderr"
timeout 60 "${ts[@]}" plan --json > "$out/plan.json" 2> "$out/plan.stderr"

step watch
cat > "$out/job-launch-bound.py" <<'EOF'
# A small launch-bound loop: tiny matmuls, a host sync each step, a little sleep (mostly idle GPU).
import time, torch
x = torch.randn(64, 64, device="cuda")
end = time.time() + 8
while time.time() < end:
    (x @ x).sum().item()
    time.sleep(0.01)
EOF
cat > "$out/job-busy.py" <<'EOF'
# A job that keeps the GPU busy: large bf16 matmuls back to back for 8 seconds.
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 8
while time.time() < end:
    for _ in range(20):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
EOF
timeout 60 "${ts[@]}" watch --json -- "$py" "$out/job-launch-bound.py" > "$out/watch-launch-bound.json" 2> "$out/watch-launch-bound.stderr"
timeout 60 "${ts[@]}" watch -v --color never -- "$py" "$out/job-launch-bound.py" > "$out/watch-launch-bound.txt" 2>&1
timeout 60 "${ts[@]}" watch --json -- "$py" "$out/job-busy.py" > "$out/watch-busy.json" 2> "$out/watch-busy.stderr"
"$py" "$out/job-busy.py" & job=$!
sleep 2
timeout 30 "${ts[@]}" watch --json --pid "$job" --seconds 5 > "$out/watch-pid.json" 2> "$out/watch-pid.stderr"
wait "$job"

step opt-in tests
TORCHSMITH_GPU_TESTS=1 timeout 300 "$py" -m pytest -q -p no:cacheprovider tests/doctor/test_real_gpu.py \
  > "$out/pytest-real-gpu.txt" 2>&1

step timings
timings() {  # $1: the JSON file to write
timeout 300 "$py" - > "$1" 2> "${1%.json}.stderr" <<'EOF'
# Medians of fresh processes after one warm-up each; ratios are within this run only.
import json, os, statistics, subprocess, sys, time
py = sys.executable
def wall(argv, runs):
    subprocess.run(argv, capture_output=True)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000, 1)
ts = [py, "-m", "torchsmith"]
result = {
    "cpus": os.cpu_count(),
    "python_startup_ms": wall([py, "-c", "pass"], 15),
    "probe_json_ms": wall([*ts, "probe", "--json"], 15),
    "doctor_quick_ms": wall([*ts, "doctor", "--quick", "--json"], 15),
    "import_torch_ms": wall([py, "-c", "import torch"], 5),
    "import_torch_arch_list_ms": wall([py, "-c", "import torch; torch.cuda.get_arch_list()"], 3),
    "doctor_full_ms": wall([*ts, "doctor", "--json"], 5),
}
result["probe_over_startup"] = round(result["probe_json_ms"] / result["python_startup_ms"], 2)
result["quick_speedup_over_arch_list"] = round(result["import_torch_arch_list_ms"] / result["doctor_quick_ms"], 1)
result["full_minus_import_torch_ms"] = round(result["doctor_full_ms"] - result["import_torch_ms"], 1)
print(json.dumps(result, indent=2))
EOF
}
# As run from a source tree where the interpreter writes no bytecode, then as an install has it
# (pip compiles bytecode when it installs a wheel).
timings "$out/timings-source.json"
"$py" -m compileall -q src
timings "$out/timings-compiled.json"

step done
