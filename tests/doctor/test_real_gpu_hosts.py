"""The recorded real GPU hosts (tests/hosts/real-h200/ and tests/hosts/real-h100/2026-11-27/, READMEs
there): what each probe reads, the doctor on its real import, and the doctor when
CUDA_VISIBLE_DEVICES hides the GPU. That last run was recorded on the H200 (doctor-hidden-gpu.json)
saying "a CUDA build on a host without a GPU": the checks looked only at the GPUs the variable left
visible. The H100 was recorded a day later, with the fix: there it said `gpus-hidden`."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
from tests.doctor.envs import dynamic_ok, report

from torchsmith.doctor.checks import run_checks
from torchsmith.host.recorded import RecordedHost
from torchsmith.machine import Machine
from torchsmith.probe import probe

HOSTS = Path(__file__).resolve().parents[1] / "hosts"
# folder -> the GPU as NVML named it there (name, memory in MiB)
REAL_HOSTS = {"real-h200": ("NVIDIA H200", 143771), "real-h100/2026-11-27": ("NVIDIA H100 80GB HBM3", 81559)}
each_host = pytest.mark.parametrize("host", sorted(REAL_HOSTS))


def read(host: str, name: str) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads((HOSTS / host / name).read_text(encoding="utf-8"))
    return data


def recorded(host: str, name: str) -> Dict[str, Any]:
    data: Dict[str, Any] = read(host, name)["data"]
    return data


def machine_of(host: str, cuda_visible_devices: Optional[str] = None) -> Machine:
    capture = copy.deepcopy(read(host, "capture.json"))
    if cuda_visible_devices is not None:
        capture["environ"]["CUDA_VISIBLE_DEVICES"] = cuda_visible_devices
    return probe(RecordedHost(capture))


def the_real_report(host: str, run: str, **environ: str) -> Dict[str, Any]:
    """The environment as the recorded doctor run saw it: torch 2.11.0+cu130 on both hosts, and what
    its import reported there (devices, arch list, the libraries the process loaded)."""
    environment = recorded(host, run)["environment"]
    dynamic = dynamic_ok(
        version="2.11.0+cu130",
        cuda="13.0",
        available=environment["cuda"]["available"],
        arch_list=environment["cuda"]["arch_list"],
        devices=environment["cuda"]["devices"],
        tf32=environment["tf32"],
        loaded=environment["loaded"],
    )
    rep = report("2.11.0+cu130", "13.0", dynamic=dynamic)
    captured = read(host, "capture.json")["environ"]
    rep["environ"] = {**{k: v for k, v in captured.items() if k != "HOME"}, **environ}
    return rep


@each_host
def test_the_probe_reads_the_gpu_as_nvml_answered_there(host: str) -> None:
    machine = machine_of(host)
    assert machine.nvidia is not None
    [gpu] = machine.nvidia.gpus
    name, memory_mib = REAL_HOSTS[host]
    assert (gpu.name, gpu.compute_capability, gpu.memory_mib) == (name, "9.0", memory_mib)
    assert gpu.source == "nvml"
    assert (machine.nvidia.driver_version, machine.nvidia.driver_cuda) == ("580.159.04", "13.0")
    assert machine.to_json()["nvidia"] == read(host, "profile.json")["nvidia"]


@each_host
def test_the_doctor_on_the_real_import_finds_nothing_to_warn_about(host: str) -> None:
    found = run_checks(the_real_report(host, "doctor-full.json"), machine_of(host), None)
    assert {f.code for f in found if f.severity != "info"} == set()
    assert all(f.facts for f in found)


@each_host
@pytest.mark.parametrize("value", ["", "-1", "1", "GPU-ffffffff"])
def test_a_variable_that_hides_the_gpu_is_named_not_a_host_without_one(host: str, value: str) -> None:
    machine = machine_of(host, value)
    assert machine.nvidia is not None and machine.nvidia.gpus and not machine.nvidia.visible_gpus
    rep = the_real_report(host, "doctor-hidden-gpu.json", CUDA_VISIBLE_DEVICES=value)
    assert rep["dynamic"]["cuda"]["device_count"] == 0  # what torch said there with the GPU hidden
    found = {f.code: f for f in run_checks(rep, machine, None)}
    assert "gpu-build-on-cpu-host" not in found
    hidden = found["gpus-hidden"]
    assert hidden.severity == "warning" and hidden.fix == ("unset CUDA_VISIBLE_DEVICES",)
    assert [fact.text for fact in hidden.facts] == [
        f"CUDA_VISIBLE_DEVICES={value!r}",
        f"GPU {REAL_HOSTS[host][0]} (compute capability 9.0)",
        "torch.cuda.device_count() = 0",
    ]


@each_host
def test_a_variable_that_leaves_the_gpu_visible_is_no_finding(host: str) -> None:
    rep = the_real_report(host, "doctor-full.json", CUDA_VISIBLE_DEVICES="0")
    found = run_checks(rep, machine_of(host, "0"), None)
    assert "gpus-hidden" not in {f.code for f in found}


def test_the_h100_recorded_with_the_fix_said_what_the_checks_say() -> None:
    """The doctor that ran on the H100 (after the fix) reported the hidden GPU as the checks above do."""
    said = {f["code"] for f in recorded("real-h100/2026-11-27", "doctor-hidden-gpu.json")["findings"]}
    assert "gpus-hidden" in said and "gpu-build-on-cpu-host" not in said
