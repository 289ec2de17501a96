"""gpu-underused: a small model's training step leaves the GPU idle (the check, and the snippet's
timing against a simulated GPU whose busy time is known exactly)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from tests.doctor.envs import device, dynamic_ok, gpu_host, path_env, report
from tests.doctor.fakecuda import KERNELS_PER_STEP, write_fake_cuda_torch

from torchsmith.cli import main
from torchsmith.doctor.checks import check_gpu_underused, run_checks
from torchsmith.doctor.inspect import snippet_path
from torchsmith.doctor.model import Finding
from torchsmith.machine import Machine, SchedulerInfo

_SCHEDULER_MARKERS = ("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "SGE_ROOT", "KUBERNETES_SERVICE_HOST")


def timing(fraction: Any = 0.08, step_ms: Any = 1.25, busy_ms: Any = 0.1, **extra: Any) -> Dict[str, Any]:
    data = {"params": 1055242, "batch": 32, "steps": 8, "step_ms": step_ms, "gpu_busy_ms": busy_ms,
            "busy_fraction": fraction, "method": "queued", "kernels_per_step": 20,
            "large_batch": 1024, "large_batch_step_ms": 1.5}
    data.update(extra)
    return data


def diagnose(devices: List[Dict[str, Any]], machine: Optional[Machine] = None,
             torch_version: str = "2.5.1+cu124", cuda: Optional[str] = "12.4") -> Optional[Finding]:
    rep = report(torch_version, cuda, dynamic=dynamic_ok(torch_version, cuda, devices=devices))
    return check_gpu_underused(rep, machine or gpu_host(), None)


def slurm_host(**kwargs: Any) -> Machine:
    return dataclasses.replace(gpu_host(**kwargs), scheduler=SchedulerInfo(kind="slurm", job_id="4242"))


@pytest.mark.parametrize(("fraction", "found"), [(0.08, True), (0.299, True), (0.30, False), (0.9, False)])
def test_threshold(fraction: float, found: bool) -> None:
    hit = diagnose([device(small_model=timing(fraction))])
    assert (hit is not None) is found


def test_desktop_gpu_is_info_with_the_measured_facts() -> None:
    hit = diagnose([device(small_model=timing())])
    assert hit is not None
    assert (hit.code, hit.severity) == ("gpu-underused", "info")
    assert hit.title == (
        "a small model keeps GPU 0 (NVIDIA GeForce RTX 3090) busy only 8% of each training step")
    assert [f.text for f in hit.facts] == [
        "a 1.1M-parameter MLP, batch 32, one SGD training step: 1.25 ms, the GPU busy 0.100 ms of it (8%)",
        "20 GPU operations (kernel launches) per step, 5 µs of GPU time each on average",
        "32x the batch (1024) took 1.2x the time (1.50 ms a step)",
    ]
    assert hit.facts[1].source == "torch_check.py: the ATen ops of one step (TorchDispatchMode)"
    assert hit.fix == ()
    assert hit.note.startswith("a small model leaves this GPU idle 92% of each step, waiting for Python")
    assert "torch.compile(model, mode='reduce-overhead')" in hit.note and "on the CPU" in hit.note
    assert "MIG" not in hit.note


def test_slurm_job_is_a_warning_that_says_the_gpu_is_wasted() -> None:
    hit = diagnose([device(small_model=timing())], slurm_host())
    assert hit is not None and hit.severity == "warning"
    assert ("running inside a slurm job 4242", "machine.scheduler") in [(f.text, f.source) for f in hit.facts]
    assert "a whole GPU held by a job like this is wasted, idle while other users wait for one" in hit.note
    assert "--gres=gpu:<mig-profile>:1" in hit.note and "MPS" in hit.note
    assert hit.fix == (
        "sinfo -h -o '%P %G'  # the partitions and GPU types (MIG slices) this cluster offers",)
    # The diagnosis keeps it among the warnings, after errors, and it never makes the env unhealthy.
    rep = report(dynamic=dynamic_ok(devices=[device(small_model=timing())]))
    found = {f.code: f.severity for f in run_checks(rep, slurm_host(), None)}
    assert found["gpu-underused"] == "warning"


@pytest.mark.parametrize(
    "name",
    ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L40S", "Tesla T4", "AMD Instinct MI300X"],
)
def test_data_center_gpu_without_a_scheduler_is_a_warning(name: str) -> None:
    hit = diagnose([device(name=name, small_model=timing())])
    assert hit is not None and hit.severity == "warning"
    assert f"{name}: a data-center GPU" in [f.text for f in hit.facts]
    assert hit.fix == ()  # no Slurm here: nothing to query


def test_mig_capable_host_gpu_is_a_warning() -> None:
    machine = gpu_host()
    assert machine.nvidia is not None
    gpu = dataclasses.replace(machine.nvidia.gpus[0], mig_mode="Disabled")
    machine = dataclasses.replace(machine, nvidia=dataclasses.replace(machine.nvidia, gpus=(gpu,)))
    hit = diagnose([device(name="NVIDIA Graphics Device", small_model=timing())], machine)
    assert hit is not None and hit.severity == "warning"
    assert ("the GPUs support MIG: data-center GPUs", "machine.nvidia.gpus (mig_mode)") in [
        (f.text, f.source) for f in hit.facts]


def test_already_on_a_mig_slice() -> None:
    hit = diagnose([device(name="NVIDIA A100-SXM4-40GB MIG 1g.5gb", small_model=timing())], slurm_host())
    assert hit is not None
    assert "This is already a MIG slice: a smaller slice, or MPS, may do." in hit.note
    assert "--gres" not in hit.note


def test_several_gpus_in_one_finding_worst_facts_first() -> None:
    devices = [device(index=i, name="NVIDIA H100 80GB HBM3", small_model=timing(f, busy_ms=f * 1.25))
               for i, f in enumerate((0.12, 0.07, 0.5))]
    hit = diagnose(devices)
    assert hit is not None
    assert hit.title == (
        "a small model keeps 2 GPUs (NVIDIA H100 80GB HBM3) busy only 7-12% of each training step")
    assert hit.facts[0].text.endswith("the GPU busy 0.088 ms of it (7%)")
    assert hit.facts[0].source == "torch_check.py: CUDA events around the steps on GPU 1"
    assert "idle 88% of each step" in hit.note  # the least idle of the two: never overstated


def test_events_method_says_the_idle_time_is_a_lower_bound() -> None:
    hit = diagnose([device(small_model=timing(method="events", kernels_per_step=None))])
    assert hit is not None
    texts = [f.text for f in hit.facts]
    assert any(t.startswith("that busy time includes the gaps between kernels") for t in texts)
    assert not any("per step" in t for t in texts)


def test_cpu_build_or_no_timing_gives_nothing() -> None:
    assert diagnose([device(small_model=timing())], torch_version="2.5.1+cpu", cuda=None) is None
    assert diagnose([device()]) is None
    assert diagnose([]) is None
    # --quick: no dynamic report at all.
    assert check_gpu_underused(report(), gpu_host(), None) is None


@pytest.mark.parametrize(
    "small_model",
    [
        None,
        "fast",
        [0.1],
        {"error": "RuntimeError: CUDA error: out of memory"},
        {},
        timing("0.1"),
        timing(True),
        timing(float("nan")),
        timing(-0.5),
        timing(0.1, step_ms=0),
        timing(0.1, step_ms=None),
        timing(0.1, busy_ms="x"),
        timing(0.1, step_ms=float("inf")),
    ],
)
def test_missing_or_garbled_timing_never_raises(small_model: Any) -> None:
    rep = report(dynamic=dynamic_ok(devices=[device(small_model=small_model)]))
    found = {f.code for f in run_checks(rep, slurm_host(), None)}
    assert "gpu-underused" not in found and "doctor-check-failed" not in found


@pytest.mark.parametrize(
    "fields",
    [
        {"params": "many", "batch": None, "large_batch": "big", "kernels_per_step": "x", "steps": None},
        {"params": -3, "batch": 0, "large_batch": 1024, "large_batch_step_ms": -1, "kernels_per_step": 0},
        {"method": ["odd"], "large_batch_step_ms": True, "kernels_per_step": True, "batch": True},
    ],
)
def test_garbled_side_fields_still_give_the_finding(fields: Dict[str, Any]) -> None:
    hit = diagnose([device(small_model=timing(**fields))])
    assert hit is not None
    assert hit.facts[0].text.endswith(", one SGD training step: 1.25 ms, the GPU busy 0.100 ms of it (8%)")
    assert "None" not in hit.facts[0].text and "True" not in hit.facts[0].text
    assert not any("per step" in f.text or "x the batch" in f.text for f in hit.facts)


@pytest.mark.parametrize("devices", ["cuda:0", 3, [None, "x", 7]])
def test_garbled_device_list_never_raises(devices: Any) -> None:
    dynamic = dynamic_ok()
    dynamic["cuda"]["devices"] = devices
    assert check_gpu_underused(report(dynamic=dynamic), gpu_host(), None) is None


# --- the snippet's timing, run by `torchsmith doctor` against a simulated GPU -----------------
def run_doctor(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, site: Path,
               **extra_env: str) -> Dict[str, Any]:
    env = path_env(site, **extra_env)
    for marker in _SCHEDULER_MARKERS:
        if marker not in extra_env:
            env.pop(marker, None)
    for key in list(os.environ):
        if key not in env:
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code = main(["doctor", "--python", sys.executable, "--json",
                 "--gpu", "9.0:NVIDIA H100 80GB HBM3", "--driver", "550.54.14"])
    data = json.loads(capsys.readouterr().out)["data"]
    assert code == 0, data["findings"]  # the finding is a warning at most: still healthy
    return dict(data)


def small_model_of(data: Dict[str, Any]) -> Dict[str, Any]:
    [gpu] = data["environment"]["cuda"]["devices"]
    assert gpu["matmul_ok"] and gpu["conv_ok"]
    return dict(gpu["small_model"])


def underused(data: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    return next((f for f in data["findings"] if f["code"] == "gpu-underused"), None)


def test_launch_bound_step_on_a_data_center_gpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each launch costs the CPU >= 0.5 ms, each kernel 0.05 ms of GPU: the GPU idles > 90% of a step.
    write_fake_cuda_torch(tmp_path / "site", kernel_ms=0.05, launch_ms=0.5)
    data = run_doctor(capsys, monkeypatch, tmp_path / "site")
    timed = small_model_of(data)
    assert timed["method"] == "queued"
    # Queued behind the spin, the steps ran back to back: the busy time is exactly the kernels'.
    assert timed["gpu_busy_ms"] == pytest.approx(KERNELS_PER_STEP * 0.05, abs=1e-3)
    assert timed["step_ms"] >= KERNELS_PER_STEP * 0.5
    assert timed["busy_fraction"] == pytest.approx(timed["gpu_busy_ms"] / timed["step_ms"], abs=1e-3)
    assert timed["busy_fraction"] < 0.1
    assert timed["params"] == 1055242 and timed["batch"] == 32 and timed["large_batch"] == 1024
    # Counted by op dispatch: the compute ops only, not the views each Linear takes of its weight.
    assert timed["kernels_per_step"] == KERNELS_PER_STEP
    hit = underused(data)
    assert hit is not None and hit["severity"] == "warning"
    assert hit["title"].startswith("a small model keeps GPU 0 (NVIDIA H100 80GB HBM3) busy only ")
    assert "NVIDIA H100 80GB HBM3: a data-center GPU" in [f["text"] for f in hit["facts"]]


def test_gpu_bound_step_is_not_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fake_cuda_torch(tmp_path / "site", kernel_ms=0.5, launch_ms=0.01)
    data = run_doctor(capsys, monkeypatch, tmp_path / "site")
    timed = small_model_of(data)
    assert timed["method"] == "queued"
    assert timed["gpu_busy_ms"] == pytest.approx(KERNELS_PER_STEP * 0.5, abs=1e-3)
    assert timed["busy_fraction"] > 0.6
    assert underused(data) is None


def test_without_the_spin_plain_events_cannot_see_the_idle_gaps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same launch-bound step: events around a running step count the gaps as busy.
    write_fake_cuda_torch(tmp_path / "site", kernel_ms=0.05, launch_ms=0.5, spin=False)
    data = run_doctor(capsys, monkeypatch, tmp_path / "site")
    timed = small_model_of(data)
    assert timed["method"] == "events"
    assert timed["gpu_busy_ms"] > KERNELS_PER_STEP * 0.5  # includes every launch's wait
    assert underused(data) is None  # an upper bound on busy time never makes up a finding


def test_a_spin_that_fails_falls_back_to_plain_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = write_fake_cuda_torch(tmp_path / "site", kernel_ms=0.05, launch_ms=0.5)
    with open(torch / "__init__.py", "a", encoding="utf-8") as init:
        init.write("def _no_spin(cycles):\n    raise RuntimeError('no _sleep on this GPU')\n"
                   "cuda._sleep = _no_spin\n")
    timed = small_model_of(run_doctor(capsys, monkeypatch, tmp_path / "site"))
    assert timed["spin_error"] == "RuntimeError: no _sleep on this GPU"
    assert timed["method"] == "events"
    assert timed["kernels_per_step"] == KERNELS_PER_STEP  # the rest of the measurement stands


def test_desktop_gpu_in_a_slurm_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write_fake_cuda_torch(site, kernel_ms=0.05, launch_ms=0.5, name="NVIDIA GeForce RTX 4090")
    desktop = underused(run_doctor(capsys, monkeypatch, site))
    assert desktop is not None and desktop["severity"] == "info" and desktop["fix"] == []
    in_job = underused(run_doctor(capsys, monkeypatch, site, SLURM_JOB_ID="77"))
    assert in_job is not None and in_job["severity"] == "warning"
    assert {"text": "running inside a slurm job 77", "source": "machine.scheduler"} in in_job["facts"]
    assert in_job["fix"][0].startswith("sinfo -h -o '%P %G'")


def test_a_failing_timing_is_reported_not_raised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = write_fake_cuda_torch(tmp_path / "site", kernel_ms=0.05, launch_ms=0.5)
    with open(torch / "__init__.py", "a", encoding="utf-8") as init:
        init.write("del optim\n")  # a torch without torch.optim
    data = run_doctor(capsys, monkeypatch, tmp_path / "site")
    assert small_model_of(data) == {"error": "AttributeError: module 'torch' has no attribute 'optim'"}
    assert underused(data) is None
    assert data["environment"]["import"]["status"] == "ok"


# --- a real GPU ---------------------------------------------------------------------------------
@pytest.mark.gpu
def test_small_model_timing_on_a_real_gpu() -> None:
    if os.environ.get("TORCHSMITH_GPU_TESTS") != "1":
        pytest.skip("real-GPU tests are opt-in: TORCHSMITH_GPU_TESTS=1")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible to this torch")
    result = subprocess.run([sys.executable, snippet_path("torch_check.py")], capture_output=True,
                            text=True, timeout=300, check=True)
    report_ = json.loads(result.stdout.strip().splitlines()[-1])
    for gpu in report_["cuda"]["devices"]:
        timed = gpu["small_model"]
        assert "error" not in timed, timed
        assert timed["method"] == "queued"
        assert 0 < timed["gpu_busy_ms"] <= timed["step_ms"] * 1.05
        assert 0 < timed["busy_fraction"] <= 1
        assert timed["seconds"] < 3
    # 3 addmm, 2 relu, the loss, its backward, 5 mm, 3 sums, 2 relu backward, the SGD update(s).
    assert report_["cuda"]["devices"][0]["small_model"]["kernels_per_step"] >= 15
