"""fleet --format pixi: one manifest, a named hardware platform per node type, solved per platform
with py-rattler (pixi's solver) as `pixi lock` would; fleet --variants: the variant install and what
a variant-aware installer picks on each node type."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from tests.cluster.profiles import A100, H100, V100, node, write_profiles
from tests.support.pixi import conda_forge_channel, environment_platforms, solve_environment

from torchsmith.cli import main
from torchsmith.fleet import plan_fleet
from torchsmith.fleet.pixi import fleet_pixi_platforms, render_fleet_pixi
from torchsmith.kb import load_kb
from torchsmith.machine import AmdGpu, JetsonInfo, Machine, RocmInfo
from torchsmith.plan.model import Request
from torchsmith.plan.resolve import DEFAULT_REQUIREMENTS, resolve

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

KB = load_kb(None)
# pixi_manifest/src/platform.rs: a letter first, then letters, digits and '-', no '-' last, <= 64 bytes
PIXI_NAME = re.compile(r"^[A-Za-z](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?$")


def _planner(machine: Machine, shared: bool) -> Any:
    request = Request(requirements=tuple(DEFAULT_REQUIREMENTS), gpus_on_separate_nodes=shared)
    return resolve(machine, request, KB)


def _fleet() -> List[Tuple[str, Machine]]:
    return [("a1", node(A100, 8)), ("a2", node(A100, 8)),
            ("v1", node(V100, 4, driver="535.104.05", driver_cuda="12.2")),
            ("h1", node(H100, 8, driver="570.86.10", driver_cuda="12.8")),
            ("login", node(None))]


@pytest.fixture(scope="module")
def manifest() -> Dict[str, Any]:
    return tomllib.loads(render_fleet_pixi(plan_fleet(_fleet(), _planner), KB))


def test_each_node_type_gets_a_named_platform_with_its_hardware(manifest: Dict[str, Any]) -> None:
    platforms = manifest["workspace"]["platforms"]
    names = [p["name"] for p in platforms]
    assert len(names) == len(set(names)) == 4 and all(PIXI_NAME.match(n) for n in names)
    by_arch = {p["cuda"]["arch"]: p for p in platforms if isinstance(p.get("cuda"), dict)}
    # the oldest compute capability of each node type's GPUs; the driver's CUDA; the node's glibc
    assert sorted(by_arch) == ["7.0", "8.0", "9.0"]
    assert all(p["platform"] == "linux-64" and p["glibc"] == "2.35" for p in platforms)
    assert all(p["cuda"]["driver"] == "12" for p in by_arch.values())
    [cpu] = [p for p in platforms if "cuda" not in p]
    # one feature and environment per node type, bound to its platform; one shared environment
    for number, name in enumerate(names, 1):
        assert manifest["feature"][f"type{number}"]["platforms"] == [name]
        assert manifest["environments"][f"type{number}"] == [f"type{number}"]
    assert cpu["name"] not in manifest["feature"]["shared"]["platforms"]
    assert len(manifest["feature"]["shared"]["platforms"]) == 3


def test_every_environment_solves_on_its_platforms(manifest: Dict[str, Any], tmp_path: Path) -> None:
    """What `pixi lock` does: every environment solved for each platform it is bound to, with the
    virtual packages that platform declares (no pixi binary is on PyPI or npm to run it here)."""
    pytest.importorskip("rattler", reason="py-rattler (test extra, Python >= 3.10) is not installed")
    channel = conda_forge_channel(tmp_path, KB)
    solved_for = []
    for environment in manifest["environments"]:
        declared = {name: values for name, _, values in environment_platforms(manifest, environment)}
        for platform, solved in solve_environment(channel, manifest, environment).items():
            [pytorch] = [s for s in solved if s.startswith("pytorch=")]
            assert ("=cuda" in pytorch) == ("__cuda" in declared[platform]), (environment, platform, solved)
            solved_for.append((environment, platform))
    assert {env for env, _ in solved_for} == set(manifest["environments"])
    assert len([env for env, _ in solved_for if env == "shared"]) == 3


def test_a_platform_declaring_an_older_driver_does_not_solve_a_newer_cuda(
        manifest: Dict[str, Any], tmp_path: Path) -> None:
    """The declared virtual packages decide: the same specs on a CUDA-less platform take no CUDA build."""
    pytest.importorskip("rattler", reason="py-rattler (test extra, Python >= 3.10) is not installed")
    channel = conda_forge_channel(tmp_path, KB)
    doc = json.loads(json.dumps(manifest))
    cpu = next(p["name"] for p in doc["workspace"]["platforms"] if "cuda" not in p)
    doc["feature"]["shared"]["platforms"].append(cpu)
    with pytest.raises(Exception, match=r"__cuda|pytorch"):
        solve_environment(channel, doc, "shared")


def _orin(python: str) -> Machine:
    return dataclasses.replace(node(None, arch="aarch64", python=python),
                               jetson=JetsonInfo(l4t="36.4.3", jetpack="6.2", cuda="12.6", module="Orin",
                                                 compute_capability="8.7"))


def test_a_jetson_type_gets_its_own_platform_and_a_type_without_torch_is_named() -> None:
    report = plan_fleet([("a", node(A100)), ("orin", _orin("3.10.12")), ("orin-py311", _orin("3.11.7"))],
                        _planner)
    platforms, skipped = fleet_pixi_platforms(report, KB)
    text = render_fleet_pixi(report, KB)
    doc = tomllib.loads(text)
    [orin] = [p for p in doc["workspace"]["platforms"] if p["platform"] == "linux-aarch64"]
    assert orin["cuda"]["arch"] == "8.7" and len(platforms) == 2
    # the Orin on Python 3.11 has no working torch: left out, and the file says so
    number = next(i for i, g in enumerate(report.groups, 1) if g.nodes == ["orin-py311"])
    assert skipped == [f"type {number}: no working torch to lock"] and f"# left out: {skipped[0]}" in text


def test_a_rocm_node_type_takes_torch_from_its_index_as_a_pypi_dependency() -> None:
    amd = dataclasses.replace(node(None), rocm=RocmInfo(version="6.3.3", gpus=(AmdGpu("MI300X", "gfx942"),)))
    report = plan_fleet([("a", node(A100)), ("mi300", amd)], _planner)
    doc = tomllib.loads(render_fleet_pixi(report, KB))
    [rocm] = [n for n, f in doc["feature"].items() if "pypi-dependencies" in f]
    torch = doc["feature"][rocm]["pypi-dependencies"]["torch"]
    assert torch["index"].startswith("https://download.pytorch.org/whl/rocm") and "+rocm" in torch["version"]
    [entry] = [p for p in doc["workspace"]["platforms"] if p["name"] == doc["feature"][rocm]["platforms"][0]]
    assert "cuda" not in entry and entry["glibc"] == "2.35"
    assert "shared" not in doc["environments"]  # NVIDIA and AMD nodes share no build


def test_fleet_format_pixi_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profiles = write_profiles(str(tmp_path), _fleet())
    assert main(["fleet", *profiles, "--format", "pixi", "--out", str(tmp_path / "out")]) == 0
    doc = tomllib.loads((tmp_path / "out" / "pixi.toml").read_text())
    assert len(doc["workspace"]["platforms"]) == 4
    capsys.readouterr()
    assert main(["fleet", *profiles, "--out", str(tmp_path / "x")]) != 0  # --out needs --format


def test_fleet_variants_predicts_per_node_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profiles = write_profiles(str(tmp_path), _fleet())
    assert main(["fleet", *profiles, "--variants", "--json"]) == 0
    types = json.loads(capsys.readouterr().out)["data"]["node_types"]
    for entry in types:
        variants = entry["variants"]
        assert "--preview-features wheel-variants" in variants["command"]
        assert f"torch=={entry['plan']['packages'][0]['version']}" in variants["command"]
    by_gpu = {(t["gpus"][0]["compute_capability"] if t["gpus"] else "cpu"): t["variants"] for t in types}
    assert by_gpu["cpu"]["label"] is None and by_gpu["cpu"]["advice"] == []
    # one code path with plan --variants: the same prediction for the same machine
    from torchsmith.plan.variant_pick import predict_variants

    v100 = node(V100, 4, driver="535.104.05", driver_cuda="12.2")
    expected = predict_variants(_planner(v100, False), v100, KB)
    assert expected is not None and by_gpu["7.0"] == expected.to_json()
    assert main(["fleet", *profiles, "--variants"]) == 0
    human = capsys.readouterr().out
    assert "wheel-variant install: uv pip install --preview-features wheel-variants" in human
