"""Loading: corrupted data gives one line naming file, row and field; overlays add data; speed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
from tests.kb.conftest import edit_json

from torchsmith.cli import main
from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb import DATA_DIR, load_kb


def packaged_version() -> str:
    """The data version the package ships, read from its manifest (it changes with every data update)."""
    return str(json.loads((Path(DATA_DIR) / "manifest.json").read_text(encoding="utf-8"))["kb_version"])


def load_error(data_dir: Path) -> str:
    with pytest.raises(KnowledgeBaseError) as caught:
        load_kb(packaged_dir=str(data_dir), packaged_only=True)
    assert caught.value.code == "kb-invalid"
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_bad_json(data_copy: Path) -> None:
    path = data_copy / "gpus.json"
    path.write_text(path.read_text()[:-40], encoding="utf-8")  # truncated
    assert load_error(data_copy).startswith("gpus.json: not valid JSON (")


def test_wrong_type(data_copy: Path) -> None:
    def change(data: Any) -> None:
        data["releases"][2]["variants"][0]["platforms"] = "linux-x86_64"

    edit_json(data_copy, "torch_releases.json", change)
    assert load_error(data_copy) == (
        "torch_releases.json row 3 field variants[0].platforms: expected a list of strings, got str")


def test_unknown_source_id(data_copy: Path) -> None:
    edit_json(data_copy, "cuda.json", lambda data: data["toolkits"][1].update(source=["NV_RN", "NO_SUCH"]))
    assert load_error(data_copy) == (
        "cuda.json#toolkits row 2 field source: unknown source id 'NO_SUCH' (not in manifest.json)")


def test_duplicate_row(data_copy: Path) -> None:
    def change(data: Any) -> None:
        data["gpus"].insert(1, dict(data["gpus"][0]))

    edit_json(data_copy, "gpus.json", change)
    message = load_error(data_copy)
    assert message.startswith("gpus.json row 2: duplicate of row 1")


def test_unsorted_rows(data_copy: Path) -> None:
    def change(data: Any) -> None:
        rows = data["releases"]
        rows[3], rows[4] = rows[4], rows[3]

    edit_json(data_copy, "torch_releases.json", change)
    message = load_error(data_copy)
    assert message.startswith("torch_releases.json row 5: out of order: ")


@pytest.mark.parametrize(("file", "change", "expected"), [
    ("torch_releases.json", lambda d: d["releases"][0].update(version="two"),
     "torch_releases.json row 1 field version: 'two' is not a version"),
    ("torch_releases.json",
     lambda d: d["releases"][0]["pypi_default"].update({"linux-x86_64": "cu999"}),
     "torch_releases.json row 1 field pypi_default.linux-x86_64: "
     "names 'cu999', which is not a variant of 2.15.0"),
    ("torch_releases.json",
     lambda d: d["releases"][0]["variants"][0]["sass"].update({"linux-x86_64": ["8.0"]}),
     "torch_releases.json row 1 field variants[0].sass.linux-x86_64: "
     "'8.0' is not of the form ^sm_\\d+[af]?$"),
    ("jetson.json", lambda d: d["jetpacks"][0].pop("cuda"), "jetson.json row 1 field cuda: missing"),
    ("gpus.json", lambda d: d["gpus"][0].update(uncertain="yes"),
     'gpus.json row 1 field uncertain: expected true or false, got "yes"'),
    ("companions.json", lambda d: d["torch_requirements"][0].update(torch="==9.9.9"),
     "companions.json#torch_requirements row 1 field torch: no torch release 9.9.9 in torch_releases.json"),
    ("manifest.json", lambda d: d.update(schema=99),
     "manifest.json field schema: 99 is not supported (this torchsmith reads schema 1)"),
])
def test_hand_edits_are_named(data_copy: Path, file: str, change: Callable[[Any], None],
                              expected: str) -> None:
    edit_json(data_copy, file, change)
    assert load_error(data_copy) == expected


def test_validate_command_prints_the_one_line_error(
        data_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    releases = json.loads((data_copy / "torch_releases.json").read_text())
    releases["releases"] = releases["releases"][:2]
    releases["releases"][1]["variants"][0]["kind"] = "cuda-ish"
    (overlay / "torch_releases.json").write_text(json.dumps(releases))
    assert main(["kb", "validate", str(overlay)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == ("error[kb-invalid]: torch_releases.json row 2 field variants[0].kind: "
                                   "'cuda-ish' is not one of cuda, rocm, cpu, xpu"
                                   f" (in the overlay {overlay})")
    assert "Traceback" not in err


def test_validate_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "validate"]) == 0
    assert capsys.readouterr().out.startswith("ok: packaged data is valid: ")
    assert main(["kb", "validate", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["data"]["valid"] is True


def test_validate_a_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "validate", str(tmp_path / "nope")]) == 1
    assert "error[kb-invalid]: knowledge base overlay" in capsys.readouterr().err


NEW_RELEASE = {
    "version": "2.16.0", "released": "2027-01-20",
    "python": {"linux-x86_64": ["3.12", "3.13", "3.14", "3.15"]},
    "pypi_default": {"linux-x86_64": "cu140"},
    "torchvision": "0.30.0", "torchaudio": None,
    "variants": [
        {"name": "cu140", "kind": "cuda", "cuda": "14.0", "platforms": ["linux-x86_64"],
         "sass": {"linux-x86_64": ["sm_80", "sm_90", "sm_100", "sm_120", "sm_130"]}, "source": ["TEST"]},
        {"name": "cpu", "kind": "cpu", "platforms": ["linux-x86_64"], "source": ["TEST"]},
    ],
    "source": ["TEST"],
}


def write_overlay(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "manifest.json").write_text(json.dumps({"sources": {"TEST": {
        "url": "https://example.invalid/test", "title": "a test row", "retrieved": "2027-01-21"}}}))
    (directory / "torch_releases.json").write_text(json.dumps({"releases": [NEW_RELEASE]}))
    (directory / "cuda.json").write_text(json.dumps({"toolkits": [
        {"version": "14.0", "min_driver_linux": "620.10", "source": ["TEST"], "uncertain": True}]}))


def test_a_new_release_and_cuda_variant_is_a_data_change(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay"
    write_overlay(overlay)
    kb = load_kb(str(overlay))
    assert kb.releases[0].version == "2.16.0" and kb.releases[1].version == "2.15.0"
    build = kb.release("2.16.0").variant("cu140")  # type: ignore[union-attr]
    assert build is not None and build.cuda == "14.0"
    assert build.index_url == "https://download.pytorch.org/whl/cu140"
    assert kb.kernel_for(build, "13.0", "linux-x86_64") == ("sass", "sm_130")
    assert kb.cuda_release("cu140").min_driver_linux == "620.10"  # type: ignore[union-attr]
    assert kb.driver_max_cuda("620.10") == "14.0"
    assert kb.sources["TEST"].url == "https://example.invalid/test"
    assert kb.overlay == str(overlay)
    # The packaged data is untouched and still loads on its own.
    assert load_kb(packaged_only=True).releases[0].version == "2.15.0"


def test_an_overlay_variant_needs_its_cuda_toolkit(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay"
    write_overlay(overlay)
    (overlay / "cuda.json").unlink()
    with pytest.raises(KnowledgeBaseError, match=r"variants.cu140.cuda: CUDA 14.0 has no row in cuda.json"):
        load_kb(str(overlay))


def test_the_refresh_overlay_in_the_cache_is_used_by_default(_own_cache: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    write_overlay(_own_cache / "kb-overlay")
    (_own_cache / "kb-overlay" / "refresh.json").write_text(json.dumps(
        {"refreshed": "2027-01-21", "newest_seen": "2.16.0"}))
    kb = load_kb()
    assert kb.release("2.16.0") is not None
    assert kb.warnings
    assert kb.warnings[0].startswith("data is older than torch 2.16.0 seen by `kb refresh` on 2027-01-21")
    assert main(["kb", "info"]) == 0
    captured = capsys.readouterr()
    assert "overlay: " + str(_own_cache / "kb-overlay") in captured.out
    assert "warning:" not in captured.err and "hidden; -v shows" in captured.err  # a note
    assert main(["kb", "info", "-v"]) == 0
    assert "warning: data is older than torch 2.16.0" in capsys.readouterr().err


def test_a_refresh_overlay_of_older_packaged_data_is_ignored(_own_cache: Path) -> None:
    write_overlay(_own_cache / "kb-overlay")
    (_own_cache / "kb-overlay" / "refresh.json").write_text(json.dumps(
        {"refreshed": "2026-01-02", "newest_seen": "2.16.0", "packaged_kb_version": "2026.01.01"}))
    kb = load_kb()
    assert kb.release("2.16.0") is None and kb.overlay is None
    assert kb.warnings == [
        f"ignoring the `kb refresh` overlay in {_own_cache / 'kb-overlay'}: it was made for knowledge base "
        f"2026.01.01, this torchsmith ships {packaged_version()}; run `torchsmith kb refresh` again"]


def test_overlay_changes_are_seen_without_restarting(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    assert load_kb(str(overlay)).release("2.16.0") is None
    write_overlay(overlay)
    assert load_kb(str(overlay)).release("2.16.0") is not None


def test_the_loader_orders_by_packaging_versions() -> None:
    """One ordering (issue 12): rows newest first by ``packaging.version.Version``."""
    from packaging.version import Version

    kb = load_kb(packaged_only=True)
    versions = [Version(r.version) for r in kb.releases]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    toolkits = [Version(r.version) for r in kb.cuda_releases]
    assert toolkits == sorted(toolkits, reverse=True)


def test_a_jetson_wheel_file_name_is_a_bare_wheel_name(data_copy: Path) -> None:
    """It is saved and installed by a shell command: no path, no shell syntax."""
    def change(data: Any) -> None:
        row = next(r for r in data["jetpacks"] if r["l4t"] == "32.6.1")
        row["wheels"][0]["filename"] = "../torch-1.10.0-cp36-cp36m-linux_aarch64.whl; rm -rf ~"

    edit_json(data_copy, "jetson.json", change)
    message = load_error(data_copy)
    assert message.startswith("jetson.json row ") and "field wheels[0].filename:" in message
