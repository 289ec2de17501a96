"""fleet: node types, one plan per type, one shared environment and what it costs."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, List

import pytest
from tests.cluster.profiles import A100, H100, RTX5090, V100, fleet, node, write_profiles

from torchsmith.cli import main
from torchsmith.fleet import group_nodes, node_name, plan_fleet, shared_machine
from torchsmith.kb import load_kb
from torchsmith.machine import AmdGpu, RocmInfo
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.resolve import DEFAULT_REQUIREMENTS, resolve


@pytest.fixture(scope="module")
def planner() -> Any:
    kb = load_kb(None)
    request = Request(requirements=tuple(DEFAULT_REQUIREMENTS))
    shared = dataclasses.replace(request, gpus_on_separate_nodes=True)
    return lambda machine, is_shared: resolve(machine, shared if is_shared else request, kb)


def _torch(plan: Plan) -> str:
    pin = plan.package("torch")
    assert pin is not None
    return pin.version


def test_identical_nodes_form_one_type_largest_first() -> None:
    named = [("a1", node(A100, 8)), ("v1", node(V100, 4)), ("a2", node(A100, 8)), ("a3", node(A100, 8))]
    groups = group_nodes(named)
    assert [sorted(g.nodes) for g in groups] == [["a1", "a2", "a3"], ["v1"]]
    assert groups[0].node_type.gpus == ((A100[0], "8.0", 8),)
    assert "8× NVIDIA A100-SXM4-80GB (sm_80)" in groups[0].node_type.label
    assert "driver 550.54.14 (CUDA ≤ 12.4)" in groups[0].node_type.label


def test_a_different_driver_or_python_is_another_type() -> None:
    named = [("a", node(A100)), ("b", node(A100, driver="570.86.10", driver_cuda="12.8")),
             ("c", node(A100, python="3.10.12"))]
    assert len(group_nodes(named)) == 3


def test_node_name_comes_from_slurm_when_the_profile_was_taken_in_a_job() -> None:
    assert node_name(node(A100, name="gpu017"), "file-stem") == "gpu017"
    assert node_name(node(A100), "file-stem") == "file-stem"


def test_shared_machine_has_every_gpu_model_and_the_oldest_driver_by_version_not_text() -> None:
    # As text "535.104.05" > "1000.0" and "99.0" < "535": versions must be compared as numbers.
    named = [("a", node(A100, 8, driver="550.54.14", driver_cuda="12.4")),
             ("v", node(V100, 4, driver="535.104.05", driver_cuda="12.2", python="3.10.12")),
             ("h", node(H100, 8, driver="570.86.10", driver_cuda="12.8"))]
    machine, blockers = shared_machine(group_nodes(named))
    assert blockers == []
    assert machine is not None and machine.nvidia is not None
    assert sorted(g.compute_capability or "" for g in machine.nvidia.gpus) == ["7.0", "8.0", "9.0"]
    assert [g.index for g in machine.nvidia.gpus] == [0, 1, 2]
    assert machine.nvidia.driver_version == "535.104.05"
    assert machine.nvidia.driver_cuda == "12.2"
    assert machine.python.minor == "3.10"


def test_no_shared_environment_across_platforms_or_gpu_vendors() -> None:
    arm = node(H100, arch="aarch64")
    amd = dataclasses.replace(node(None), rocm=RocmInfo(version="6.2.4", gpus=(AmdGpu("MI300X", "gfx942"),)))
    machine, blockers = shared_machine(group_nodes([("x", node(A100)), ("arm", arm), ("amd", amd)]))
    assert machine is None
    assert any("platform" in b and "linux-aarch64" in b for b in blockers)
    assert any("GPU kinds" in b and "rocm" in b for b in blockers)


def test_cpu_only_nodes_do_not_block_sharing(planner: Any) -> None:
    report = plan_fleet([("gpu", node(A100)), ("login", node(None))], planner)
    assert report.shared is not None and report.shared.ok
    assert report.shared.variant and report.shared.variant.startswith("cu")


def test_shared_environment_costs_a_newer_torch_when_volta_and_blackwell_mix(planner: Any) -> None:
    # sm_70 (V100) and sm_120 (RTX 5090) are in one build only in 2.8-2.10 cu128 (fact sheet §0 #5, #8).
    named = [("a1", node(A100, 8)), ("a2", node(A100, 8)),
             ("v1", node(V100, 4, driver="535.104.05", driver_cuda="12.2")),
             ("b1", node(RTX5090, 1, driver="570.86.10", driver_cuda="12.8"))]
    report = plan_fleet(named, planner)
    assert report.node_count == 4 and len(report.groups) == 3
    assert report.shared is not None and report.shared.ok
    shared = _torch(report.shared)
    assert report.shared.variant == "cu128"
    assert shared.startswith(("2.8.", "2.9.", "2.10."))
    a100 = next(g for g in report.groups if "A100" in g.node_type.label)
    assert a100.plan is not None and a100.plan.ok
    assert tuple(map(int, _torch(a100.plan).split(".")[:2])) > tuple(map(int, shared.split(".")[:2]))
    assert any(line.startswith("2 node(s) of type [8× NVIDIA A100") and "an older torch" in line
               for line in report.shared_costs)


def test_one_node_type_shares_its_own_plan_at_no_cost(planner: Any) -> None:
    report = plan_fleet([(f"n{i}", node(A100, 8)) for i in range(5)], planner)
    assert len(report.groups) == 1
    assert report.shared is report.groups[0].plan
    assert report.shared_costs == []


def _run_json(args: List[str], capsys: pytest.CaptureFixture[str]) -> Dict[str, Any]:
    code = main(["fleet", *args, "--json"])
    out = json.loads(capsys.readouterr().out)
    out["_code"] = code
    return out  # type: ignore[no-any-return]


def test_cli_reports_types_nodes_and_the_shared_plan(tmp_path: Any,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    paths = write_profiles(str(tmp_path), fleet(20))
    doc = _run_json(paths, capsys)
    assert doc["_code"] == 0 and doc["command"] == "fleet" and doc["status"] == "ok"
    data = doc["data"]
    assert data["nodes"] == 20
    assert sum(len(t["nodes"]) for t in data["node_types"]) == 20
    assert len(data["node_types"]) == 5
    assert data["shared"]["possible"] is True
    assert data["shared"]["plan"]["packages"][0]["name"] == "torch"
    basis = data["shared"]["planned_for"]
    assert basis["driver"] == "535.104.05" and basis["driver_cuda"] == "12.2"
    assert sorted(g["compute_capability"] for g in basis["gpus"]) == ["7.0", "8.0", "8.9", "9.0"]
    cpu = next(t for t in data["node_types"] if t["accelerator"] == "cpu")
    assert cpu["plan"]["variant"] == "cpu" or cpu["plan"]["accelerator"] == "cpu"


def test_cli_human_output_names_the_cost(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    named = [("a1", node(A100, 8)), ("v1", node(V100, 4, driver="535.104.05", driver_cuda="12.2")),
             ("b1", node(RTX5090, 1, driver="570.86.10", driver_cuda="12.8"))]
    assert main(["fleet", *write_profiles(str(tmp_path), named)]) == 0
    out = capsys.readouterr().out
    assert "3 node(s), 3 node type(s)" in out
    assert "One environment for every node: torch==2." in out
    assert "what it costs:" in out and "an older torch" in out


def test_cli_needs_profiles_or_slurm(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet"]) == 2
    assert "error[usage]" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["{not json", '{"kind": "something-else"}', "[1, 2]"])
def test_cli_rejects_a_bad_profile_with_one_line(tmp_path: Any, capsys: pytest.CaptureFixture[str],
                                                 content: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    good = write_profiles(str(tmp_path), [("a", node(A100))])
    assert main(["fleet", *good, str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error[host-profile-invalid]") and "Traceback" not in err


def test_cli_accepts_the_whole_probe_envelope(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    envelope = {"schema": 1, "command": "probe", "data": node(A100).to_json()}
    path = tmp_path / "n1.json"
    path.write_text(json.dumps(envelope))
    doc = _run_json([str(path)], capsys)
    assert doc["_code"] == 0 and doc["data"]["node_types"][0]["nodes"] == ["n1"]


def test_a_thousand_nodes_cost_one_plan_per_node_type(planner: Any) -> None:
    calls: List[int] = []

    def counting(machine: Any, shared: bool) -> Plan:
        calls.append(1)
        return planner(machine, shared)  # type: ignore[no-any-return]

    report = plan_fleet(fleet(1000), counting)
    assert report.node_count == 1000 and len(report.groups) == 5
    assert len(calls) == 5 + 1  # each node type, then the shared machine


def test_cli_variants_give_no_command_for_a_release_without_variant_wheels(
        tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A Python 3.8 node type gets torch 2.4.1, older than PyTorch's variant index (2.8.0 on):
    the report says so instead of a `--index-url .../whl/variant torch==2.4.1` that finds nothing."""
    named = [("old", node(V100, 2, driver="460.32.03", driver_cuda="11.2", python="3.8.10")),
             ("new", node(H100, 8, driver="570.86.10", driver_cuda="12.8"))]
    assert main(["fleet", "--variants", *write_profiles(str(tmp_path), named)]) == 0
    out = capsys.readouterr().out
    assert "wheel-variant install: none (PyTorch's variant index has no torch 2.4.1" in out
    assert out.count("whl/variant") == 1  # the H100 type's, whose release has variant wheels


def test_an_intel_jetson_or_amd_node_is_not_a_cpu_node() -> None:
    """An Arc node and a CPU node alike in all else were one node type (one plan for both), and
    Jetson, AMD and Intel nodes were labelled "no GPU"."""
    from torchsmith.machine import IntelGpu, JetsonInfo

    cpu = node(None)
    arc = dataclasses.replace(node(None), intel_gpus=(IntelGpu("Intel Arc A770", "8086:56a0"),))
    orin = dataclasses.replace(node(None, arch="aarch64"), jetson=JetsonInfo(
        l4t="36.4.3", model="NVIDIA Jetson AGX Orin Developer Kit", compute_capability="8.7"))
    mi300 = dataclasses.replace(node(None), rocm=RocmInfo(
        version="6.3.3", gpus=(AmdGpu("AMD Instinct MI300X", "gfx942"),)))
    groups = group_nodes([("cpu", cpu), ("arc", arc), ("orin", orin), ("mi300", mi300)])
    labels = {g.nodes[0]: g.node_type.label for g in groups}
    assert len(groups) == 4
    assert labels["cpu"].startswith("no GPU")
    assert labels["arc"].startswith("1× Intel Arc A770 ·")
    assert labels["orin"].startswith("1× NVIDIA Jetson AGX Orin Developer Kit (sm_87) ·")
    assert labels["mi300"].startswith("1× AMD Instinct MI300X (gfx942) ·")


def test_cli_shows_a_node_types_cautions(capsys: pytest.CaptureFixture[str]) -> None:
    """A Jetson type's torchvision has no NVIDIA wheel (pip would replace NVIDIA's torch for it):
    `plan` says so with its answer, and so does the fleet's report."""
    import os

    orin = os.path.join(os.path.dirname(__file__), "..", "hosts", "jetson-orin-jp6.2.json")
    assert main(["fleet", orin]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "! torchvision 0.24.1 pairs with torch 2.9.1; NVIDIA publishes no torchvision wheel" in out


def test_cli_says_a_node_types_constraint_files_cannot_be_read(tmp_path: Any,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A profile names the constraint files of the node's pip, not what they hold: fleet says
    to check them there, as `plan --host` does, for that node type only."""
    from torchsmith.machine import EnvInfo

    pinned = dataclasses.replace(node(H100, 8), env=EnvInfo(variables={"PIP_CONSTRAINT": "/nodes/pins.txt"}))
    paths = write_profiles(str(tmp_path), [("h1", pinned), ("v1", node(V100, 4))])
    assert main(["fleet", *paths]) == 0
    out = " ".join(capsys.readouterr().out.split())
    said = ("! the node's pip applies constraints from /nodes/pins.txt, which torchsmith cannot read "
            "from a profile: check them there (pip refuses a pin they forbid)")
    assert out.count(said) >= 1
    assert main(["fleet", "--json", *paths]) == 0
    types = json.loads(capsys.readouterr().out)["data"]["node_types"]
    flagged = [any("/nodes/pins.txt" in w for w in t["plan"]["warnings"]) for t in types]
    assert sorted(flagged) == [False, True]
