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
