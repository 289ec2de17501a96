"""The recorded H200 host (tests/hosts/real-h200/, README there): what its probe reads, the doctor
on its real import, and the doctor when CUDA_VISIBLE_DEVICES hides its GPU. That last run was
recorded there (doctor-hidden-gpu.json) saying "a CUDA build on a host without a GPU": the
checks looked only at the GPUs the variable left visible."""

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

REAL = Path(__file__).resolve().parents[1] / "hosts" / "real-h200"
CAPTURE: Dict[str, Any] = json.loads((REAL / "capture.json").read_text(encoding="utf-8"))


def recorded(name: str) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads((REAL / name).read_text(encoding="utf-8"))["data"]
    return data


def h200(cuda_visible_devices: Optional[str] = None) -> Machine:
    capture = copy.deepcopy(CAPTURE)
    if cuda_visible_devices is not None:
        capture["environ"]["CUDA_VISIBLE_DEVICES"] = cuda_visible_devices
    return probe(RecordedHost(capture))


def the_real_report(run: str, **environ: str) -> Dict[str, Any]:
    """The environment as the recorded doctor run saw it: torch 2.11.0+cu130, and what its import
    reported there (devices, arch list, the libraries the process loaded)."""
    environment = recorded(run)["environment"]
    dynamic = dynamic_ok(version="2.11.0+cu130", cuda="13.0", available=environment["cuda"]["available"],
                         arch_list=environment["cuda"]["arch_list"], devices=environment["cuda"]["devices"],
                         tf32=environment["tf32"], loaded=environment["loaded"])
    rep = report("2.11.0+cu130", "13.0", dynamic=dynamic)
    rep["environ"] = {**{k: v for k, v in CAPTURE["environ"].items() if k != "HOME"}, **environ}
    return rep


def test_the_probe_reads_the_h200_as_nvml_answered_there() -> None:
    machine = h200()
    assert machine.nvidia is not None
    [gpu] = machine.nvidia.gpus
    assert (gpu.name, gpu.compute_capability, gpu.memory_mib) == ("NVIDIA H200", "9.0", 143771)
    assert gpu.source == "nvml"
    assert (machine.nvidia.driver_version, machine.nvidia.driver_cuda) == ("580.159.04", "13.0")
    profile = json.loads((REAL / "profile.json").read_text(encoding="utf-8"))
    assert machine.to_json()["nvidia"] == profile["nvidia"]


def test_the_doctor_on_the_real_import_finds_nothing_to_warn_about() -> None:
    found = run_checks(the_real_report("doctor-full.json"), h200(), None)
    assert {f.code for f in found if f.severity != "info"} == set()
    assert all(f.facts for f in found)


@pytest.mark.parametrize("value", ["", "-1", "1", "GPU-ffffffff"])
def test_a_variable_that_hides_the_gpu_is_named_not_a_host_without_one(value: str) -> None:
    machine = h200(value)
    assert machine.nvidia is not None and machine.nvidia.gpus and not machine.nvidia.visible_gpus
    rep = the_real_report("doctor-hidden-gpu.json", CUDA_VISIBLE_DEVICES=value)
    assert rep["dynamic"]["cuda"]["device_count"] == 0  # what torch said there with the GPU hidden
    found = {f.code: f for f in run_checks(rep, machine, None)}
    assert "gpu-build-on-cpu-host" not in found
    hidden = found["gpus-hidden"]
    assert hidden.severity == "warning" and hidden.fix == ("unset CUDA_VISIBLE_DEVICES",)
    assert [fact.text for fact in hidden.facts] == [f"CUDA_VISIBLE_DEVICES={value!r}",
                                                    "GPU NVIDIA H200 (compute capability 9.0)",
                                                    "torch.cuda.device_count() = 0"]


def test_a_variable_that_leaves_the_gpu_visible_is_no_finding() -> None:
    found = run_checks(the_real_report("doctor-full.json", CUDA_VISIBLE_DEVICES="0"), h200("0"), None)
    assert "gpus-hidden" not in {f.code for f in found}
