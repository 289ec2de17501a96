"""Build, install and run-time messages read in their tools' own fixed wording (each from the tool's
source), with the texts that look alike but prove something else."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report


def test_deepspeed_cuda_home_assert_is_a_missing_toolkit() -> None:
    text = "AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)\n"
    assert stated(text) == ["cuda-home-not-set"]
    assert stated("CUDA_HOME=/usr/local/cuda-12.1 exists, compiling CUDA ops\n") == []


def test_nvcc_arch_refusal_retyped_without_its_colon_keeps_old_and_new_apart() -> None:
    assert stated("nvcc fatal unsupported gpu architecture 'compute_86'\n") == ["nvcc-unsupported-arch"]
    assert stated("nvcc fatal   : Unsupported gpu architecture 'compute_35'\n") == ["nvcc-arch-dropped"]


def test_driver_too_old_reads_the_message_without_its_space() -> None:
    text = 'It raises "The NVIDIA driver on your system is too old(found version 8000)".\n'
    assert stated(text) == ["driver-too-old"]


def test_driver_too_old_is_torchs_first_sentence_also_without_the_version() -> None:
    # c10/cuda/CUDAFunctions.cpp: the sentence is torch's fixed wording; a report may cut it there.
    text = "RuntimeError: The NVIDIA driver on your system is too old\n"
    assert stated(text) == ["driver-too-old"]
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert "CUDA (not shown) at most" in found.cause
    # Counter-case: the driver's age in other words is not torch's check.
    assert "driver-too-old" not in stated("Is the NVIDIA driver on my system too old for CUDA 12?\n")


def test_where_cl_failing_is_no_msvc_on_path_but_another_command_is_not() -> None:
    failed = "subprocess.CalledProcessError: Command '['where', 'cl']' returned non-zero exit status 1.\n"
    assert stated(failed) == ["msvc-build-tools-missing"]
    other = "subprocess.CalledProcessError: Command '['where', 'ninja']' returned non-zero exit status 1.\n"
    assert "msvc-build-tools-missing" not in stated(other)


def test_insufficient_driver_is_a_family_of_old_driver_and_no_driver() -> None:
    text = ("RuntimeError: CUDA failed with error "
            "CUDA driver version is insufficient for CUDA runtime version\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "driver-insufficient-for-runtime"
    causes = " ".join(c.cause for c in found.candidates)
    assert "older than the CUDA runtime" in causes and "container started without GPU access" in causes


def test_tinycudann_without_an_extension_for_this_gpu() -> None:
    text = "OSError: Could not find compatible tinycudann extension for compute capability 70.\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "extension-arch-not-compiled" and "capability 70" in found.cause
    # tinycudann's warning for a lower-cc build that still runs is no failure
    warn = "UserWarning: tinycudann was built for lower compute capability (75) than the system's (86).\n"
    assert "extension-arch-not-compiled" not in stated(warn)


def test_a_malformed_wheel_names_the_file_not_this_machine() -> None:
    record = ("Exception caught: (wheel.install.BadWheelFile) (backtrace omitted)\n"
              "Exception message: No expected hash for file 'caffe2/python/x.so'\n")
    (found,) = explain_report(record, CATALOG, kb=KB).explanations
    assert found.signature.id == "broken-release-artifact" and "caffe2/python/x.so" in found.cause
    assert stated("AssertionError: torch-cuda80==0.1.6.post17 .dist-info directory not found\n") == [
        "broken-release-artifact"]
    # a project built here from a git checkout (no release pinned) is no published artifact
    unpinned = "AssertionError: yofc-oee .dist-info directory not found\n"
    assert "broken-release-artifact" not in stated(unpinned)
    # a hash that differs is a download or index matter, not a RECORD without the file
    assert "broken-release-artifact" not in stated("wheel.install.BadWheelFile: Bad hash for file 'a.so'\n")


def test_tgi_flash_models_refused_for_a_missing_kernel_module() -> None:
    text = ("WARN text_generation_launcher: Could not import Flash Attention enabled models: "
            "No module named 'vllm_cache_ops'\n"
            "NotImplementedError: Sharded Llama requires Flash Attention enabled models.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "extension-not-built" and "vllm_cache_ops" in found.cause
    gpu = ("WARN text_generation_launcher: Could not import Flash Attention enabled models: "
           "CUDA is not available\n")
    assert "extension-not-built" not in stated(gpu)


def test_flash_attention_unavailable_is_a_family() -> None:
    (found,) = explain_report("WARNING - llmtuner.model.patcher - FlashAttention2 is not installed.\n",
                              CATALOG, kb=KB).explanations
    assert found.signature.id == "flash-attn-not-installed" and len(found.candidates) == 3


LISTED = ("ERROR: Could not find a version that satisfies the requirement torch=={pin} "
          "(from versions: {listed})\n"
          "ERROR: No matching distribution found for torch=={pin}\n")


def test_pip_listing_that_stops_at_macos_x86_64_wheels_names_that_platform() -> None:
    # 2.0.0 .. 2.2.2 is exactly what macOS x86_64 has for Python 3.11; Linux 3.11 goes on past 2.2.2
    text = LISTED.format(pin="2.6.0", listed="2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1, 2.2.2")
    report = explain_report(text, CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["macos-x86-64-python"]
    assert any("macos-x86_64 wheels for Python 3.11" in r for r in report.explanations[0].reasoning)


def test_a_listing_every_platform_shares_or_a_pin_inside_it_names_no_platform() -> None:
    # Python 3.7's releases end at 1.13.1 on every platform: the Python, not the platform, stops them
    old_python = LISTED.format(pin="2.0.0", listed="1.11.0, 1.12.0, 1.12.1, 1.13.0, 1.13.1")
    assert "macos-x86-64-python" not in stated(old_python)
    # a pin no newer than the listing: the listing is as old as the text, it proves no platform
    same_age = LISTED.format(pin="2.2.1", listed="2.2.0, 2.2.2")
    assert "macos-x86-64-python" not in stated(same_age)


def test_a_refused_per_build_wheel_page_is_a_build_the_project_has_not_published() -> None:
    text = "I'm getting a 403 error when I go to this page: https://data.pyg.org/whl/torch-2.6.0+cu124.html\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "companion-wheels-not-published" and "torch-2.6.0+cu124" in found.cause
    mmcv = "HTTP error 404 while getting https://download.openmmlab.com/mmcv/dist/cu121/torch2.1.0/index.html\n"
    assert stated(mmcv) == ["companion-wheels-not-published"]
    # the page answered: pip read it (no refusal on its line), and a page of no template is not one
    read = "Looking in links: https://data.pyg.org/whl/torch-2.6.0+cu124.html\n"
    assert "companion-wheels-not-published" not in stated(read)
    other = "403 Client Error: Forbidden for url: https://example.org/whl/torch-2.6.0+cu124.html\n"
    assert "companion-wheels-not-published" not in stated(other)


def test_nvrtc_refusing_the_architecture_and_nccl_error_without_its_space() -> None:
    assert stated("RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)\n") == [
        "nvrtc-too-old-for-gpu"]
    assert "nvrtc-too-old-for-gpu" not in stated("nvrtc: error: invalid value for --fmad\n")
    assert stated("NCCLerror: unhandled system error (run with NCCL_DEBUG=INFO for details)\n") == [
        "nccl-system-error"]


def test_a_rocm_library_torch_cannot_load_is_a_family_and_a_cuda_one_is_not_it() -> None:
    text = ('  File "/venv/lib/python3.12/site-packages/torch/__init__.py", line 416, in <module>\n'
            "    from torch._C import *  # noqa: F403\n"
            "ImportError: libMIOpen.so.1: cannot open shared object file: No such file or directory\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "rocm-library-missing" and len(found.candidates) == 4
    assert "libMIOpen.so.1" in found.cause
    cuda = text.replace("libMIOpen.so.1", "libcudnn.so.8")
    assert "rocm-library-missing" not in stated(cuda)


def test_nvcc_refusal_without_the_architecture_is_a_family() -> None:
    (found,) = explain_report("nvcc fatal: Unsupported gpu architecture when compile fused_adam\n",
                              CATALOG, kb=KB).explanations
    assert found.signature.id == "nvcc-gpu-architecture-rejected" and len(found.candidates) == 2
    named = "nvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
    assert stated(named) == ["nvcc-unsupported-arch"]


def test_no_nvcc_where_the_build_runs_it_and_distutils_without_visual_cpp() -> None:
    text = "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "cuda-home-not-set" and "/usr/local/cuda/bin/nvcc" in found.cause
    other = "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/ptxas.log'\n"
    assert "cuda-home-not-set" not in stated(other)
    assert stated("error: Unable to find vcvarsall.bat\n") == ["msvc-build-tools-missing"]


def test_typing_extensions_missing_is_the_builds_only_in_a_build() -> None:
    # pytorch/pytorch#121136: torchgen (run by the source build) imports typing_extensions.
    build = ('  File "/home/u/pytorch/torchgen/utils.py", line 29, in <module>\n'
             "    from typing_extensions import Self\n"
             "ModuleNotFoundError: No module named 'typing_extensions'\n")
    assert stated(build) == ["build-needs-typing-extensions"]
    # Counter-case: `import torch` in an environment without it is no build.
    runtime = ('  File "/venv/lib/python3.10/site-packages/torch/__init__.py", line 12, in <module>\n'
               "    from typing_extensions import ParamSpec\n"
               "ModuleNotFoundError: No module named 'typing_extensions'\n")
    assert "build-needs-typing-extensions" not in stated(runtime)


def test_a_missing_system_blas_is_a_wheel_that_links_it_without_carrying_it() -> None:
    # dlerror's "<soname>: cannot open shared object file", also cut after the name.
    assert stated("ImportError: libopenblas.so.0\n") == ["wheel-undeclared-native-deps"]
    full = "OSError: libnvpl_blas_lp64_gomp.so.0: cannot open shared object file: No such file or directory\n"
    assert stated(full) == ["wheel-undeclared-native-deps"]
    # Counter-cases: other libraries keep their own causes; a name in prose is not the loader's.
    assert stated("ImportError: libmpi.so.40: cannot open shared object file: No such file\n") == [
        "mpi-library-missing"]
    assert "wheel-undeclared-native-deps" not in stated(
        "ImportError: libcublas.so.12: cannot open shared object file: No such file or directory\n")
    assert stated("ImportError: libopenblas.so.0 is fine here, see the log\n") == []


def test_conda_superseding_a_cuda_pytorch_with_a_cpu_build_is_the_channel_order() -> None:
    # conda's transaction summary (conda/plan.py display_actions); conda/conda#13011.
    head = "The following packages will be SUPERSEDED by a higher-priority channel:\n\n"
    text = head + ("  pytorch            pytorch::pytorch-2.0.1-py3.11_cuda11.~ --> "
                   "pkgs/main::pytorch-2.0.1-cpu_py311h53e38e9_0\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "conda-channel-priority-cpu-build" and "pkgs/main" in found.cause
    # Counter-cases: a CPU build replaced by a CUDA one, or the same line outside conda's summary.
    back = head + ("  pytorch   pkgs/main::pytorch-2.0.1-cpu_py311h5_0 --> "
                   "pytorch::pytorch-2.0.1-py3.11_cuda11.8_0\n")
    assert "conda-channel-priority-cpu-build" not in stated(back)
    alone = "  pytorch   pytorch::pytorch-2.0.1-py3.11_cuda11.~ --> pkgs/main::pytorch-2.0.1-cpu_py311h5_0\n"
    assert "conda-channel-priority-cpu-build" not in stated(alone)


def test_the_drivers_open_module_requirement_is_its_own_cause() -> None:
    # The driver's kernel log wording; NVIDIA: Grace Hopper and Blackwell need the open modules.
    text = ("NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:2c58)\n"
            "NVRM: installed in this system requires use of the NVIDIA open kernel modules.\n"
            "NVRM: GPU 0000:02:00.0: RmInitAdapter failed! (0x22:0x56:884)\n")
    assert stated(text) == ["blackwell-needs-open-kernel-module"]
    # Counter-case: the open modules named without a requirement.
    assert stated("I switched to the open kernel modules last week and the GPU works.\n") == []
