"""glibc is checked per build, not per release: torch 2.6.0's cu126, ROCm 6.2.4 and XPU wheels were
built on manylinux 2.28 while its other variants stayed manylinux1 (PyTorch's 2.6 release blog,
cited in kb/data/manylinux.json)."""

from __future__ import annotations

import dataclasses

from tests.plan.plan_hosts import host
from tests.support.render import packaged_kb

from torchsmith.machine import Machine
from torchsmith.plan.model import Request
from torchsmith.plan.resolve import resolve


def with_glibc(machine: Machine, glibc: str) -> Machine:
    return dataclasses.replace(machine, os=dataclasses.replace(machine.os, glibc=glibc))


def test_glibc_2_17_never_gets_a_manylinux_2_28_build_of_2_6_0() -> None:
    machine = with_glibc(host(gpus=["8.6:RTX 3090"], driver="570.86.10"), "2.17")
    plan = resolve(machine, Request(), packaged_kb())
    assert plan.ok and plan.package("torch").version == "2.6.0"  # type: ignore[union-attr]
    assert plan.variant != "cu126"
    assert "manylinux_2_28" in " ".join(plan.reasons)


def test_glibc_2_28_keeps_2_6_0_cu126() -> None:
    machine = with_glibc(host(gpus=["8.6:RTX 3090"], driver="570.86.10"), "2.28")
    plan = resolve(machine, Request(requirements=("torch==2.6.0",), explicit=True), packaged_kb())
    assert plan.ok and plan.variant == "cu126"


def test_the_variant_row_names_the_build_it_refuses() -> None:
    machine = with_glibc(host(gpus=["8.6:RTX 3090"], driver="570.86.10"), "2.17")
    plan = resolve(machine, Request(requirements=("torch==2.6.0+cu126",), explicit=True), packaged_kb())
    text = " ".join([*plan.reasons, *(r.reason for r in plan.rejected)])
    assert "torch 2.6.0 cu126 wheels for linux-x86_64 are manylinux_2_28_x86_64" in text
