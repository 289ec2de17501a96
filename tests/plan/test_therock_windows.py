"""AMD on Windows: AMD TheRock's published wheels where its table says the card is release-ready
there (the command its own docs give), the CPU build with the ways out otherwise."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

from torchsmith.cli import main

INDEX = "https://rocm.nightlies.amd.com/whl-multi-arch/"


def _plan(capsys: pytest.CaptureFixture[str], *gfx: str) -> Dict[str, Any]:
    argv: List[str] = ["plan", "--fresh", "--json", "--platform", "windows-x86_64", "--python", "3.12"]
    for one in gfx:
        argv += ["--rocm-gfx", one]
    assert main(argv) == 0
    data: Dict[str, Any] = json.loads(capsys.readouterr().out)["data"]
    return data


def test_a_release_ready_radeon_gets_therocks_windows_wheels(capsys: pytest.CaptureFixture[str]) -> None:
    data = _plan(capsys, "gfx1100")
    assert data["variant"] == "therock-nightly"
    assert data["commands"]["pip"][-1] == (
        f'python -m pip install --index-url {INDEX} "torch[device-gfx1100]" "torchvision[device-gfx1100]" '
        "torchaudio")
    assert any("DirectML" in w and "nightly" in w for w in data["warnings"])
    assert any("release-ready on Windows" in r and "SUPPORTED_GPUS.md" in r for r in data["reasons"])


def test_two_cards_get_both_device_extras(capsys: pytest.CaptureFixture[str]) -> None:
    torch = _plan(capsys, "gfx1100", "gfx1030")["packages"][0]
    assert torch["extras"] == ["device-gfx1100", "device-gfx1030"]


def test_a_card_that_only_builds_there_gets_the_cpu_build_and_the_ways_out(
        capsys: pytest.CaptureFixture[str]) -> None:
    data = _plan(capsys, "gfx1201")
    assert data["variant"] == "cpu"
    assert any("not release-ready for gfx1201 (build-passing" in r for r in data["reasons"])
    assert any("torch-directml" in w for w in data["warnings"])
