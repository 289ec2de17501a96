"""Every recorded machine in tests/hosts gives the reviewed profile, valid against the schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import jsonschema
import pytest

import torchsmith
from torchsmith.host.recorded import load_capture
from torchsmith.machine import Machine
from torchsmith.probe import probe

HOSTS = Path(__file__).resolve().parents[1] / "hosts"
CAPTURES = sorted(p for p in HOSTS.glob("*.json") if not p.name.endswith(".expected.json"))
SCHEMA_PATH = Path(torchsmith.__file__).parent / "schema" / "host-profile.schema.json"


def _profile(slug: str) -> Machine:
    return probe(load_capture(str(HOSTS / f"{slug}.json")))


def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_there_are_at_least_fifteen_machines_each_with_sources() -> None:
    assert len(CAPTURES) >= 15
    for path in CAPTURES:
        capture: Dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        assert capture["slug"] == path.stem
        assert capture["sources"] and capture["description"]


@pytest.mark.parametrize("path", CAPTURES, ids=[p.stem for p in CAPTURES])
def test_capture_gives_the_reviewed_profile(path: Path) -> None:
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text(encoding="utf-8"))
    profile = probe(load_capture(str(path))).to_json()
    assert profile == expected
    assert Machine.from_json(json.loads(json.dumps(profile))).to_json() == profile


@pytest.mark.parametrize("path", CAPTURES, ids=[p.stem for p in CAPTURES])
def test_expected_profile_matches_the_shipped_schema(path: Path) -> None:
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text(encoding="utf-8"))
    errors = [e.message for e in _validator().iter_errors(expected)]
    assert errors == []


def test_schema_rejects_what_is_not_a_profile() -> None:
    validator = _validator()
    good = _profile("linux-x86_64-h100-drv535").to_json()
    assert validator.is_valid(good)
    bad_gpu = {"index": 0, "name": "x", "compute_capability": "86"}
    for broken in (
        {**good, "schema": 2},
        {**good, "surprise": 1},
        {**good, "nvidia": {**good["nvidia"], "gpus": [bad_gpu]}},
    ):
        assert not validator.is_valid(broken)


def _notes(machine: Machine) -> str:
    return "\n".join(f"[{n.source}] {n.problem}" for n in machine.notes)


# What each machine must say, checked against the cited sources by hand; the snapshot above
# pins everything else.
def test_pascal_desktop() -> None:
    m = _profile("linux-x86_64-gtx1080ti-drv460")
    assert m.nvidia is not None
    assert (m.nvidia.driver_version, m.nvidia.driver_cuda) == ("460.32.03", "11.2")
    assert [g.arch for g in m.nvidia.gpus] == ["sm_61", "sm_61"]


def test_mixed_server_in_a_slurm_job_sees_only_its_gpus() -> None:
    m = _profile("linux-x86_64-v100-a100-drv580-slurm")
    assert m.nvidia is not None
    assert [g.compute_capability for g in m.nvidia.gpus] == ["7.0", "8.0", "8.0"]
    assert [g.name for g in m.nvidia.visible_gpus] == ["NVIDIA A100-SXM4-40GB"] * 2
    assert m.scheduler is not None and (m.scheduler.kind, m.scheduler.job_id) == ("slurm", "4242")
    assert m.python.virtualenv == "/home/ana/.venv"
    assert "hides 1 of 3" in _notes(m)


@pytest.mark.parametrize(("slug", "cc", "driver", "cuda"), [
    ("linux-x86_64-h100-drv535", "9.0", "535.129.03", "12.2"),
    ("linux-x86_64-rtx5090-drv570", "12.0", "570.153.02", "12.8"),
    ("linux-x86_64-b200-drv610-container", "10.0", "610.43.02", "13.3"),
    ("wsl2-rtx5090-drv572", "12.0", "572.70", "12.8"),
    ("windows-gtx1080ti-drv531", "6.1", "531.14", "12.1"),
    ("linux-aarch64-gb200-drv570", "10.0", "570.172.08", "12.8"),
])
def test_discrete_gpus(slug: str, cc: str, driver: str, cuda: str) -> None:
    m = _profile(slug)
    assert m.nvidia is not None and m.nvidia.gpus
    assert {g.compute_capability for g in m.nvidia.gpus} == {cc}
    assert (m.nvidia.driver_version, m.nvidia.driver_cuda) == (driver, cuda)
    assert m.jetson is None


def test_b200_reads_the_r610_banner_labels_when_nvml_and_libcuda_are_absent() -> None:
    m = _profile("linux-x86_64-b200-drv610-container")
    assert m.nvidia is not None
    assert (m.nvidia.driver_cuda_source, m.nvidia.gpus_source) == ("nvidia-smi", "nvidia-smi --query-gpu")
    assert m.os.container == "docker"


def test_gb200_is_an_sbsa_server_not_a_jetson() -> None:
    m = _profile("linux-aarch64-gb200-drv570")
    assert m.platform == "linux-aarch64"
    assert m.jetson is None and m.nvidia is not None and len(m.nvidia.gpus) == 4


def test_wsl_and_windows_platforms() -> None:
    wsl = _profile("wsl2-rtx5090-drv572")
    assert wsl.platform == "wsl-x86_64" and wsl.os.wsl_libcuda is True
    assert _profile("windows-gtx1080ti-drv531").platform == "windows-x86_64"


@pytest.mark.parametrize(("slug", "needle"), [
    ("linux-x86_64-no-devices-drv575", "no NVIDIA device was found"),
    ("linux-x86_64-smi-missing-drv470", "nvidia-smi not found on PATH"),
    ("linux-x86_64-smi-hang-drv530", "NVML hung, so the NVIDIA driver looks wedged"),
    ("linux-x86_64-driver-mismatch-drv580", "Driver/library version mismatch"),
    ("bad-truncated-smi-csv", "skipped 1 line(s)"),
    ("bad-garbage-proc-version", "no driver version could be read"),
])
def test_broken_sources_become_notes(slug: str, needle: str) -> None:
    assert needle in _notes(_profile(slug))


def test_broken_drivers_still_report_the_driver_version() -> None:
    for slug, driver in (("linux-x86_64-no-devices-drv575", "575.51.03"),
                         ("linux-x86_64-smi-missing-drv470", "470.223.02"),
                         ("linux-x86_64-smi-hang-drv530", "530.41.03"),
                         ("linux-x86_64-driver-mismatch-drv580", "580.173.02")):
        m = _profile(slug)
        assert m.nvidia is not None and m.nvidia.driver_version == driver, slug
        assert m.nvidia.gpus == ()


def test_truncated_csv_keeps_the_complete_row() -> None:
    m = _profile("bad-truncated-smi-csv")
    assert m.nvidia is not None
    assert [g.index for g in m.nvidia.gpus] == [0]
    assert m.nvidia.driver_version == "535.129.03"


@pytest.mark.parametrize(("slug", "module", "cc", "l4t", "jetpack", "cuda"), [
    ("jetson-nano-jp4.6.6", "Nano", "5.3", "32.7.6", None, "10.2"),
    ("jetson-xavier-jp5.1", "AGX Xavier", "7.2", "35.2.1", None, "11.4"),
    ("jetson-orin-jp6.2", "AGX Orin", "8.7", "36.4.3", "6.2", "12.6"),
])
def test_jetsons(slug: str, module: str, cc: str, l4t: str, jetpack: str, cuda: str) -> None:
    m = _profile(slug)
    assert m.jetson is not None
    j = m.jetson
    assert (j.module, j.compute_capability, j.l4t, j.jetpack, j.cuda) == (module, cc, l4t, jetpack, cuda)
    assert m.platform == "linux-aarch64" and m.has_nvidia_gpu
    # The nvgpu iGPU is described by the Jetson facts; nvidia-smi's "Orin (nvgpu)" is not a dGPU.
    assert m.nvidia is None


@pytest.mark.parametrize(("slug", "gfx", "version", "kfd"), [
    ("linux-x86_64-rx7900xtx-rocm6.1", ["gfx1100"], "6.1.0", True),
    ("linux-x86_64-mi300x-rocm6.3", ["gfx942"], "6.3.3", True),
    ("linux-x86_64-rx7600xt-rocm6.2-override", ["gfx1102", "gfx1102"], "6.2.1", None),
])
def test_amd(slug: str, gfx: List[str], version: str, kfd: Optional[bool]) -> None:
    m = _profile(slug)
    assert m.rocm is not None
    assert [g.gfx for g in m.rocm.gpus] == gfx
    assert (m.rocm.version, m.rocm.kfd_access) == (version, kfd)
    assert m.nvidia is None


def test_rocminfo_failing_falls_back_to_the_enumerator_and_explains_kfd() -> None:
    m = _profile("linux-x86_64-rx7600xt-rocm6.2-override")
    assert m.rocm is not None and m.rocm.hsa_override_gfx_version == "11.0.0"
    notes = _notes(m)
    assert "HSA_STATUS_ERROR_OUT_OF_RESOURCES" in notes and "render" in notes
    assert "gfx1100" in notes


def test_thor_has_both_jetson_and_driver_facts() -> None:
    m = _profile("jetson-thor-jp7.2")
    assert m.jetson is not None and m.nvidia is not None
    assert (m.jetson.module, m.jetson.compute_capability, m.jetson.l4t) == ("Thor", "11.0", "39.2.0")
    assert m.jetson.model == "NVIDIA Jetson AGX Thor Developer Kit"
    assert (m.nvidia.driver_version, m.nvidia.driver_cuda) == ("595.78", "13.2")
    assert [g.compute_capability for g in m.nvidia.gpus] == ["11.0"]


def test_intel_arc_from_pci() -> None:
    m = _profile("linux-x86_64-arc-a770")
    assert [(g.name, g.pci_id) for g in m.intel_gpus] == [("Intel Arc A770", "8086:56a0")]
    assert (m.nvidia, m.rocm) == (None, None)


@pytest.mark.parametrize(("slug", "silicon", "rosetta", "mps", "platform"), [
    ("macos-arm64-m1pro", True, False, True, "macos-arm64"),
    ("macos-x86_64-intel", False, False, False, "macos-x86_64"),
    ("macos-rosetta-m1pro", True, True, False, "macos-x86_64"),
])
def test_macs(slug: str, silicon: bool, rosetta: bool, mps: bool, platform: str) -> None:
    m = _profile(slug)
    assert m.apple is not None
    assert (m.apple.apple_silicon, m.apple.rosetta, m.apple.mps_capable) == (silicon, rosetta, mps)
    assert m.platform == platform
    if rosetta:
        assert "2.2.2" in _notes(m)


def test_cpu_only_machine_has_no_gpu_facts() -> None:
    m = _profile("linux-x86_64-cpu-only")
    assert (m.nvidia, m.jetson, m.rocm, m.intel_gpus, m.apple) == (None, None, None, (), None)
    assert not m.has_nvidia_gpu
