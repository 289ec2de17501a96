"""build-env: the source-build preflight on this machine's real nvcc and cmake, and recorded hosts."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
from typing import Any, Dict, List, Optional

import pytest
from tests.cluster.profiles import A100, node

from torchsmith.buildenv import build_script, max_gcc_for, preflight
from torchsmith.cli import main
from torchsmith.errors import KnowledgeBaseError
from torchsmith.host.live import LiveHost
from torchsmith.host.recorded import RecordedHost
from torchsmith.kb import load_kb
from torchsmith.kb.documents import read_document
from torchsmith.machine import AmdGpu, Machine, RocmInfo

REAL_TOOLKIT = "/usr/local/cuda-13.0"
KB = load_kb(packaged_only=True)
GIB_KB = 1024 * 1024


def _nvcc(release: str) -> str:
    return f"nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release {release}, V{release}.1\n"


def _df(free_gib: int) -> str:
    return ("Filesystem 1024-blocks Used Available Capacity Mounted on\n"
            f"/dev/sda1 999999999 1 {free_gib * GIB_KB} 1% /\n")


def recorded(commands: Optional[Dict[str, Any]] = None, files: Optional[Dict[str, str]] = None,
             dirs: Optional[Dict[str, List[str]]] = None, environ: Optional[Dict[str, str]] = None,
             mem_gib: int = 64, toolkit: str = "/usr/local/cuda-12.6", cuda: str = "12.6") -> RecordedHost:
    answers: Dict[str, Any] = {
        "cmake --version": {"returncode": 0, "stdout": "cmake version 3.31.6\n"},
        "ninja --version": {"returncode": 0, "stdout": "1.12.1\n"},
        "nvcc --version": {"returncode": 0, "stdout": _nvcc(cuda)},
        "gcc -dumpfullversion -dumpversion": {"returncode": 0, "stdout": "11.4.0\n"},
        "df -Pk .": {"returncode": 0, "stdout": _df(200)},
    }
    answers.update(commands or {})
    return RecordedHost({
        "schema": 1,
        "platform": {"system": "Linux", "machine": "x86_64", "release": "6.1", "python_version": "3.11.7",
                     "python_implementation": "CPython", "python_executable": "/usr/bin/python3",
                     "python_prefix": "/usr", "python_base_prefix": "/usr", "cpu_count": 32},
        "environ": {"CUDA_HOME": toolkit, **(environ or {})},
        "files": {"/proc/meminfo": f"MemTotal:       {mem_gib * GIB_KB} kB\n", **(files or {})},
        "dirs": dirs or {},
        "which": {"nvcc": f"{toolkit}/bin/nvcc"},
        "commands": {k: v for k, v in answers.items() if v is not None},
    })


def codes(pre: Any) -> Dict[str, str]:
    return {f.code: f.severity for f in pre.findings}


def gpu_node(cpus: int = 32, **kw: Any) -> Machine:
    return node(A100, count=2, cpus=cpus, **kw)


# --- this machine: a real nvcc (CUDA 13.0) and cmake ------------------------------------------

@pytest.mark.skipif(not os.path.exists(f"{REAL_TOOLKIT}/bin/nvcc"), reason="no CUDA 13.0 toolkit here")
def test_preflight_against_this_machines_nvcc_cmake_and_gcc() -> None:
    dropped = ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    base = node(None)
    machine = dataclasses.replace(base, os=dataclasses.replace(base.os, cpu_count=os.cpu_count() or 1))
    host = LiveHost(env)
    pre = preflight(host, machine, "cuda", kb=KB)
    found = codes(pre)
    assert pre.facts["nvcc"] == "13.0"
    assert pre.facts["max_gcc"] == 15  # read from the toolkit's crt/host_config.h
    assert pre.facts["cuda_home"].startswith("/usr/local/cuda")
    cmake = subprocess.run(["cmake", "--version"], capture_output=True, text=True, check=False).stdout
    major_minor = tuple(int(x) for x in re.search(r"(\d+)\.(\d+)", cmake).group(1, 2))  # type: ignore[union-attr]
    assert found.get("cmake-too-old" if major_minor < (3, 27) else "cmake") is not None
    assert found["host-compiler"] == "ok"  # Debian's gcc 12 is within nvcc 13.0's range
    assert found["no-driver"] == "warning"
    wrapper = shutil.which("nvcc", path=env.get("PATH"))
    if wrapper and not os.path.realpath(wrapper).startswith("/usr/local/cuda"):
        assert found["nvcc-outside-toolkit"] == "warning"
    jobs = max(1, min(os.cpu_count() or 1, int(pre.facts["memory_gib"] // 3)))
    assert ("MAX_JOBS", str(jobs)) in pre.exports


@pytest.mark.skipif(not os.path.exists(f"{REAL_TOOLKIT}/bin/nvcc"), reason="no CUDA 13.0 toolkit here")
def test_cli_writes_a_script_that_bash_sources(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "build-env.sh"
    code = main(["build-env", "--cuda", "--gpu", "8.6:RTX 3090", "--gpu", "8.0:A100",
                 "--driver", "580.65.06", "--driver-cuda", "13.0", "--write", str(script), "--json"])
    doc = json.loads(capsys.readouterr().out)
    findings = {f["code"]: f for f in doc["data"]["findings"]}
    assert code == (4 if any(f["severity"] == "error" for f in findings.values()) else 0)
    assert doc["data"]["exports"]["TORCH_CUDA_ARCH_LIST"] == "8.0;8.6"
    assert "no-driver" not in findings
    command = f'source "{script}" && echo "$TORCH_CUDA_ARCH_LIST|$USE_CUDA|$MAX_JOBS" && command -v nvcc'
    shown = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
    assert shown.returncode == 0, shown.stderr
    first, nvcc = shown.stdout.splitlines()[:2]
    assert first.startswith("8.0;8.6|1|")
    assert nvcc.startswith(doc["data"]["facts"]["cuda_home"])  # the toolkit's nvcc first on PATH


def test_cli_needs_cuda_or_rocm(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build-env"]) == 2
    assert "--cuda" in capsys.readouterr().err


# --- recorded hosts ---------------------------------------------------------------------------

def test_gcc_newer_than_nvcc_accepts_uses_the_sourced_table_without_headers() -> None:
    host = recorded(commands={"gcc -dumpfullversion -dumpversion": {"returncode": 0, "stdout": "13.2.0\n"}},
                    toolkit="/usr/local/cuda-12.2", cuda="12.2")
    pre = preflight(host, gpu_node(), "cuda", kb=KB)
    bad = next(f for f in pre.findings if f.code == "gcc-too-new")
    assert bad.severity == "error" and "GCC ≤ 12" in bad.message
    assert bad.fix is not None and "CC=gcc-12 CXX=g++-12 CUDAHOSTCXX=g++-12" in bad.fix


def test_the_toolkits_own_host_config_wins_over_the_table() -> None:
    header = "#if __GNUC__ > 13\n#error -- unsupported GNU version!\n#endif\n"
    host = recorded(commands={"gcc -dumpfullversion -dumpversion": {"returncode": 0, "stdout": "13.2.0\n"}},
                    files={"/usr/local/cuda-12.2/targets/x86_64-linux/include/crt/host_config.h": header},
                    dirs={"/usr/local/cuda-12.2/targets": ["x86_64-linux"]},
                    toolkit="/usr/local/cuda-12.2", cuda="12.2")
    pre = preflight(host, gpu_node(), "cuda", kb=KB)
    assert pre.facts["max_gcc"] == 13 and codes(pre)["host-compiler"] == "ok"


def test_max_gcc_table_lookup() -> None:
    table = KB.document("buildreqs")["cuda_max_gcc"]
    assert max_gcc_for("12.6", table) == (13, "NV_INSTALL_GUIDE")
    assert max_gcc_for("13.2", table) == (15, "HOST_CONFIG")
    assert max_gcc_for("10.2", table) is None


def test_toolkit_newer_than_the_driver() -> None:
    host = recorded(toolkit="/usr/local/cuda-12.8", cuda="12.8")
    pre = preflight(host, gpu_node(driver="550.54.14", driver_cuda="12.4"), "cuda", kb=KB)
    finding = next(f for f in pre.findings if f.code == "nvcc-newer-than-driver")
    assert "CUDA 12.8" in finding.message and "CUDA 12.4" in finding.message


def test_little_memory_limits_the_jobs_and_the_script_sets_them() -> None:
    pre = preflight(recorded(mem_gib=16), gpu_node(cpus=32), "cuda", kb=KB)
    assert codes(pre)["memory-low"] == "warning"
    assert ("MAX_JOBS", "5") in pre.exports
    assert 'export MAX_JOBS="5"' in build_script(pre)


def test_system_paths_before_the_environment(tmp_path: Any) -> None:
    prefix = "/opt/conda/envs/build"
    host = recorded(environ={"LD_LIBRARY_PATH": f"/usr/local/cuda/lib64:{prefix}/lib",
                             "CPATH": "/usr/include", "CMAKE_PREFIX_PATH": "/usr/local"})
    pre = preflight(host, gpu_node(), "cuda", prefix=prefix, kb=KB)
    messages = [f.message for f in pre.findings if f.code == "system-before-env"]
    assert any(m.startswith("LD_LIBRARY_PATH puts /usr/local/cuda/lib64 before /opt/conda/envs/build/lib")
               for m in messages)
    assert any(m.startswith("CPATH puts /usr/include before") for m in messages)
    assert codes(pre)["cmake-prefix-path"] == "warning"
    script = build_script(pre)
    assert f'LD_LIBRARY_PATH="{prefix}/lib:$CUDA_HOME/lib64${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"' in script
    assert f'export CMAKE_PREFIX_PATH="{prefix}${{CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}}"' in script
    path = tmp_path / "env.sh"
    path.write_text(script)
    command = f'LD_LIBRARY_PATH=/usr/lib; source "{path}"; echo "$LD_LIBRARY_PATH"'
    out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=True).stdout.strip()
    assert out == f"{prefix}/lib:/usr/local/cuda-12.6/lib64:/usr/lib"


def test_magma_and_mkl_found_in_the_environment() -> None:
    prefix = "/opt/conda/envs/build"
    host = recorded(dirs={f"{prefix}/lib": ["libmagma.so", "libmkl_rt.so.2"]})
    found = codes(preflight(host, gpu_node(), "cuda", prefix=prefix, kb=KB))
    assert found["magma"] == "ok" and found["mkl"] == "ok"
    missing = preflight(recorded(), gpu_node(), "cuda", prefix=prefix, kb=KB)
    magma = next(f for f in missing.findings if f.code == "magma-missing")
    assert magma.fix is not None and magma.fix.startswith("conda install -c pytorch magma-cuda126")


def test_rocm_build_hip_headers_shadowed_and_gfx_arch_list() -> None:
    prefix = "/opt/conda/envs/rocm"
    host = recorded(commands={"hipcc --version": {"returncode": 0, "stdout": "HIP version: 6.2.41133\n"}},
                    dirs={f"{prefix}/include": ["hip", "python3.11"]},
                    environ={"ROCM_PATH": "/opt/rocm-6.2.4"})
    machine = dataclasses.replace(node(None), rocm=RocmInfo(version="6.2.4", gpus=(
        AmdGpu("Radeon RX 7900 XTX", "gfx1100"), AmdGpu("Instinct MI300X", "gfx942"))))
    pre = preflight(host, machine, "rocm", prefix=prefix, kb=KB)
    found = codes(pre)
    assert found["hipcc"] == "ok" and found["hip-include-order"] == "warning"
    assert ("PYTORCH_ROCM_ARCH", "gfx1100;gfx942") in pre.exports
    script = build_script(pre)
    assert "export USE_ROCM=1" in script and "tools/amd_build/build_amd.py" in script
    assert subprocess.run(["bash", "-n"], input=script, text=True, check=False).returncode == 0


@pytest.mark.parametrize("answers", [
    {"cmake --version": {"returncode": 0, "stdout": "garbage\n"},
     "df -Pk .": {"returncode": 0, "stdout": "?"},
     "gcc -dumpfullversion -dumpversion": None, "ninja --version": None},
    {"cmake --version": {"timed_out": True}, "nvcc --version": {"returncode": 0, "stdout": "no release here"},
     "df -Pk .": {"returncode": 1, "stderr": "df: .: No such file"}},
])
def test_odd_tool_output_gives_findings_not_tracebacks(answers: Dict[str, Any]) -> None:
    pre = preflight(recorded(commands=answers, mem_gib=0), gpu_node(), "cuda", kb=KB)
    found = codes(pre)
    assert found["cmake-missing"] == "error" and found["disk-unknown"] == "warning"
    assert "compiler-missing" in found or "nvcc-missing" in found
    assert build_script(pre).startswith("#!/usr/bin/env bash")


def test_corrupted_requirements_data_is_a_one_line_error(tmp_path: Any) -> None:
    bad = tmp_path / "buildreqs.json"
    bad.write_text('{"sources": {}, "cuda_max_gcc": [{"cuda": "12.0", "gcc": 12, "source": "X"}]}')
    with pytest.raises(KnowledgeBaseError, match="unusable"):
        read_document("buildreqs", str(tmp_path), None)
