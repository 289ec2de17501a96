"""The doctor's checks as pure functions: snippet reports (JSON) + a host profile -> findings."""

from __future__ import annotations

import dataclasses
import importlib.util
from typing import Any, Dict, List

import pytest
from tests.doctor.envs import UNGUARDED, cpu_host, device, dynamic_ok, gpu_host, report

from torchsmith.doctor import diagnose_report, quick_verdict
from torchsmith.doctor.build import companion_built_for, torch_build
from torchsmith.doctor.checks import run_checks
from torchsmith.doctor.inspect import snippet_path
from torchsmith.host import CommandResult, PlatformInfo
from torchsmith.machine import AmdGpu, AppleInfo, Machine, OsInfo, RocmInfo


def codes(findings: List[Any]) -> Dict[str, str]:
    return {f.code: f.severity for f in findings}


def finding(findings: List[Any], code: str) -> Any:
    return next(f for f in findings if f.code == code)


def test_healthy_cuda_env_on_matching_host_has_no_problem() -> None:
    rep = report(dynamic=dynamic_ok(devices=[device()]))
    found = run_checks(rep, gpu_host(), None)
    assert [f for f in found if f.severity in ("error", "warning")] == []
    # TF32 is worth knowing about on Ampere: matmuls default to full float32.
    assert codes(found) == {"tf32-matmul-off": "info"}


def test_cpu_build_on_gpu_host_is_an_error_with_facts_and_fix() -> None:
    found = run_checks(report("2.13.0+cpu", None, guard=UNGUARDED), gpu_host(), None)
    hit = finding(found, "cpu-build-on-gpu-host")
    assert hit.severity == "error"
    texts = [f.text for f in hit.facts]
    assert "torch 2.13.0+cpu, a CPU build (torch.version.cuda is None)" in texts
    assert "GPU NVIDIA GeForce RTX 3090 (compute capability 8.6)" in texts
    assert hit.facts[0].source.endswith("torch/version.py")
    # Without compatibility data the fix is the generic plan + install for this interpreter.
    assert hit.fix == (
        "torchsmith plan --python /env/bin/python",
        "torchsmith install --python /env/bin/python",
    )


def test_cpu_build_on_cpu_host_is_fine() -> None:
    found = run_checks(report("2.13.0+cpu", None, dynamic=dynamic_ok("2.13.0+cpu", None)), cpu_host(), None)
    assert codes(found) == {}


def test_cuda_build_on_cpu_host_is_only_info() -> None:
    found = run_checks(report(), cpu_host(), None)
    assert codes(found) == {"gpu-build-on-cpu-host": "info"}


@pytest.mark.parametrize(
    ("driver", "driver_cuda", "severity"),
    [
        ("470.239.06", "11.4", "error"),  # CUDA 12 wheels need >= 525.60.13
        ("535.104.05", "12.2", "warning"),  # minor-version compatibility only
        ("550.54.14", "12.4", None),
        ("520.61.05", None, "error"),  # no driver_cuda: the driver floor decides
    ],
)
def test_driver_too_old(driver: str, driver_cuda: str, severity: str) -> None:
    from torchsmith.kb import load_kb  # the floors are the data's (cuda.json#minor_compat)

    found = run_checks(report(), gpu_host(driver=driver, driver_cuda=driver_cuda), load_kb(None))
    assert codes(found).get("driver-too-old") == severity
    if severity == "error":
        hit = finding(found, "driver-too-old")
        assert any("need driver ≥ 525.60.13" in f.text for f in hit.facts)
        assert any("release-notes" in f.source for f in hit.facts)


def test_arch_not_compiled_for_a_newer_gpu() -> None:
    rep = report(dynamic=dynamic_ok(devices=[device(cc="12.0", name="NVIDIA GeForce RTX 5090")]))
    found = run_checks(
        rep, gpu_host(cc="12.0", name="NVIDIA GeForce RTX 5090", driver="570.86.10", driver_cuda="12.8"), None
    )
    hit = finding(found, "arch-not-compiled")
    assert hit.severity == "error"
    assert "NVIDIA GeForce RTX 5090 (12.0)" in hit.title
    assert any(f.source == "torch.cuda.get_arch_list()" and "sm_90" in f.text for f in hit.facts)


def test_arch_list_checked_against_the_profile_when_torch_sees_no_device() -> None:
    # CUDA_VISIBLE_DEVICES or a dead driver: the compiled list still tells whether the GPU is covered.
    rep = report(dynamic=dynamic_ok(available=False, arch_list=("sm_80", "sm_90", "sm_100", "sm_120")))
    found = run_checks(rep, gpu_host(cc="6.1", name="GTX 1080 Ti"), None)
    assert codes(found)["arch-not-compiled"] == "error"
    assert codes(found)["gpu-unavailable"] == "error"


def test_companion_built_for_another_torch() -> None:
    companions = [
        {
            "name": "torchvision",
            "version": "0.19.1",
            "torch_requires": ["==2.4.1"],
            "metadata": "/site/torchvision-0.19.1.dist-info",
            "url": None,
        },
        {
            "name": "torch-scatter",
            "version": "2.1.2+pt24cu121",
            "torch_requires": [],
            "metadata": "/site/torch_scatter-2.1.2+pt24cu121.dist-info",
            "url": None,
        },
        {
            "name": "torchaudio",
            "version": "2.5.1+cu124",
            "torch_requires": ["==2.5.1+cu124"],
            "metadata": "/site/torchaudio-2.5.1+cu124.dist-info",
            "url": None,
        },
        {"name": "mmcv", "version": "2.2.0", "torch_requires": [">=2.5,<2.6"], "metadata": "/m", "url": None},
    ]
    found = run_checks(report(companions=companions), gpu_host(), None)
    hit = finding(found, "companion-abi-mismatch")
    assert hit.severity == "error"
    texts = [f.text for f in hit.facts]
    assert "torchvision 0.19.1 is built for torch ==2.4.1, but torch 2.5.1+cu124 is installed" in texts
    assert (
        "torch-scatter 2.1.2+pt24cu121 is built for torch ==2.4.*, but torch 2.5.1+cu124 is installed"
        in texts
    )
    assert not any(t.startswith(("torchaudio", "mmcv")) for t in texts)
    assert any(f.source == "/site/torchvision-0.19.1.dist-info/METADATA Requires-Dist" for f in hit.facts)


def test_companion_of_another_cuda_variant() -> None:
    companions = [
        {
            "name": "torchvision",
            "version": "0.20.1+cu124",
            "torch_requires": ["==2.5.1"],
            "metadata": "/m",
            "url": None,
        }
    ]
    found = run_checks(report("2.5.1+cpu", None, companions=companions), cpu_host(), None)
    assert (
        finding(found, "companion-abi-mismatch").facts[1].text
        == "torchvision 0.20.1+cu124 is a cu124 build, torch is cpu"
    )


def test_flash_attn_build_read_from_its_wheel_name() -> None:
    url = (
        "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
        "flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl"
    )
    built_for, variant, source, unread = companion_built_for(
        {"name": "flash-attn", "version": "2.6.3", "torch_requires": [], "metadata": "/m", "url": url}
    )
    assert (built_for, variant, source, unread) == ("==2.4.*", "cu123", "/m/direct_url.json", "")


def test_two_torch_installs_pip_and_conda() -> None:
    conda = [
        {
            "name": "pytorch",
            "version": "2.1.0",
            "build": "py3.11_cuda12.1_cudnn8.9.2_0",
            "file": "/env/conda-meta/pytorch-2.1.0-py3.11_cuda12.1_cudnn8.9.2_0.json",
        }
    ]
    rep = report(conda=conda)
    rep["python"]["conda_prefix"] = "/env"
    found = run_checks(rep, gpu_host(), None)
    hit = finding(found, "two-torch-installs")
    assert hit.fix[:2] == (
        "/env/bin/python -m pip uninstall -y torch",
        "conda remove -p /env --force -y pytorch",
    )
    assert any(f.source.endswith("pytorch-2.1.0-py3.11_cuda12.1_cudnn8.9.2_0.json") for f in hit.facts)


def test_conda_pytorch_with_its_own_dist_info_is_one_install() -> None:
    conda = [
        {"name": "pytorch", "version": "2.5.1", "build": "py3.11_cuda12.4_cudnn9.1.0_0", "file": "/x.json"}
    ]
    rep = report("2.5.1", "12.4", conda=conda)
    rep["torch_installs"][0]["source"] = "conda"
    assert "two-torch-installs" not in codes(run_checks(rep, gpu_host(), None))


def test_conda_cpu_mutex_on_gpu_host() -> None:
    conda = [
        {
            "name": "pytorch-mutex",
            "version": "1.0",
            "build": "cpu",
            "file": "/env/conda-meta/pytorch-mutex-1.0-cpu.json",
        },
        {"name": "cpuonly", "version": "2.0", "build": "0", "file": "/env/conda-meta/cpuonly-2.0-0.json"},
    ]
    rep = report("2.5.1", None, conda=conda, guard=UNGUARDED)
    rep["python"]["conda_prefix"] = "/env"
    hit = finding(run_checks(rep, gpu_host(), None), "conda-mutex-cpu")
    assert hit.severity == "error"
    assert hit.fix[0] == "conda remove -p /env -y cpuonly pytorch-mutex"
    assert "conda-mutex-cpu" not in codes(run_checks(rep, cpu_host(), None))


def test_library_path_overlap_without_import() -> None:
    rep = report(
        cuda_libraries_provided=["libcudnn.so.9", "libnccl.so.2", "libcudart.so.12"],
        library_dirs=[
            {
                "variable": "LD_LIBRARY_PATH",
                "dir": "/usr/local/cuda-12.1/lib64",
                "libraries": ["libcudart.so.12", "libcudart.so.12.1.105", "libcudnn.so.9"],
            },
            {"variable": "LD_LIBRARY_PATH", "dir": "/opt/other", "libraries": ["libcufft.so.11"]},
        ],
        environ={"LD_LIBRARY_PATH": "/usr/local/cuda-12.1/lib64:/opt/other"},
    )
    # Without import torch, the names on LD_LIBRARY_PATH are a possibility, not a shadowing.
    found = run_checks(rep, gpu_host(), None)
    hit = finding(found, "library-path-overlap")
    assert hit.severity == "info" and "library-shadowed" not in codes(found)
    assert hit.facts[1].text.startswith("/usr/local/cuda-12.1/lib64 has libcudart.so.12, libcudnn.so.9")


def test_libstdcxx_too_old() -> None:
    rep = report(libstdcxx={"path": "/usr/lib64/libstdc++.so.6", "glibcxx_max": "3.4.19"})
    hit = finding(run_checks(rep, gpu_host(), None), "libstdcxx-too-old")
    assert hit.title == "libstdc++ provides GLIBCXX up to 3.4.19, torch needs GLIBCXX_3.4.21"
    rep["libstdcxx"]["glibcxx_max"] = "3.4.30"
    assert "libstdcxx-too-old" not in codes(run_checks(rep, gpu_host(), None))


def test_import_failure_and_hang() -> None:
    error = (
        'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        "OSError: libcudnn.so.9: cannot open shared object file: No such file or directory"
    )
    found = run_checks(
        report(dynamic={"status": "failed", "returncode": 0, "error": error}, guard=UNGUARDED),
        gpu_host(), None
    )
    hit = finding(found, "torch-import-fails")
    assert hit.title == (
        "`import torch` fails: OSError: libcudnn.so.9: cannot open shared object file: "
        "No such file or directory"
    )
    # A known message: explain's signature names the cause; the fix is the plan.
    assert hit.note.startswith(
        "cuDNN library not found (cudnn-library-missing): libcudnn.so.9 could not be loaded"
    )
    assert hit.fix == (
        "torchsmith plan --python /env/bin/python",
        "torchsmith install --python /env/bin/python",
    )
    odd = {
        "status": "failed",
        "returncode": -11,
        "error": "RuntimeError: a failure no signature knows (test)",
    }
    hit = finding(run_checks(report(dynamic=odd), gpu_host(), None), "torch-import-fails")
    assert hit.fix[-1] == "torchsmith explain 'RuntimeError: a failure no signature knows (test)'"
    assert hit.facts[-1].text == "the process was killed by signal 11"
    found = run_checks(report(dynamic={"status": "timeout", "timeout": 5.0}), gpu_host(), None)
    assert finding(found, "torch-import-hangs").title == "`import torch` did not finish within 5 s (killed)"


def test_no_torch() -> None:
    found = run_checks(report(None), gpu_host(), None)
    assert codes(found) == {"no-torch": "warning"}
    leftover = report()
    leftover["torch"] = None  # the dist-info survived, the package directory did not
    hit = finding(run_checks(leftover, gpu_host(), None), "no-torch")
    assert hit.severity == "error" and hit.title == "torch's files are missing from this environment"
    assert hit.facts[1].source.endswith("torch-2.5.1+cu124.dist-info")


def test_guard_states() -> None:
    rep = report(
        guard={"guard_file": None, "guard_text": None, "pip_conf": None, "pip_conf_uses_guard": False}
    )
    hit = finding(run_checks(rep, gpu_host(), None), "guard-off")
    # The installed torch pinned: the install keeps the working torch instead of planning the newest.
    version = rep["torch"]["version"]
    assert hit.severity == "info" and hit.fix[0].startswith(
        f"torchsmith install torch=={version} --python /env/bin/python")
    rep["guard"].update(guard_file="/env/torchsmith-guard.txt", guard_text="torch==2.5.1\n")
    assert finding(run_checks(rep, gpu_host(), None), "guard-off").fix == (
        "torchsmith guard on --python /env/bin/python",
    )
    rep["guard"].update(pip_conf_uses_guard=True, guard_interrupted="off")  # a kill during `guard off`
    hit = finding(run_checks(rep, gpu_host(), None), "guard-interrupted")
    assert hit.severity == "warning" and hit.fix == ("torchsmith guard off --python /env/bin/python",)


def test_an_open_install_journal_is_an_error_even_without_torch() -> None:
    journal = {"path": "/.env.torchsmith-install-journal", "phase": "changing"}
    for torch in (True, False):  # a half-replaced torch may not be found at all
        rep = report(guard={"install_journal": journal})
        if not torch:
            rep["torch"] = None
        hit = finding(run_checks(rep, gpu_host(), None), "install-interrupted")
        assert hit.severity == "error" and hit.facts[0].text == "its journal is open (phase: changing)"
        assert hit.fix[0].startswith("torchsmith guard status --python /env/bin/python")


def test_tf32_on() -> None:
    dyn = dynamic_ok(devices=[device(cc="9.0", name="H100")])
    dyn["tf32"] = {"matmul_allow_tf32": True, "cudnn_allow_tf32": True, "float32_matmul_precision": "high"}
    hit = finding(run_checks(report(dynamic=dyn), gpu_host(cc="9.0"), None), "tf32-matmul-on")
    assert "3 significant digits" in hit.title
    # Turing (7.5) has no TF32: nothing to say.
    dyn = dynamic_ok(devices=[device(cc="7.5", name="T4")])
    assert "tf32-matmul-off" not in codes(run_checks(report(dynamic=dyn), gpu_host(cc="7.5"), None))


def test_device_ops_fail_and_nccl() -> None:
    dyn = dynamic_ok(
        devices=[
            device(0),
            device(1, conv_ok=False, conv_error="RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"),
        ]
    )
    dyn["cuda"]["nccl_available"] = False
    found = run_checks(report(dynamic=dyn), gpu_host(count=2), None)
    assert finding(found, "gpu-op-fails").facts[0].text.endswith("CUDNN_STATUS_NOT_INITIALIZED")
    assert codes(found)["nccl-unavailable"] == "warning"


def test_gpus_hidden() -> None:
    found = run_checks(report(environ={"CUDA_VISIBLE_DEVICES": ""}), gpu_host(), None)
    assert finding(found, "gpus-hidden").fix == ("unset CUDA_VISIBLE_DEVICES",)


def test_wrong_gpu_build_on_amd_host() -> None:
    amd = Machine(
        os=OsInfo(system="linux", arch="x86_64"),
        rocm=RocmInfo(version="6.2.4", gpus=(AmdGpu(name="Radeon RX 7900 XTX", gfx="gfx1100"),)),
    )
    assert codes(run_checks(report(), amd, None))["wrong-gpu-build"] == "error"
    assert codes(run_checks(report("2.5.1+cpu", None), amd, None))["cpu-build-on-gpu-host"] == "error"


def test_rocm_arch_not_compiled() -> None:
    amd = Machine(
        os=OsInfo(system="linux", arch="x86_64"),
        rocm=RocmInfo(version="6.2.4", gpus=(AmdGpu(name="Radeon RX 6700 XT", gfx="gfx1031"),)),
    )
    dyn = dynamic_ok("2.5.1+rocm6.2", None, arch_list=("gfx900", "gfx90a", "gfx1030", "gfx1100"))
    dyn["version_hip"] = "6.2.41133"
    found = run_checks(report("2.5.1+rocm6.2", None, "6.2.41133", dynamic=dyn), amd, None)
    assert codes(found)["arch-not-compiled"] == "error"
    overridden = dataclasses.replace(
        amd, rocm=dataclasses.replace(amd.rocm, hsa_override_gfx_version="10.3.0")
    )
    assert "arch-not-compiled" not in codes(
        run_checks(report("2.5.1+rocm6.2", None, "6.2", dynamic=dyn), overridden, None)
    )


def test_mps_unavailable_under_rosetta() -> None:
    mac = Machine(
        os=OsInfo(system="macos", arch="x86_64"),
        apple=AppleInfo(
            chip="Apple M2", apple_silicon=True, rosetta=True, macos_version="14.5", mps_capable=True
        ),
    )
    dyn = dynamic_ok("2.2.2", None)
    found = run_checks(report("2.2.2", None, dynamic=dyn), mac, None)
    hit = finding(found, "mps-unavailable")
    assert any("Rosetta" in f.text for f in hit.facts)


def test_garbled_reports_never_raise() -> None:
    rep = report(
        companions=[{"name": "torchvision", "version": None, "torch_requires": ["===>>"]}],
        dynamic={"status": "ok", "version": 5, "cuda": "oops", "tf32": [], "mps": "x"},
    )
    rep["library_dirs"] = [{"variable": "LD_LIBRARY_PATH"}]
    diagnosis = diagnose_report(rep, gpu_host(), None)
    assert all(f.code for f in diagnosis.findings)
    build = torch_build(rep)
    assert build is not None and build["version"] == "2.5.1+cu124"  # non-string versions are ignored


def test_worst_first_and_json_contract() -> None:
    rep = report(
        "2.5.1+cpu",
        None,
        guard={"guard_file": None, "guard_text": None, "pip_conf": None},
        environ={"CUDA_VISIBLE_DEVICES": "-1"},
    )
    data = diagnose_report(rep, gpu_host(), None).to_json()
    severities = [f["severity"] for f in data["findings"]]
    assert severities == sorted(severities, key=("error", "warning", "info").index)
    assert data["healthy"] is False
    assert set(data["findings"][0]) == {"code", "severity", "title", "facts", "fix", "note"}
    assert data["environment"]["torch"]["variant"] == "cpu"


def _load_snippet(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"snippet_{name}", snippet_path(name + ".py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_version_py_is_read_as_text() -> None:
    parse = _load_snippet("inspect_env").parse_version_py
    text = (
        "from typing import Optional\n__version__ = '2.6.0a0+ecf3bae40a.nv24.08'\n"
        "debug = False\ncuda: Optional[str] = '12.6'\ngit_version = 'ecf3bae'\nhip: Optional[str] = None\n"
    )
    assert parse(text) == {
        "__version__": "2.6.0a0+ecf3bae40a.nv24.08",
        "debug": False,
        "cuda": "12.6",
        "git_version": "ecf3bae",
        "hip": None,
    }
    build = torch_build({"torch": {"version": "2.6.0a0+ecf3bae40a.nv24.08", "cuda": "12.6"}})
    assert build is not None and build["jetson"] and build["accelerator"] == "cuda"


def test_requires_dist_torch_specifiers() -> None:
    torch_requires = _load_snippet("inspect_env").torch_requires
    assert torch_requires(
        [
            "torch==2.4.1",
            "torch (==2.5.1)",
            "torch>=2.6,<2.7",
            "torchvision==1",
            'torch; extra == "gpu"',
            'torch ==2.6.0+cu126 ; platform_system == "Linux"',
            "torch",
        ]
    ) == ["==2.4.1", "==2.5.1", ">=2.6,<2.7", "==2.6.0+cu126"]


class _ReplayHost:
    """A host whose only command is the static snippet, answering with a canned report."""

    def __init__(self, stdout: str, returncode: int = 0) -> None:
        self.stdout, self.returncode = stdout, returncode
        self.calls: List[List[str]] = []

    def run(self, argv: Any, timeout: float = 5.0) -> CommandResult:
        self.calls.append(list(argv))
        return CommandResult(list(argv), returncode=self.returncode, stdout=self.stdout)

    def read_text(self, path: str, limit: int = 0) -> None:
        return None

    def list_dir(self, path: str) -> None:
        return None

    def which(self, name: str) -> None:
        return None

    def environ(self) -> Dict[str, str]:
        return {}

    def platform(self) -> PlatformInfo:
        raise AssertionError("not used")


def test_quick_verdict_lines() -> None:
    import json

    host = _ReplayHost("noise\n" + json.dumps(report("2.13.0+cpu", None)))
    lines = quick_verdict(gpu_host(), "/env/bin/python", host=host)
    assert lines[0] == "Doctor   torch 2.13.0+cpu (cpu) in /env/bin/python: 1 error"
    assert lines[1].startswith("  error[cpu-build-on-gpu-host] torch 2.13.0+cpu is a CPU-only build")
    assert lines[-1] == "  run `torchsmith doctor --python /env/bin/python` for the facts and the fix"
    assert host.calls == [["/env/bin/python", snippet_path("inspect_env.py")]]  # --quick: torch not imported
    healthy = quick_verdict(
        cpu_host(), "/env/bin/python", host=_ReplayHost(json.dumps(report("2.13.0+cpu", None)))
    )
    assert healthy == [
        "Doctor   torch 2.13.0+cpu (cpu): no problems found "
        "(quick check; `torchsmith doctor` imports torch too)"
    ]
    broken = quick_verdict(cpu_host(), "/nowhere/python", host=_ReplayHost("", returncode=127))
    assert broken[0].startswith("Doctor   cannot inspect /nowhere/python: cannot inspect the environment")


def test_fixes_come_from_the_plan_for_this_host() -> None:
    from torchsmith.kb import load_kb

    kb = load_kb(None)
    companions = [
        {
            "name": "torchvision",
            "version": "0.20.1+cu124",
            "torch_requires": ["==2.5.1+cu124"],
            "metadata": "/m",
            "url": None,
        }
    ]
    found = run_checks(report(companions=companions, guard=UNGUARDED),
                       gpu_host(driver="470.239.06", driver_cuda="11.4"), kb)
    hit = finding(found, "driver-too-old")
    # A CUDA 11 build for a CUDA 11.4 driver, torchvision paired, run with this environment's pip.
    assert len(hit.fix) == 1
    assert hit.fix[0].startswith(
        "/env/bin/python -m pip install --index-url https://download.pytorch.org/whl/cu11"
    )
    assert " torch==" in hit.fix[0] and " torchvision==" in hit.fix[0]
    # The driver floor is cited from the data.
    assert any(
        f.text == "CUDA 12.x builds need driver ≥ 525.60.13" and "docs.nvidia.com" in f.source
        for f in hit.facts
    )


def test_data_loader_is_called_only_when_a_fix_needs_a_plan() -> None:
    calls: List[int] = []

    def loader() -> None:
        calls.append(1)

    assert run_checks(report("2.13.0+cpu", None), cpu_host(), loader) == []
    assert calls == []
    run_checks(report("2.13.0+cpu", None), gpu_host(), loader)
    assert calls  # the cpu-build fix asked for a plan (and fell back: the loader had no data)


def test_mmcv_build_read_from_its_find_links_path() -> None:
    url = (
        "https://download.openmmlab.com/mmcv/dist/cu121/torch2.1/mmcv-2.1.0-cp311-cp311-manylinux1_x86_64.whl"
    )
    assert companion_built_for(
        {"name": "mmcv", "version": "2.1.0", "torch_requires": [], "metadata": "/m", "url": url}
    ) == ("==2.1.*", "cu121", "/m/direct_url.json", "")


def test_quick_verdict_from_a_cli_context(tmp_path: Any) -> None:
    import argparse
    import json

    from torchsmith.cli.common import Context

    args = argparse.Namespace(
        python="/env/bin/python",
        gpu=["8.6"],
        driver="550.54.14",
        no_gpu=False,
        host=None,
        platform=None,
        driver_cuda=None,
        jetson=None,
        rocm_gfx=None,
        rocm_version=None,
    )
    profile = tmp_path / "host.json"
    profile.write_text(json.dumps(cpu_host().to_json()))
    args.host = str(profile)
    host = _ReplayHost(json.dumps(report("2.13.0+cpu", None)))
    ctx = Context(args, environ={})
    lines = quick_verdict(ctx.machine(), ctx.environment_python(), host=host)
    assert (
        lines[0] == "Doctor   torch 2.13.0+cpu (cpu) in /env/bin/python: 1 error"
    )  # --gpu 8.6 over the profile
    assert host.calls[0][0] == "/env/bin/python"


def test_conda_owned_torch_is_fixed_with_conda() -> None:
    from torchsmith.kb import load_kb

    conda = [
        {
            "name": "pytorch",
            "version": "2.5.1",
            "build": "cpu_generic_py311_h0",
            "file": "/env/conda-meta/p.json",
        }
    ]
    rep = report("2.5.1", None, conda=conda, guard=UNGUARDED)
    rep["python"]["conda_prefix"] = "/env"
    rep["torch_installs"][0]["source"] = "conda"
    fix = finding(run_checks(rep, gpu_host(), load_kb(None)), "cpu-build-on-gpu-host").fix
    assert fix[0].startswith(
        "conda install -p /env --yes --override-channels --channel conda-forge pytorch-gpu="
    )


def test_unusable_data_falls_back_to_the_generic_fix() -> None:
    not_data = object()  # not a KnowledgeBase
    found = run_checks(report("2.13.0+cpu", None, guard=UNGUARDED), gpu_host(), not_data)
    assert finding(found, "cpu-build-on-gpu-host").fix == (
        "torchsmith plan --python /env/bin/python",
        "torchsmith install --python /env/bin/python",
    )


def test_cuda_runtime_wheels_of_another_version() -> None:
    linux = 'platform_system == "Linux" and platform_machine == "x86_64"'
    rep = report(
        nvidia_wheels=[
            {"name": "nvidia-cudnn-cu12", "version": "9.5.0.50"},
            {"name": "nvidia-cublas-cu12", "version": "12.4.5.8"},
        ]
    )
    rep["python"]["machine"] = "x86_64"
    rep["torch_installs"][0]["nvidia_requires"] = [
        f"nvidia-cudnn-cu12==9.1.0.70; {linux}",
        f"nvidia-cublas-cu12==12.4.5.8; {linux}",
        'nvidia-nccl-cu12==2.21.5; platform_system == "Windows"',  # not for this platform
    ]
    hit = finding(run_checks(rep, gpu_host(), None), "cuda-wheels-mismatch")
    assert hit.severity == "warning"
    assert [f.text for f in hit.facts[1:]] == [
        "torch requires nvidia-cudnn-cu12==9.1.0.70; 9.5.0.50 is installed"
    ]
    assert hit.fix == ("/env/bin/python -m pip install --no-deps nvidia-cudnn-cu12==9.1.0.70",)
    rep["nvidia_wheels"] = rep["nvidia_wheels"][1:]
    hit = finding(run_checks(rep, gpu_host(), None), "cuda-wheels-mismatch")
    assert hit.severity == "error"
    assert hit.facts[1].text == "torch requires nvidia-cudnn-cu12==9.1.0.70; it is not installed"


def test_minor_compat_warning_suggests_no_reinstall_when_the_plan_cannot_do_better() -> None:
    from torchsmith.kb import load_kb

    found = run_checks(report(), gpu_host(driver="535.104.05", driver_cuda="12.2"), load_kb(None))
    hit = finding(found, "driver-too-old")
    assert hit.severity == "warning"
    assert hit.fix == ()
    assert "relies on minor-version compatibility too" in hit.note
    # Without data there is no plan to compare with: the note says what would help.
    hit = finding(
        run_checks(report(), gpu_host(driver="535.104.05", driver_cuda="12.2"), None), "driver-too-old"
    )
    assert hit.note.endswith("a newer driver, or a build for CUDA ≤ 12.2, avoids both")


def test_fixes_run_where_they_point() -> None:
    """A guarded environment is fixed by the install that lifts and rewrites its guard; one
    without pip (made by uv) through ``uv pip install --python``; never by switching pins off."""
    from torchsmith.kb import load_kb

    kb = load_kb(None)
    guarded = finding(run_checks(report("2.13.0+cpu", None), gpu_host(), kb), "cpu-build-on-gpu-host").fix
    assert guarded == ("torchsmith install --python /env/bin/python",)
    pipless = finding(run_checks(report("2.13.0+cpu", None, guard=UNGUARDED, pip=False), gpu_host(), kb),
                      "cpu-build-on-gpu-host").fix
    assert pipless[0].startswith("uv pip install --python /env/bin/python --index-url https://download.pytorch.org/whl/cu")
    assert not any("CONSTRAINT=" in line for line in (*guarded, *pipless))
