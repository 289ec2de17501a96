"""The invariants every load and `kb validate` hold the data to, one test per class of error a data
audit found (issue: the data added since, confirmed from artifacts); each would catch a new instance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from tests.kb.conftest import edit_json

from torchsmith.cli import main
from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb import KnowledgeBase, clear_cache, load_kb
from torchsmith.kb.invariants import l4t_in_range


@pytest.fixture
def kb() -> KnowledgeBase:
    return load_kb(packaged_only=True)


def _load(data_dir: Path) -> KnowledgeBase:
    return load_kb(packaged_dir=str(data_dir), packaged_only=True)


def _error(data_dir: Path) -> str:
    with pytest.raises(KnowledgeBaseError) as caught:
        _load(data_dir)
    return str(caught.value)


def _jetpack(data: Dict[str, Any], l4t: str) -> Dict[str, Any]:
    row: Dict[str, Any] = next(r for r in data["jetpacks"] if r["l4t"] == l4t)
    return row


def _add_point_release(data: Dict[str, Any], like: str, l4t: str, jetpack: str, **fields: Any) -> None:
    """A new point release of ``like``'s line, listing no wheel of its own (as NVIDIA's tables do)."""
    rows: List[Dict[str, Any]] = data["jetpacks"]
    row = dict(_jetpack(data, like), l4t=l4t, jetpack=jetpack, wheels=[], **fields)
    rows.insert(rows.index(_jetpack(data, like)), row)


# --- 1. a point release inherits the artifacts built for its range -------------------------------


def test_l4t_ranges() -> None:
    assert l4t_in_range("32.7.6", "==32.*") and not l4t_in_range("35.1.0", "==32.*")
    assert l4t_in_range("36.4.7", ">=36") and not l4t_in_range("35.6.4", ">=36")
    assert not l4t_in_range("32.7.6", "not a range")


def test_point_releases_get_the_wheels_built_for_their_l4t_line(kb: KnowledgeBase) -> None:
    for l4t in ("32.7.2", "32.7.3", "32.7.4", "32.7.5", "32.7.6"):  # JetPack 4.6.2-4.6.6
        jetpack = kb.jetpack_for_l4t(l4t)
        assert jetpack is not None
        inherited = {(w.torch, w.l4t, w.listed_for) for w in jetpack.wheels}
        assert {("1.10.0", "==32.*", "4.6.1"), ("1.9.0", "==32.*", "4.6.1")} <= inherited, l4t
    for l4t in ("35.5.0", "35.6.0", "35.6.4"):  # JetPack 5.1.3-5.1.6
        jetpack = kb.jetpack_for_l4t(l4t)
        assert jetpack is not None and [w.torch for w in jetpack.wheels][:1] == ["2.1.0a0+41361538.nv23.06"]
    # JetPack 6.2.1 (L4T 36.4.4-36.5): the jp6/cu126 wheels listed for 6.2 (L4T 36.4.3) run on the
    # later releases of that line (jetson-containers' l4t_version_compatible); 6.1 keeps NVIDIA's own
    # 2.5 wheel, and 6.0 (CUDA 12.2) gets none of them
    for l4t in ("36.4.4", "36.4.7", "36.5.0"):
        jetpack = kb.jetpack_for_l4t(l4t)
        assert jetpack is not None and "2.9.1" in [w.torch for w in jetpack.wheels], l4t
    for l4t in ("36.4.0", "36.2.0"):
        jetpack = kb.jetpack_for_l4t(l4t)
        assert jetpack is not None and "2.9.1" not in [w.torch for w in jetpack.wheels], l4t
    jp611 = kb.jetpack_for_l4t("36.4.2")  # 6.1.1 lists none of its own: 6.1's wheel, built for 36.4+
    assert jp611 is not None
    assert [w.torch for w in jp611.wheels][:1] == ["2.5.0a0+872d972e41.nv24.08.17622132"]
    # 5.0.2 ships cuDNN 8.4, the JetPack 5.1 wheels link 8.6: the range alone does not carry them there
    old = kb.jetpack_for_l4t("35.1.0")
    assert old is not None and not any(w.listed_for for w in old.wheels)


def test_a_new_point_release_inherits_without_being_edited(data_copy: Path) -> None:
    edit_json(data_copy, "jetson.json", lambda d: _add_point_release(d, "32.7.6", "32.7.7", "4.6.7"))
    jetpack = _load(data_copy).jetpack_for_l4t("32.7.7")
    assert jetpack is not None and [w.torch for w in jetpack.wheels] == ["1.10.0", "1.9.0"]


def test_a_point_release_left_without_its_familys_wheels_is_an_error(data_copy: Path) -> None:
    edit_json(data_copy, "jetson.json",
              lambda d: _add_point_release(d, "35.6.4", "35.6.5", "5.1.7", cudnn="8.9.9"))
    message = _error(data_copy)
    assert "L4T 35.6.5 (JetPack 5.1.7) has no wheel" in message and "same R35 line" in message
    edit_json(data_copy, "jetson.json",
              lambda d: _jetpack(d, "35.6.5").update(no_wheels="NVIDIA built none for cuDNN 8.9 (source)"))
    assert _load(data_copy).jetpack_for_l4t("35.6.5") is not None


def test_the_plan_says_which_range_the_wheel_is_built_for(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "--fresh", "--jetson", "32.7.5", "--python", "3.6", "--json", "torch<1.11"])
    data = json.loads(capsys.readouterr().out)["data"]
    assert code == 0 and data["packages"][0]["version"] == "1.10.0"
    assert any("JetPack 4.6.1, built for L4T ==32.*, which holds 32.7.5" in r for r in data["reasons"])


# --- 2. an empty arch list is an error, a multi-arch build lists its coverage -------------------


def _rocm_variant(data: Dict[str, Any], version: str, name: str) -> Dict[str, Any]:
    release = next(r for r in data["releases"] if r["version"] == version)
    variant: Dict[str, Any] = next(v for v in release["variants"] if v["name"] == name)
    return variant


@pytest.mark.parametrize(("change", "expected"), [
    (lambda d: _rocm_variant(d, "2.14.1", "rocm7.14").update(gfx=[]), "gfx: empty arch list"),
    (lambda d: _rocm_variant(d, "2.14.1", "rocm7.2").pop("gfx") and
     _rocm_variant(d, "2.14.1", "rocm7.2").pop("uncertain"), "gfx: missing"),
    (lambda d: _rocm_variant(d, "2.14.1", "cu130").update(sass={"linux-x86_64": []}, ptx={}),
     "sass.linux-x86_64: empty arch list"),
])
def test_an_empty_or_missing_arch_list_is_an_error(data_copy: Path, change: Any, expected: str) -> None:
    edit_json(data_copy, "torch_releases.json", change)
    assert expected in _error(data_copy)


def test_a_ptx_only_build_is_not_an_empty_list(data_copy: Path) -> None:
    edit_json(data_copy, "torch_releases.json", lambda d: _rocm_variant(d, "2.14.1", "cu130").update(
        sass={"linux-x86_64": []}, ptx={"linux-x86_64": ["compute_90"]}))
    release = _load(data_copy).release("2.14.1")
    assert release is not None and release.variant("cu130").ptx("linux-x86_64") == ("compute_90",)  # type: ignore[union-attr]


def test_the_multi_arch_rocm_build_records_its_device_packages(kb: KnowledgeBase) -> None:
    for version in ("2.14.0", "2.14.1"):
        release = kb.release(version)
        variant = release.variant("rocm7.14") if release else None
        assert variant is not None and "TI_MANAGE_V2" in variant.sources and variant.rocm_sdk
        covered = {"gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1151", "gfx1201"}
        assert covered <= set(variant.gfx)
    newest, variant = kb.rocm_variants("gfx1100")[0]
    assert (newest.version, variant.name) == ("2.14.1", "rocm7.14")


# --- 3. builds that took the upstream default list ----------------------------------------------


def test_rocm_builds_without_an_explicit_list_carry_that_eras_default(kb: KnowledgeBase) -> None:
    """pytorch/builder set no PYTORCH_ROCM_ARCH before 1.11: LoadHIP.cmake's default applied."""
    default = {"gfx803", "gfx900", "gfx906", "gfx908"}
    checked = []
    for release in kb.releases:
        for variant in release.variants:
            if variant.kind == "rocm" and "B_ROCM_OLD" in variant.sources:
                assert default <= set(variant.gfx), (release.version, variant.name)
                checked.append(release.version)
            elif variant.kind == "rocm":
                assert release.version.split(".")[:2] not in (["1", "8"], ["1", "9"], ["1", "10"])
    assert {"1.8.0", "1.9.1", "1.10.2"} <= set(checked)


# --- 4/7. every row has a public source ---------------------------------------------------------


def test_a_row_backed_only_by_a_source_of_ours_must_be_uncertain(data_copy: Path) -> None:
    def private(data: Any) -> None:
        data["sources"]["OURS"] = {"url": "urn:torchsmith:field-reports", "title": "field reports (issue 14)",
                                   "retrieved": "2026-11-26"}

    edit_json(data_copy, "manifest.json", private)
    edit_json(data_copy, "cuda.json", lambda d: d["toolkits"][0].update(source=["OURS"], uncertain=False))
    message = _error(data_copy)
    assert "cuda.json#toolkits row 1 field source" in message and "no public source" in message
    edit_json(data_copy, "cuda.json", lambda d: d["toolkits"][0].update(uncertain=True))
    _load(data_copy)


def test_a_document_source_citing_an_issue_of_ours_fails_validation(
        data_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_json(data_copy, "buildreqs.json", lambda d: d["sources"].update(
        ROCM_BUILD="torchsmith users' field reports (issue 14): ROCm builds fail"))
    assert main(["kb", "validate", str(data_copy)]) != 0
    assert "buildreqs.json (buildreqs) source ROCM_BUILD" in capsys.readouterr().err
    assert main(["kb", "validate"]) == 0  # the packaged data cites none


# --- 5. provenance of __cuda_arch -----------------------------------------------------------------


def test_cuda_arch_is_the_plugins_minimum_across_devices(kb: KnowledgeBase) -> None:
    row = next(c for c in kb.conda_channels if c.package == "__cuda_arch")
    assert row.sources == ("CEP46",) and "cep-0046" in kb.sources["CEP46"].url
    assert "lowest compute capability across" in row.note and "nvidia-virtual-packages" in row.note


# --- 6. Windows arch lists from each release branch -----------------------------------------------


def test_a_windows_list_not_read_from_the_release_branch_says_so(data_copy: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    edit_json(data_copy, "torch_releases.json",
              lambda d: _rocm_variant(d, "2.14.1", "cu130").pop("unverified"))
    assert "cites no release branch's Windows build script" in _error(data_copy)
    code = main(["plan", "--fresh", "--json", "--platform", "windows-x86_64", "--gpu", "8.9", "--driver",
                 "581.15", "--python", "3.12", "torch==2.14.1"])
    data = json.loads(capsys.readouterr().out)["data"]
    assert code == 0 and any("windows-x86_64 arch list" in line for line in data["uncertain"])


# --- AMD TheRock ---------------------------------------------------------------------------------


def test_an_index_serving_no_target_is_refused(data_copy: Path) -> None:
    edit_json(data_copy, "rocm.json", lambda d: d["therock_indexes"][0].update(gfx=[]))
    with pytest.raises(KnowledgeBaseError, match="therock_indexes row 1 field gfx: empty arch list"):
        load_kb(packaged_dir=str(data_copy), packaged_only=True)


def test_in_wheels_is_read_from_the_releases(data_copy: Path) -> None:
    assert not load_kb(packaged_dir=str(data_copy), packaged_only=True).gfx_target("gfx90c").in_wheels  # type: ignore[union-attr]

    def add(data: Any) -> None:
        variant = next(v for v in data["releases"][1]["variants"] if v["name"] == "rocm7.14")
        variant["gfx"].append("gfx90c")

    edit_json(data_copy, "torch_releases.json", add)
    clear_cache()
    assert load_kb(packaged_dir=str(data_copy), packaged_only=True).gfx_target("gfx90c").in_wheels  # type: ignore[union-attr]
