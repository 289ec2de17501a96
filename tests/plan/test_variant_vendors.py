"""Wheel variants on AMD and Intel machines, and the recorded labels of torch's variant index.

The labels are the variants.json files PyTorch's release workflow repacks its variant wheels with
(wheelnext/variant-repack@e75a16d9 configs/torch-2.X); what the providers report follows their code
(amd-variant-provider@4d985a99, intel-variant-provider@9516bd28); a label fits as variantlib's
filter_variants_by_property says (one of its values per feature among the reported ones).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from torchsmith.kb import load_kb
from torchsmith.plan.variant_labels import _derived, build_name, labels_of
from torchsmith.plan.variant_pick import installer_pick
from torchsmith.plan.variant_providers import AMD_FORCE_GFX, AMD_FORCE_ROCM, INTEL_FORCE_IP

KB = load_kb(None)
HOSTS = Path(__file__).resolve().parents[1] / "hosts"


def _labels(version: str, platform: str = "linux-x86_64") -> Dict[str, Any]:
    release = KB.release(version)
    assert release is not None
    return labels_of(KB, release, platform)


def test_recorded_labels_are_read_per_platform() -> None:
    assert sorted(_labels("2.10.0")) == ["cuda12.6", "cuda12.8", "cuda13.0", "null", "rocm7.0", "rocm7.1",
                                         "xpu"]
    aarch64 = _labels("2.10.0", "linux-aarch64")
    assert "xpu" not in aarch64 and not any(label.startswith("rocm") for label in aarch64)
    assert build_name("cuda12.8") == "cu128" and build_name("null") == "cpu"
    assert build_name("rocm7.1") == "rocm7.1"


@pytest.mark.parametrize("version", ["2.9.0", "2.10.0"])
def test_the_derivation_rules_reproduce_the_published_amd_and_intel_labels(version: str) -> None:
    """Releases without a recorded file get derived labels: for the recorded ones, the derivation from
    torchsmith's own ROCm gfx lists and Intel families gives the published labels exactly."""
    release = KB.release(version)
    assert release is not None
    derived = _derived(KB, release, "linux-x86_64")
    for label, facts in _labels(version).items():
        for namespace in ("amd", "intel"):
            if namespace in facts.properties:
                mine = derived[build_name(label)].properties[namespace]
                assert {k: set(v) for k, v in mine.items()} == \
                       {k: set(v) for k, v in facts.properties[namespace].items()}, label


def test_derived_labels_follow_the_newest_recorded_files_floors() -> None:
    """2.10 declares CUDA 12.0 as the floor of both 12.x labels: an R535 host (CUDA 12.2) gets
    cuda12.8 (PyTorch's priority 2 over cuda12.6's 3), not the CPU build an exact-version floor gives.
    Derived labels follow the newest recorded file's rule, and rank the newest CUDA first."""
    assert installer_pick(_labels("2.10.0"), ["9.0"], "12.2").label == "cuda12.8"
    release = KB.release("2.10.0")
    assert release is not None
    derived = _derived(KB, release, "linux-x86_64")
    for label, facts in _labels("2.10.0").items():
        if facts.cuda_lower:
            assert derived[build_name(label)].cuda_lower == facts.cuda_lower, label
            assert derived[build_name(label)].priority == facts.priority, label
    assert installer_pick(derived, ["9.0"], "12.2").label == "cu128"


def _plan(capsys: pytest.CaptureFixture[str], *flags: str) -> Dict[str, Any]:
    from torchsmith.cli import main

    assert main(["plan", "--fresh", "--json", "--variants", *flags]) == 0
    data: Dict[str, Any] = json.loads(capsys.readouterr().out)["data"]
    return data


def _variant_warnings(data: Dict[str, Any]) -> List[str]:
    return [w for w in data["warnings"] if "wheel-variant installer" in w]


AMD = ("torch==2.10.0", "--platform", "linux-x86_64", "--python", "3.12")


def test_amd_with_the_labels_rocm_installed_gets_its_build(capsys: pytest.CaptureFixture[str]) -> None:
    data = _plan(capsys, *AMD, "--rocm-gfx", "gfx1100", "--rocm-version", "7.1.1")
    assert data["variant"] == "rocm7.1" and _variant_warnings(data) == []


def test_amd_with_an_older_system_rocm_falls_back_to_cpu_and_says_how_not_to(
        capsys: pytest.CaptureFixture[str]) -> None:
    data = _plan(capsys, *AMD, "--rocm-gfx", "gfx942", "--rocm-version", "6.3.3")
    [warning] = _variant_warnings(data)
    assert "takes the CPU build" in warning and "ROCm 6.3 (the installed ROCm)" in warning
    index = "https://download.pytorch.org/whl/rocm7.1"
    assert f"uv pip install --index-url {index} torch==2.10.0+rocm7.1" in warning
    # three parts: the plugin asserts X.Y.Z
    assert f"{AMD_FORCE_GFX}=gfx942 {AMD_FORCE_ROCM}=7.1.0" in warning
    # the variant install itself is offered as another way, with what it takes here
    [choice] = [c for c in data["choices"] if "wheel-variant installer" in c]
    assert "--preview-features wheel-variants --index-url https://download.pytorch.org/whl/variant " \
           "torch==2.10.0" in choice and "CPU (null) variant here" in choice


def test_amd_with_another_rocm_label_installed_gets_that_label(capsys: pytest.CaptureFixture[str]) -> None:
    [warning] = _variant_warnings(_plan(capsys, *AMD, "--rocm-gfx", "gfx1100", "--rocm-version", "7.0.2"))
    assert "takes rocm7.0 here" in warning and "planned rocm7.1" in warning


def test_amd_without_rocm_installed_reports_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    [warning] = _variant_warnings(_plan(capsys, *AMD, "--rocm-gfx", "gfx1100"))
    assert "no ROCm installed" in warning and f"{AMD_FORCE_GFX}=gfx1100" in warning


def test_amd_gpu_run_through_an_hsa_override_is_forced_as_the_gfx_it_runs_as(
        capsys: pytest.CaptureFixture[str]) -> None:
    data = _plan(capsys, *AMD, "--rocm-gfx", "gfx1031", "--rocm-version", "7.1.0")
    [warning] = _variant_warnings(data)
    assert "rocm7.1 lists no gfx1031" in warning and f"{AMD_FORCE_GFX}=gfx1030" in warning


def test_amd_on_windows_the_provider_does_not_run(capsys: pytest.CaptureFixture[str]) -> None:
    data = _plan(capsys, "--platform", "windows-x86_64", "--python", "3.12", "--rocm-gfx", "gfx1100")
    [warning] = _variant_warnings(data)
    assert "Linux only" in warning and "rocm.nightlies.amd.com" in warning


def test_intel_arc_a770_gets_the_xpu_label(capsys: pytest.CaptureFixture[str]) -> None:
    data = _plan(capsys, "torch==2.9.0", "--host", str(HOSTS / "linux-x86_64-arc-a770.expected.json"))
    assert data["variant"] == "xpu" and _variant_warnings(data) == []


def test_intel_meteor_lake_u_is_not_in_the_label(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    profile = json.loads((HOSTS / "linux-x86_64-arc-a770.expected.json").read_text())
    profile["intel_gpus"][0].update(name="Intel(R) Arc(TM) Graphics", pci_id="8086:7d55")
    path = tmp_path / "mtl.json"
    path.write_text(json.dumps(profile))
    data = _plan(capsys, "torch==2.10.0", "--host", str(path))
    [warning] = _variant_warnings(data)
    # the name does not tell Meteor Lake H (12.71.4, listed) from U (12.70.4, not listed)
    assert "on mtl-u (device IP 12.70.4)" in warning and "mtl-h" not in warning
    assert f"{INTEL_FORCE_IP}=12.71.4" in warning and "https://download.pytorch.org/whl/xpu" in warning
