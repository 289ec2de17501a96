"""plan --format jetson: a script that runs as written (shebang, strict mode, no sudo as root,
NumPy 1.x before NVIDIA's older wheels), checked with bash -n, shellcheck and bash itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.plan.test_render import JP51_WHEEL, jetson_plan
from tests.support.render import render
from tests.support.shell import assert_scripts_pass

from torchsmith.plan.model import PackagePin, Plan

JP62_WHEEL = ("https://pypi.jetson-ai-lab.io/jp6/cu126/+f/62a/1beee9f2f1470/"
              "torch-2.8.0-cp310-cp310-linux_aarch64.whl")


def _jp62_plan() -> Plan:
    return Plan(status="ok", platform="linux-aarch64", python="3.10", accelerator="jetson",
                variant="jetson-jp62",
                packages=(PackagePin("torch", "2.8.0", "jetson-jp62", wheel_url=JP62_WHEEL),))


def test_script_starts_with_a_shebang_and_strict_mode() -> None:
    lines = render(jetson_plan(), "jetson").splitlines()
    assert lines[0] == "#!/usr/bin/env bash"
    assert "set -euo pipefail" in lines
    assert not [line for line in lines if line.startswith("sudo ")]
    assert any(line.startswith("$SUDO apt-get install -y") for line in lines)


@pytest.mark.parametrize("uid,expected", [("0", "[]"), ("1000", "[sudo]")])
def test_sudo_only_when_not_root(uid: str, expected: str, tmp_path: Path) -> None:
    text = render(jetson_plan(), "jetson")
    prologue = text[:text.index("\n", text.index('SUDO=""')) + 1]
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (fake / "id").chmod(0o755)
    out = subprocess.run(["bash", "-c", prologue + 'echo "[$SUDO]"'], env={"PATH": f"{fake}:/usr/bin:/bin"},
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected


def test_numpy_1_before_nvidias_older_wheel_and_not_for_newer_ones() -> None:
    lines = [line for line in render(jetson_plan(), "jetson").splitlines() if not line.startswith("#")]
    numpy = next(i for i, line in enumerate(lines) if "'numpy<2'" in line)
    wheel = next(i for i, line in enumerate(lines) if JP51_WHEEL in line)
    assert numpy < wheel and lines[numpy].startswith("python3 -m pip install")
    assert "numpy<2" not in render(_jp62_plan(), "jetson")


@pytest.mark.parametrize("plan", [jetson_plan(), jetson_plan(vision_source=False), _jp62_plan()])
def test_bash_n_and_shellcheck(plan: Plan, tmp_path: Path) -> None:
    path = tmp_path / "install-jetson.sh"
    path.write_text(render(plan, "jetson"))
    assert_scripts_pass(path)
