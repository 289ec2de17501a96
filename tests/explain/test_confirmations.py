"""A phrase several causes print states the family (candidates, no cause asserted); the specific
cause needs the evidence that sets it apart (``confirmed_by``) or a fact that proves it."""

from __future__ import annotations

from pathlib import Path

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report

from .test_signatures import CATALOG, KB, read_sample, stated

CORPUS = Path(__file__).parent / "corpus"


def test_devices_unavailable_alone_is_the_family_with_its_checks() -> None:
    # microsoft/WSL#6014: the same status a Windows build regression gave; nothing shows a compute mode.
    text = read_sample(CORPUS / "cuda-devices-unavailable--1.txt")[1]
    report = explain_report(text, CATALOG, kb=KB)
    (found,) = report.explanations
    assert found.signature.id == "cuda-devices-unavailable" and len(found.candidates) == 3
    assert ("gpu-exclusive-mode", "not shown in the text: exclusive mode shown") in report.contradicted


def test_exclusive_mode_is_stated_where_nvidia_smi_shows_it() -> None:
    text = read_sample(CORPUS / "gpu-exclusive-mode--1.txt")[1]  # NVIDIA/DIGITS#2005: "E. Process"
    assert extract(text, KB).environment.compute_mode == "E. Process"
    assert stated(text) == ["gpu-exclusive-mode"]
    for shown in ("    Compute Mode                          : Exclusive_Process",
                  "$ sudo nvidia-smi -i 0 -c EXCLUSIVE_PROCESS"):
        assert stated("all CUDA-capable devices are busy or unavailable\n" + shown) == ["gpu-exclusive-mode"]
    # A "Default" compute mode is no evidence.
    default = text.replace("E. Process", "   Default")
    assert extract(default, KB).environment.compute_mode is None
    assert stated(default) == ["cuda-devices-unavailable"]


def test_no_cuda_gpus_and_hip_no_code_assert_no_single_cause() -> None:
    for text, sig in (("RuntimeError: No CUDA GPUs are available", "no-cuda-gpus-available"),
                      ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
                       "hip-invalid-device-function")):
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == sig and len(found.candidates) >= 2


def test_a_cuda_status_printed_as_a_number_is_looked_up_in_the_enum() -> None:
    # deviceQuery (microsoft/WSL#6772) and glog's CHECK (NVIDIA/nvidia-docker#1256) print the code only.
    query = "cudaGetDeviceCount returned 100\n-> no CUDA-capable device is detected\nResult = FAIL"
    assert [g.name for g in extract(query, KB).gpu_errors] == ["cudaErrorNoDevice"]
    assert stated(query) == ["no-cuda-gpus-available"]
    check = "CUDA: Check failed: e == cudaSuccess (803 vs. 0) : something went wrong"
    assert [g.name for g in extract(check, KB).gpu_errors] == ["cudaErrorSystemDriverMismatch"]
    (found,) = explain_report(check, CATALOG, kb=KB).explanations
    assert found.signature.id == "cuda-driver-combination-unsupported" and len(found.candidates) == 2


def test_kernel_errors_are_one_family_and_an_assertion_is_its_own_cause() -> None:
    for message in ("an illegal memory access was encountered", "unspecified launch failure",
                    "misaligned address"):
        (found,) = explain_report(f"RuntimeError: CUDA error: {message}", CATALOG, kb=KB).explanations
        assert found.signature.id == "cuda-kernel-fault" and found.candidates
    assert stated("RuntimeError: CUDA error: device-side assert triggered") == ["device-side-assert"]


def test_the_stub_library_is_a_cause_the_enum_proves() -> None:
    text = read_sample(CORPUS / "libcuda-stub-loaded--1.txt")[1]  # NCCL's CUDACHECK wording
    assert [g.name for g in extract(text, KB).gpu_errors] == ["cudaErrorStubLibrary"]
    assert stated(text) == ["libcuda-stub-loaded"]


def test_a_half_kernel_missing_on_the_gpu_is_not_called_the_cpus() -> None:
    cpu = "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'"
    assert stated(cpu) == ["fp16-on-cpu"]
    gpu = "RuntimeError: \"nll_loss2d_forward_out_cuda_kernel\" not implemented for 'Half'"
    report = explain_report(gpu, CATALOG, kb=KB)
    assert not report.explanations and report.contradicted[0][0] == "fp16-on-cpu"


def test_no_working_triton_is_the_family_unless_the_platform_message_is_there() -> None:
    text = read_sample(CORPUS / "triton-not-working--1.txt")[1]
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "triton-not-working" and len(found.candidates) == 2
    both = "RuntimeError: Windows not yet supported for torch.compile\n" + text
    assert stated(both) == ["torch-compile-unsupported-platform"]


def test_nvml_unknown_error_is_lost_access_only_where_the_text_says_so() -> None:
    lost = read_sample(CORPUS / "container-lost-gpu-access--1.txt")[1]  # "... daemon-reload ..."
    assert stated(lost) == ["container-lost-gpu-access"]
    bare = read_sample(CORPUS / "nvml-unknown-error--1.txt")[1]
    (found,) = explain_report(bare, CATALOG, kb=KB).explanations
    assert found.signature.id == "nvml-unknown-error" and len(found.candidates) == 3


def test_the_score_counts_a_match_with_candidates_as_a_family_never_as_wrong() -> None:
    import importlib.util
    import sys

    tools = Path(__file__).resolve().parents[2] / "tools"
    sys.path.insert(0, str(tools))
    try:
        spec = importlib.util.spec_from_file_location("explain_score", tools / "explain_score.py")
        assert spec is not None and spec.loader is not None
        score = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(score)
    finally:
        sys.path.remove(str(tools))
    record = {"cause": "wsl-windows-build-regression"}
    assert score.judge(record, ["cuda-devices-unavailable"], {"cuda-devices-unavailable"}) == "generic-only"
    assert score.judge(record, ["gpu-exclusive-mode"], set()) == "wrong"
    assert score.judge({"cause": "no-cuda-gpus-available"}, ["no-cuda-gpus-available"],
                       {"no-cuda-gpus-available"}) == "named"


def test_out_of_memory_at_cuda_initialisation_is_not_called_the_workload() -> None:
    # microsoft/WSL#9092: torch's warning from cudaGetDeviceCount carries CUDA's status 2.
    init = ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some "
            "cuda functions before calling NumCudaDevices() that might have already set an error? "
            "Error 2: out of memory (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)")
    (error,) = extract(init, KB).gpu_errors
    assert (error.name, error.stage) == ("cudaErrorMemoryAllocation", "init")
    report = explain_report(init, CATALOG, kb=KB)
    assert report.contradicted[0][0] == "cuda-out-of-memory"
    # what is left is the status itself: the family, with candidates, states no cause
    (family,) = report.explanations
    assert family.signature.id == "gpu-library-status" and family.candidates
    assert stated("RuntimeError: CUDA error: out of memory") == ["cuda-out-of-memory"]


def test_nccls_own_error_number_is_not_read_as_a_cuda_status() -> None:
    text = "RuntimeError: NCCL Error 2: unhandled system error"
    assert [g.api for g in extract(text, KB).gpu_errors] == ["nccl"]
    assert stated(text) == ["nccl-system-error"]


def test_a_cudnn_library_of_another_release_is_not_called_missing() -> None:
    # davisking/dlib#2719: glibc's loader found cuDNN's libraries, of two releases.
    text = ("Could not load library libcudnn_cnn_train.so.8. Error: "
            "/usr/local/cuda-11.1/targets/x86_64-linux/lib/libcudnn_ops_train.so.8: symbol "
            "_Z22cudnnGenericOpTensorNdILi3EE13cudnnStatus_tP12cudnnContext, version libcudnn_ops_infer.so.8 "
            "not defined in file libcudnn_ops_infer.so.8 with link time reference")
    (library,) = extract(text, KB).libraries
    assert library.problem == "incompatible"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "cudnn-version-incompatible"
    assert "torch was built" not in found.cause and "of another release" in found.cause


def test_a_killed_compiler_is_out_of_memory_only_where_the_oom_killer_is_shown() -> None:
    # microsoft/vcpkg#22566: gcc prints this for any kill from outside (gcc/gcc.cc: "the user or
    # OOM killer"); a time limit's SIGKILL reads the same
    text = read_sample(CORPUS / "compiler-killed--1.txt")[1]
    assert stated(text) == ["compiler-killed"]
    report = explain_report(text, CATALOG, kb=KB)
    assert len(report.explanations[0].candidates) == 3
    not_shown = "not shown in the text: oom kill shown or killed in image build"
    assert ("compiler-killed-oom", not_shown) in report.contradicted
    for shown in ("[ 812.3] Out of memory: Killed process 4182 (cc1plus) total-vm:812044kB",
                  "kernel: cc1plus invoked oom-killer: gfp_mask=0x100cca", "Reason: OOMKilled",
                  "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=12.batch"):
        assert stated(text + "\n" + shown) == ["compiler-killed-oom"], shown
    # the site's name or a prose guess is no log line
    assert stated(text + "\nI asked on Stack Overflow; maybe memory?") == ["compiler-killed"]


def test_nvidia_uvm_needs_the_node_missing_or_a_reload_that_cleared_the_error() -> None:
    # a modprobe someone suggests proves nothing; one that cleared the error does (pytorch#49081)
    assert stated("Try: sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm") == []
    assert stated("sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm, but this only silenced "
                  "the error") == ["nvidia-uvm-not-loaded"]
    text = read_sample(CORPUS / "nvidia-uvm-not-loaded--1.txt")[1]  # pop-os: "until we reload"
    assert stated(text) == ["nvidia-uvm-not-loaded"]
    missing = "ls: cannot access '/dev/nvidia-uvm': No such file or directory"
    assert stated(missing) == ["nvidia-uvm-not-loaded"]


def test_pip_killed_is_out_of_memory_only_where_the_oom_killer_is_shown() -> None:
    # timerring/bilive#274: "Killed" after the download; the reporter's guess is no log line
    text = read_sample(CORPUS / "pip-killed--1.txt")[1]
    assert stated(text) == ["pip-killed"]
    shown = read_sample(CORPUS / "pip-killed-oom--1.txt")[1]  # pytorch#1022: dmesg's OOM line
    assert stated(shown) == ["pip-killed-oom"]


def test_a_kill_inside_an_image_build_step_is_the_out_of_memory_killer() -> None:
    # No terminal, job time limit or supervisor signals a build step; a cancelled build says so.
    pip = ("Step 4/9 : RUN pip install torch==2.1.0\n"
           "Collecting torch==2.1.0\n  Downloading torch-2.1.0-cp310-cp310-manylinux1_x86_64.whl (670.2 MB)\n"
           "Killed\n")
    assert stated(pip) == ["pip-killed"]
    # the classic builder's report (moby builder/dockerfile/internals.go), BuildKit's (ops/exec.go)
    classic = "The command '/bin/sh -c pip install torch==2.1.0' returned a non-zero code: 137"
    buildkit = ('ERROR: failed to solve: process "/bin/sh -c pip install torch==2.1.0" did not complete '
                "successfully: exit code: 137")
    buildah = ('Error: building at STEP "RUN pip install torch==2.1.0": while running runtime: '
               "exit status 137")
    kaniko = ("error building image: error building stage: failed to execute command: waiting for "
              "process to exit: signal: killed")
    for report in (classic, buildkit, buildah, kaniko):
        assert stated(pip + report) == ["pip-killed-oom"], report
        (found,) = explain_report(pip + report, CATALOG, kb=KB).explanations
        assert "exited with code 137" in found.cause
    # another exit code is the step's own failure, not a kill; a cancelled build kills its step too
    assert stated(pip + classic.replace("137", "1")) == ["pip-killed"]
    assert stated(pip + buildkit + "\nERROR: failed to solve: Canceled: context canceled") == ["pip-killed"]
    gcc = "c++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated."
    assert stated(gcc) == ["compiler-killed"]
    for said in ("$ docker build -t myimage .", "Building the Docker image fails:", "podman build ."):
        assert stated(said + "\n" + gcc) == ["compiler-killed-oom"], said
    # a container that is only run, or an image only pulled, is no build
    for other in ("$ docker run --rm -it myimage make -j8",
                  "docker pull nvidia/cuda:12.1.0-devel-ubuntu22.04"):
        assert stated(other + "\n" + gcc) == ["compiler-killed"], other


def test_the_macos_architecture_message_is_read_in_its_direction() -> None:
    # dyld prints what the file has and what the process needs
    arm64_python = read_sample(CORPUS / "macos-library-wrong-architecture--1.txt")[1]  # google/pytype#1515
    assert stated(arm64_python) == ["macos-library-wrong-architecture"]
    # An arm64 library in an x86_64 process: an x86_64 Python under Rosetta only where the Mac is shown
    # to be Apple silicon; on an Intel Mac an arm64-only package cannot run at all (dream-textures#346).
    x86_process = read_sample(CORPUS / "macos-library-wrong-architecture--2.txt")[1]  # ml-explore/mlx#621
    assert stated(x86_process) == ["macos-library-wrong-architecture"]
    intel = ("OSError: dlopen(/Users/me/addon/torch/lib/libtorch_global_deps.dylib, 0x000A): tried: "
             "'/Users/me/addon/torch/lib/libtorch_global_deps.dylib' (mach-o file, but is an incompatible "
             "architecture (have (arm64), need (x86_64h)))\n")
    (family,) = explain_report(intel, CATALOG, kb=KB).explanations
    assert family.signature.id == "macos-library-wrong-architecture" and family.candidates
    assert "built for arm64: the process needs x86_64h" in family.cause
    assert stated("Chip: Apple M1 Pro\n" + intel) == ["x86-python-on-apple-silicon"]


def test_a_missing_windows_path_is_a_long_path_only_beyond_max_path() -> None:
    # pip hints at Long Path support only above 260 characters (pip/_internal/commands/install.py)
    def missing(path: str) -> str:
        return ("ERROR: Could not install packages due to an OSError: [Errno 2] "
                f"No such file or directory: '{path}'")
    deep = "C:\\\\Users\\\\me\\\\AppData\\\\Local\\\\Temp\\\\pip-install-x\\\\" + "a" * 250
    assert stated(missing(deep)) == ["windows-long-paths"]
    short = "C:\\\\Users\\\\me\\\\AppData\\\\Local\\\\Temp\\\\pip-install-x\\\\" + "a" * 180  # 219 characters
    assert "windows-long-paths" not in stated(missing(short))


def test_cmakes_findcuda_message_alone_is_not_find_package_torch() -> None:
    assert stated("-- Could NOT find CUDA (missing: CUDA_TOOLKIT_ROOT_DIR CUDA_NVCC_EXECUTABLE)") == []


def test_a_dataloader_bus_error_is_shared_memory_only_where_it_is_shown_full() -> None:
    # hkchengrex/STCN#132: torch's own message says only "it is possible"
    text = read_sample(CORPUS / "dataloader-worker-bus-error--1.txt")[1]
    assert stated(text) == ["dataloader-worker-bus-error"]
    full = "RuntimeError: unable to write to file </torch_18692_1954506982>: No space left on device (28)"
    # pangeo-data/pangeo-docker-images#258: an older torch names no errno after the shm object it
    # could not write (MapAllocator's one-byte write into the object it sized: tmpfs had no page)
    older = "RuntimeError: unable to write to file </torch_1394_2747491098>"
    for shown in (full, older,
                  "shm              64M   64M     0 100% /dev/shm"):
        assert stated(text + "\n" + shown) == ["dataloader-shm-too-small"], shown
    # a container started with Docker's default /dev/shm (64 MB); not where the run sets it
    run = "$ docker run --gpus all -it \\\n    -v /data:/data my-image python train.py"
    assert extract(run, KB).environment.docker_shm == "default"
    assert stated(run + "\n" + text) == ["dataloader-shm-too-small"]
    for given in ("--shm-size=8g", "--ipc=host", "--ipc host"):
        wider = run.replace("-v /data", f"{given} -v /data")
        assert extract(wider, KB).environment.docker_shm == "set", given
        assert stated(wider + "\n" + text) == ["dataloader-worker-bus-error"], given
    # a run of nvidia-smi that checks the GPU is not the workload; a Compose file sets the size
    check = "$ docker run --rm --gpus all nvidia/cuda:12.1.0-base-ubuntu22.04 nvidia-smi"
    assert extract(check, KB).environment.docker_shm is None
    assert stated(check + "\n" + text) == ["dataloader-worker-bus-error"]
    for compose in ("services:\n  train:\n    shm_size: '16gb'", "services:\n  train:\n    ipc: host"):
        assert extract(run + "\n" + compose, KB).environment.docker_shm == "set", compose
    # df -h shows the mount's size: Docker's (and Kubernetes') 64 MB or less is evidence, a larger one
    # is none, whatever a docker run asked for
    header = "Filesystem      Size  Used Avail Use% Mounted on\n"
    for row in ("shm              64M     0   64M   0% /dev/shm",
                "tmpfs            32M  1.2M   31M   4% /dev/shm"):
        assert extract(header + row, KB).environment.docker_shm == "small", row
        assert stated(text + "\n" + header + row) == ["dataloader-shm-too-small"], row
    for row in ("shm              16G     0   16G   0% /dev/shm",
                "tmpfs           7.8G  1.2M  7.8G   1% /dev/shm"):
        assert extract(run + "\n" + header + row, KB).environment.docker_shm == "set", row
        assert stated(text + "\n" + header + row) == ["dataloader-worker-bus-error"], row
    # another errno, or a file that is not torch's shm object, shows no full /dev/shm
    for other in ("RuntimeError: unable to write to file </torch_1394_2747491098>: Bad address (14)",
                  "RuntimeError: unable to write to file </data/cache.bin>"):
        assert stated(text + "\n" + other) == ["dataloader-worker-bus-error"], other


def test_a_pytorch_cuda_dependency_missing_is_the_platform_only_on_a_mac() -> None:
    # pytorch-cuda is noarch: a dependency it misses on Linux is a channel left out (-c nvidia)
    linux = "  - nothing provides cuda-cudart >=11.8,<11.9 needed by pytorch-cuda-11.8-h7e8668a_5"
    assert "conda-pytorch-cuda-unavailable" not in stated(linux)
    mac = read_sample(CORPUS / "conda-pytorch-cuda-unavailable--1.txt")[1]  # guoyww/AnimateDiff#293
    assert stated(mac) == ["conda-pytorch-cuda-unavailable"]


def test_tf32_in_words_is_stated_only_where_a_gpu_with_tf32_is_shown() -> None:
    # TF32 needs compute capability 8.0 (NVIDIA's Ampere tuning guide): words alone are the family
    text = "With allow_tf32 the results are different from the CPU."
    report = explain_report(text, CATALOG, kb=KB)
    (found,) = report.explanations
    assert found.signature.id == "float32-gpu-precision-in-question" and len(found.candidates) == 2
    assert ("tf32-precision", "not shown in the text: tf32 gpu shown") in report.contradicted
    assert stated(text + "\nGPU 0: NVIDIA A100-SXM4-80GB") == ["tf32-precision"]
    # a T4 (7.5) has no TF32: the family, never the cause
    assert stated(text + "\nGPU 0: Tesla T4") == ["float32-gpu-precision-in-question"]


def test_torchvision_ops_missing_names_both_reasons_its_library_did_not_load() -> None:
    # torchvision/extension.py swallows ImportError and OSError from loading _C: a wrong build or a
    # missing library both end in "operator torchvision::nms does not exist"
    text = read_sample(CORPUS / "torchvision-ops-missing--1.txt")[1]
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "torchvision-ops-missing" and len(found.candidates) == 2
    assert "must be" not in found.cause and "not why" in found.cause
    # its counter-case: operators used before torchvision was imported is a cause the message proves
    unknown = "RuntimeError: Unknown builtin op: torchvision::nms."
    (other,) = explain_report(unknown, CATALOG, kb=KB).explanations
    assert other.signature.id == "torchvision-ops-not-registered" and not other.candidates


def test_rocm_permission_denied_does_not_assert_the_group() -> None:
    # rocminfo prints the denied open, then whether the user is in the group: ROCm/ROCm#6142 is in it
    text = "Unable to open /dev/kfd read-write: Permission denied"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "rocm-device-permission" and len(found.candidates) == 3
    assert "not in the render/video groups" not in found.cause
    # its counter-case: a node that is not there (a container without --device) is not a permission
    absent = "Unable to open /dev/kfd read-write: No such file or directory"
    assert "rocm-device-permission" not in stated(absent)



def test_the_container_hook_failing_to_load_nvml_is_the_engines_side_not_libcuda() -> None:
    # libnvidia-container driver.c: the hook dlopens libnvidia-ml.so.1 where the engine runs
    text = ("stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: "
            "load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "nvidia-container-cli-driver-library" and len(found.candidates) == 3
    # Counter-case: the same library missing inside a process is the loader's complaint about the driver.
    loader = "ImportError: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"
    assert stated(loader) == ["libcuda-missing"]


def test_no_driver_during_an_image_build_is_the_build_step_else_the_family() -> None:
    message = "AssertionError: Found no NVIDIA driver on your system. Please check that you have a GPU"
    for build in ("Step 7/12 : RUN pip install -v --no-cache-dir ./apex",
                  "#9 [builder 5/8] RUN python setup.py install"):
        assert stated(build + "\n" + message) == ["gpu-not-available-during-docker-build"], build
    # Counter-cases: a running container or a machine without a driver shows no build: the family.
    for other in ("$ docker run -it my-image python train.py", "$ python train.py"):
        (found,) = explain_report(other + "\n" + message, CATALOG, kb=KB).explanations
        assert found.signature.id == "no-nvidia-driver" and len(found.candidates) == 4


def test_windows_paging_file_message_is_read_in_the_users_language() -> None:
    # pytorch/pytorch#12711: FormatMessage's text for ERROR_COMMITMENT_LIMIT (1455) in zh-CN and ja-JP
    for message in ("ImportError: DLL load failed: 页面文件太小，无法完成操作。",
                    "DLL load failed: ページング ファイルが小さすぎるため、この操作を完了できません"):
        assert stated(message) == ["windows-paging-file-too-small"], message
        assert not extract(message + '\nError loading "C:\\torch\\lib\\cudnn64_8.dll"', KB).libraries
    # Counter-case: a DLL that could not be found states no single cause.
    (found,) = explain_report("ImportError: DLL load failed: The specified module could not be found.",
                              CATALOG, kb=KB).explanations
    assert found.signature.id == "windows-dll-load-failed" and len(found.candidates) >= 3
