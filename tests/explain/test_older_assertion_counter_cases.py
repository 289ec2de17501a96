"""Counter-cases for older, widely firing assertions: unseen texts of the same shape in which the
stated cause is false, each beside the case the rule was written for."""

from __future__ import annotations

from tests.explain.test_signatures import stated

_DESERIALIZE = ("RuntimeError: Attempting to deserialize object on a CUDA device but "
                "torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use "
                "torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU.\n")


def test_a_cuda_checkpoint_on_a_machine_whose_cuda_failed_to_initialise_is_the_init_failures() -> None:
    # the case it was written for: a CUDA checkpoint opened where there is no CUDA
    assert stated("$ python demo.py --cpu\n" + _DESERIALIZE) == ["checkpoint-saved-on-cuda"]
    # torch warned that CUDA failed to initialise (c10/cuda/CUDAFunctions.cpp): that is why it is unavailable
    old_driver = ("/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:138: UserWarning: CUDA "
                  "initialization: The NVIDIA driver on your system is too old (found version 11040). Please "
                  "update your GPU driver by downloading and installing a new version from the URL: "
                  "http://www.nvidia.com/Download/index.aspx (Triggered internally at "
                  "../c10/cuda/CUDAFunctions.cpp:108.)\n  return torch._C._cuda_getDeviceCount() > 0\n")
    assert "checkpoint-saved-on-cuda" not in stated(old_driver + _DESERIALIZE)
    compat = ("/venv/lib/python3.10/site-packages/torch/cuda/__init__.py:118: UserWarning: CUDA "
              "initialization: Unexpected error from cudaGetDeviceCount(). Error 804: forward compatibility "
              "was attempted on "
              "non supported HW (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n")
    assert "checkpoint-saved-on-cuda" not in stated(compat + _DESERIALIZE)


_WRONG_COMPILER = ("UserWarning: Your compiler (c++) is not compatible with the compiler Pytorch was built "
                   "with for this platform, which is g++ on linux. Please use g++ to to compile your "
                   "extension.\n")


def test_torchs_compiler_name_warning_is_not_the_cause_where_a_compiler_error_is_shown() -> None:
    # the case it was written for: the warning is what the user asks about
    assert stated("running build_ext\n" + _WRONG_COMPILER + "building 'roi_ext' extension\n") == [
        "compiler-check-warning"]
    # the warning only warns (torch/utils/cpp_extension.py): the build failed on the compiler's own error
    failed = ("running build_ext\n" + _WRONG_COMPILER
              + "src/roi_align.cpp:88:3: error: 'scalar_type_t' was not declared in this scope\n"
              + "error: command '/usr/bin/gcc' failed with exit code 1\n")
    assert "compiler-check-warning" not in stated(failed)


_REQUIREMENT = ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update "
                "your driver to a newer version, or use an earlier cuda container: unknown.\n")


def test_an_images_cuda_requirement_refused_beside_a_driver_that_reaches_it_is_no_old_driver() -> None:
    run = "$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n"
    old = "| NVIDIA-SMI 525.60.13    Driver Version: 525.60.13    CUDA Version: 12.0     |\n"
    assert stated("$ nvidia-smi\n" + old + run + _REQUIREMENT) == ["container-cuda-requirement"]
    # the host's driver reaches CUDA 12.8: the runtime read another, older libcuda (a compat copy)
    new = "| NVIDIA-SMI 570.86.15    Driver Version: 570.86.15    CUDA Version: 12.8     |\n"
    assert "container-cuda-requirement" not in stated("$ nvidia-smi\n" + new + run + _REQUIREMENT)


def test_a_fixed_width_integer_undefined_under_a_gcc_before_13_is_no_newer_compilers_doing() -> None:
    failed = ('$ pip install ./submodules/simple-knn\n  simple_knn.cu(23): error: identifier "uint32_t" is '
              "undefined\n  error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1\n")
    gcc13 = "$ gcc --version\ngcc (Ubuntu 13.2.0-23ubuntu4) 13.2.0\n"
    assert stated(gcc13 + failed) == ["compiler-too-new-for-source"]
    # GCC 11's libstdc++ still pulled <cstdint> in (gcc.gnu.org/gcc-13/porting_to.html): not the cause
    gcc11 = "$ gcc --version\ngcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0\n"
    assert "compiler-too-new-for-source" not in stated(gcc11 + failed)
