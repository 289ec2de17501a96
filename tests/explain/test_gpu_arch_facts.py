"""Which binary lacks the GPU's code, decided from the facts a text holds: the GPU it names, the torch
build it names (read through the shipped arch lists of torch_releases.json) and the CUDA release that
build targets (the arch-support data). Each rule has texts where the fact is absent or points the other
way, where the family must keep speaking."""

from __future__ import annotations

from tests.explain.test_signatures import stated

from torchsmith.explain.extract import extract

# cudaGetErrorString(cudaErrorNoKernelImageForDevice), as torch's C10_CUDA_CHECK raises it
_NO_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


def test_torch_build_that_carries_the_gpu_leaves_the_kernel_image_to_an_extension() -> None:
    # torch 2.4.1+cu121 carries sm_80 and sm_86: its own kernels run on an A6000 or an A100
    text = "Environment: torch 2.4.1+cu121, GPU: NVIDIA RTX A6000\n" + _NO_IMAGE
    assert stated(text) == ["extension-arch-not-compiled"]
    # the release alone: every CUDA variant of 2.4.1 carries sm_80
    assert stated("pytorch2.4.1, GPU: NVIDIA A100-SXM4-80GB\n" + _NO_IMAGE) == ["extension-arch-not-compiled"]
    # torch's own printed list has the GPU's code
    listed = ("GPU: NVIDIA GeForce RTX 3090\n>>> torch.cuda.get_arch_list()\n"
              "['sm_50', 'sm_60', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_90']\n" + _NO_IMAGE)
    assert stated(listed) == ["extension-arch-not-compiled"]


def test_without_a_build_that_carries_every_gpu_named_the_family_speaks() -> None:
    assert stated("GPU: NVIDIA RTX A6000\n" + _NO_IMAGE) == ["no-kernel-image"]  # no torch named
    # 2.7.1: cu128 carries sm_120 but cu126 does not; the text does not say which was installed
    assert stated("pytorch2.7.1, GPU: GeForce RTX 5090\n" + _NO_IMAGE) == ["no-kernel-image"]
    # two GPUs, one of them outside the build (sm_120 is not in 2.4.1+cu121): which one ran?
    both = "torch 2.4.1+cu121 on a machine with an RTX A6000 and an RTX 5090\n" + _NO_IMAGE
    assert "extension-arch-not-compiled" not in stated(both)
    # the build lacks the GPU: torch's own kernels are missing, not an extension's
    assert stated("torch 2.4.1+cu121, GPU: GeForce RTX 5090\n" + _NO_IMAGE) == ["arch-not-compiled"]
    # a Jetson's integrated GPU runs other builds than the data's x86 and SBSA wheels
    assert "extension-arch-not-compiled" not in stated(
        "torch 2.4.1+cu121 on a Jetson AGX Orin\n" + _NO_IMAGE)


def test_nccls_own_kernels_are_not_an_extensions() -> None:
    # NCCL's own warning (src/include/checks.h CUDACHECK: "Cuda failure '%s'") and torch's NCCL error:
    # NCCL's kernels may predate the GPU (an older NCCL than the build's) whatever torch carries
    text = ("torch 2.7.0+cu128, GPU: NVIDIA GeForce RTX 5090\n"
            "node1:123:456 [0] enqueue.cc:1556 NCCL WARN Cuda failure 'no kernel image is available for"
            " execution on the device'\n"
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:1970, unhandled cuda error, NCCL version 2.20.5\n")
    assert "extension-arch-not-compiled" not in stated(text)


def test_an_extensions_own_message_still_names_its_call() -> None:
    # tinycudann's own search (bindings/torch/tinycudann/modules.py): no torch build needed
    text = "Could not find compatible tinycudann extension for compute capability 89.\n"
    assert stated(text) == ["extension-arch-not-compiled"]


def test_glued_torch_versions_name_the_build_in_use() -> None:
    assert extract("torch2.3.1 cuda11 A100\n").environment.torch == "2.3.1"
    assert extract("env: pytorch2.1.0+cu118\n").environment.torch == "2.1.0+cu118"
    assert extract("env: pytorch2.1.0+cu118\n").environment.torch_cuda == "11.8"
    # a requirement or a target is not the installed build
    assert extract("pip install torch==2.3.1\n").environment.torch is None
    assert extract("please upgrade to torch 2.3.1\n").environment.torch is None


# cufftResult's CUFFT_INTERNAL_ERROR as torch raises it (aten/src/ATen/native/cuda/CuFFTUtils.h)
_CUFFT = "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR\n"


def test_a_cufft_failure_on_a_gpu_newer_than_the_builds_cuda_release() -> None:
    # CUDA 11.7 compiles for up to sm_87; the first release that compiles for sm_89 is 11.8
    text = "torch.stft fails with pytorch with cu117 on an RTX 4080\n" + _CUFFT
    assert stated(text) == ["cuda-build-older-than-gpu"]
    # both GPUs named are Ada: whichever ran, CUDA 11.7 predates it
    assert stated("PyTorch (cu117), GPUs: RTX 4090 and RTX 4080\n" + _CUFFT) == ["cuda-build-older-than-gpu"]


def test_a_cufft_failure_without_an_older_build_stays_a_status() -> None:
    assert stated("pytorch with cu118 on an RTX 4080\n" + _CUFFT) == ["gpu-library-status"]
    # an Ampere card beside the Ada one: CUDA 11.7 compiles for it
    assert stated("pytorch with cu117; GPUs: RTX 4090 and RTX 3090\n" + _CUFFT) == ["gpu-library-status"]
    # a build wanted ("for cu117") is not the build installed
    assert stated("which torch for cu117 works on an RTX 4090?\n" + _CUFFT) == ["gpu-library-status"]
    assert extract("pytorch with cu117\n").environment.torch_cuda == "11.7"
    assert extract("torch for cu117\n").environment.torch_cuda is None


def test_a_release_named_without_its_variant_lacks_the_gpu_only_where_no_variant_carries_it() -> None:
    # collect_env's line names the release; none of 2.0.1's CUDA variants (cu117, cu118) has sm_120
    text = _NO_IMAGE + "PyTorch version: 2.0.1\nGPU 0: NVIDIA GeForce RTX 5090\n"
    assert stated(text) == ["arch-not-compiled"]
    # every CUDA variant of 2.4.1 starts at sm_50 or above: a Kepler K40 (sm_35) is older than all
    assert stated(_NO_IMAGE + "PyTorch version: 2.4.1\nGPU 0: Tesla K40m\n") == ["gpu-too-old-for-torch"]
    # 2.4.1+cu118 still carries sm_37: the K80 runs on one variant, so the text does not decide
    assert stated(_NO_IMAGE + "PyTorch version: 2.4.1\nGPU 0: Tesla K80\n") == ["no-kernel-image"]
    # 2.7.1's cu128 carries sm_120, its cu126 does not: which was installed?
    rtx5090 = _NO_IMAGE + "PyTorch version: 2.7.1\nGPU 0: NVIDIA GeForce RTX 5090\n"
    assert stated(rtx5090) == ["no-kernel-image"]


# HIP's own name for the missing code object (hip_code_object.cpp) as torch's ROCm build prints it
_NO_CODE_OBJECT = '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"\n'


def test_a_torch_release_named_without_its_rocm_release_lacks_a_target_none_of_its_builds_carry() -> None:
    # torch_releases.json: 2.0.1's one ROCm build (rocm5.4.2) carries gfx1030 but not gfx1100
    text = "PyTorch version: 2.0.1\nName: gfx1100\n>>> import torch\n" + _NO_CODE_OBJECT
    assert stated(text) == ["rocm-gfx-target-unsupported"]
    # a target one build of it carries (gfx1030), or no torch release named: the family
    assert stated(text.replace("gfx1100", "gfx1030")) == ["hip-invalid-device-function"]
    assert stated("Name: gfx1100\n>>> import torch\n" + _NO_CODE_OBJECT) == ["hip-invalid-device-function"]


def test_cudnn_9s_own_arch_and_execution_statuses_on_a_gpu_newer_than_the_build() -> None:
    # cudnnStatus_t of cuDNN 9 (cudnn_graph.h): the v8 names split into sub-statuses
    for status in ("CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", "CUDNN_STATUS_EXECUTION_FAILED_CUDART"):
        text = (f"torch.__version__: 2.1.2+cu118\nGPU 0: NVIDIA GeForce RTX 5080\n"
                f"RuntimeError: cuDNN error: {status}\n")
        assert stated(text) == ["cuda-build-older-than-gpu"], status
        assert stated(text.replace("RTX 5080", "RTX 4080")) == ["gpu-library-status"], status
