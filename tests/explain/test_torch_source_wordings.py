"""Messages torch itself prints about a cause (torch/cuda/__init__.py, torch/utils/cpp_extension.py,
torch/__init__.py at v2.9.1), written from the source's format strings, each with a counter-text that
must not be read the same way."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report


def test_cuda_stubs_of_a_cpu_build_say_it_was_compiled_without_cuda() -> None:
    # torch/cuda/__init__.py: _exchange_device when torch._C lacks _cuda_exchangeDevice
    assert stated("RuntimeError: PyTorch was compiled without CUDA support\n") == [
        "torch-not-compiled-with-cuda"]
    assert stated("RuntimeError: PyTorch was compiled with CUDA support\n") == []


def test_cpp_extensions_own_cuda_lookup_failures_are_no_cuda_compiler() -> None:
    # CUDA_NOT_FOUND_MESSAGE joins its strings without a space ("CUDA_PATHenvironment")
    text = ("RuntimeError: CUDA was not found on the system, please set the CUDA_HOME or the "
            "CUDA_PATHenvironment variable or add NVCC to your system PATH.\n")
    assert stated(text) == ["cuda-home-not-set"]
    text = ("FileNotFoundError: nvcc not found at '/opt/cuda/bin/nvcc'. "
            "Ensure CUDA path '/opt/cuda' is correct.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "cuda-home-not-set" and "/opt/cuda/bin/nvcc" in found.cause
    # a tool's own 'not found' for another binary is not this
    assert "cuda-home-not-set" not in stated("FileNotFoundError: cmake not found at '/usr/bin/cmake'.\n")


def test_cpp_extensions_compiler_above_cudas_bound_is_the_unsupported_gcc() -> None:
    text = ("RuntimeError: The current installed version of g++ (13.2.0) is greater than the maximum "
            "required version by CUDA 11.8. Please make sure to use an adequate version of g++ "
            "(>=6.0.0, <12.0).\n")
    assert stated(text) == ["unsupported-gcc"]
    # below the minimum is the opposite cause: not the newer-GCC signature
    low = text.replace("(13.2.0) is greater than the maximum", "(4.8.5) is less than the minimum")
    assert "unsupported-gcc" not in stated(low)


def test_the_compiler_name_warning_joined_without_spaces_is_still_the_warning() -> None:
    # WRONG_COMPILER_WARNING concatenates "Pytorch was" "built with" with no space between them
    text = ("!! WARNING !!!!!!!!Your compiler (cl) is not compatible with the compiler Pytorch was"
            "built with for this platform, which is g++ on linux.\n")
    assert stated(text) == ["compiler-check-warning"]
    assert stated("Your compiler (cl) is compatible with the compiler Pytorch was built with\n") == []


def test_nvml_driver_not_loaded_is_the_no_driver_family() -> None:
    # torch/cuda/__init__.py _get_pynvml_handler: pynvml's NVMLError_DriverNotLoaded
    (found,) = explain_report("RuntimeError: cuda driver can't be loaded, is cuda enabled?\n",
                              CATALOG, kb=KB).explanations
    assert found.signature.id == "no-nvidia-driver" and len(found.candidates) >= 2
    assert stated("RuntimeError: amdsmi driver can't be loaded, requires >=ROCm5.6 installation\n") == []


def test_cpp_extensions_missing_cl_is_msvc_missing() -> None:
    assert stated("RuntimeError: MSVC is required to load C++ extensions\n") == ["msvc-build-tools-missing"]
    assert stated("RuntimeError: Ninja is required to load C++ extensions\n") == ["ninja-missing"]


def test_torchs_preload_finding_no_nvidia_wheel_library_is_the_runtime_library_family() -> None:
    # torch/__init__.py _preload_cuda_deps: the glob of nvidia/<pkg>/lib/<lib> matched nothing on sys.path
    text = "ValueError: libnvJitLink.so.*[0-9] not found in the system path ['/app', '/usr/lib/python3.10']\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "cuda-runtime-library-missing" and "libnvJitLink" in found.cause
    assert stated("ValueError: libfoo.so.*[0-9] not found in the system path ['/app']\n") == []


def test_torchs_own_vc_runtime_check_before_a_126_confirms_the_redistributable_missing() -> None:
    # torch/__init__.py prints this when ctypes cannot load vcruntime140/msvcp140/vcruntime140_1
    check = ("Microsoft Visual C++ Redistributable is not installed, this may lead to the DLL load failure.\n"
             "It can be downloaded at https://aka.ms/vs/17/release/vc_redist.x64.exe\n")
    failure = ('OSError: [WinError 126] The specified module could not be found. Error loading '
               '"C:\\venv\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.\n')
    (found,) = explain_report(check + failure, CATALOG, kb=KB).explanations
    assert found.signature.id == "vc-redist-missing" and "torch's own check" in found.cause
    # without torch's check, a DLL whose imports the data does not pin is only the family
    assert stated(failure) == ["windows-dll-load-failed"]
    # the check alone shows no load failure yet: only the family
    (family,) = explain_report(check, CATALOG, kb=KB).explanations
    assert family.signature.id == "windows-dll-load-failed"


def test_free_threaded_python_below_dynamos_minimum_is_an_unsupported_platform() -> None:
    # torch/_dynamo/eval_frame.py check_if_dynamo_supported
    text = ("RuntimeError: torch.compile is not supported on Python < 3.13.3 built with GIL disabled. "
            "Please use Python 3.13.3+.\n")
    assert stated(text) == ["torch-compile-unsupported-platform"]
    assert stated("RuntimeError: torch.compile is not supported for this model\n") == []
