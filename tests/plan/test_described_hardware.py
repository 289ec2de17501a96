"""Hardware as people describe it: a GPU by product name, family or vendor, and no driver given."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any, Dict

import pytest
from tests.plan.plan_hosts import host

from torchsmith.cli import main
from torchsmith.kb import load_kb
from torchsmith.kb.product_names import expand_listing, match_product
from torchsmith.overrides import apply_overrides, build_overrides, parse_described_gpu
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.resolve import resolve

KB = load_kb(packaged_only=True)


def _plan(**machine: object) -> Plan:
    return resolve(host(**machine), Request(), KB)  # type: ignore[arg-type]


def _torch(plan: Plan) -> str:
    return next(p.version for p in plan.packages if p.name == "torch")


def test_a_product_name_resolves_through_the_gpu_table() -> None:
    by_name = _plan(python="3.11", gpus=["RTX 3090"], driver="550.54.14")
    by_cc = _plan(python="3.11", gpus=["8.6"], driver="550.54.14")
    assert by_name.ok and (_torch(by_name), by_name.variant) == (_torch(by_cc), by_cc.variant)
    assert any("compute capability 8.6" in r for r in by_name.reasons)
    assert not any("family" in w for w in by_name.warnings)


def test_a_family_is_covered_model_by_model_and_said_so() -> None:
    plan = _plan(python="3.11", gpus=["RTX 30"], driver="550.54.14")
    assert plan.ok
    assert any("RTX 30 names a family" in w and "--gpu 8.6" in w for w in plan.warnings)
    assert any("GeForce RTX 3090" in r or "GeForce RTX 3060" in r for r in plan.reasons)


def test_an_unknown_name_plans_for_the_drivers_era_and_says_so() -> None:
    plan = _plan(python="3.11", gpus=["Quadro Nonesuch 9"], driver="550.54.14")
    assert plan.ok
    assert any("unknown model (Quadro Nonesuch 9)" in a for a in plan.assumptions)


def test_an_unknown_driver_is_an_assumption_said_first_with_the_flag_that_removes_it() -> None:
    plan = _plan(python="3.11", gpus=["8.6"])
    assert plan.ok
    first = plan.assumptions[0]
    assert first.startswith("NVIDIA driver not given: assumed one of the CUDA ")
    assert "--driver VERSION" in first and plan.variant is not None and plan.variant in first
    newest = _plan(python="3.11", gpus=["8.6"], driver="595.45.04")
    if (_torch(newest), newest.variant) != (_torch(plan), plan.variant):
        assert f"torch {_torch(newest)} {newest.variant}" in first  # what a newer driver gets


def test_a_given_driver_removes_the_assumption() -> None:
    plan = _plan(python="3.11", gpus=["8.6"], driver="595.45.04")
    assert not any(a.startswith("NVIDIA driver not given") for a in plan.assumptions)


# --- AMD and Intel GPUs by product name, family or vendor --------------------------------------

def _json(*argv: str) -> Dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["plan", "--json", "--python", "3.11", *argv])
    return dict(json.loads(out.getvalue()))


@pytest.mark.parametrize("name, gfx", [("Radeon RX 7900 XTX", "gfx1100"), ("MI300X", "gfx942"),
                                       ("AMD Instinct MI250X", "gfx90a"), ("rx 6800 xt", "gfx1030")])
def test_an_amd_product_name_is_planned_as_its_gfx_target(name: str, gfx: str) -> None:
    by_name = _plan(python="3.11", gpus=[name])
    by_gfx = _plan(python="3.11", rocm_gfx=[gfx])
    assert by_name.ok and by_name.variant is not None and by_name.variant.startswith("rocm")
    assert (_torch(by_name), by_name.variant) == (_torch(by_gfx), by_gfx.variant)
    assert any(f"{name}: {gfx}" in r for r in by_name.reasons)


def test_the_amd_listing_expands_to_every_product_it_names() -> None:
    assert expand_listing("Radeon RX 7900 XTX/XT/GRE, Radeon PRO W7900/W7800") == [
        "Radeon RX 7900 XTX", "Radeon RX 7900 XT", "Radeon RX 7900 GRE", "Radeon PRO W7900",
        "Radeon PRO W7800"]
    assert expand_listing("Radeon RX 6800/6800 XT (Navi 21)") == [
        "Radeon RX 6800", "Radeon RX 6800 XT", "Navi 21"]
    rows = [("gfx1100", ["Radeon RX 7900 XTX", "Radeon RX 7900 XT"]), ("gfx1101", ["Radeon RX 7800 XT"])]
    assert match_product("RX 7900 XT", rows).kind == "exact"
    assert match_product("Radeon RX 7", rows).keys == ("gfx1100", "gfx1101")
    assert match_product("amd", rows).kind == "vendor"
    assert match_product("Radeon HD 7970", rows).kind == "unknown"


def test_amd_without_a_gfx_target_plans_what_the_rocm_builds_support_and_says_so() -> None:
    plan = _plan(python="3.11", gpus=["amd"])
    assert plan.ok and plan.variant is not None and plan.variant.startswith("rocm")
    said = next(w for w in plan.warnings if "gfx target is not known" in w)
    assert "--rocm-gfx gfxNNNN" in said and "gfx1100" in said  # what the chosen build lists


def test_an_amd_family_names_the_targets_the_build_leaves_out() -> None:
    plan = _plan(python="3.11", gpus=["Instinct"])
    assert plan.ok and plan.variant is not None and plan.variant.startswith("rocm")
    said = next(w for w in plan.warnings if "names a family of AMD GPUs" in w)
    assert "gfx942" in said and "--rocm-gfx" in said


@pytest.mark.parametrize("gpu", ["amd", "Radeon RX 7900 XTX", "intel", "Arc A770"])
def test_a_mac_with_an_amd_or_intel_gpu_is_a_dead_end_with_its_doors(gpu: str) -> None:
    plan = _plan(platform="macos-arm64", python="3.11", gpus=[gpu])
    assert plan.status == "no-solution" and plan.blocker is not None
    assert plan.blocker.code == "no-wheel-for-platform"
    flags = [d.change for d in plan.alternatives]
    assert "--platform linux-x86_64" in flags and "--no-gpu" in flags


def test_amd_on_windows_without_a_gfx_target_asks_for_it() -> None:
    plan = _plan(platform="windows-x86_64", python="3.11", gpus=["amd"])
    assert plan.status == "no-solution"
    assert "--rocm-gfx gfxNNNN" in [d.change for d in plan.alternatives]
    named = _plan(platform="windows-x86_64", python="3.11", gpus=["Radeon RX 7900 XTX"])
    assert named.ok and named.variant is not None and named.variant.startswith("therock")


@pytest.mark.parametrize("name", ["Arc A770", "Data Center GPU Max", "Intel Arc B580"])
def test_an_intel_product_name_plans_the_xpu_build(name: str) -> None:
    plan = _plan(python="3.11", gpus=[name])
    assert plan.ok and plan.variant == "xpu"
    assert not any("names a family" in w for w in plan.warnings)


def test_intel_alone_plans_the_xpu_build_and_names_what_it_supports() -> None:
    plan = _plan(python="3.11", gpus=["intel"])
    assert plan.ok and plan.variant == "xpu"
    said = next(w for w in plan.warnings if "Intel GPU of unknown model" in w)
    assert "Arc A-Series" in said and "--gpu 'Arc A770'" in said


def test_intel_on_a_platform_without_xpu_builds_is_a_dead_end() -> None:
    plan = _plan(platform="linux-aarch64", python="3.11", gpus=["intel"])
    assert plan.status == "no-solution"
    assert [d.change for d in plan.alternatives] == ["--platform linux-x86_64", "--no-gpu"]


def test_cli_gpu_flag_takes_vendor_names() -> None:
    amd = _json("--gpu", "Radeon RX 7900 XTX")
    assert amd["data"]["variant"].startswith("rocm")
    intel = _json("--gpu", "intel")
    assert intel["data"]["variant"] == "xpu"


def test_a_described_amd_gpu_replaces_a_probed_nvidia_one() -> None:
    local = host(python="3.11", gpus=["8.6"], driver="550.54.14")
    described = apply_overrides(local, build_overrides(gpus=(parse_described_gpu("MI300X"),)))
    assert described.nvidia is None and described.rocm is not None
    assert [g.name for g in described.rocm.gpus] == ["MI300X"]


def test_a_prerequisite_said_in_words_is_never_shown_as_a_command() -> None:
    from torchsmith.cli.plan_text import is_command

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["plan", "--gpu", "intel", "--platform", "linux-x86_64", "--python", "3.11"]) == 0
    text = out.getvalue()
    assert "Intel GPU driver" in text and not any(
        line.lstrip().startswith("$") and "Intel GPU driver" in line for line in text.splitlines())
    assert "$ python -m pip install" in text  # the install itself still is one
    assert is_command("sudo apt-get install -y python3-pip libopenblas-dev")
    assert is_command("DEBIAN_FRONTEND=noninteractive sudo apt-get install -y libopenblas-dev")
    assert not is_command("WSL2: /usr/lib/wsl/lib/libcuda.so is missing, so the Windows driver is not seen")
    assert not is_command("the Intel GPU driver and runtime")


def test_a_jetpack_version_given_to_jetson_gets_its_l4t_as_the_way_out(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--jetson 6.1`` (JetPack's number, not L4T's): the door names the L4T release and it plans;
    the title does not name a Python nobody stated."""
    assert main(["plan", "--jetson", "6.1", "--json"]) == 3
    data = json.loads(capsys.readouterr().out)["data"]
    assert data["blocker"]["constraint"] == "L4T 6.1"
    door = next(d for d in data["alternatives"] if d["kind"] == "flag")
    assert door["command"].endswith("--jetson 36.4.0")
    assert main(["plan", "--jetson", "36.4.0", "--json"]) == 0
    capsys.readouterr()
    assert main(["plan", "--jetson", "6.1"]) == 3
    assert capsys.readouterr().out.splitlines()[0] == "No working torch stack for linux-aarch64."
