"""Packages planned from their own published metadata (kb.pkgmeta, kb.metaread, plan.published).

The parsers run on real labels and file names; the planner on records built from real
core-metadata files (tests/plan/published_meta/, copied from the wheels named in SOURCES.txt with
their descriptions dropped) and on synthetic wheels served by the local index the tests start.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Dict, List, Sequence

import pytest
from tests.plan.plan_hosts import host
from tests.support.pkgindex import build_wheel, serve_index

from torchsmith.cli import main
from torchsmith.host.live import LiveHost
from torchsmith.kb import load_kb
from torchsmith.kb.metaread import read_package, read_unknown
from torchsmith.kb.pkgmeta import (
    IndexFile,
    PackageRecord,
    ReleaseRecord,
    glibc_of,
    parse_core_metadata,
    parse_index_page,
    python_fits,
    records_from_files,
    tag_platforms,
    torch_build,
)
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.published import torch_releases
from torchsmith.plan.resolve import resolve

META = Path(__file__).resolve().parent / "published_meta"
KB = load_kb(packaged_only=True)
H100 = ["9.0:NVIDIA H100"]
H100_HOST = str(Path(__file__).resolve().parent.parent / "hosts" / "linux-x86_64-h100-drv535.json")


# --- the general build-label parser, on labels real packages publish ------------------------

@pytest.mark.parametrize(("label", "torch", "cuda", "rocm", "cpu"), [
    ("torch_scatter-2.1.2+pt28cu128-cp311-cp311-linux_x86_64.whl", "2.8", "12.8", "", False),  # data.pyg.org
    ("pyg_lib-0.4.0+pt25cu124-cp312-cp312-linux_x86_64.whl", "2.5", "12.4", "", False),
    ("flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp311-cp311-linux_x86_64.whl", "2.8", "12", "", False),
    ("torchvision-0.23.0+cu128-cp311-cp311-manylinux_2_28_x86_64.whl", "", "12.8", "", False),
    ("torch-2.5.1+rocm6.2-cp311-cp311-linux_x86_64.whl", "", "", "6.2", False),
    ("torch-2.6.0+cpu-cp311-cp311-linux_x86_64.whl", "", "", "", True),
    ("https://download.openmmlab.com/mmcv/dist/cu121/torch2.4.0/index.html", "2.4.0", "12.1", "", False),
    ("torch_scatter-2.1.2+pt210cu130", "2.10", "13.0", "", False),
    ("xformers-0.0.28.post3+cu118", "", "11.8", "", False),
    ("vllm-0.10.1.1+cu126-cp38-abi3-manylinux1_x86_64.whl", "", "12.6", "", False),
])
def test_a_build_label_names_its_torch_and_accelerator(label: str, torch: str, cuda: str, rocm: str,
                                                      cpu: bool) -> None:
    build = torch_build(label, torch_releases(load_kb(packaged_only=True)))  # packed digits: read vs the data
    assert build is not None
    assert (build.torch, build.cuda, build.rocm, build.cpu) == (torch, cuda, rocm, cpu)


@pytest.mark.parametrize("label", ["post1", "2.5.1", "dev20250101", "torchcodec", "torch-tensorrt", "pycuda"])
def test_a_label_without_a_build_is_none(label: str) -> None:
    assert torch_build(label) is None


def test_a_build_fits_only_its_torch_series_and_cuda() -> None:
    pyg = torch_build("pt28cu128")
    assert pyg is not None
    assert pyg.fits("2.8.1", "cuda", "12.8", None)
    assert not pyg.fits("2.9.0", "cuda", "12.8", None)
    assert not pyg.fits("2.8.0", "cuda", "12.6", None)
    assert not pyg.fits("2.8.0", "cpu", None, None)
    flash = torch_build("cu12torch2.8cxx11abiTRUE")
    assert flash is not None and flash.fits("2.8.0", "cuda", "12.9", None)


@pytest.mark.parametrize(("py", "abi", "python", "fits"), [
    ("cp39", "abi3", "3.12", True), ("cp39", "abi3", "3.13t", False), ("cp311", "cp311", "3.11", True),
    ("cp311", "cp311", "3.12", False), ("cp313", "cp313t", "3.13t", True), ("cp313", "cp313", "3.13t", False),
    ("py3", "none", "3.13t", True), ("py39", "none", "3.8", False), ("cp310.cp311", "none", "3.11", True),
])
def test_python_tags_fit_as_pip_orders_them(py: str, abi: str, python: str, fits: bool) -> None:
    assert python_fits(py, abi, python) is fits


def test_platform_and_glibc_from_tags() -> None:
    assert tag_platforms("manylinux_2_17_x86_64.manylinux2014_x86_64") == ("linux-x86_64",)
    assert tag_platforms("macosx_11_0_universal2") == ("macos-arm64", "macos-x86_64")
    assert tag_platforms("macosx_10_9_x86_64") == ("macos-x86_64",)
    assert tag_platforms("macosx_11_0_arm64") == ("macos-arm64",)
    assert tag_platforms("macosx_10_9_intel") == ("macos-x86_64",)
    assert tag_platforms("any") == ("any",)
    assert glibc_of("manylinux2014_aarch64") == (2, 17)
    assert glibc_of("manylinux_2_28_x86_64") == (2, 28)


def test_core_metadata_keeps_the_torch_stack_requirements() -> None:
    requires, python = parse_core_metadata(
        (META / "torch_tensorrt-2.14.0-cp310-cp310-manylinux_2_28_x86_64.whl.metadata").read_text("utf-8"))
    assert "torch<2.15.0,>=2.14.0" in requires and python.startswith(">=")
    assert not any(r.startswith(("packaging", "typing")) for r in requires)


def test_index_pages_in_both_forms_give_the_same_files() -> None:
    url = "https://index.example/simple/demo/"
    html = ('<a href="../../files/demo-1.0-py3-none-any.whl#sha256=ab" data-requires-python="&gt;=3.9" '
            'data-core-metadata="sha256=cd">demo-1.0-py3-none-any.whl</a>'
            '<a href="../../files/demo-1.0.tar.gz">demo-1.0.tar.gz</a>')
    json_page = ('{"meta": {"api-version": "1.1"}, "name": "demo", "files": [{"filename": '
                 '"demo-1.0-py3-none-any.whl", "url": "../../files/demo-1.0-py3-none-any.whl", '
                 '"requires-python": ">=3.9", "core-metadata": {"sha256": "cd"}, "upload-time": '
                 '"2025-01-02T00:00:00Z"}, {"filename": "demo-1.0.tar.gz", '
                 '"url": "../../files/demo-1.0.tar.gz"}]}')
    from_html, from_json = parse_index_page(html, url), parse_index_page(json_page, url)
    assert [(f.filename, f.url, f.requires_python, f.core_metadata) for f in from_html] == \
        [(f.filename, f.url, f.requires_python, f.core_metadata) for f in from_json]
    assert from_html[0].url == "https://index.example/files/demo-1.0-py3-none-any.whl"
    record = records_from_files("demo", from_json, url, "2025-01-03", {})
    assert record.releases[0].sdist and record.releases[0].wheels == ("py3-none-any",)


# --- planning from records ---------------------------------------------------------------------

def _record(name: str, *releases: ReleaseRecord) -> PackageRecord:
    return PackageRecord(name, f"https://index.example/simple/{name}/", "2026-11-26", releases, live=True)


def _real(name_prefix: str, *, version: str = "") -> PackageRecord:
    """A record of one release, from a real core-metadata file of this directory."""
    path = next(META.glob(f"{name_prefix}-*.metadata"))
    wheel = path.name[: -len(".metadata")]
    parts = wheel[:-4].split("-")
    requires, python = parse_core_metadata(path.read_text("utf-8"))
    name = parts[0].replace("_", "-").lower()
    release = ReleaseRecord(version or parts[1], requires, python, ("-".join(parts[-3:]),), False, "pep658",
                            project=name)
    return _record(name, release)


def _plan(machine_kw: Dict[str, object], requirements: Sequence[str], *records: PackageRecord,
          **request_kw: object) -> Plan:
    machine = host(**machine_kw)  # type: ignore[arg-type]
    request = Request(requirements=tuple(requirements), explicit=True, published=records, **request_kw)  # type: ignore[arg-type]
    return resolve(machine, request, KB)


def _pins(plan: Plan) -> Dict[str, str]:
    return {p.name: p.version + (p.local_version or "") for p in plan.packages}


def test_a_package_that_pins_torch_constrains_torch() -> None:
    plan = _plan({"python": "3.10", "gpus": H100, "driver": "580.65.06"}, ["torch-tensorrt"],
                 _real("torch_tensorrt"))
    assert plan.ok, plan.reasons
    assert _pins(plan)["torch"].startswith("2.14.") and _pins(plan)["torch-tensorrt"] == "2.14.0"
    assert any("torch<2.15.0,>=2.14.0" in r for r in plan.reasons)


def test_the_newest_release_whose_torch_runs_here_wins() -> None:
    new = ReleaseRecord("2.0", ("torch==2.14.0",), ">=3.10", ("py3-none-any",), False, "pep658")
    old = ReleaseRecord("1.0", ("torch>=2.1",), ">=3.8", ("py3-none-any",), False, "pep658")
    plan = _plan({"python": "3.12", "gpus": H100, "driver": "580.65.06"}, ["demo-kernels"],
                 _record("demo-kernels", new, old))
    assert _pins(plan)["demo-kernels"] == "2.0" and _pins(plan)["torch"].startswith("2.14.0")
    # On Python 3.8 the newest release is excluded by Requires-Python; the old one plans beside torch.
    older = _plan({"python": "3.8", "gpus": H100, "driver": "580.65.06"}, ["demo-kernels"],
                  _record("demo-kernels", new, old))
    assert older.ok and _pins(older)["demo-kernels"] == "1.0"


def test_a_companion_whose_wheels_encode_a_build_is_paired_with_that_build() -> None:
    releases = tuple(ReleaseRecord(f"1.3.0+pt{t}cu{c}", (), ">=3.9", ("cp311-cp311-linux_x86_64",))
                     for t, c in (("29", "130"), ("29", "128"), ("28", "128"), ("28", "126")))
    plan = _plan({"python": "3.11", "gpus": ["8.6:NVIDIA GeForce RTX 3090"], "driver": "570.86.10"},
                 ["demo-scatter"], _record("demo-scatter", *releases))
    assert plan.ok, plan.reasons
    pins = _pins(plan)
    torch_series = ".".join(pins["torch"].split(".")[:2])
    label = pins["demo-scatter"].partition("+")[2]
    assert label == f"pt{torch_series.replace('.', '')}{plan.variant}"  # the same torch and CUDA


def test_only_binary_refuses_a_source_build_and_names_the_nearest_wheel() -> None:
    source = ReleaseRecord("0.9", ("torch>=2.0",), "", (), True, "none")
    wheel = ReleaseRecord("0.8", ("torch>=2.0",), "", ("cp311-cp311-manylinux_2_28_x86_64",), True, "pep658")
    record = _record("demo-ext", source, wheel)
    machine = {"python": "3.11", "gpus": H100, "driver": "580.65.06"}
    built = _plan(machine, ["demo-ext==0.9"], record)
    assert built.ok and any(p.name == "demo-ext" and p.variant == "source" for p in built.packages)
    refused = _plan(machine, ["demo-ext==0.9"], record, only_binary=True)
    assert refused.status == "no-solution"
    assert "--only-binary" in " ".join(refused.reasons) and "demo-ext==0.8" in " ".join(refused.reasons)


def test_a_package_that_names_no_torch_is_pinned_and_said_so() -> None:
    plan = _plan({"python": "3.11"}, ["torch", "torchao"], _real("torchao"))
    assert plan.ok and "torchao" in _pins(plan)
    assert any("torchao" in r and "names no torch" in r for r in plan.reasons)


def test_a_package_whose_name_encodes_cuda_needs_a_cuda_torch_of_that_major() -> None:
    plan = _plan({"python": "3.10", "gpus": H100, "driver": "580.65.06"}, ["spconv-cu120"],
                 _real("spconv_cu120"))
    assert plan.ok and plan.variant is not None and plan.variant.startswith("cu12")


def test_without_metadata_or_an_index_the_plan_says_it_could_not_check() -> None:
    plan = _plan({"python": "3.11", "gpus": H100, "driver": "580.65.06"}, ["totally-unknown-pkg"],
                 unread=(("totally-unknown-pkg", "no package index is configured"),))
    assert plan.ok
    assert any("could not check totally-unknown-pkg" in w and "no package index" in w for w in plan.warnings)
    # Unchecked is not torch-free: the torch half is planned, the package installed after it.
    assert "torch" in _pins(plan) and plan.variant is not None and plan.variant.startswith("cu")
    assert plan.unplanned == ("totally-unknown-pkg",)


def test_a_stale_table_gives_way_to_the_snapshot() -> None:
    # downstream.json stops at vllm 0.11.0; the snapshot of vllm's index has newer releases.
    plan = _plan({"python": "3.12", "gpus": H100, "driver": "580.65.06"}, ["vllm"])
    assert plan.ok
    assert tuple(int(x) for x in _pins(plan)["vllm"].split(".")[:2]) > (0, 11)
    assert any("vllm" in r and "snapshot of" in r for r in plan.reasons)


# --- live, from the local index -------------------------------------------------------------

def _serve_real(root: Path, names: List[str]) -> None:
    """Synthetic wheels carrying real core metadata, each with its PEP 658 file beside it."""
    for prefix in names:
        path = next(META.glob(f"{prefix}-*.metadata"))
        wheel_name = path.name[: -len(".metadata")]
        parts = wheel_name[:-4].split("-")
        requires, python = parse_core_metadata(path.read_text("utf-8"))
        built = build_wheel(root / "simple", parts[0], parts[1], requires=requires, tag="-".join(parts[-3:]),
                            requires_python=python or None)
        built.with_name(built.name + ".metadata").write_text(path.read_text("utf-8"), encoding="utf-8")


@pytest.mark.slow
def test_unknown_packages_are_read_from_the_configured_index_never_their_wheels(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _serve_real(tmp_path, ["torch_tensorrt", "liger_kernel"])
    with serve_index(tmp_path) as server:
        index = server.index_url("simple")
        fetch = LiveHost().fetch_url
        record = read_package(fetch, index, "torch-tensorrt", today="2026-11-26")
        assert record is not None and record.live and record.releases[0].metadata == "pep658"
        assert record.releases[0].requirement("torch") == "<2.15.0,>=2.14.0"
        records, unread = read_unknown(["liger-kernel", "no-such-thing"], (), fetch, [(index, "test")])
        assert [r.name for r in records] == ["liger-kernel"] and unread[0][0] == "no-such-thing"
        monkeypatch.setenv("PIP_INDEX_URL", index)
        code = main(["plan", "--json", "--no-confirm", "--host", H100_HOST, "torch-tensorrt", "liger-kernel"])
        out = capsys.readouterr().out
        assert code == 0, out
        plan = json.loads(out)["data"]
        pins = {p["requirement"] for p in plan["packages"]}
        assert pins >= {"torch-tensorrt==2.14.0", "liger-kernel==0.8.5"}
        assert any("read now" in r for r in plan["reasons"])
        # Metadata files only, never a wheel.
        assert not server.fetched("torch_tensorrt") and not server.fetched("liger_kernel")
        assert any(p.endswith(".whl.metadata") for p in server.requests)


def test_an_unreachable_index_is_said_not_raised(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")  # the discard port: refused
    code = main(["plan", "--host", H100_HOST, "some-unknown-kernels"])
    captured = capsys.readouterr()
    assert code == 0 and "Traceback" not in captured.err
    assert "could not check some-unknown-kernels" in captured.err + captured.out
    assert "could not be read" in captured.err + captured.out


@pytest.mark.parametrize("index", ["", "http://127.0.0.1:9/simple/"])  # none configured; one that refuses
def test_an_unchecked_package_still_gets_the_torch_half_and_a_door(
        index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "PIP_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no pip.conf / uv.toml of this machine
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    if index:
        monkeypatch.setenv("PIP_INDEX_URL", index)
    code = main(["plan", "--json", "--host", H100_HOST, "some-unknown-kernels"])
    plan = json.loads(capsys.readouterr().out)["data"]
    assert code == 0 and plan["status"] == "ok"
    pins = {p["name"]: p for p in plan["packages"]}
    assert pins["torch"]["variant"].startswith("cu")  # the H100 host's CUDA build, as without the package
    assert plan["unplanned"] == ["some-unknown-kernels"]
    warning = next(w for w in plan["warnings"] if "could not check some-unknown-kernels" in w)
    door = "reads it live once the index answers" if index else "set PIP_INDEX_URL"
    assert door in warning


def test_records_round_trip_through_the_snapshot_form() -> None:
    record = _record("demo", ReleaseRecord("1.0+pt28cu128", ("torch==2.8.0",), ">=3.9",
                                           ("cp311-cp311-linux_x86_64",), True, "pep658", "2025-01-01"))
    again = PackageRecord.from_json(record.to_json(), live=True)
    assert again == dataclasses.replace(record)
    assert IndexFile("a-1.0.tar.gz", "u").core_metadata is False


def test_with_no_index_url_the_reason_names_what_is_missing() -> None:
    """A pip.conf with only extra-index-url or find-links has package sources: the reason says
    index-url is what is missing, not that no package index is configured."""
    _records, unread = read_unknown(["whisperx"], (), lambda url, timeout: "", [])
    assert unread and "no index-url is configured for pip or uv" in unread[0][1]
    assert "no package index is configured" not in unread[0][1]
