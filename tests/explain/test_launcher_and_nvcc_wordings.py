"""Fixed wordings of tools explain had no signature for, each read from the tool's source: distlib's
Windows script launcher (simple_launcher/launcher.c), nvcc's single-input rule, Open3D's
open3d/ml/torch/__init__.py. Counter-texts keep a family a family where the text cannot decide."""

from __future__ import annotations

from pathlib import Path

from tests.explain.test_signatures import CATALOG, KB, stated

import torchsmith.kb
from torchsmith.explain.extract.model import Extracted
from torchsmith.explain.launchers import launcher_env_moved
from torchsmith.explain.matcher import explain_report

_LAUNCHER = ("Fatal error in launcher: Unable to create process using "
             "'\"{python}\"  \"{script}\" install x': The system cannot find the file specified.\n")


def _launcher(python: str, script: str) -> str:
    return _LAUNCHER.format(python=python, script=script)


def test_a_launcher_naming_its_environment_at_another_place_is_a_moved_environment() -> None:
    text = _launcher(r"D:\a\Portable\python_embeded\python.exe",
                     r"E:\Apps\Portable\python_embeded\Scripts\pip.exe")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "relocated-script-launcher"
    assert r"E:\Apps\Portable\python_embeded" in found.cause
    assert r"D:\a\Portable\python_embeded" in found.cause
    # A moved venv: its interpreter lives in Scripts too.
    moved_venv = _launcher(r"C:\old\proj\.venv\Scripts\python.exe", r"C:\new\proj\.venv\Scripts\pytest.exe")
    assert stated(moved_venv) == ["relocated-script-launcher"]


def test_a_launcher_whose_python_is_gone_from_its_own_place_stays_the_family() -> None:
    same_place = _launcher(r"C:\Python311\python.exe", r"C:\Python311\Scripts\pip.exe")
    assert stated(same_place) == ["script-launcher-interpreter-missing"]
    # A user-site Scripts folder names the base Python of another folder: no move shown.
    user_site = _launcher(r"C:\Python311\python.exe",
                          r"C:\Users\me\AppData\Roaming\Python\Python311\Scripts\pip.exe")
    assert stated(user_site) == ["script-launcher-interpreter-missing"]
    only_python = "Fatal error in launcher: Unable to create process using '\"C:\\Python311\\python.exe\"\n"
    (found,) = explain_report(only_python, CATALOG, kb=KB).explanations
    assert {c.id for c in found.candidates} == {"relocated-script-launcher", "launcher-python-uninstalled"}


def test_launcher_env_moved_needs_a_scripts_folder_and_the_same_environment_name() -> None:
    def moved(python: str, script: str) -> bool:
        return launcher_env_moved(Extracted(), {"interpreter": python, "launcher": script}, None) is not None

    assert moved(r"D:\a\X\env\python.exe", r"F:\X\env\Scripts\ninja.exe")
    assert not moved(r"D:\a\X\env\python.exe", r"F:\X\env\ninja.exe")  # not pip's layout
    assert not moved(r"D:\a\X\env\python.exe", r"d:\A\x\ENV\Scripts\ninja.exe")  # Windows paths: one place
    assert not moved(r"D:\a\X\env1\python.exe", r"F:\X\env2\Scripts\ninja.exe")


def test_nvcc_single_input_refusal_is_a_family_of_what_added_the_extra_word() -> None:
    text = ("nvcc fatal   : A single input file is required for a non-link phase "
            "when an outputfile is specified\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "nvcc-extra-input-file"
    assert {c.id for c in found.candidates} == {
        "build-path-has-spaces", "nvcc-host-flag-not-wrapped", "nvcc-several-sources-one-output"}
    no_input = "nvcc fatal   : No input files specified; use option --help\n"
    assert "nvcc-extra-input-file" not in stated(no_input)


def test_open3d_without_pytorch_ops_but_not_its_version_refusal() -> None:
    text = ("  File \"site-packages/open3d/ml/torch/__init__.py\", line 15, in <module>\n"
            "    raise Exception('Open3D was not built with PyTorch support!')\n"
            "Exception: Open3D was not built with PyTorch support!\n")
    assert stated(text) == ["companion-feature-not-on-platform"]
    other = ("Exception: Version mismatch: Open3D needs PyTorch version 1.8.*, "
             "but version 2.1.0 is installed!\n")
    assert "companion-feature-not-on-platform" not in stated(other)


def test_thrust_execution_policy_missing_is_the_same_dropped_include() -> None:
    # thrust::device (thrust/execution_policy.h) exists in every Thrust release since 1.7.
    text = ('map.cuh(503): error: namespace "thrust" has no member "device"\n'
            "error: command '/usr/local/cuda-12.1/bin/nvcc' failed with exit code 2\n")
    assert stated(text) == ["cuda-toolkit-too-new-for-source"]
    # A name Thrust never had is no dropped include.
    assert stated('error: namespace "thrust" has no member "devices"\n') == []


def test_torchs_shared_memory_hint_retyped_with_a_comma_is_still_its_bus_error() -> None:
    text = ('I meet "unexpected bus error encountered in worker, This might be caused by '
            'insufficient shared memory (shm)"\n')
    assert stated(text) == ["dataloader-worker-bus-error"]
    assert stated("unexpected error encountered in worker, insufficient memory\n") == []


def test_an_nvcc_stage_that_crashed_is_a_toolchain_crash_but_a_killed_one_is_not() -> None:
    crashed = "nvcc error   : 'cudafe++' died with status 0xC0000005 (ACCESS_VIOLATION)\n"
    (found,) = explain_report(crashed, CATALOG, kb=KB).explanations
    assert found.signature.id == "nvcc-frontend-crash" and "cudafe++" in found.cause
    assert stated("nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)\n") == [
        "nvcc-frontend-crash"]
    # SIGKILL comes from outside (memory, a time limit): not the toolchain's own crash.
    assert stated("nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n") == ["compiler-killed"]
    assert "nvcc-frontend-crash" not in stated("nvcc error   : 'cudafe++' died with status 0x1\n")


def test_nvidia_module_without_a_device_is_a_family_of_why_it_took_no_gpu() -> None:
    text = "modprobe: ERROR: could not insert 'nvidia': No such device\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "nvidia-module-found-no-gpu"
    assert {c.id for c in found.candidates} == {
        "no-nvidia-gpu-present", "gpu-claimed-by-other-driver", "gpu-unsupported-by-driver-release"}
    # Another errno is another cause (an unsigned module under Secure Boot, a missing symbol).
    assert "nvidia-module-found-no-gpu" not in stated(
        "modprobe: ERROR: could not insert 'nvidia': Unknown symbol in module, or unknown parameter\n")
    other_module = "modprobe: ERROR: could not insert 'nvme': No such device\n"
    assert "nvidia-module-found-no-gpu" not in stated(other_module)


def test_openmp_error_15_is_the_duplicate_runtime_by_its_number() -> None:
    # openmp/runtime/src/i18n/en_US.txt: message numbers are fixed; #15 is DuplicateLibrary.
    text = "importing both aborts with libomp's error (`OMP: Error #15`).\n"
    assert stated(text) == ["openmp-runtime-duplicate"]
    assert stated("OMP: Error #13: Assertion failure at kmp_runtime.cpp(6480).\n") == []
    assert stated("OMP: Error #150\n") == []


def test_a_setup_py_that_reads_nvccs_release_and_stops_is_nvcc_too_old() -> None:
    # SageAttention's setup.py: nvcc -V from CUDA_HOME, then this sentence when it is older.
    text = 'RuntimeError: CUDA 12.4 or higher is required for compute capability 8.9.\n'
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "nvcc-too-old" and "CUDA 12.4 or higher" in found.cause
    assert stated("nvcc fatal   : Value 'c++17' is not defined for option 'std'\n") == ["nvcc-too-old"]
    # Prose about a requirement is not the build's check.
    assert "nvcc-too-old" not in stated("The README says CUDA 12.0 or higher is required.\n")


def test_a_missing_npp_library_is_a_companions_never_torchs() -> None:
    # torch's Requires-Dist (kb torch_requires.json) names no nvidia-npp wheel: only a companion
    # (torchcodec's CUDA decoder) links NPP.
    requires = (Path(torchsmith.kb.__file__).parent / "data" / "torch_requires.json").read_text("utf-8")
    assert "nvidia-npp" not in requires and "nvidia-cublas" in requires
    text = ("OSError: Could not load this library: /env/site-packages/torchcodec/libtorchcodec_core6.so\n"
            "OSError: libnppicc.so.13: cannot open shared object file: No such file or directory\n")
    assert "extension-cuda-library-missing" in stated(text)
    torch_own = "OSError: libcublas.so.12: cannot open shared object file: No such file or directory\n"
    assert "extension-cuda-library-missing" not in stated(torch_own)


def test_work_said_to_run_slower_than_expected_is_a_harmless_family() -> None:
    for text in ("training speed suddenly slow down in benchmark\n",
                 "With 4 GPUs it is no faster than with a single GPU.\n",
                 "Training on 2x A100 and speed is same as 1x A100\n"):
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "training-slower-than-expected", text
        ids = {c.id for c in found.candidates}
        assert {"pcie-interconnect-bottleneck", "training-data-on-slow-storage"} <= ids
    for text in ("training is not slow anymore\n", "the same error as on one GPU\n", "Downloading is slow\n",
                 "if training slows down, lower the batch\n"):
        assert stated(text) == [], text
    # Any error explains more than the symptom: the family yields.
    oom = ("training got very slow, then torch.OutOfMemoryError: CUDA out of memory. "
           "Tried to allocate 2.00 GiB\n")
    assert "training-slower-than-expected" not in stated(oom)


def test_an_empty_ray_gpu_list_is_code_that_requested_no_gpu() -> None:
    text = "ray.init(num_gpus=2)\nprint(ray.get_gpu_ids())  # returns []\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "ray-task-without-gpu-resource" and "num_gpus" in found.cause
    in_actor = "ray.get_gpu_ids() returns an empty list inside my actor\n"
    assert stated(in_actor) == ["ray-task-without-gpu-resource"]
    # The ids it does list are GPUs Ray assigned.
    assert stated("print(ray.get_gpu_ids())\n# prints [0, 1]\n") == []
