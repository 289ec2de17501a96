"""``--kb DIR`` reaches every renderer: the format facts and the base images come from the
overlay's documents, never from the packaged files behind its back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.plan.plan_hosts import host

from torchsmith.cli import main
from torchsmith.kb import KnowledgeBase, load_kb
from torchsmith.kb.documents import DATA_DIR
from torchsmith.plan.model import PackagePin, Plan, Request
from torchsmith.plan.resolve import resolve
from torchsmith.render import available_formats, render

OVERLAY_URL = "https://example.org/overlay-formats-source"
SLIM = "registry.example.org/python:{python}-overlay"


@pytest.fixture
def overlay(tmp_path: Path) -> Path:
    formats = json.loads(Path(DATA_DIR, "formats.json").read_text(encoding="utf-8"))
    for source in formats["sources"].values():
        source["url"] = OVERLAY_URL
    formats["jetson_torchvision_build"]["repository"] = "https://example.org/vision.git"
    (tmp_path / "formats.json").write_text(json.dumps(formats), encoding="utf-8")
    containers = json.loads(Path(DATA_DIR, "containers.json").read_text(encoding="utf-8"))
    containers["python_slim"]["pattern"] = SLIM
    (tmp_path / "containers.json").write_text(json.dumps(containers), encoding="utf-8")
    return tmp_path


def _jetson_plan() -> Plan:
    return Plan(status="ok", platform="linux-aarch64", python="3.8", accelerator="jetson",
                variant="jetson-jp51", packages=(
                    PackagePin("torch", "2.0.0a0+8aa34602.nv23.03", "jetson-jp51",
                               wheel_url="https://example.invalid/torch-2.0.0-cp38-cp38-linux_aarch64.whl"),
                    PackagePin("torchvision", "0.15.1", "source")))


def test_every_renderer_reads_the_overlay(overlay: Path) -> None:
    kb: KnowledgeBase = load_kb(str(overlay))
    machine = host(python="3.11")
    plan = resolve(machine, Request(requirements=("torch",)), kb)
    assert plan.ok
    dockerfile = render(plan, "dockerfile", kb=kb)
    assert "FROM registry.example.org/python:3.11-overlay" in dockerfile.splitlines()
    for fmt in ("conda", "pixi"):
        assert f"# see {OVERLAY_URL}" in render(plan, fmt, kb=kb).splitlines(), fmt
    jetson = render(_jetson_plan(), "jetson", kb=kb)
    assert "https://example.org/vision.git" in jetson and f"# see {OVERLAY_URL}" in jetson
    packaged = load_kb(None, packaged_only=True)
    assert OVERLAY_URL not in render(_jetson_plan(), "jetson", kb=packaged)
    # Every format renders with the overlay's kb (those that apply to this plan).
    for fmt in available_formats():
        if fmt not in ("jetson",):
            assert render(plan, fmt, kb=kb).startswith(("#", "FROM")), fmt


def test_cli_kb_flag_reaches_the_dockerfile(overlay: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "--kb", str(overlay), "--no-gpu", "--platform", "linux-x86_64",
                 "--python", "3.11", "torch", "--format", "dockerfile"])
    assert code == 0
    assert "FROM registry.example.org/python:3.11-overlay" in capsys.readouterr().out.splitlines()
