"""library-shadowed from what the process loaded: the recorded H100 host, variations of it, and a
real shared library loaded by a fake torch (built here with the C compiler when there is one)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from tests.doctor.envs import dynamic_ok, gpu_host, report, write_torch

from torchsmith.doctor import diagnose_report
from torchsmith.doctor.checks import run_checks
from torchsmith.doctor.inspect import inspect_dynamic, snippet_path
from torchsmith.doctor.loaded import expected_versions, loaded_libraries, shadowing
from torchsmith.host.live import LiveHost

REAL = Path(__file__).resolve().parents[1] / "hosts" / "real-h100"
SITE = "/opt/torch/.venv/lib/python3.12/site-packages"
PINS = ["nvidia-cublas==13.1.0.3; platform_system == 'Linux'",
        "nvidia-cudnn-cu13==9.19.0.56; platform_system == 'Linux'",
        "nvidia-nccl-cu13==2.28.9; platform_system == 'Linux'",
        "nvidia-cuda-runtime==13.0.96; platform_system == 'Linux'"]


def recorded_loaded() -> Dict[str, Any]:
    """The recorded process's loaded files, as torch_check.py reports them (CUDA and driver ones)."""
    data = json.loads((REAL / "loaded-libraries.json").read_text(encoding="utf-8"))
    names = [p for p in data["loaded"] if "/nvidia/" in p or "libcuda" in p or "libnvidia" in p]
    return {"source": "/proc/self/maps", "count": len(data["loaded"]),
            "libraries": [{"path": p} for p in names]}


def h100_report(loaded: Dict[str, Any], **environ: str) -> Dict[str, Any]:
    """The recorded environment: torch 2.11.0+cu130 from pip, CUDA_HOME set, the driver's dirs on
    LD_LIBRARY_PATH, and /usr/local/cuda/lib64 holding libraries of the same names as the wheels'."""
    dynamic = dynamic_ok("2.11.0+cu130", "13.0", loaded=loaded, file=f"{SITE}/torch/__init__.py")
    dynamic["cuda"]["built_with"] = {"cudnn": "9.19.0"}
    rep = report("2.11.0+cu130", "13.0", dynamic=dynamic)
    rep["torch"]["path"] = f"{SITE}/torch"
    rep["torch_installs"][0].update(location=SITE, metadata=f"{SITE}/torch-2.11.0+cu130.dist-info",
                                    nvidia_requires=PINS)
    rep["environ"] = {"CUDA_HOME": "/usr/local/cuda",
                      "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64:/usr/local/nvidia/lib", **environ}
    rep["cuda_libraries_provided"] = ["libcublas.so.13", "libcudnn.so.9", "libnccl.so.2"]
    return rep


def codes(rep: Dict[str, Any]) -> List[str]:
    return [f.code for f in run_checks(rep, gpu_host(), None)]


def replaced(loaded: Dict[str, Any], name: str, path: str, **version: Any) -> Dict[str, Any]:
    libraries = [e for e in loaded["libraries"] if not e["path"].endswith("/" + name)]
    return dict(loaded, libraries=[*libraries, dict(path=path, **version)])


def test_the_recorded_healthy_h100_environment_has_no_shadowing() -> None:
    # CUDA_HOME points at a toolkit with libraries of the same names: no evidence of anything.
    rep = h100_report(recorded_loaded())
    assert "library-shadowed" not in codes(rep)
    assert "library-path-overlap" not in codes(rep)
    stems = {lib.stem for lib in loaded_libraries(rep["dynamic"]["loaded"])}
    assert {"cublas", "cublaslt", "cudnn", "nccl", "cudart"} <= stems
    assert "cuda" not in stems  # the driver's library is the driver checks' business


def test_a_cudnn_loaded_from_the_toolkit_of_another_version_is_shadowing() -> None:
    loaded = replaced(recorded_loaded(), "libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9.1.0",
                      symbol="cudnnGetVersion", reported=90100)
    rep = h100_report(loaded, LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/nvidia/lib64")
    [hit] = [f for f in run_checks(rep, gpu_host(), None) if f.code == "library-shadowed"]
    texts = [f.text for f in hit.facts]
    assert "loaded /usr/local/cuda/lib64/libcudnn.so.9.1.0: cudnn 9.1.0 (cudnnGetVersion() = 90100)" in texts
    assert "torch was built with cudnn 9.19.0" in texts
    assert hit.facts[1].source == "/proc/self/maps after import torch (torch_check.py)"
    assert hit.facts[2].source == "torch._C._cudnn.getCompileVersion()"
    assert hit.fix == ("export LD_LIBRARY_PATH=/usr/local/nvidia/lib64",)


def test_the_file_name_gives_the_version_when_the_library_does_not() -> None:
    loaded = replaced(recorded_loaded(), "libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13.0.0.19")
    hit = next(f for f in run_checks(h100_report(loaded), gpu_host(), None) if f.code == "library-shadowed")
    assert any(f.text.endswith("cublas 13.0.0.19 (the file name)") for f in hit.facts)
    assert any(f.text == "torch was built with cublas 13.1.0.3" and "Requires-Dist" in f.source
               for f in hit.facts)
    assert hit.fix[0].startswith("grep -rs /usr/local/cuda/lib64 /etc/ld.so.conf")


@pytest.mark.parametrize("path, version", [
    # Outside the wheels, but the very version torch was built with.
    ("/usr/local/cuda/lib64/libcudnn.so.9.19.0", {"symbol": "cudnnGetVersion", "reported": 91900}),
    # Only a major version to compare: nothing proves it differs.
    ("/usr/local/cuda/lib64/libcudnn.so.9", {}),
    # Another version, but inside torch's own wheels: what torch's metadata installed.
    (f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9", {"symbol": "cudnnGetVersion", "reported": 90100}),
])
def test_no_finding_without_proof(path: str, version: Dict[str, Any]) -> None:
    loaded = replaced(recorded_loaded(), "libcudnn.so.9", path, **version)
    assert shadowing(h100_report(loaded)) == []


def test_expected_versions_are_read_from_torch_itself() -> None:
    expected = expected_versions(h100_report(recorded_loaded()))
    assert expected["cudnn"] == ((9, 19, 0), "torch._C._cudnn.getCompileVersion()")
    assert expected["nccl"][0] == (2, 28, 9) and expected["cublaslt"][0] == (13, 1, 0, 3)
    assert expected["cudart"][0] == (13, 0, 96)


def test_quick_mode_cites_only_ld_library_path() -> None:
    rep = h100_report(recorded_loaded())
    del rep["dynamic"]
    rep["library_dirs"] = [
        {"variable": "LD_LIBRARY_PATH", "dir": "/opt/cudnn8/lib", "libraries": ["libcudnn.so.9"]},
        {"variable": "CUDA_HOME", "dir": "/usr/local/cuda/lib64", "libraries": ["libcublas.so.13"]}]
    found = run_checks(rep, gpu_host(), None)
    [hit] = [f for f in found if f.code == "library-path-overlap"]
    assert hit.severity == "info" and [f.source for f in hit.facts[1:]] == ["$LD_LIBRARY_PATH"]
    assert "library-shadowed" not in [f.code for f in found]
    rep["library_dirs"] = rep["library_dirs"][1:]
    assert "library-path-overlap" not in codes(rep)


def test_garbled_loaded_reports_never_raise() -> None:
    for garbage in ({"libraries": [None, {"path": 5}, {"path": "/x/libcudnn.so.9", "reported": "x"}]},
                    "oops", {"libraries": "no"}):
        diagnosis = diagnose_report(h100_report(garbage), gpu_host(), None)  # type: ignore[arg-type]
        assert "doctor-check-failed" not in [f.code for f in diagnosis.findings]


# --- the snippet reads what really was loaded ----------------------------------------------------
def _fake_cudnn(directory: Path, number: int) -> Optional[Path]:
    """A real shared library named like cuDNN whose cudnnGetVersion() answers ``number``."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None or not sys.platform.startswith("linux"):
        return None
    directory.mkdir(parents=True)
    source = directory / "cudnn.c"
    source.write_text(f"#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {number}; }}\n",
                      encoding="utf-8")
    library = directory / "libcudnn.so.9.1.0"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


def test_the_snippet_lists_a_library_torch_loaded_with_its_own_version(tmp_path: Path) -> None:
    library = _fake_cudnn(tmp_path / "toolkit" / "lib64", 90100)
    if library is None:
        pytest.skip("needs Linux and a C compiler to build a shared library")
    site = tmp_path / "site"
    write_torch(site, "2.11.0+cu130", cuda="13.0",
                init=f"import ctypes\n_cudnn = ctypes.CDLL({str(library)!r})\n"
                     "from torch import version\n__version__ = version.__version__\n")
    host = LiveHost(environ={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    dynamic = inspect_dynamic(host, sys.executable, 60)
    assert dynamic["status"] == "ok", dynamic
    loaded = dynamic["loaded"]
    assert loaded["source"] == "/proc/self/maps" and loaded["count"] > 0
    [entry] = [e for e in loaded["libraries"] if e["path"] == str(library)]
    assert (entry["symbol"], entry["reported"]) == ("cudnnGetVersion", 90100)
    [lib] = [lib for lib in loaded_libraries(loaded) if lib.path == str(library)]
    assert lib.version == (9, 1, 0)


def test_the_snippet_runs_without_cuda(tmp_path: Path) -> None:
    # A CPU torch: nothing CUDA loaded, and no small-model timing any more (it timed its own model).
    site = tmp_path / "site"
    write_torch(site, "2.11.0+cpu", init="from torch import version\n__version__ = version.__version__\n")
    result = subprocess.run([sys.executable, snippet_path("torch_check.py")], capture_output=True, text=True,
                            env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}, timeout=60, check=False)
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["imported"] and data["loaded"]["libraries"] == []
    assert "small_model" not in result.stdout


def test_windows_names_and_paths() -> None:
    # cuDNN and cuBLAS as torch's Windows wheels ship them, loaded from another toolkit.
    site = "C:\\Users\\me\\env\\Lib\\site-packages"
    loaded = {"source": "EnumProcessModules", "libraries": [
        {"path": f"{site}\\torch\\lib\\cudnn64_9.dll", "symbol": "cudnnGetVersion", "reported": 90100},
        {"path": "C:\\Program Files\\NVIDIA\\CUDNN\\v9.1\\bin\\cudnn64_9.dll",
         "symbol": "cudnnGetVersion", "reported": 90100},
        {"path": "C:\\Windows\\System32\\nvcuda.dll", "symbol": "cuDriverGetVersion", "reported": 12080}]}
    rep = h100_report(loaded)
    rep["torch"]["path"] = f"{site}\\torch"
    found = shadowing(rep)
    assert [lib.path for lib, _, _ in found] == ["C:\\Program Files\\NVIDIA\\CUDNN\\v9.1\\bin\\cudnn64_9.dll"]
    assert found[0][0].version == (9, 1, 0) and found[0][1] == (9, 19, 0)
