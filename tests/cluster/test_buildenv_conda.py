"""build-env in the field report's setup: a conda environment holding its own CUDA toolkit (nvcc
12.2 in $CONDA_PREFIX/bin, first on PATH) on a machine whose system toolkit is 13.0; a relative
--prefix; the cmake fix within the checkout's own range; a conda GCC for hipcc's clang."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
from tests.cluster.profiles import node
from tests.cluster.test_buildenv import KB, codes, gpu_node, recorded
from tests.cluster.test_buildenv_script import _checkout, _rocm_machine

from torchsmith.buildenv import build_script, preflight
from torchsmith.cli import main
from torchsmith.host.live import LiveHost
from torchsmith.machine import CudaToolkit

SYSTEM_TOOLKIT = "/usr/local/cuda-13.0"


def _conda_env_with_toolkit(root: Path, release: str = "12.2") -> Path:
    """What conda-forge's cuda-nvcc and cuda-cudart-dev put into an environment."""
    env = root / "env"
    (env / "bin").mkdir(parents=True)
    nvcc = env / "bin" / "nvcc"
    nvcc.write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {release}, V{release}.140'\n")
    nvcc.chmod(0o755)
    include = env / "targets" / "x86_64-linux" / "include"
    include.mkdir(parents=True)
    (include / "cuda_runtime.h").write_text("/* cudart */\n")
    (env / "lib").mkdir()
    return env


def test_the_conda_envs_toolkit_wins_over_the_systems_newer_one(tmp_path: Path) -> None:
    env = _conda_env_with_toolkit(tmp_path)
    environ = {"PATH": f"{env}/bin:/usr/local/bin:/usr/bin:/bin", "CONDA_PREFIX": str(env),
               "HOME": str(tmp_path)}
    base = node(("NVIDIA A100-SXM4-80GB", "8.0", 81920), driver="535.104.05", driver_cuda="12.2")
    machine = dataclasses.replace(base, cuda_toolkits=(CudaToolkit("13.0", SYSTEM_TOOLKIT),))
    pre = preflight(LiveHost(environ), machine, "cuda", workdir=str(tmp_path), kb=KB)
    assert pre.facts["cuda_home"] == str(env) and pre.facts["nvcc"] == "12.2", pre.findings
    assert "nvcc-newer-than-driver" not in codes(pre)
    script = tmp_path / "build.sh"
    script.write_text(build_script(pre))
    found = subprocess.run(["bash", "-c", f'source "{script}"; command -v nvcc; echo "$CUDA_HOME"'],
                           env=environ, capture_output=True, text=True, check=True).stdout.split()
    assert found == [f"{env}/bin/nvcc", str(env)]


def test_a_relative_prefix_is_written_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _conda_env_with_toolkit(tmp_path)
    monkeypatch.chdir(tmp_path)
    main(["build-env", "--cuda", "--prefix", "env", "--write", "build.sh", "--no-gpu"])
    capsys.readouterr()
    text = (tmp_path / "build.sh").read_text()
    assert f'{tmp_path}/env/lib' in text and ':env/lib' not in text and '"env/lib' not in text


# With Ninja too: buildreqs.json keeps no cmake-3.30+Ninja breakage (no public report backs one).
@pytest.mark.parametrize(("ninja", "cap"), [(True, "<4.0"), (False, "<4.0")])
def test_the_cmake_fix_stays_inside_the_checkouts_own_range(ninja: bool, cap: str) -> None:
    commands = {"cmake --version": {"returncode": 0, "stdout": "cmake version 3.20.0\n"}}
    if not ninja:
        commands["ninja --version"] = {"returncode": 127, "stdout": "", "stderr": "not found"}
    host = recorded(commands=commands, **_checkout())
    pre = preflight(host, gpu_node(), "cuda", source="/src/pytorch", kb=KB)
    fix = next(f for f in pre.findings if f.code == "cmake-too-old").fix or ""
    assert f'"cmake>=3.27,{cap}"' in fix


def test_hipcc_uses_the_conda_gcc_the_build_compiles_with_and_a_clean_rebuild_is_offered() -> None:
    prefix = "/opt/conda/envs/rocm"
    gcc = f"{prefix}/lib/gcc/x86_64-conda-linux-gnu"
    host = recorded(commands={"hipcc --version": {"returncode": 0, "stdout": "HIP version: 6.2.41133\n"}},
                    dirs={f"{prefix}/lib/gcc": ["x86_64-conda-linux-gnu"], gcc: ["13.3.0"]},
                    environ={"ROCM_PATH": "/opt/rocm", "CXX": f"{prefix}/bin/x86_64-conda-linux-gnu-c++"})
    pre = preflight(host, _rocm_machine(), "rocm", prefix=prefix, kb=KB)
    assert codes(pre)["clang-gcc-toolchain"] == "warning"
    script = build_script(pre)
    assert f'export HIPCC_COMPILE_FLAGS_APPEND="--gcc-install-dir={gcc}/13.3.0' in script
    assert "python setup.py clean" in script


def test_no_conda_gcc_no_flag() -> None:
    host = recorded(commands={"hipcc --version": {"returncode": 0, "stdout": "HIP version: 6.2.41133\n"}},
                    environ={"ROCM_PATH": "/opt/rocm"})
    pre = preflight(host, _rocm_machine(), "rocm", prefix="/opt/conda/envs/rocm", kb=KB)
    assert "HIPCC_COMPILE_FLAGS_APPEND" not in dict(pre.exports)


def test_shadowed_rocm_headers_get_the_reports_route_and_a_rocm_clean_rebuild(tmp_path: Path) -> None:
    prefix = "/opt/conda/envs/rocm"
    host = recorded(commands={"hipcc --version": {"returncode": 0, "stdout": "HIP version: 6.2.41133\n"}},
                    dirs={f"{prefix}/include": ["thrust", "omp.h"], "/opt/rocm/include": ["hip", "thrust"],
                          "/opt/rocm/include/thrust": ["version.h"]},
                    environ={"ROCM_PATH": "/opt/rocm"})
    pre = preflight(host, _rocm_machine(), "rocm", prefix=prefix, kb=KB)
    shadow = next(f for f in pre.findings if f.code == "hip-include-order")
    assert f"cp -r /opt/rocm/include {prefix}/rocm-include" in (shadow.fix or "")
    script = build_script(pre)
    assert f'export ROCM_INCLUDE="{prefix}/rocm-include"' in script
    assert f'export HIPCC_COMPILE_FLAGS_APPEND="-I{prefix}/rocm-include' in script
    assert "python tools/amd_build/build_amd.py" in script.split("Rebuilding", 1)[1]
    path = tmp_path / "rocm.sh"
    path.write_text(script)
    flags = subprocess.run(["bash", "-c", f'source "{path}"; echo "$HIPCC_COMPILE_FLAGS_APPEND"'],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert flags == f"-I{prefix}/rocm-include"
