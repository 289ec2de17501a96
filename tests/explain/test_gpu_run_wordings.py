"""Running torch on GPUs and in containers, read in the tools' own wording: CUDA's device-side
assert line, CUPTI's versioned symbols, launcher variables a script reads itself, podman's stat of a
CDI name, Lightning's few-workers warning; each with a neighbour that must not be read the same way."""

from __future__ import annotations

from tests.explain.test_signatures import stated

_NONE = "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'\n"
_LINE = ("../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [492,0,0], thread: [127,0,0]"
         " Assertion `index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"` failed.\n")


def test_cudas_assert_line_is_a_device_side_assert_without_the_runtime_error() -> None:
    # CUDA C Programming Guide, "Assertion":
    # file:line: function: block: [...], thread: [...] Assertion `...` failed.
    assert stated(_LINE) == ["device-side-assert"]
    # a host-side C assert has no block/thread coordinates
    assert "device-side-assert" not in stated("python: src/x.c:10: main: Assertion `n > 0' failed.\n")


def test_a_cupti_symbol_missing_from_its_versioned_library_is_a_shadowed_cuda_library() -> None:
    text = ("ImportError: /x/site-packages/torch/lib/libtorch_cpu.so: undefined symbol:"
            " cuptiActivityEnableDriverApi, version libcupti.so.12\n")
    assert stated(text) == ["cuda-library-shadowed"]
    assert "cuda-library-shadowed" not in stated(
        "ImportError: /x/libfoo.so: undefined symbol: fooInit, version libfoo.so.1\n")


def test_a_launcher_variable_the_script_reads_itself_is_unset() -> None:
    getenv = '    world_size = int(os.getenv("WORLD_SIZE"))\n' + _NONE
    assert stated(getenv) == ["rendezvous-env-vars-not-set"]
    environ = ('  File "train.py", line 9, in <module>\n    local_rank = int(os.environ["LOCAL_RANK"])\n'
               '  File "/usr/lib/python3.10/os.py", line 680, in __getitem__\n'
               '    raise KeyError(key) from None\n'
               "KeyError: 'LOCAL_RANK'\n")
    assert stated(environ) == ["rendezvous-env-vars-not-set"]
    # another variable, or another error after the read, is not this cause
    other = '    n = int(os.getenv("NUM_GPUS"))\n' + _NONE
    assert "rendezvous-env-vars-not-set" not in stated(other)
    assert "rendezvous-env-vars-not-set" not in stated(
        '    rank = int(os.environ["RANK"])\nValueError: invalid literal for int() with base 10: \'\'\n')


def test_podman_stating_a_cdi_name_predates_cdi() -> None:
    assert stated("Error: stat nvidia.com/gpu=0: no such file or directory\n") == ["podman-too-old-for-cdi"]
    # a real device path that is missing, and newer podman's CDI refusal, are other causes
    assert "podman-too-old-for-cdi" not in stated("Error: stat /dev/nvidia0: no such file or directory\n")
    assert "podman-too-old-for-cdi" not in stated(
        'Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all\n')


def test_lightnings_few_workers_warning_speaks_only_without_a_failure() -> None:
    warn = ("UserWarning: The 'train_dataloader' does not have many workers which may be a bottleneck."
            " Consider increasing the value of the `num_workers` argument` to `num_workers=15` in the"
            " `DataLoader` to improve performance.\n")
    assert stated(warn) == ["dataloader-bottleneck"]
    oom = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert "dataloader-bottleneck" not in stated(warn + oom)


def test_another_container_tool_stating_a_cdi_name_is_not_an_old_podman() -> None:
    # nerdctl (and any Go tool) words a failed stat of a --device path the same way
    nerdctl = ("$ sudo nerdctl run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi\n"
               "FATA[0000] stat nvidia.com/gpu=all: no such file or directory\n")
    assert "podman-too-old-for-cdi" not in stated(nerdctl)
    podman = "$ podman run --rm --device nvidia.com/gpu=0 ubuntu nvidia-smi -L\n" \
             "Error: stat nvidia.com/gpu=0: no such file or directory\n"
    assert stated(podman) == ["podman-too-old-for-cdi"]


def test_a_library_failure_on_a_gpu_newer_than_the_builds_cuda_is_the_old_build() -> None:
    # arch-support data: CUDA 9.0 compiles for nothing newer than sm_72; an RTX 2080 is sm_75
    text = "RuntimeError: CUDNN_STATUS_EXECUTION_FAILED\npytorch:0.3.0-cuda9.0\ngpu: RTX 2080\n"
    assert stated(text) == ["cuda-build-older-than-gpu"]
    # a build whose CUDA knows the GPU, no build named, or two GPUs named: the family speaks
    assert stated(text.replace("cuda9.0", "cuda10.0")) == ["gpu-library-status"]
    assert stated(text.replace("pytorch:0.3.0-cuda9.0\n", "")) == ["gpu-library-status"]
    assert stated(text.replace("RTX 2080", "RTX 2080 and a GTX 1080")) == ["gpu-library-status"]
    # a failure that is not an execution or architecture status is not read this way
    assert "cuda-build-older-than-gpu" not in stated(text.replace("EXECUTION_FAILED", "ALLOC_FAILED"))


def test_the_pytorch_images_tag_names_the_builds_cuda() -> None:
    from torchsmith.explain.extract.environment import environment
    env = environment("FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-runtime\n", [])
    assert env.torch_cuda == "11.8"
    assert environment("docker pull nvidia/cuda:11.8.0-runtime-ubuntu22.04\n", []).torch_cuda is None
    # a torch installed over the image's is the build in use: its own +cuXYZ names the CUDA
    over = ("FROM pytorch/pytorch:1.0-cuda9.0-cudnn7-runtime\nRUN pip install torch==2.1.0+cu121\n"
            ">>> torch.__version__\n'2.1.0+cu121'\n")
    assert environment(over, []).torch_cuda == "12.1"
    text = over + "gpu: RTX 2080\nRuntimeError: CUDNN_STATUS_EXECUTION_FAILED\n"
    assert "cuda-build-older-than-gpu" not in stated(text)


def test_a_dataloader_worker_killed_by_sigkill_is_a_family() -> None:
    # torch/csrc/DataLoader.cpp names the signal with strsignal: SIGKILL is "Killed"; the OOM
    # killer, a limit or a person may have sent it, so no one cause is stated
    killed = "RuntimeError: DataLoader worker (pid 20371) is killed by signal: Killed.\n"
    assert stated(killed) == ["dataloader-worker-killed"]
    # a bus error is /dev/shm's family, not this one
    bus = "RuntimeError: DataLoader worker (pid 20371) is killed by signal: Bus error.\n"
    assert "dataloader-worker-killed" not in stated(bus)
