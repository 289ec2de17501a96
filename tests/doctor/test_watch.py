"""`torchsmith watch`: the recorded H100 job's NVML samples folded and judged, and the command run
end to end against a stand-in pynvml that answers with those recorded samples (no GPU here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Dict, List

import pytest

from torchsmith.cli import main
from torchsmith.doctor.gpu_use import Watch, gpu_indexes_of_slurm_job, pids_of_slurm_job

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "tests" / "hosts" / "real-h100" / "nvml-job-samples.json").read_text("utf-8"))
FAKE_NVML = ROOT / "tests" / "fake_bin" / "nvml-h100"
HEADER = {"driver": "580.159.04", "devices": [{"key": "0", "parent": None, "name": "NVIDIA H100 80GB HBM3"}]}


def as_lines(samples: List[Dict[str, Any]], pid: int = 480) -> List[Dict[str, Any]]:
    """The recorded samples as snippets/nvml_watch.py prints them (the job's PID replaced)."""
    lines = []
    for sample in samples:
        device: Dict[str, Any] = {
            "util": sample["device_util"], "memory_mib": sample["memory_mib"],
            "processes": [dict(p, pid=pid) for p in sample["compute_processes"]]}
        if "process_util" in sample:
            device["process_util"] = [dict(r, pid=pid) for r in sample["process_util"]]
        else:
            device["process_util_error"] = sample["process_util_error"]
        lines.append({"t": sample["t"], "devices": {"0": device}})
    return lines


def folded(lines: List[Dict[str, Any]], job: set, alive: set, **extra: Any) -> Watch:
    watch = Watch("the job", **extra)
    watch.header(HEADER)
    for line in lines:
        watch.add(line, job, alive)
    return watch


def test_the_recorded_launch_bound_job_is_judged_idle_with_its_numbers() -> None:
    watch = folded(as_lines(RECORDED["samples"]), {480}, {480})
    [device] = watch.to_json()["devices"]
    # Two samples before the job had a CUDA context do not count; then SM 1,1,1,0,0,0,1,2 %.
    assert device["samples"] == 8 and device["busy_source"] == "job processes"
    assert (device["busy_percent_mean"], device["busy_percent_max"]) == (0.8, 2)
    assert (device["memory_mib_peak"], device["memory_mib_total"]) == (828, 81559)
    verdict = watch.to_json()["verdict"]
    assert verdict["code"] == "gpu-underused"
    assert verdict["title"] == "the job kept GPU 0 (NVIDIA H100 80GB HBM3) busy 1% of the time on average"
    texts = [f["text"] for f in verdict["facts"]]
    assert "memory: at most 828 MiB of 81559 MiB (1%)" in texts
    assert texts[0].startswith("GPU 0 (NVIDIA H100 80GB HBM3): busy 0.8% on average, at most 2%, over 8")
    assert verdict["facts"][0]["source"] == "NVML nvmlDeviceGetProcessUtilization (the job's processes)"
    options = " ".join(verdict["options"])
    for option in ("MIG slice or a smaller GPU", "more work in each step", "MPS", "on CPUs"):
        assert option in options


def test_a_busy_job_gets_no_verdict() -> None:
    lines = as_lines(RECORDED["samples"])
    for line in lines:
        for row in line["devices"]["0"].get("process_util", ()):
            row["sm"] = 93
    watch = folded(lines, {480}, {480})
    assert watch.to_json()["devices"][0]["busy_percent_mean"] == 93
    assert watch.verdict() is None


def test_other_users_processes_are_not_the_job() -> None:
    watch = folded(as_lines(RECORDED["samples"], pid=999), {480}, {480, 999})
    assert watch.to_json()["devices"] == [] and watch.verdict() is None


def test_in_a_container_nvml_pids_of_another_namespace_fall_back_to_the_device() -> None:
    # NVML answers with the host's PIDs, which do not exist in the container's namespace.
    watch = folded(as_lines(RECORDED["samples"], pid=31337), {12}, set())
    data = watch.to_json()
    assert data["pid_namespace_differs"] is True
    [device] = data["devices"]
    assert device["busy_source"] == "device" and device["busy_percent_max"] == 4
    assert "another PID namespace" in data["verdict"]["facts"][0]["source"]


def test_a_mig_device_is_summarised_but_not_judged_on_utilisation() -> None:
    header = {"devices": [{"key": "0", "parent": None, "name": "NVIDIA H100 80GB HBM3"},
                          {"key": "0/0", "parent": "0", "name": "NVIDIA H100 80GB HBM3 MIG 1g.10gb"}]}
    watch = Watch("job")
    watch.header(header)
    for t in range(5):  # NVML gives a MIG device's memory and processes, no utilisation
        watch.add({"t": t, "devices": {"0/0": {"util": None, "memory_mib": {"used": 900, "total": 9984},
                                                "processes": [{"pid": 7, "used_mib": 850}],
                                                "process_util_error": "Not Supported"}}}, {7}, {7})
    [device] = watch.to_json()["devices"]
    assert device["mig"] is True and device["memory_mib_peak"] == 850 and device["busy_percent_mean"] is None
    assert watch.verdict() is None


def test_slurm_job_pids_and_gpus() -> None:
    listpids = ("PID      JOBID    STEPID   LOCALID GLOBALID\n"
                "4242     77       batch    0       0\n4250 77 0 0 0\n")
    assert pids_of_slurm_job(listpids) == [4242, 4250]
    show = ("JobId=77 JobName=train\n   Nodes=gpu[01-02] CPU_IDs=0-15 Mem=64000 GRES=gpu:h100:2(IDX:0-1)\n"
            "   Nodes=gpu03 CPU_IDs=0-7 Mem=32000 GRES=gpu:h100:1(IDX:3)\n")
    assert gpu_indexes_of_slurm_job(show, "gpu02") == ["0", "1"]
    assert gpu_indexes_of_slurm_job(show, "gpu03.cluster") == ["3"]
    assert gpu_indexes_of_slurm_job("JobId=77 GRES=gpu:1", "gpu02") is None
    # Two GPUs given, the job's processes on one of them: said, with where it was read.
    watch = folded(as_lines(RECORDED["samples"]), {480}, {480}, allocated=["0", "1"])
    verdict = watch.to_json()["verdict"]
    assert {"text": "Slurm gave the job 2 GPU(s) here (IDX 0,1); its processes were on 1",
            "source": "scontrol show job -d"} in verdict["facts"]


@pytest.mark.parametrize("garbage", [{"devices": "x"}, {"devices": {"0": None}}, {"t": "x", "devices": {
    "0": {"processes": [None, {"pid": "7"}], "util": "x", "memory_mib": None, "process_util": [3]}}}])
def test_garbled_samples_never_raise(garbage: Dict[str, Any]) -> None:
    folded([garbage], {7}, {7}).to_json()


# --- end to end: the CLI, a real child job, the sampler child with the stand-in pynvml ----------
@pytest.fixture
def fake_nvml(monkeypatch: pytest.MonkeyPatch) -> str:
    marker = f"zz-watched-{uuid.uuid4().hex[:12]}"  # one per test: tests run side by side
    monkeypatch.setenv("PYTHONPATH", str(FAKE_NVML))
    monkeypatch.setenv("FAKE_NVML_JOB_MARKER", marker)
    return marker


def run_watch(capsys: pytest.CaptureFixture[str], *words: str) -> Dict[str, Any]:
    code = main(["watch", "--json", "--interval", "0.05", *words])
    envelope = json.loads(capsys.readouterr().out)
    assert envelope["exit_code"] == code
    return dict(envelope["data"], exit_code=code)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the job's processes are read from /proc")
def test_watch_a_command(fake_nvml: str, capsys: pytest.CaptureFixture[str]) -> None:
    data = run_watch(capsys, "--", sys.executable, "-c", f"import time; time.sleep(1.2)  # {fake_nvml}")
    assert data["exit_status"] == 0 and data["exit_code"] == 0
    assert data["driver"] == "580.159.04" and data["samples"] >= 8
    [device] = data["devices"]
    assert device["busy_source"] == "job processes" and device["memory_mib_total"] == 81559
    assert data["verdict"]["code"] == "gpu-underused"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the job's processes are read from /proc")
def test_watch_a_pid_and_its_children(fake_nvml: str, capsys: pytest.CaptureFixture[str]) -> None:
    # The GPU process is a child of the watched one, as under torchrun or a shell script.
    job = f"import time; time.sleep(1.2)  # {fake_nvml}"
    script = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {job!r}])"
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        data = run_watch(capsys, "--pid", str(parent.pid))
    finally:
        parent.wait(10)
    assert data["target"] == f"process {parent.pid}" and data["exit_status"] is None
    assert data["devices"][0]["busy_source"] == "job processes"


def test_watch_a_failing_command_without_nvml(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PYTHONPATH", str(FAKE_NVML))
    monkeypatch.setenv("FAKE_NVML_FAIL", "1")
    # The job's own "--" reaches it: only the first one separates it from watch's options.
    script = "import sys; raise SystemExit(3 if sys.argv[1:] == ['--', 'x'] else 9)"
    data = run_watch(capsys, "--", sys.executable, "-c", script, "--", "x")
    assert data["exit_status"] == 3 and data["exit_code"] == 1
    assert data["error"] == "NVML cannot start: Driver Not Loaded" and data["devices"] == []


@pytest.mark.skipif(os.name != "posix", reason="a fake scontrol is a shell script")
def test_watch_a_slurm_job_from_the_wrong_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    scontrol = tmp_path / "scontrol"
    scontrol.write_text("#!/bin/sh\necho 'PID      JOBID    STEPID   LOCALID GLOBALID'\n", encoding="utf-8")
    scontrol.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert main(["watch", "--slurm-job", "77"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error[slurm-job-not-here]: Slurm job 77: no process of it runs on this node")
    assert "srun --jobid 77 --overlap torchsmith watch --slurm-job 77" in err


def test_watch_needs_exactly_one_job(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch"]) == 2
    assert main(["watch", "--pid", "1", "--", "true"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_the_live_line_and_the_summary_show_the_numbers() -> None:
    import io

    from torchsmith.cli.watch import _live_line, summary_lines

    watch = folded(as_lines(RECORDED["samples"]), {480}, {480})
    out = io.StringIO()
    _live_line(out, watch, 12.0)
    assert out.getvalue() == "\r     12 s  GPU 0: busy 2% · 828/81559 MiB\033[K"
    lines = summary_lines(dict(watch.to_json(), exit_status=0))
    assert lines[1] == ("  GPU 0 NVIDIA H100 80GB HBM3: busy 0.8% on average, at most 2% (job processes); "
                        "memory at most 828 of 81559 MiB, 7.0 s")
    assert any(line.startswith("! warning[gpu-underused]") for line in lines)
    assert lines[-1] == "the job exited with 0"
