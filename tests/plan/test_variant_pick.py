"""Wheel variants: the index metadata read as a source, and what a variant-aware installer picks
on described machines next to what runs there (R535/R550 hosts, mixed GPUs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb.variant_index import label_disagreements, parse_variants_json
from torchsmith.plan.variant_pick import FORCE_DRIVER, FORCE_SM, installer_pick, variant_advice

INDEX = "https://download.pytorch.org/whl/cu128"


def _label(lower: str, *archs: str) -> Dict[str, Any]:
    return {"nvidia": {"cuda_version_lower_bound": [lower], "sm_arch": list(archs)}}


def _variants_json() -> str:
    """A {name}-{version}-variants.json with exact-version floors, as torch 2.8's recorded file declares
    for cu128/cu129 (2.9/2.10 declare {major}.0); labels and null label as 2.8's shape (``cu126``)."""
    data = {"$schema": "https://variants-schema.wheelnext.dev/",
            "default-priorities": {"namespace": ["nvidia"]},
            "providers": {"nvidia": {"requires": ["nvidia-variant-provider>=0.0.1,<1.0.0"],
                                     "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin"}},
            "variants": {
                "cu126": _label("12.6", "50_real", "60_real", "70_real", "75_real", "80_real", "86_real",
                                "90_real", "90_virtual"),
                "cu128": _label("12.8", "70_real", "75_real", "80_real", "86_real", "90_real", "100_real",
                                "120_real"),
                "cu130": _label("13.0", "75_real", "80_real", "86_real", "90_real", "100_real", "120_real"),
                "00000000": {}}}
    return json.dumps(data)


LABELS = parse_variants_json(_variants_json())


def test_the_labels_are_read_as_cuda_floors_and_arch_lists() -> None:
    cu126 = LABELS["cu126"]
    assert cu126.cuda_lower == "12.6" and cu126.sass[0] == "sm_50" and cu126.ptx == ("compute_90",)
    assert LABELS["cu130"].sass == ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
    assert LABELS["00000000"].is_null
    assert label_disagreements(LABELS["cu130"], ("sm_75", "sm_80"), ()) == [
        "SASS sm_75 sm_80: the label declares sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"]


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not valid JSON"),
    ("{}", "no 'variants' object"),
    (json.dumps({"variants": {"cu1": _label("12.0", "90")}}), "is not NN_real or NN_virtual"),
])
def test_a_malformed_file_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(KnowledgeBaseError, match=message):
        parse_variants_json(text)


def test_a_recent_gpu_and_driver_get_the_newest_label() -> None:
    assert installer_pick(LABELS, ["8.9"], "13.0").label == "cu130"
    assert variant_advice(LABELS, ["8.9"], "13.0", "cu130", INDEX) == ()


@pytest.mark.parametrize("driver_cuda", ["12.2", "12.4"])  # R535, R550
def test_r535_and_r550_fall_back_to_cpu_silently_and_the_answer_says_so(driver_cuda: str) -> None:
    pick = installer_pick(LABELS, ["8.9"], driver_cuda)
    assert pick.label is None and "silently" in pick.reason
    [warning] = variant_advice(LABELS, ["8.9"], driver_cuda, "cu128", INDEX)
    assert f"uv pip install --index-url {INDEX} torch" in warning and f"{FORCE_DRIVER}=12.8" in warning


def test_a_v100_next_to_a_b200_is_left_without_its_code() -> None:
    ccs: List[str] = ["7.0", "10.0"]
    assert installer_pick(LABELS, ccs, "13.0").label == "cu130"  # the provider reports the highest GPU
    [warning] = variant_advice(LABELS, ccs, "13.0", "cu128", INDEX)
    assert "no code for compute capability 7.0" in warning and f"{FORCE_SM}=7.0" in warning


def _plan(capsys: pytest.CaptureFixture[str], *flags: str) -> Dict[str, Any]:
    from torchsmith.cli import main

    assert main(["plan", "--fresh", "--json", "--python", "3.12", "--platform", "linux-x86_64", "--variants",
                 *flags]) == 0
    data: Dict[str, Any] = json.loads(capsys.readouterr().out)["data"]
    return data


def test_plan_variants_on_an_r535_host_takes_a_12x_build(capsys: pytest.CaptureFixture[str]) -> None:
    """PyTorch's recorded 2.9/2.10 files declare CUDA 12.0 as the floor of every 12.x label, and
    labels derived for later releases follow them: an R535 host (CUDA 12.2) gets the 12.x build,
    not the CPU build that an exact-version floor (last round's assumption) gave."""
    data = _plan(capsys, "--gpu", "8.9", "--driver", "535.183.01")
    assert not [w for w in data["warnings"] if "wheel-variant installer takes the CPU" in w]
    choice = next(c for c in data["choices"] if "wheel-variant installer" in c)
    assert f"it takes {data['variant']} here" in choice


def test_plan_variants_on_a_v100_b200_host_names_the_missing_code(capsys: pytest.CaptureFixture[str]) -> None:
    data = _plan(capsys, "--gpu", "10.0", "--gpu", "7.0", "--driver", "580.65.06")
    [warning] = [w for w in data["warnings"] if "wheel-variant installer" in w]
    assert "no code for compute capability 7.0" in warning and f"{FORCE_SM}=7.0" in warning


def test_without_the_flag_nothing_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    from torchsmith.cli import main

    assert main(["plan", "--fresh", "--json", "--python", "3.12", "--platform", "linux-x86_64",
                 "--gpu", "8.9", "--driver", "535.183.01"]) == 0
    assert not [w for w in json.loads(capsys.readouterr().out)["data"]["warnings"] if "wheel-variant" in w]


def test_plan_variants_on_a_jetson_says_the_installer_takes_no_jetpack_build(
        capsys: pytest.CaptureFixture[str]) -> None:
    from torchsmith.cli import main

    host = str(Path(__file__).resolve().parents[1] / "hosts" / "jetson-orin-jp6.2.json")
    assert main(["plan", "--fresh", "--json", "--host", host, "--variants"]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    [warning] = [w for w in data["warnings"] if "wheel-variant installer on this Jetson" in w]
    assert "not the JetPack" in warning and data["packages"][0]["wheel_url"] in warning


def test_plan_variants_shows_a_gpu_left_without_code_without_v(capsys: pytest.CaptureFixture[str]) -> None:
    """The advice decides whether the variant install is safe here: a caution, shown by default."""
    from torchsmith.cli import main

    assert main(["plan", "--fresh", "--python", "3.12", "--platform", "linux-x86_64", "--variants",
                 "--gpu", "10.0", "--gpu", "7.0", "--driver", "580.65.06"]) == 0
    captured = capsys.readouterr()
    shown = " ".join((captured.out + captured.err).split())
    assert "no code for compute capability 7.0" in shown and f"{FORCE_SM}=7.0" in shown


def test_plan_variants_says_uv_refuses_the_published_file(capsys: pytest.CaptureFixture[str]) -> None:
    """torch 2.10's published variants.json: uv 0.13.9's own preview refuses it (tests/plan/
    test_variant_index_uv.py runs it); the answer says so by default, as a caution."""
    from torchsmith.cli import main

    assert main(["plan", "--fresh", "--python", "3.12", "--platform", "linux-x86_64", "--variants",
                 "--gpu", "9.0", "--driver", "580.65.06", "torch==2.10.0"]) == 0
    captured = capsys.readouterr()
    shown = " ".join((captured.out + captured.err).split())
    assert "'torch has invalid metadata', no solution" in shown
    assert "skips the file's NVIDIA provider (nvidia-variant-provider>=0.0.2,<1.0.0" in shown


def test_a_release_older_than_the_variant_index_gets_no_variant_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    """torch 2.4.1 (Python 3.8's newest) has no variant wheels (they begin at 2.8.0): no
    `uv pip install ... --index-url .../whl/variant torch==2.4.1` that would find nothing."""
    data = _plan(capsys, "--gpu", "6.1", "--driver", "460.32.03", "--python", "3.8")
    torch = next(p for p in data["packages"] if p["name"] == "torch")
    assert torch["version"] == "2.4.1"
    assert not [c for c in data["choices"] if "whl/variant" in c]
    assert any("variant index has no torch 2.4.1" in c and "2.8.0" in c for c in data["choices"])
