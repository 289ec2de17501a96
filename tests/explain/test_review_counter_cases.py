"""Counter-cases from review: unseen texts of the same shape as a confirmed or asserted cause, in
which that cause is false; each beside the case the rule was written for."""

from __future__ import annotations

from tests.explain.test_signatures import stated

_PIP_KILLED = ("Collecting torch==2.1.0\n"
               "  Downloading torch-2.1.0-cp310-cp310-manylinux1_x86_64.whl (670.2 MB)\n"
               "Killed\n")


def test_a_kill_is_an_image_builds_only_between_the_build_start_and_its_end() -> None:
    # the case it was written for: the kill inside the build a command started
    assert stated("$ docker build -t trainer .\nStep 4/9 : RUN pip install torch==2.1.0\n"
                  + _PIP_KILLED) == ["pip-killed-oom"]
    # the build finished and a container ran the install: a container can be killed by anyone
    after = ("$ docker build -t trainer .\nSuccessfully built 3f2a1b9c0d11\n"
             "Successfully tagged trainer:latest\n$ docker run --rm trainer pip install torch==2.1.0\n"
             + _PIP_KILLED)
    assert stated(after) == ["pip-killed"]
    # the build is named only after the kill, as another attempt
    before = ("$ pip install torch==2.1.0\n" + _PIP_KILLED
              + "I then tried building the docker image instead, which worked.\n")
    assert stated(before) == ["pip-killed"]


_NAME_ERROR = ('  File "/home/u/GroundingDINO/groundingdino/models/GroundingDINO/ms_deform_attn.py", line 53,'
               " in forward\n    output = _C.ms_deform_attn_forward(\nNameError: name '_C' is not defined\n")


def test_an_undefined_compiled_module_is_unbuilt_only_where_its_import_error_is_not_shown() -> None:
    # GroundingDINO wraps `from groundingdino import _C` in a bare except: the NameError alone is the case
    assert stated("UserWarning: Failed to load custom C++ ops. Running on CPU mode Only!\n"
                  + _NAME_ERROR) == ["extension-not-built"]
    # the same except swallows a built module that fails to load: its error shown is the cause
    abi = ("ImportError: /home/u/GroundingDINO/groundingdino/_C.cpython-310-x86_64-linux-gnu.so: undefined "
           "symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs\n")
    assert stated(abi + _NAME_ERROR) == ["extension-abi-mismatch"]
    missing = "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
    assert "extension-not-built" not in stated(missing + _NAME_ERROR)
    dll = "ImportError: DLL load failed while importing _C: The specified procedure could not be found.\n"
    assert "extension-not-built" not in stated(dll + _NAME_ERROR)


_CUBLAS = ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, "
           "opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n")


def test_a_torch_variant_in_words_is_the_build_only_where_the_text_names_one() -> None:
    # "pytorch with cu117" alone names the build in use: CUDA 11.7 predates an RTX 4090 (sm_89)
    one = "GPU: NVIDIA GeForce RTX 4090\nI installed pytorch with cu117.\n" + _CUBLAS
    assert stated(one) == ["cuda-build-older-than-gpu"]
    # two variants named: the words do not say which one runs
    two = ("GPU: NVIDIA GeForce RTX 4090\nI first installed pytorch with cu117, then reinstalled it for "
           "cu121 as the README says.\n" + _CUBLAS)
    assert "cuda-build-older-than-gpu" not in stated(two)


def test_a_torch_version_glued_to_its_name_is_read_only_where_one_is_glued() -> None:
    kernel = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    assert stated("Env: torch2.6.0 cuda12.4, RTX 5090\n" + kernel) == ["arch-not-compiled"]
    # an upgrade names two: the one that failed is not the first
    upgrade = "I upgraded from torch2.6.0 to torch2.7.1 for my RTX 5090 and now:\n" + kernel
    assert "arch-not-compiled" not in stated(upgrade)


def test_a_companion_at_another_torchs_release_is_the_cause_only_of_an_import_or_operator_failure() -> None:
    listing = "torch        2.1.0\ntorchvision  0.15.2\n"  # torchvision 0.15.2 pins torch==2.0.1
    nms = ('  File "/venv/lib/python3.10/site-packages/torchvision/_meta_registrations.py", line 164, in '
           "<module>\nRuntimeError: operator torchvision::nms does not exist\n")
    assert stated(listing + nms) == ["companion-needs-other-torch"]
    # the user's own bug raised in torchvision's code; an OOM in its op: the work fails, not the pairing
    bug = ('  File "/venv/lib/python3.10/site-packages/torchvision/transforms/functional.py", line 140, in '
           "to_tensor\nTypeError: pic should be PIL Image or ndarray. Got <class 'torch.Tensor'>\n")
    assert "companion-needs-other-torch" not in stated(listing + bug)
    oom = ('  File "/venv/lib/python3.10/site-packages/torchvision/ops/roi_align.py", line 238, in '
           "roi_align\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB\n")
    assert stated(listing + oom) == ["cuda-out-of-memory"]


def test_a_placeholder_pip_never_expands_is_not_said_to_be_an_unset_variable() -> None:
    from tests.explain.test_signatures import CATALOG, KB

    from torchsmith.explain.matcher import explain_report

    def cause(placeholder: str) -> str:
        said = f"torch==2.1.2+{placeholder}"
        text = (f"ERROR: Could not find a version that satisfies the requirement {said} (from versions: "
                f"2.1.0, 2.1.1, 2.1.2)\nERROR: No matching distribution found for {said}\n")
        report = explain_report(text, CATALOG, kb=KB)
        return next(e.cause for e in report.explanations
                    if e.signature.id == "requirement-placeholder-not-substituted")

    assert "only where it is set" in cause("${DEVICE}")
    # pip's _ENV_VAR_RE (req/req_file.py) takes capitals, digits and _ only: ${device} is never expanded
    assert "only where it is set" not in cause("${device}")
    assert "never this one" in cause("${device}")


def test_nvrtc_refusing_the_gpu_architecture_is_too_old_only_for_a_gpu_newer_than_its_cuda() -> None:
    refused = "RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)\n"
    # CUDA 11.0's NVRTC compiles up to sm_80: an RTX 3090 (sm_86) is newer (pytorch/pytorch#47658)
    rtx3090 = "GPU 0: NVIDIA GeForce RTX 3090\ntorch 1.7.0+cu110\n"
    assert stated(rtx3090 + refused) == ["nvrtc-too-old-for-gpu"]
    # a Tesla K80 (sm_37) with CUDA 12's NVRTC: Kepler was dropped, the NVRTC is newer than the GPU
    k80 = "GPU 0: Tesla K80\ncupy-cuda12x 13.0.0, CUDA 12.2\n"
    assert "nvrtc-too-old-for-gpu" not in stated(k80 + refused)
    # an RTX 4090 (sm_89) with torch's CUDA 12.1: its NVRTC knows the GPU
    rtx4090 = "GPU 0: NVIDIA GeForce RTX 4090\ntorch 2.1.0+cu121\n"
    assert "nvrtc-too-old-for-gpu" not in stated(rtx4090 + refused)


def test_a_wheel_refused_by_a_pip_older_than_its_platform_tag_is_not_proven_for_another_platform() -> None:
    wheel = "torch-2.0.0-cp38-cp38-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    refused = f"ERROR: {wheel} is not a supported wheel on this platform.\n"
    # pip 19.3 reads manylinux2014 (pip's changelog): the refusal is the tags'
    assert stated("pip 19.3.1 from /usr/lib/python3/dist-packages/pip (python 3.8)\n" + refused) == [
        "wheel-not-supported"]
    # pip 19.2.3 reads neither tag: the wheel may be this interpreter's
    assert "wheel-not-supported" not in stated(
        "pip 19.2.3 from /usr/lib/python3/dist-packages/pip (python 3.8)\n" + refused)
    mac = ("ERROR: torch-2.0.0-cp38-none-macosx_11_0_arm64.whl is not a supported wheel on this platform.\n"
           "WARNING: You are using pip version 19.2.3, however version 23.0 is available.\n")
    assert "wheel-not-supported" not in stated(mac)


def test_a_crash_in_pybind11_is_a_registration_clash_only_inside_type_registration() -> None:
    # pytorch/pytorch#31439: scipy 1.4.0's pybind11 and torch's, crashing in make_new_python_type
    registering = ("PC: @     0x7f96f9542db6 pybind11::detail::make_new_python_type()\n"
                   "*** SIGSEGV (@0x330) received by PID 11372 (TID 0x7f97125fe740) from PID 816; "
                   "stack trace: ***\n")
    assert stated(registering) == ["pybind11-clash-between-packages"]
    # a cast at run time (an object cast from a thread of the extension's own, or after finalisation)
    # crashes in get_type_info / register_instance without any second registration
    for frame in ("pybind11::detail::register_instance()", "pybind11::detail::get_type_info()"):
        cast = (f"PC: @     0x7f0000542db6 {frame}\n"
                "    @     0x7f0000541111 pybind11::detail::type_caster_generic::cast()\n"
                "    @     0x7f0000540000 my_sim::WorkerThread::on_step()\n")
        assert "pybind11-clash-between-packages" not in stated(cast), frame


def test_tensorrt_refusing_a_gpu_older_than_turing_is_not_a_tensorrt_too_old() -> None:
    def refused(sm: int) -> str:
        return ("[TRT] [E] 1: [caskUtils.cpp::trtSmToCask::147] Error Code 1: Internal Error (Target GPU SM "
                f"{sm} is not supported by this TensorRT release.)\n")

    assert stated(refused(89)) == ["tensorrt-too-old-for-gpu"]  # Ada needs TensorRT 8.5+
    # a GTX 1080 Ti under TensorRT 10 (built for SM 7.0 and newer): the release dropped Pascal
    assert "tensorrt-too-old-for-gpu" not in stated("GPU 0: NVIDIA GeForce GTX 1080 Ti\n" + refused(61))


def test_a_driver_function_every_driver_has_missing_is_no_driver_too_old() -> None:
    def missing(symbol: str) -> str:
        return ("ImportError: /home/u/.cache/torch_extensions/py310_cu121/fused_ops/fused_ops.so: undefined "
                f"symbol: {symbol}\n")

    # green contexts came with CUDA 12.4's driver (sgl-project/sglang#8131)
    assert stated(missing("cuGreenCtxStreamCreate")) == ["call-requires-newer-driver"]
    # cuModuleGetFunction and cuGetErrorString are in every driver since CUDA 9.0: the extension was
    # linked without -lcuda
    for symbol in ("cuModuleGetFunction", "cuGetErrorString", "cuMemAlloc_v2"):
        assert "call-requires-newer-driver" not in stated(missing(symbol)), symbol


def test_a_header_the_torch_shown_ships_missing_is_no_source_for_another_torch() -> None:
    def missing(torch: str, header: str) -> str:
        return f"torch {torch}\n/home/u/ext/k.cu:3:10: fatal error: {header}: No such file or directory\n"

    # apex's DeviceUtils.cuh came after torch 1.8 (NVIDIA/apex#1200): the source needs a newer torch
    needs_other = ["extension-source-needs-other-torch"]
    assert stated(missing("1.8.1+cu111", "ATen/cuda/DeviceUtils.cuh")) == needs_other
    # torch 2.1 ships CUDAContext.h (since 1.0): the build did not pass torch's include directory
    assert needs_other[0] not in stated(missing("2.1.0+cu121", "ATen/cuda/CUDAContext.h"))
    # c10/cuda came with torch 1.1: a torch 1.0 is older than the source
    assert stated(missing("1.0.1", "c10/cuda/CUDAGuard.h")) == needs_other


def test_dfs_dev_shm_rows_confirm_a_small_shm_only_where_they_agree() -> None:
    bus = ("RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that "
           "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n")
    small = "shm              64M     0   64M   0% /dev/shm\n"
    assert stated(small + bus) == ["dataloader-shm-too-small"]
    # 64 MB, then 16 GB after --shm-size, and the bus error still: which mount failed is not shown
    resized = small + "recreated it with --shm-size=16g:\nshm              16G     0   16G   0% /dev/shm\n"
    assert "dataloader-shm-too-small" not in stated(resized + "but it still fails:\n" + bus)


def test_a_blas_routine_missing_from_a_conda_envs_torch_is_no_undeclared_wheel_dependency() -> None:
    symbol = "libtorch_cpu.so: undefined symbol: cblas_gemm_f16f16f32\n"
    jetson = "ImportError: /home/nv/.local/lib/python3.6/site-packages/torch/lib/" + symbol
    assert stated(jetson) == ["wheel-undeclared-native-deps"]
    # conda links torch against the env's libblas variant (here switched to openblas): conda's, not pip's
    conda = "ImportError: /home/u/miniforge3/envs/t/lib/python3.11/site-packages/torch/lib/" + symbol
    assert "wheel-undeclared-native-deps" not in stated(conda)
    # a board's pip wheel inside a Miniforge env is still the case the cause is written for
    board = "Linux raspberrypi 6.1.21-v8+ #1642 SMP PREEMPT aarch64 GNU/Linux\n" + conda
    assert stated(board) == ["wheel-undeclared-native-deps"]


def test_torchaudio_without_a_backend_is_not_nothing_installed_where_ffmpeg_is_shown() -> None:
    none = "RuntimeError: Couldn't find appropriate backend to handle uri /data/a.wav and format None.\n"
    assert stated(none) == ["torchaudio-no-backend"]
    # FFmpeg 7 is installed; torchaudio 2.1 loads FFmpeg 4 to 6 only: not "FFmpeg is not installed"
    banner = ("ffmpeg version 7.0.1 Copyright (c) 2000-2024 the FFmpeg developers\n"
              "torchaudio   2.1.0\n")
    assert "torchaudio-no-backend" not in stated(banner + none)


def test_a_jetson_running_nvidias_torch_image_is_not_on_the_generic_wheel() -> None:
    unavailable = "False\n"
    run = ('$ uname -r\n5.10.120-tegra\n$ docker run -it --rm {image} python3 -c "import torch; '
           'print(torch.cuda.is_available())"\n')
    # NGC's l4t-pytorch image carries NVIDIA's CUDA build of torch for the board: a container run
    # without --runtime nvidia sees no GPU, whatever the wheel
    for image in ("nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3", "dustynv/pytorch:2.1-r36.2.0"):
        assert "jetson-cpu-wheel" not in stated(run.format(image=image) + unavailable), image
    assert stated("Jetson Orin Nano, JetPack 5.1.2\n>>> torch.cuda.is_available()\nFalse\n") == [
        "jetson-cpu-wheel"]


def test_nvidia_uvm_missing_is_the_module_only_where_the_other_nvidia_nodes_are_there() -> None:
    uvm = "$ ls /dev/nvidia-uvm\nls: cannot access '/dev/nvidia-uvm': No such file or directory\n"
    host = "$ ls /dev/nvidia*\n/dev/nvidia0  /dev/nvidiactl  /dev/nvidia-modeset\n"
    assert "nvidia-uvm-not-loaded" in stated(host + uvm + "RuntimeError: CUDA error: unknown error\n")
    # a container started without GPU access has none of the nodes
    container = "# ls -l /dev/nvidia*\nls: cannot access '/dev/nvidia*': No such file or directory\n"
    assert "nvidia-uvm-not-loaded" not in stated(container + uvm + "False\n")


def test_another_pythons_libpython_missing_is_a_module_built_for_that_python() -> None:
    def text(site: str, lib: str) -> str:
        return (f'  File "{site}/site-packages/mypkg/__init__.py", line 3, in <module>\n'
                f"ImportError: {lib}: cannot open shared object file: No such file or directory\n")

    same = text("/home/u/.pyenv/versions/3.10.4/lib/python3.10", "libpython3.10.so.1.0")
    assert stated(same) == ["libpython-not-on-loader-path"]
    other = text("/home/u/venv/lib/python3.10", "libpython3.8.so.1.0")
    assert "libpython-not-on-loader-path" not in stated(other)


def test_a_stub_libcuda_where_no_driver_is_reachable_is_not_one_found_before_the_drivers() -> None:
    stub = "RuntimeError: CUDA driver is a stub library\n"
    ahead = ("$ nvidia-smi\n| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n"
             "$ echo $LD_LIBRARY_PATH\n/usr/local/cuda/lib64/stubs:/usr/local/cuda/lib64\n")
    assert stated(ahead + stub) == ["libcuda-stub-loaded"]
    # a container started without GPU access: the toolkit image's stub is the only libcuda
    bare = "root@3f2a:/# nvidia-smi\nbash: nvidia-smi: command not found\n"
    assert "libcuda-stub-loaded" not in stated(bare + stub)


def test_a_cudnn_of_another_release_names_the_only_copy_being_older_among_its_causes() -> None:
    from tests.explain.test_signatures import CATALOG, KB

    from torchsmith.explain.matcher import explain_report

    # an application built against a newer cuDNN 8 than the only one installed prints the same
    text = ("ImportError: /opt/app/lib/libapp_cuda.so: symbol cudnnGetLibConfig version libcudnn.so.8 not "
            "defined in file libcudnn.so.8 with link time reference\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "cudnn-version-incompatible"
    assert "the only cuDNN installed is older" in found.cause


def test_torchs_own_library_missing_inside_torchs_import_is_no_extension_imported_first() -> None:
    missing = "ImportError: libc10.so: cannot open shared object file: No such file or directory\n"
    assert stated(">>> import my_ext\n" + missing) == ["extension-imported-before-torch"]
    # torch/__init__.py itself failed: torch's own directory lacks the file (a half-removed install)
    inside = ('  File "/venv/lib/python3.10/site-packages/torch/__init__.py", line 237, in <module>\n'
              "    from torch._C import *  # noqa: F403\n")
    assert "extension-imported-before-torch" not in stated(">>> import torch\n" + inside + missing)


def test_accelerates_older_p2p_refusal_is_not_said_to_be_rtx_40xx_only() -> None:
    from tests.explain.test_signatures import CATALOG, KB

    from torchsmith.explain.matcher import explain_report

    # accelerate's older wording names the 3090, and users with four RTX 3090s met it
    text = ("NotImplementedError: Using RTX 3090 or 4000 series doesn't support faster communication "
            'broadband via P2P or IB. Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" or use '
            "`accelerate launch` which will do this automatically.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "gpu-p2p-unsupported-or-broken"
    assert "RTX 3090s too" in found.cause


def test_a_containers_nvml_failure_beside_a_driver_mismatch_is_not_a_systemd_reload() -> None:
    unknown = "$ docker exec trainer nvidia-smi\nFailed to initialize NVML: Unknown Error\n"
    lost = "The container worked for days, then suddenly:\n" + unknown
    assert stated(lost) == ["container-lost-gpu-access"]
    # the host's driver was updated underneath (unattended-upgrades): the host shows the mismatch
    updated = ("It worked before; last night the NVIDIA driver was updated, and now:\n" + unknown
               + "and on the host:\nFailed to initialize NVML: Driver/library version mismatch\n")
    assert "container-lost-gpu-access" not in stated(updated)


def test_no_gpu_after_the_image_build_ended_is_no_build_steps_failure() -> None:
    error = "RuntimeError: No CUDA GPUs are available\n"
    step = "$ docker build -t app .\nStep 5/9 : RUN python -c 'import torch; torch.zeros(1).cuda()'\n"
    assert stated(step + error) == ["gpu-not-available-during-docker-build"]
    # the build finished, then a container started without --gpus failed
    run = ("$ docker build -t app .\nSuccessfully tagged app:latest\n$ docker run app python train.py\n")
    assert "gpu-not-available-during-docker-build" not in stated(run + error)
