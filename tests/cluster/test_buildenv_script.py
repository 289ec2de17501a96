"""build-env: the cmake range of a checkout, the driver rule, MAGMA, ROCm, and the script run for real
(bash -n, shellcheck, and a CMake/CUDA project configured with this machine's nvcc 13.0 and cmake).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest
from tests.cluster.profiles import node
from tests.cluster.test_buildenv import KB, REAL_TOOLKIT, codes, gpu_node, recorded
from tests.support.shell import shellcheck_or_skip

from torchsmith.buildenv import build_script, preflight
from torchsmith.cli import main
from torchsmith.machine import AmdGpu, RocmInfo

CHECKOUT = "/src/pytorch"
OLD_PROTOBUF = "cmake_minimum_required(VERSION 3.1.3)\nproject(protobuf C CXX)\n"


def _checkout(pyproject: str = '[build-system]\nrequires = ["setuptools", "cmake>=3.27", "ninja"]\n',
              third_party: bool = True) -> Dict[str, Any]:
    files = {f"{CHECKOUT}/pyproject.toml": pyproject,
             f"{CHECKOUT}/CMakeLists.txt": "cmake_minimum_required(VERSION 3.18 FATAL_ERROR)\n"}
    dirs: Dict[str, List[str]] = {f"{CHECKOUT}/third_party": ["protobuf", "fmt"] if third_party else ["fmt"]}
    files[f"{CHECKOUT}/third_party/fmt/CMakeLists.txt"] = "cmake_minimum_required(VERSION 3.8...3.28)\n"
    if third_party:
        files[f"{CHECKOUT}/third_party/protobuf/cmake/CMakeLists.txt"] = OLD_PROTOBUF
    return {"files": files, "dirs": dirs}


def _cmake(version: str) -> Dict[str, Any]:
    return {"cmake --version": {"returncode": 0, "stdout": f"cmake version {version}\n"}}


def test_cmake_4_against_a_checkout_with_old_third_party_is_an_error_the_script_fixes() -> None:
    host = recorded(commands=_cmake("4.0.2"), **_checkout())
    pre = preflight(host, gpu_node(), "cuda", source=CHECKOUT, kb=KB)
    bad = next(f for f in pre.findings if f.code == "cmake-too-new")
    assert bad.severity == "error" and "third_party/protobuf/cmake/CMakeLists.txt (3.1.3)" in bad.message
    assert "fmt" not in bad.message  # 3.8 is fine
    assert 'export CMAKE_POLICY_VERSION_MINIMUM="3.5"' in build_script(pre)
    # A release whose third_party all declares >= 3.5 configures with cmake 4.
    fixed = preflight(recorded(commands=_cmake("4.0.2"), **_checkout(third_party=False)), gpu_node(), "cuda",
                      source=CHECKOUT, kb=KB)
    assert "cmake-too-new" not in codes(fixed) and codes(fixed)["cmake"] == "ok"
    # The user already set the policy floor: nothing to fix.
    policy = recorded(commands=_cmake("4.0.2"), environ={"CMAKE_POLICY_VERSION_MINIMUM": "3.5"},
                      **_checkout())
    assert "cmake-too-new" not in codes(preflight(policy, gpu_node(), "cuda", source=CHECKOUT, kb=KB))


def test_cmake_floor_comes_from_the_checkout() -> None:
    old = _checkout(pyproject='[build-system]\nrequires = ["cmake>=3.18"]\n')
    pre = preflight(recorded(commands=_cmake("3.22.1"), **old), gpu_node(), "cuda", source=CHECKOUT, kb=KB)
    assert pre.facts["cmake_min"] == "3.18" and codes(pre)["cmake"] == "ok"
    new = preflight(recorded(commands=_cmake("3.22.1"), **_checkout()), gpu_node(), "cuda", source=CHECKOUT,
                    kb=KB)
    assert new.facts["cmake_min"] == "3.27" and codes(new)["cmake-too-old"] == "error"
    assert "pyproject.toml" in new.facts["cmake_min_source"]


def test_cmake_4_without_a_checkout_warns_and_no_unsourced_ninja_warning() -> None:
    pre = preflight(recorded(commands=_cmake("4.1.0")), gpu_node(), "cuda", source="/nowhere", kb=KB)
    assert codes(pre)["cmake-range-unchecked"] == "warning"
    # cmake 3.30+ with Ninja: a claim no public report backs was dropped from the data, so no warning
    ninja = preflight(recorded(commands=_cmake("3.31.6")), gpu_node(), "cuda", source="/nowhere", kb=KB)
    assert "cmake-ninja" not in codes(ninja)
    no_ninja = preflight(recorded(commands={**_cmake("3.31.6"), "ninja --version": {"returncode": 127}}),
                         gpu_node(), "cuda", source="/nowhere", kb=KB)
    assert "cmake-ninja" not in codes(no_ninja)


def test_cuda_13_toolkit_on_a_12_driver_is_an_error_from_the_driver_version_alone(
        capsys: pytest.CaptureFixture[str]) -> None:
    host = recorded(toolkit="/usr/local/cuda-13.0", cuda="13.0")
    pre = preflight(host, gpu_node(driver="535.183.01", driver_cuda=""), "cuda", kb=KB)
    bad = next(f for f in pre.findings if f.code == "nvcc-newer-than-driver")
    assert bad.severity == "error" and "CUDA 12.2" in bad.message  # 535's CUDA, from plan's table
    minor = preflight(recorded(toolkit="/usr/local/cuda-12.8", cuda="12.8"),
                      gpu_node(driver="535.183.01", driver_cuda=""), "cuda", kb=KB)
    assert codes(minor)["nvcc-newer-than-driver"] == "warning"


def test_magma_fix_never_names_a_conda_package_that_does_not_exist() -> None:
    new = preflight(recorded(toolkit="/usr/local/cuda-13.0", cuda="13.0"), gpu_node(), "cuda", kb=KB)
    fix = next(f.fix for f in new.findings if f.code == "magma-missing") or ""
    assert "magma-cuda130" not in fix and "install_magma_conda.sh 13.0" in fix
    old = preflight(recorded(toolkit="/usr/local/cuda-12.6", cuda="12.6"), gpu_node(), "cuda", kb=KB)
    assert "conda install -c pytorch magma-cuda126" in (
        next(f.fix for f in old.findings if f.code == "magma-missing") or "")


def test_the_cpath_fix_really_sets_cpath(tmp_path: Path) -> None:
    prefix = "/opt/conda/envs/build"
    host = recorded(environ={"CPATH": "/usr/include", "LIBRARY_PATH": "/usr/lib64"})
    script = build_script(preflight(host, gpu_node(), "cuda", prefix=prefix, kb=KB))
    path = tmp_path / "env.sh"
    path.write_text(script)
    shown = subprocess.run(["bash", "-c", f'CPATH=/usr/include LIBRARY_PATH=/usr/lib64; source "{path}"; '
                            'echo "$CPATH|$LIBRARY_PATH"'], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == f"{prefix}/include:/usr/include|{prefix}/lib:/usr/lib64"


def _rocm_machine() -> Any:
    return dataclasses.replace(node(None), rocm=RocmInfo(version="6.2.4", gpus=(AmdGpu("MI300X", "gfx942"),)))


def test_rocm_script_switches_platform_library_order_and_clashes(tmp_path: Path) -> None:
    prefix = "/opt/conda/envs/rocm"
    gcc = "/usr/lib/gcc/x86_64-linux-gnu"
    host = recorded(commands={"hipcc --version": {"returncode": 0, "stdout": "HIP version: 6.2.41133\n"}},
                    dirs={f"{prefix}/include": ["thrust", "omp.h", "python3.11"],
                          "/opt/rocm/include": ["hip", "thrust"], "/opt/rocm/include/thrust": ["version.h"],
                          gcc: ["12", "13"], f"{gcc}/12": ["libstdc++.so", "crtbegin.o"],
                          f"{gcc}/13": ["crtbegin.o"]},
                    environ={"ROCM_PATH": "/opt/rocm"})
    pre = preflight(host, _rocm_machine(), "rocm", prefix=prefix, kb=KB)
    found = codes(pre)
    shadow = next(f for f in pre.findings if f.code == "hip-include-order")
    assert "omp.h, thrust" in shadow.message and "ROCm has its own: thrust" in shadow.message
    toolchain = next(f for f in pre.findings if f.code == "clang-gcc-toolchain")
    assert found["clang-gcc-toolchain"] == "error" and f"{gcc}/13" in toolchain.message
    script = build_script(pre)
    for line in ("export USE_MKLDNN=0", "export USE_FBGEMM=0", 'export HIP_PLATFORM="amd"',
                 f'export HIPCC_COMPILE_FLAGS_APPEND="--gcc-install-dir={gcc}/12'):
        assert line in script
    path = tmp_path / "rocm.sh"
    path.write_text(script)
    command = f'LD_LIBRARY_PATH=/usr/lib; source "{path}"; echo "$LD_LIBRARY_PATH"'
    out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=True).stdout.strip()
    assert out == f"/opt/rocm/lib:{prefix}/lib:/usr/lib"  # ROCm's libraries first


def _shellcheck() -> str:
    return shellcheck_or_skip()


def test_every_script_passes_bash_n_and_shellcheck(tmp_path: Path) -> None:
    prefix = "/opt/conda/envs/build"
    cuda = preflight(recorded(commands=_cmake("4.0.2"), environ={"CPATH": "/usr/include"}, **_checkout()),
                     gpu_node(), "cuda", prefix=prefix, source=CHECKOUT, kb=KB)
    rocm = preflight(recorded(commands={"hipcc --version": {"returncode": 0, "stdout": "HIP 6.2\n"}}),
                     _rocm_machine(), "rocm", prefix=prefix, kb=KB)
    tool = _shellcheck()
    for name, pre in (("cuda.sh", cuda), ("rocm.sh", rocm)):
        path = tmp_path / name
        path.write_text(build_script(pre))
        assert subprocess.run(["bash", "-n", str(path)], check=False).returncode == 0
        checked = subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)
        assert checked.returncode == 0, checked.stdout


PROJECT = """\
cmake_minimum_required(VERSION 3.18)
project(probe LANGUAGES CXX CUDA)
if(DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  string(REPLACE "." "" archs "$ENV{TORCH_CUDA_ARCH_LIST}")
  set(CMAKE_CUDA_ARCHITECTURES ${archs})
endif()
message(STATUS "probe nvcc=${CMAKE_CUDA_COMPILER} version=${CMAKE_CUDA_COMPILER_VERSION}")
message(STATUS "probe archs=${CMAKE_CUDA_ARCHITECTURES}")
add_executable(probe main.cu)
"""


@pytest.mark.slow  # nvcc's compiler detection: ~30 s on a busy 2-core machine
@pytest.mark.skipif(not os.path.exists(f"{REAL_TOOLKIT}/bin/nvcc") or shutil.which("cmake") is None,
                    reason="needs this machine's CUDA 13.0 toolkit and cmake")
def test_the_script_configures_a_real_cmake_cuda_project(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "build-env.sh"
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH", "CUDACXX")}
    code = main(["build-env", "--cuda", "--gpu", "8.6:RTX 3090", "--driver", "580.65.06",
                 "--workdir", str(tmp_path), "--write", str(script)])
    capsys.readouterr()
    assert code in (0, 4)
    (tmp_path / "main.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text(PROJECT)
    configure = f'source "{script}" && cmake -S "{tmp_path}" -B "{tmp_path}/build"'
    done = subprocess.run(["bash", "-c", configure], env=env, capture_output=True, text=True, timeout=240,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [x for x in done.stdout.splitlines() if "probe " in x]
    # The script's toolkit and arch list reached CMake: nvcc 13.0 from CUDA_HOME, sm_86 only.
    assert "nvcc=/usr/local/cuda" in lines[0] and "version=13.0" in lines[0]
    assert lines[1].endswith("archs=86")
