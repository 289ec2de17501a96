"""The recorded H100 host (tests/hosts/real-h100/, README there) as a fixture: the static doctor on
its profile and its torch's real kernel list, and `kb archs` as NVIDIA's cuobjdump read it."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Dict

from tests.doctor.envs import report

from torchsmith.doctor.checks import run_checks
from torchsmith.host.recorded import load_capture
from torchsmith.machine import Machine, NvidiaGpu
from torchsmith.probe import probe

HOSTS = Path(__file__).resolve().parents[1] / "hosts"
REAL = HOSTS / "real-h100"
SITE = "/opt/torch/.venv/lib/python3.12/site-packages"
LIB = f"{SITE}/torch/lib/libtorch_cuda.so"


def recorded_archs() -> Dict[str, Any]:
    data = json.loads((REAL / "kb-archs-libtorch_cuda.json").read_text(encoding="utf-8"))
    [binary] = data["data"]["binaries"]
    return dict(binary)


def h100() -> Machine:
    return probe(load_capture(str(HOSTS / "linux-x86_64-h100-drv580-real.json")))


def static_report() -> Dict[str, Any]:
    """The recorded environment as inspect_env.py reads it, its kernels as `kb archs` read them."""
    archs = recorded_archs()
    rep = report("2.11.0+cu130", "13.0")
    rep["torch"]["path"] = f"{SITE}/torch"
    rep["kernels"] = {"file": LIB, "sass": archs["build_sass"], "ptx": archs["build_ptx"]}
    rep["environ"] = {"CUDA_HOME": "/usr/local/cuda",
                      "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64:/usr/local/nvidia/lib"}
    # What the first recording's warning rested on: $CUDA_HOME/lib64 holds libraries of the same
    # names as torch's wheels (the LD_LIBRARY_PATH directories hold only the driver's).
    rep["library_dirs"] = [{"variable": "CUDA_HOME", "dir": "/usr/local/cuda/lib64",
                            "libraries": ["libcublas.so.13", "libcudart.so.13", "libnvrtc.so.13"]}]
    rep["cuda_libraries_provided"] = ["libcublas.so.13", "libcudnn.so.9", "libnccl.so.2"]
    return rep


def test_the_kernel_list_read_from_the_library_is_torchs_own() -> None:
    # torch-info.txt: what torch itself said there; the reader's build list must be the same.
    torch_said = ast.literal_eval((REAL / "torch-info.txt").read_text(encoding="utf-8").splitlines()[1])
    assert recorded_archs()["build_sass"] == torch_said


def test_kb_archs_agrees_with_cuobjdump_target_by_target() -> None:
    text = (REAL / "cuobjdump-list-elf.txt").read_text(encoding="utf-8")
    first = text.split("cuobjdump info")[0]  # libtorch_cuda.so's counts come first
    counted = Counter({m.group(2): int(m.group(1)) for m in re.finditer(r"^\s*(\d+) (sm_\w+)$", first, re.M)})
    assert dict(counted) == recorded_archs()["sass_containers"]


def test_the_healthy_h100_passes_the_static_doctor() -> None:
    machine = h100()
    assert [g.compute_capability for g in machine.nvidia.gpus] == ["9.0"]  # type: ignore[union-attr]
    found = {f.code: f for f in run_checks(static_report(), machine, None)}
    assert "arch-not-compiled" not in found
    # CUDA_HOME points at a toolkit with libraries of the same names: not evidence of anything.
    assert "library-shadowed" not in found and "library-path-overlap" not in found


def test_an_older_gpu_on_the_same_host_gets_arch_not_compiled_from_the_real_list() -> None:
    machine = h100()
    assert machine.nvidia is not None
    older = dataclasses.replace(machine.nvidia.gpus[0], name="NVIDIA GeForce GTX 1080",
                                compute_capability="6.1")
    assert isinstance(older, NvidiaGpu)
    machine = dataclasses.replace(machine, nvidia=dataclasses.replace(machine.nvidia, gpus=(older,)))
    [hit] = [f for f in run_checks(static_report(), machine, None) if f.code == "arch-not-compiled"]
    assert hit.title == "torch 2.11.0+cu130 has no kernels for NVIDIA GeForce GTX 1080 (6.1)"
    assert any(f.source == f"fatbin headers of {LIB}" and "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120" in f.text
               for f in hit.facts)
