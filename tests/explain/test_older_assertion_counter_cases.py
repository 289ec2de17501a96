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


def test_apexs_compiled_module_missing_where_apex_itself_is_missing_is_no_build_without_ext() -> None:
    amp_c = "    import amp_C\nModuleNotFoundError: No module named 'amp_C'\n"
    inside = '  File "/usr/lib/python3.10/site-packages/apex/optimizers/fused_adam.py", line 4, in <module>\n'
    assert stated(">>> from apex.optimizers import FusedAdam\n" + inside + amp_c) == ["apex-without-cuda-ext"]
    # Megatron-LM imports amp_C itself; apex is not installed at all
    absent = ('  File "/workspace/Megatron-LM/megatron/model/fused_layer_norm.py", line 14, in <module>\n'
              "ModuleNotFoundError: No module named 'apex'\n\nDuring handling of the above exception, "
              "another exception occurred:\n\n"
              '  File "/workspace/Megatron-LM/megatron/optimizer/clip_grads.py", line 10, in <module>\n')
    assert "apex-without-cuda-ext" not in stated(absent + amp_c)


_AIO_WARNING = (" [WARNING]  async_io requires the dev libaio .so object and headers but these were not "
                "found.\nasync_io ............... [NO] ....... [NO]\n")


def test_deepspeeds_libaio_warning_is_not_the_cause_of_another_failure_beside_it() -> None:
    # the case it was written for: async_io built ahead of time, or the warning asked about
    build = "AssertionError: Unable to pre-compile async_io\nDS_BUILD_OPS=1\n"
    assert stated(build + _AIO_WARNING) == ["libaio-missing"]
    assert stated(_AIO_WARNING) == ["libaio-missing"]
    # ds_report's lines pasted beside a training run's own failure: the report only warns
    oom = ('Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n'
           "    loss.backward()\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
           "capacity of 23.65 GiB of which 1.05 GiB is free.\n")
    assert stated("$ ds_report\n" + _AIO_WARNING + oom) == ["cuda-out-of-memory"]


def test_pkg_resources_packaging_removed_is_not_said_to_be_torchs_import_only() -> None:
    from tests.explain.test_signatures import CATALOG, KB

    from torchsmith.explain.matcher import explain_report

    # OpenAI's CLIP imported it itself (clip/clip.py); no extension was being built
    text = ('  File "/home/u/CLIP/clip/clip.py", line 6, in <module>\n'
            "    from pkg_resources import packaging\n"
            "ImportError: cannot import name 'packaging' from 'pkg_resources' "
            "(/venv/lib/python3.10/site-packages/pkg_resources/__init__.py)\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "setuptools-too-new"
    assert "the project itself" in found.cause


_BNB_SETUP = ("RuntimeError:\n        CUDA Setup failed despite GPU being available. Please run the "
              "following command to get more information:\n\n        python -m bitsandbytes\n")


def test_bitsandbytes_binary_that_lacks_a_cuda_library_is_not_said_to_be_missing() -> None:
    assert stated(_BNB_SETUP) == ["bitsandbytes-binary-missing"]
    # the loader opened libbitsandbytes_cuda118.so and could not open a CUDA library it links
    lacks = ("/venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda118.so: libcusparse.so.11: "
             "cannot open shared object file: No such file or directory\n")
    assert "bitsandbytes-binary-missing" not in stated(lacks + _BNB_SETUP)
