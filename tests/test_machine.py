"""The host profile: JSON round trip, forward compatibility, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.errors import ProfileError
from torchsmith.machine import (
    PROFILE_SCHEMA,
    AmdGpu,
    JetsonInfo,
    Machine,
    NvidiaGpu,
    NvidiaInfo,
    OsInfo,
    ProbeNote,
    PythonInfo,
    RocmInfo,
)
from torchsmith.probe import load_machine

FULL = Machine(
    os=OsInfo(system="linux", arch="x86_64", distro="ubuntu", distro_version="22.04", glibc="2.35"),
    python=PythonInfo(version="3.11.7", executable="/usr/bin/python3"),
    nvidia=NvidiaInfo(
        driver_version="535.104.05", driver_version_source="/proc/driver/nvidia/version",
        driver_cuda="12.2", driver_cuda_source="nvml",
        gpus=(NvidiaGpu(0, "Tesla V100-SXM2-32GB", "7.0", 32768, "GPU-1", "00000000:00:04.0"),
              NvidiaGpu(1, "NVIDIA A100-SXM4-40GB", "8.0", 40960, "GPU-2")),
        visible=(1,),
    ),
    rocm=RocmInfo(version="6.2", gpus=(AmdGpu("Radeon RX 7900 XTX", "gfx1100"),)),
    jetson=JetsonInfo(l4t="35.2.1"),
    notes=(ProbeNote("nvidia-smi", "not found"),),
    overridden=("driver",),
)


def test_profile_round_trips_through_json() -> None:
    text = json.dumps(FULL.to_json())
    assert Machine.from_json(json.loads(text)) == FULL


def test_profile_names_its_kind_and_schema() -> None:
    data = FULL.to_json()
    assert data["kind"] == "torchsmith.host-profile"
    assert data["schema"] == PROFILE_SCHEMA


def test_visible_gpus_follow_cuda_visible_devices() -> None:
    assert FULL.nvidia is not None
    assert [g.name for g in FULL.nvidia.visible_gpus] == ["NVIDIA A100-SXM4-40GB"]
    assert FULL.nvidia.gpus[0].arch == "sm_70"


def test_platform_token() -> None:
    assert FULL.platform == "linux-x86_64"
    wsl = Machine(os=OsInfo(system="linux", arch="x86_64", wsl=True))
    assert wsl.platform == "wsl-x86_64"


def test_unknown_keys_from_a_newer_minor_profile_are_ignored() -> None:
    data = FULL.to_json()
    data["future_field"] = {"x": 1}
    data["os"]["future_os_field"] = 1
    assert Machine.from_json(data) == FULL


def test_the_whole_probe_envelope_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "host.json"
    path.write_text(json.dumps({"command": "probe", "data": FULL.to_json()}))
    assert load_machine(str(path)) == FULL


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"kind": "something-else"}', "not a torchsmith host profile"),
        ('{"kind": "torchsmith.host-profile", "schema": 999}', "newer than this torchsmith"),
        ('{"kind": "torchsmith.host-profile", "schema": 1, "nvidia": {"gpus": [{"bogus": 1}]}}',
         "malformed"),
        ('{"kind": "torchsmith.host-profile", "schema": 1, "os": 7}', "malformed"),
    ],
)
def test_bad_profiles_give_one_line_errors(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "host.json"
    path.write_text(content)
    with pytest.raises(ProfileError) as info:
        load_machine(str(path))
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_profile_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="cannot read host profile"):
        load_machine(str(tmp_path / "absent.json"))
