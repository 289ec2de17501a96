"""The Jetson field report (JetPack 5.1, L4T 35): NVIDIA's wheels in the matrix, a described L4T
that takes nothing from this machine's OS, an l4t-pytorch Dockerfile without the warning for the
torchvision the image ships, and conda-forge's tegra builds for JetPack 6 (solved in
test_conda_feedstock_solve.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from tests.plan.plan_hosts import host
from tests.support.render import packaged_kb, render

from torchsmith.cli import main
from torchsmith.machine import Machine, OsInfo, PythonInfo
from torchsmith.overrides import apply_overrides, build_overrides
from torchsmith.plan.matrix import matrix
from torchsmith.plan.model import Request
from torchsmith.plan.resolve import resolve


def test_matrix_for_a_jetson_lists_nvidias_wheels_first(capsys: pytest.CaptureFixture[str]) -> None:
    rows = matrix(host(platform="linux-aarch64", python="3.8", jetson="35.2.1"), packaged_kb())
    jetson = [r for r in rows if r.kind == "jetson"]
    assert jetson and rows[: len(jetson)] == tuple(jetson)
    assert all(r.variant == "jetson-jp51" and r.works for r in jetson)
    assert any("developer.download.nvidia.com" in r.reason for r in jetson)
    assert main(["matrix", "--jetson", "35.2.1", "--python", "3.8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert data["rows"][0]["kind"] == "jetson" and data["rows"][0]["works"]


def test_matrix_says_which_python_a_jetson_wheel_is_for() -> None:
    rows = matrix(host(platform="linux-aarch64", python="3.10", jetson="35.2.1"), packaged_kb())
    wrong = [r for r in rows if r.kind == "jetson"]
    assert wrong and not any(r.works for r in wrong)
    assert all("is for Python 3.8, not 3.10" in r.reason for r in wrong)


def test_a_described_l4t_takes_no_glibc_or_distro_from_this_machine() -> None:
    here = Machine(os=OsInfo(system="linux", arch="x86_64", distro="debian", distro_version="12",
                             glibc="2.36"), python=PythonInfo(version="3.11.7"))
    described = apply_overrides(here, build_overrides(jetson="35.2.1"))
    assert described.os.glibc is None and described.os.distro is None
    given = apply_overrides(here, dataclasses.replace(build_overrides(jetson="35.2.1"), glibc="2.31"))
    assert given.os.glibc == "2.31"


def test_the_l4t_pytorch_dockerfile_drops_the_build_from_source_warning_for_what_it_ships() -> None:
    target = host(platform="linux-aarch64", python="3.8", jetson="35.2.1")
    plan = resolve(target, Request(requirements=("torch", "torchvision"), explicit=True), packaged_kb())
    assert any(w.startswith("torchvision ") and "from source" in w for w in plan.warnings)
    text = render(plan, "dockerfile", target)
    assert "FROM nvcr.io/nvidia/l4t-pytorch:" in text
    assert "from source" not in text


def test_jetpack_6_gets_conda_forges_tegra_build_and_jetpack_5_none() -> None:
    six = host(platform="linux-aarch64", python="3.10", jetson="36.4.3")
    text = render(resolve(six, Request(), packaged_kb()), "conda", six)
    assert '"arm-variant=*=tegra"' in text and "pytorch-gpu=" in text
    five = host(platform="linux-aarch64", python="3.8", jetson="35.2.1")
    with pytest.raises(Exception, match="JetPack 6"):
        render(resolve(five, Request(), packaged_kb()), "conda", five)
