"""One table of (build archs, GPU, driver) through the resolver, the doctor and ``explain``.

The rule lives in :mod:`torchsmith.compat`; each caller must reach the same verdict: ``runs``,
``no-kernel`` (nothing in the build serves the GPU) or ``no-jit`` (only PTX serves it and the
driver runs the build's CUDA through minor-version compatibility, which cannot JIT). ``explain``
reads a log's arch list and does not know the build's CUDA, so it judges kernels only: for it a
``no-jit`` case has a kernel.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Optional, Sequence

import pytest
from tests.doctor.envs import device, dynamic_ok, gpu_host, report

from torchsmith.doctor.checks import run_checks
from torchsmith.explain.host import host_facts
from torchsmith.kb import load_kb
from torchsmith.machine import Machine
from torchsmith.plan.resolve import matrix

DATA = Path(__file__).resolve().parents[2] / "src" / "torchsmith" / "kb" / "data"
FULL = ("580.65.06", "13.0")  # fully supports the CUDA 12.8 build
MINOR = ("535.104.05", "12.2")  # runs CUDA 12.8 through minor-version compatibility only

CASES = [
    # (build's arch list, GPU compute capability, (driver, its CUDA), verdict)
    (["sm_80", "sm_90"], "8.6", FULL, "runs"),  # RTX 3090: SASS sm_80 is binary compatible
    (["sm_86"], "8.0", FULL, "no-kernel"),  # a later minor never runs on an earlier one
    (["sm_60"], "6.1", FULL, "runs"),
    (["sm_80", "sm_90"], "12.0", FULL, "no-kernel"),  # no PTX: nothing to JIT
    (["sm_80", "sm_90", "compute_90"], "12.0", FULL, "runs"),  # PTX JIT-compiles forward
    (["sm_80", "compute_80"], "9.0", MINOR, "no-jit"),  # no JIT under minor-version compatibility
    (["sm_80", "sm_90", "compute_90"], "9.0", MINOR, "runs"),  # SASS needs no JIT
    (["sm_90a"], "9.0", FULL, "runs"),
    (["sm_90a"], "10.0", FULL, "no-kernel"),  # arch-specific: exactly 9.0
    (["sm_100a"], "10.3", FULL, "no-kernel"),
    (["sm_100f"], "10.3", FULL, "runs"),  # family: 10.0 and 10.3
    (["sm_100f"], "11.0", FULL, "no-kernel"),  # Thor (11.0) is not in the 10.x family
    (["sm_120f"], "12.1", FULL, "runs"),
    (["compute_90a"], "9.0", FULL, "runs"),
    (["compute_90a"], "10.0", FULL, "no-kernel"),  # arch-specific PTX is not forward compatible
    (["compute_100f"], "10.3", FULL, "runs"),
    (["compute_100f"], "12.0", FULL, "no-kernel"),  # family PTX stays in its family
]


def _overlay(tmp: Path, archs: Sequence[str]) -> Any:
    """The packaged data with torch 2.8.0 cu128 built for exactly ``archs`` on Linux x86_64."""
    releases = json.loads((DATA / "torch_releases.json").read_text(encoding="utf-8"))["releases"]
    row = next(r for r in releases if r["version"] == "2.8.0")
    variant = next(v for v in row["variants"] if v["name"] == "cu128")
    variant["sass"] = {"linux-x86_64": [a for a in archs if a.startswith("sm_")]}
    ptx = [a for a in archs if a.startswith("compute_")]
    variant["ptx"] = {"linux-x86_64": ptx} if ptx else {}
    row["variants"] = [variant] + [v for v in row["variants"] if v["name"] == "cpu"]
    (tmp / "torch_releases.json").write_text(json.dumps({"releases": [row]}), encoding="utf-8")
    return load_kb(str(tmp))


def _resolver(machine: Machine, kb: Any) -> str:
    row = next(r for r in matrix(machine, kb, releases=50) if r.torch == "2.8.0" and r.variant == "cu128")
    if row.works:
        return "runs"
    assert row.code in ("arch-not-compiled", "driver-too-old"), row
    return "no-kernel" if row.code == "arch-not-compiled" else "no-jit"


def _doctor(machine: Machine, kb: Any, archs: List[str], cc: str) -> str:
    dynamic = dynamic_ok("2.8.0+cu128", "12.8", arch_list=archs, devices=[device(cc=cc)])
    found = [f for f in run_checks(report("2.8.0+cu128", "12.8", dynamic=dynamic), machine, kb)
             if f.code == "arch-not-compiled"]
    if not found:
        return "runs"
    return "no-jit" if "PTX" in (found[0].note or "") else "no-kernel"


def _explain(machine: Machine, archs: List[str]) -> Optional[bool]:
    lines = host_facts(["gpus"], {"arch_list": archs}, machine)
    return not any(line.startswith("Not in the build's arch list") for line in lines)


@pytest.mark.parametrize(("archs", "cc", "driver", "verdict"), CASES,
                         ids=[f"{'+'.join(c[0])}-on-{c[1]}-{c[2][0]}" for c in CASES])
def test_resolver_doctor_and_explain_agree(tmp_path: Path, archs: List[str], cc: str,
                                           driver: Any, verdict: str) -> None:
    machine = gpu_host(cc=cc, name=f"GPU {cc}", driver=driver[0], driver_cuda=driver[1])
    kb = _overlay(tmp_path, archs)
    assert (_resolver(machine, kb), _doctor(machine, kb, archs, cc)) == (verdict, verdict)
    assert _explain(machine, archs) is (verdict != "no-kernel")
