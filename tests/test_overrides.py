"""Describing another machine: flags and TORCHSMITH_* variables."""

from __future__ import annotations

import pytest

from torchsmith.errors import UsageError
from torchsmith.machine import Machine, NvidiaGpu, NvidiaInfo, OsInfo, PythonInfo
from torchsmith.overrides import (
    Overrides,
    apply_overrides,
    build_overrides,
    overrides_from_env,
    parse_gpu_spec,
)

LOGIN_NODE = Machine(
    os=OsInfo(system="linux", arch="x86_64"),
    python=PythonInfo(version="3.11.7"),
)


@pytest.mark.parametrize("spec", ["8.6", "sm_86", "86", "SM86", "8.6:RTX 3090"])
def test_gpu_specs(spec: str) -> None:
    gpu = parse_gpu_spec(spec)
    assert gpu.compute_capability == "8.6"
    assert gpu.source == "override"


def test_gpu_spec_names_and_new_majors() -> None:
    assert parse_gpu_spec("12.0:RTX 5090").name == "RTX 5090"
    assert parse_gpu_spec("sm_120").compute_capability == "12.0"


@pytest.mark.parametrize("spec", ["", "abc", "8.6.1", "sm_", "999"])
def test_bad_gpu_specs_are_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError):
        parse_gpu_spec(spec)


def test_describe_a_compute_node_from_a_login_node() -> None:
    overrides = build_overrides(driver="535.104.05", gpus=(parse_gpu_spec("8.0:A100"),),
                                python_version="3.10")
    node = apply_overrides(LOGIN_NODE, overrides)
    assert node.nvidia is not None
    assert node.nvidia.driver_version == "535.104.05"
    assert node.nvidia.driver_version_source == "override"
    assert [g.compute_capability for g in node.nvidia.gpus] == ["8.0"]
    assert node.python.version == "3.10"
    assert set(node.overridden) == {"driver", "gpus", "python"}


def test_no_gpu_removes_every_accelerator() -> None:
    gpu_box = Machine(nvidia=NvidiaInfo(driver_version="550.1", gpus=(NvidiaGpu(0, "x", "8.6"),)))
    plain = apply_overrides(gpu_box, Overrides(no_gpu=True))
    assert plain.nvidia is None and not plain.has_nvidia_gpu


def test_a_new_driver_forgets_the_old_driver_cuda() -> None:
    box = Machine(nvidia=NvidiaInfo(driver_version="550.1", driver_cuda="12.4"))
    moved = apply_overrides(box, Overrides(driver="470.82.01"))
    assert moved.nvidia is not None and moved.nvidia.driver_cuda is None


def test_environment_variables_and_empty_means_absent() -> None:
    env = {"TORCHSMITH_GPUS": "7.0:V100, 10.0:B200", "TORCHSMITH_DRIVER": "",
           "TORCHSMITH_PLATFORM": "wsl-x86_64", "TORCHSMITH_ROCM_GFX": "gfx1100"}
    overrides = overrides_from_env(env)
    assert overrides.driver == ""
    assert overrides.gpus is not None
    assert [g.name for g in overrides.gpus] == ["V100", "B200"]
    machine = apply_overrides(LOGIN_NODE, overrides)
    assert machine.platform == "wsl-x86_64"
    assert machine.nvidia is not None and machine.nvidia.driver_version is None
    assert machine.rocm is not None and machine.rocm.gpus[0].gfx == "gfx1100"


def test_flags_win_over_environment() -> None:
    env = overrides_from_env({"TORCHSMITH_DRIVER": "470.1"})
    flags = build_overrides(driver="550.54.14")
    assert flags.merged_over(env).driver == "550.54.14"
    assert Overrides().merged_over(env).driver == "470.1"


def test_jetson_override_implies_linux_aarch64() -> None:
    jetson = apply_overrides(LOGIN_NODE, Overrides(jetson="35.2.1"))
    assert jetson.platform == "linux-aarch64"
    assert jetson.jetson is not None and jetson.jetson.l4t == "35.2.1"


@pytest.mark.parametrize(
    "values",
    [{"platform": "solaris-sparc"}, {"driver": "latest"}, {"python_version": "three"},
     {"rocm_gfx": ("navi31",)}],
)
def test_bad_override_values(values: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(UsageError):
        build_overrides(**values)


def test_a_free_threaded_python_is_a_version_too() -> None:
    machine = apply_overrides(LOGIN_NODE, build_overrides(python_version="3.13t"))
    assert machine.python.version == "3.13" and machine.python.free_threaded
    plain = apply_overrides(machine, build_overrides(python_version="3.12"))
    assert plain.python.version == "3.12" and not plain.python.free_threaded
    with pytest.raises(UsageError):
        build_overrides(python_version="3.t")


def test_glibc_is_said_only_for_a_linux_target() -> None:
    """glibc decides Linux wheels only: a Windows or macOS target gets no glibc note."""
    here = Machine(os=OsInfo(system="linux", arch="x86_64", glibc="2.36"),
                   python=PythonInfo(version="3.11.7"))
    for platform, said in (("windows-x86_64", False), ("macos-arm64", False), ("linux-aarch64", True)):
        node = apply_overrides(here, build_overrides(platform=platform, python_version="3.12"))
        assert any("glibc" in note.problem for note in node.notes) is said, platform


def test_a_described_jetson_is_not_said_to_have_this_machines_glibc() -> None:
    """Its glibc comes with its L4T (apply_overrides drops this one's): no "assumed 2.36" note."""
    here = Machine(os=OsInfo(system="linux", arch="x86_64", glibc="2.36"),
                   python=PythonInfo(version="3.11.7"))
    node = apply_overrides(here, build_overrides(jetson="36.4.0"))
    assert node.os.glibc is None
    assert not any("glibc" in note.problem for note in node.notes)


@pytest.mark.parametrize("facts", [{"gpus": (parse_gpu_spec("8.6"),)}, {"driver": "580.65.06"},
                                   {"jetson": "36.4.0"}, {"rocm_gfx": ("gfx1100",)}])
def test_no_gpu_with_a_gpu_fact_is_a_usage_error(facts: dict) -> None:  # type: ignore[type-arg]
    """`--no-gpu --gpu 8.6` planned CUDA silently: which machine is meant cannot be guessed."""
    with pytest.raises(UsageError, match="--no-gpu contradicts"):
        build_overrides(no_gpu=True, **facts)
    assert build_overrides(no_gpu=True, driver="").no_gpu  # "" is "no driver": no contradiction
