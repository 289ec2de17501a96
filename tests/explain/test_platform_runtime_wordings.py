"""Platform runtimes' own wordings (MPS, ROCm, Ascend CANN, ROCm under WSL, DirectML): each message
is read from the tool's source and proves its cause; each test has its counter-case."""

from __future__ import annotations

from tests.explain.test_signatures import stated


def test_a_storage_refused_on_mps_is_a_checkpoint_from_an_apple_gpu() -> None:
    # torch/serialization.py restores an 'mps' location with storage.mps(); Storage.cpp knows
    # mps only where torch was built with it
    text = ("  File \"/srv/venv/lib/python3.10/site-packages/torch/serialization.py\", line 1025, in load\n"
            "    return _load(opened_zipfile, map_location, pickle_module, **pickle_load_args)\n"
            "RuntimeError: torch.UntypedStorage(): Storage device not recognized: mps\n")
    assert stated(text) == ["checkpoint-saved-on-mps"]
    assert "checkpoint-saved-on-mps" not in stated(
        "RuntimeError: torch.UntypedStorage(): Storage device not recognized: xla\n")
    assert "checkpoint-saved-on-mps" not in stated(
        "RuntimeError: PyTorch is not linked with support for mps devices\n")


def test_amdsmi_undefined_in_torch_cuda_is_pynvml_beside_a_rocm_torch() -> None:
    # torch/cuda/__init__.py (2.4): _HAS_PYNVML is set by either import; ROCm then calls amdsmi
    text = ("  File \"/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py\", line 639, in "
            "_raw_device_count_amdsmi\n"
            "    amdsmi.amdsmi_init()\n"
            "NameError: name 'amdsmi' is not defined\n")
    assert stated(text) == ["pynvml-installed-on-rocm"]
    assert "pynvml-installed-on-rocm" not in stated("NameError: name 'pynvml' is not defined\n")
    # another package's own amdsmi use (its innermost frame is not torch's) is that package's bug
    elsewhere = ("  File \"/opt/venv/lib/python3.11/site-packages/gpustat/amd.py\", line 41, in query\n"
                 "    amdsmi.amdsmi_init()\n"
                 "NameError: name 'amdsmi' is not defined\n")
    assert "pynvml-installed-on-rocm" not in stated(elsewhere)


def test_torch_npu_s_own_cann_wording_and_a_bare_cann_library_name_cann() -> None:
    # torch_npu/__init__.py appends the package hint to the loader's ImportError
    runtime = ("ImportError: libascendcl.so: cannot open shared object file: No such file or directory. "
               "Please check that the runtime package is installed. Please run 'source set_env.sh' in "
               "the CANN installation path.\n")
    assert stated(runtime) == ["cann-toolkit-missing"]
    bare = "OSError: libhccl.so: cannot open shared object file: No such file or directory\n"
    assert stated(bare) == ["cann-toolkit-missing"]
    # NNAL's ATB library is another package, not the toolkit
    assert "cann-toolkit-missing" not in stated(
        "OSError: libatb.so: cannot open shared object file: No such file or directory\n")


def test_rocm_under_wsl_without_librocdxg_on_the_loader_path() -> None:
    text = ("$ HSA_ENABLE_DXG_DETECTION=1 rocminfo\n"
            "WSL environment detected.\n"
            "Cannot load librocdxg.so, failed:librocdxg.so: cannot open shared object file: "
            "No such file or directory\n")
    assert stated(text) == ["rocdxg-not-on-loader-path"]
    assert "rocdxg-not-on-loader-path" not in stated(
        "OSError: libamdhip64.so.6: cannot open shared object file: No such file or directory\n")


def test_directml_s_unbox_assert_is_a_tensor_left_off_the_dml_device() -> None:
    # the assert's condition is the proof: an input of a dml op is not a PrivateUse1 (dml) tensor
    text = ("RuntimeError: tensor.device().type() == at::DeviceType::PrivateUse1 INTERNAL ASSERT FAILED "
            "at \"D:\\\\a\\\\_work\\\\1\\\\s\\\\pytorch-directml-plugin\\\\torch_directml\\\\csrc\\\\dml\\\\"
            "DMLTensor.cpp\":31, please report a bug to PyTorch. unbox expects Dml at::Tensor as inputs\n")
    assert stated(text) == ["tensors-on-different-devices"]
    other = ("RuntimeError: false INTERNAL ASSERT FAILED at \"/build/torch_directml/csrc/dml/DMLTensor.cpp\":"
             "88, please report a bug to PyTorch. unsupported dtype\n")
    assert "tensors-on-different-devices" not in stated(other)


def test_rocm_smi_missing_from_a_rocm_torch_is_a_rocm_library_family() -> None:
    text = ("  File \"/opt/venv/lib/python3.12/site-packages/torch/__init__.py\", line 409, in <module>\n"
            "    from torch._C import *  # noqa: F403\n"
            "ImportError: librocm_smi64.so.1: cannot open shared object file: No such file or directory\n")
    assert stated(text) == ["rocm-library-missing"]


def test_ipex_missing_a_oneapi_library_is_the_oneapi_family() -> None:
    text = ("  File \"/home/u/venv/lib/python3.10/site-packages/intel_extension_for_pytorch/__init__.py\", "
            "line 95, in <module>\n"
            "    from . import _C\n"
            "ImportError: libmkl_sycl.so.4: cannot open shared object file: No such file or directory\n")
    assert stated(text) == ["oneapi-env-not-sourced"]
    logged = "WARNING utils.py:218] Import Error for IPEX: libsycl.so.7: cannot open shared object file\n"
    assert stated(logged) == ["oneapi-env-not-sourced"]
    # the same library missing for torch itself is not IPEX's oneAPI runtime
    torch_own = ("  File \"/home/u/venv/lib/python3.10/site-packages/torch/__init__.py\", line 229\n"
                 "    from torch._C import *\n"
                 "ImportError: libmkl_intel_lp64.so.2: cannot open shared object file\n")
    assert "oneapi-env-not-sourced" not in stated(torch_own)


def test_pip_s_skipped_requires_python_ranges_bound_the_interpreter_for_a_pin() -> None:
    # pip names no interpreter; the ranges it skipped leave 3.0-3.5 or 3.10 and later, and torch
    # 1.8.1 published wheels for 3.6-3.9 only
    text = ("ERROR: Ignored the following versions that require a different python version: "
            "1.9.0 Requires-Python >=3.6,<3.10; 1.9.1 Requires-Python >=3.6,<3.10\n"
            "ERROR: Could not find a version that satisfies the requirement torch==1.8.1"
            " (from versions: none)\n"
            "ERROR: No matching distribution found for torch==1.8.1\n")
    assert stated(text) == ["torch-pin-lacks-python-wheel"]
    # ranges that leave Pythons torch 2.1.0 has wheels for (3.8-3.11) prove nothing
    open_range = text.replace(">=3.6,<3.10", ">=3.12").replace("1.8.1", "2.1.0")
    assert "torch-pin-lacks-python-wheel" not in stated(open_range)
    assert "torch-pin-lacks-python-wheel" not in stated(text.splitlines(keepends=True)[1])


def test_a_librocdxg_the_loader_found_but_could_not_read_is_not_a_missing_one() -> None:
    # glibc's dlerror for a path that is a directory (a bind mount of a file that did not exist)
    text = ("WSL environment detected.\n"
            "Cannot load librocdxg.so, failed:/lib/librocdxg.so: cannot read file data: Is a directory\n")
    assert "rocdxg-not-on-loader-path" not in stated(text)


def test_a_lapack_routine_undefined_in_torch_s_own_library_is_a_wheel_expecting_the_system_blas() -> None:
    text = ("ImportError: /home/nv/.local/lib/python3.6/site-packages/torch/lib/libtorch_cpu.so: "
            "undefined symbol: dgeqrf_\n")
    assert stated(text) == ["wheel-undeclared-native-deps"]
    # another package's library, or a routine name that is not LAPACK's: not this
    assert "wheel-undeclared-native-deps" not in stated(
        "ImportError: /opt/venv/lib/python3.10/site-packages/scipy/linalg/_flapack.so:"
        " undefined symbol: dgeqrf_\n")
    assert "wheel-undeclared-native-deps" not in stated(
        "ImportError: /opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so:"
        " undefined symbol: strlen\n")
