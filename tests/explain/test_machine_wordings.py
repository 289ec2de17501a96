"""Machine, driver, container and device messages read in their tools' own fixed wording (each from
the tool's source), with the texts that look alike but prove something else."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report


def test_tensors_on_two_devices_is_the_calling_code_on_cuda_and_on_mps() -> None:
    # aten/src/ATen/core/op_registration/adaption.cpp; MPS: OperationUtils.mm's Placeholder check
    cuda = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and cpu! (when checking argument for argument index in method wrapper__index_select)\n")
    (found,) = explain_report(cuda, CATALOG, kb=KB).explanations
    assert found.signature.id == "tensors-on-different-devices"
    assert "(cuda:0 and cpu)" in found.cause
    assert stated("RuntimeError: Placeholder storage has not been allocated on MPS device!\n") == [
        "tensors-on-different-devices"]
    # Older wordings of the same checks: TensorUtils.cpp's checkSameGPU/checkBackend, Convolution.cpp's
    # input and weight types, TH's device type
    for older in ("Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU (while checking "
                  "arguments for addmm)",
                  "Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 "
                  "'weight'; but device 1 does not equal 0 (while checking arguments for cudnn_convolution)",
                  "Expected tensor to have CUDA Backend, but got tensor with CPU Backend (while checking "
                  "arguments for cudnn_convolution)",
                  "Expected object of device type cuda but got device type cpu for argument #1 'self' in "
                  "call to _th_mm",
                  "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the "
                  "same",
                  "Input type (MPSFloatType) and weight type (torch.FloatTensor) should be the same"):
        assert stated(f"RuntimeError: {older}\n") == ["tensors-on-different-devices"], older
    # Counter-cases: a device named in words is no device mismatch; input and weight of two dtypes
    assert stated("Expected the model on the same device as before, but it moved\n") == []
    assert stated("RuntimeError: Input type (torch.FloatTensor) and weight type (torch.HalfTensor) should be "
                  "the same\n") == []


def test_an_mps_operation_needs_the_macos_torch_names_not_a_warning_that_falls_back() -> None:
    text = ("RuntimeError: MPS: max_pool2d op with int64 input is supported natively starting from "
            "macOS 13.0.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "mps-op-needs-newer-macos"
    assert "max_pool2d on int64 data needs macOS 13.0" in found.cause
    bfloat16 = "TypeError: MPS BFloat16 is only supported on MacOS 14 or newer\n"
    assert stated(bfloat16) == ["mps-op-needs-newer-macos"]
    # torch's warning that it falls back on the CPU is no failure
    warning = ("UserWarning: MPS: nonzero op is supported natively starting from macOS 13.0. Falling back on "
               "CPU. This may have performance implications.\n")
    assert stated(warning) == []


def test_modpost_refusing_the_nvidia_module_is_a_driver_older_than_the_kernel() -> None:
    # scripts/mod/modpost.c: "GPL-incompatible module %s.ko uses GPL-only symbol '%s'"
    text = "ERROR: modpost: GPL-incompatible module nvidia-drm.ko uses GPL-only symbol '__rcu_read_lock'\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "driver-too-old-for-kernel"
    assert "nvidia-drm.ko" in found.cause and "__rcu_read_lock" in found.cause
    # Another vendor's module is not the NVIDIA driver's
    zfs = "ERROR: modpost: GPL-incompatible module zfs.ko uses GPL-only symbol 'bio_start_io_acct'\n"
    assert stated(zfs) == []


def test_an_unresolvable_cdi_device_is_a_spec_the_engine_did_not_find() -> None:
    # container-device-interface pkg/cdi/cache.go: "unresolvable CDI devices %s"
    text = "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=0\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "cdi-spec-not-found"
    assert "nvidia.com/gpu=0" in found.cause
    assert stated("Error: setting up CDI devices: failed to inject devices\n") == []


def test_autocast_refusing_bfloat16_on_the_current_device_is_a_gpu_without_it() -> None:
    # torch/amp/autocast_mode.py raises it when torch.cuda.is_bf16_supported() is False
    text = "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.\n"
    assert stated(text) == ["bf16-unsupported-gpu"]
    assert stated("The current CUDA device supports bfloat16.\n") == []


def test_float16_and_nan_in_one_sentence_is_the_fp16_family_in_any_language() -> None:
    (found,) = explain_report("V100 FP16推理出现大量的数值溢出(nan)问题\n", CATALOG, kb=KB).explanations
    assert found.signature.id == "fp16-nan" and found.candidates  # a family: it asserts no cause
    # Counter-cases: no NaN, or a word that only contains the letters
    assert stated("FP16 inference is fast on the V100\n") == []
    assert stated("fp16 training with nanoGPT works\n") == []


def test_the_capability_warning_names_a_gpu_too_old_only_below_the_builds_oldest_arch() -> None:
    # torch/cuda/__init__.py prints the GPU's sm_XY and the build's arch list
    old = ("NVIDIA GeForce GTX 1080 with CUDA capability sm_61 is not compatible with the current PyTorch "
           "installation.\nThe current PyTorch install supports CUDA capabilities sm_75 sm_80 sm_86 sm_90 "
           "sm_100 sm_120.\n")
    (found,) = explain_report(old, CATALOG, kb=KB).explanations
    assert found.signature.id == "gpu-too-old-for-torch"
    assert "compute capability 6.1" in found.cause
    # Counter-case: a GPU newer than the build's newest arch is a build without it
    new = ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
           "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 "
           "sm_80 sm_86 sm_90.\n")
    assert stated(new) == ["arch-not-compiled"]


def test_a_rendezvous_address_that_is_no_hosts_is_a_wrong_master_addr() -> None:
    # torch/csrc/distributed/c10d/socket.cpp: the address the client socket connected to
    def socket(address: str) -> str:
        return (f"[W socket.cpp:663] [c10d] The client socket has failed to connect to [{address}]:29500 "
                "(errno: 110 - Connection timed out).\n")

    assert stated(socket("::ffff:255.255.0.0")) == ["rendezvous-address-wrong"]
    assert stated(socket("224.0.0.1")) == ["rendezvous-address-wrong"]
    assert stated(socket("::ffff:0.0.0.5")) == ["rendezvous-address-wrong"]  # MASTER_ADDR=5 (RFC 1122)
    # An ordinary or loopback address proves nothing: the family lists why a rank may not connect
    for address in ("::ffff:192.168.0.1", "node-0", "::1", "0.0.0.0"):
        (family,) = explain_report(socket(address), CATALOG, kb=KB).explanations
        assert family.signature.id == "rendezvous-unreachable" and family.candidates
    timed_out = ("torch.distributed.DistNetworkError: The client socket has timed out after 900s while "
                 "trying to connect to (10.1.2.3, 29500).\n")
    assert stated(timed_out) == ["rendezvous-unreachable"]


def test_hip_out_of_memory_on_a_device_smaller_than_any_listed_gpu_is_an_apus_carve_out() -> None:
    # formats.json rocm_gpu_vram: AMD's ROCm GPU specifications, the smallest listed is 4 GiB
    def oom(total: str) -> str:
        return (f"torch.cuda.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 MiB (GPU 0; {total} "
                "total capacity; 150.39 MiB already allocated; 312.00 MiB free)\n")

    (found,) = explain_report(oom("512.00 MiB"), CATALOG, kb=KB).explanations
    assert found.signature.id == "apu-vram-carveout-too-small" and "512.00 MiB" in found.cause
    # A discrete card's memory, less its firmware reserve, is the workload's size; so is CUDA's
    assert stated(oom("3.98 GiB")) == ["cuda-out-of-memory"]
    assert stated(oom("15.98 GiB")) == ["cuda-out-of-memory"]
    assert stated(oom("512.00 MiB").replace("HIP", "CUDA")) == ["cuda-out-of-memory"]


def test_a_gfx_target_no_build_for_the_named_rocm_carries_is_unsupported_there() -> None:
    # torch_releases.json: the gfx targets of each ROCm build (rocm6.1 lacks gfx1102, rocm6.4 has it)
    def text(gpu: str, rocm: str) -> str:
        return (f"rocm {rocm} with wheel pytorch at {gpu} => HSA_STATUS_ERROR_INVALID_ISA: The instruction "
                "set architecture is invalid. code: 0x100f\n")

    assert stated(text("RX 7600 XT", "6.1.0")) == ["rocm-gfx-target-unsupported"]
    # Counter-cases: a build that carries the target, a target carried, no ROCm named: the family
    for gpu, rocm in (("RX 7600 XT", "6.4"), ("RX 7900 XTX", "6.1.0")):
        (family,) = explain_report(text(gpu, rocm), CATALOG, kb=KB).explanations
        assert family.signature.id == "hip-invalid-device-function" and family.candidates
    assert stated("HSA_STATUS_ERROR_INVALID_ISA on my RX 7600 XT\n") == ["hip-invalid-device-function"]
    # HSA_OVERRIDE_GFX_VERSION set: the runtime loads that target's code, not the GPU's own
    overridden = "export HSA_OVERRIDE_GFX_VERSION=11.0.0\n" + text("RX 7600 XT", "6.1.0")
    assert "rocm-gfx-target-unsupported" not in stated(overridden)
    # Not torch: llama.cpp's own kernels on ROCm 6.1
    llama = "ggml_cuda_compute_forward: hipErrorNoBinaryForGpu on RX 7600 XT with ROCm 6.1 (llama.cpp)\n"
    assert stated(llama) == ["hip-invalid-device-function"]


def test_a_no_gpu_failure_of_one_vendors_build_beside_only_the_others_gpus_is_the_wrong_build() -> None:
    rocm_on_nvidia = 'gpu="Nvidia T4"\nRuntimeError: No HIP GPUs are available\n'
    assert stated(rocm_on_nvidia) == ["wrong-gpu-vendor-build"]
    cuda_on_amd = "GPU: AMD Radeon RX 7900 XTX\nRuntimeError: Found no NVIDIA driver on your system.\n"
    assert stated(cuda_on_amd) == ["wrong-gpu-vendor-build"]
    # Counter-cases: the vendor's own GPU named (an AMD card for HIP), no GPU named, an integrated
    # Radeon (an NVIDIA GPU may sit beside it)
    assert stated("GPU: Radeon RX 7900 XTX\nRuntimeError: No HIP GPUs are available\n") == [
        "no-hip-gpus-available"]
    assert stated("RuntimeError: No HIP GPUs are available\n") == ["no-hip-gpus-available"]
    igpu = "GPU: AMD Radeon 780M (Phoenix APU)\nRuntimeError: Found no NVIDIA driver on your system.\n"
    assert "wrong-gpu-vendor-build" not in stated(igpu)
    # a GPU named in a sentence may be another machine's: only a line that declares it proves it this one's
    for said in ("This happens on my AMD card; the same script works fine on my friend's RTX 4090.\n",
                 "The same code runs fine on an RTX 3090 under CUDA, but on our ROCm box it fails.\n"):
        hip = "RuntimeError: HIP error: invalid device function\n"
        assert "wrong-gpu-vendor-build" not in stated(hip + said)
    smi = "|   0  NVIDIA GeForce RTX 3090        Off |   00000000:01:00.0  On |                  N/A |\n"
    assert stated(smi + "RuntimeError: No HIP GPUs are available\n") == ["wrong-gpu-vendor-build"]
    said_amd = "It worked on my RX 7900 XTX at home; on the VM: Found no NVIDIA driver on your system.\n"
    assert "wrong-gpu-vendor-build" not in stated(said_amd)


def test_no_gpu_inside_a_slurm_job_is_the_jobs_gpu_request_family() -> None:
    job = 'srun python -c "import torch; print(torch.cuda.is_available())"\n# False\n'
    (family,) = explain_report(job, CATALOG, kb=KB).explanations
    assert family.signature.id == "scheduler-job-without-gpu" and len(family.candidates) == 3
    batch = "#SBATCH --partition=cpu\nRuntimeError: No CUDA GPUs are available\n"
    assert "scheduler-job-without-gpu" in stated(batch)
    # Counter-cases: the same check outside a job, a job that sees its GPU, srun named in a sentence
    check = 'python -c "import torch; print(torch.cuda.is_available())"\n'
    assert "scheduler-job-without-gpu" not in stated(check + "# False\n")
    assert stated("srun " + check + "# True\n") == []
    prose = "I do not use srun here; torch.cuda.is_available() False\n"
    assert "scheduler-job-without-gpu" not in stated(prose)


def test_gloo_connecting_to_a_loopback_peer_is_the_interface_it_picked() -> None:
    # gloo/transport/tcp/pair.cc: "connect <peer>: <strerror>"; the peer address is the one it advertised
    def pair(peer: str) -> str:
        return f"[/opt/gloo/gloo/transport/tcp/pair.cc:761] connect [{peer}]:60817: Connection refused\n"

    assert stated(pair("127.0.1.1")) == ["nccl-network-interface"]
    assert stated(pair("10.0.0.2")) == []  # a routable peer that refuses: nothing proves the interface
    # a job launched on one node: loopback reaches every peer, and the one refusing was not listening
    for launch in ("torchrun --standalone --nproc_per_node=4 train.py", "torchrun --nnodes=1 train.py",
                   "export MASTER_ADDR=localhost", "init_method='tcp://127.0.0.1:23456'"):
        assert "nccl-network-interface" not in stated(launch + "\n" + pair("127.0.1.1")), launch
    two = "torchrun --nnodes=2 --node_rank=0 train.py\n"
    assert stated(two + pair("127.0.1.1")) == ["nccl-network-interface"]
    # torchrun defaults to one node; a second node's rank shown voids that
    one = "torchrun --nproc_per_node=8 train.py\n"
    assert "nccl-network-interface" not in stated(one + pair("127.0.1.1"))
    other = one + "export NODE_RANK=1\n"
    assert stated(other + pair("127.0.1.1")) == ["nccl-network-interface"]


def test_no_cuda_in_the_xpu_build_is_the_code_asking_for_it() -> None:
    xpu = "PyTorch version: 2.8.0+xpu\nAssertionError: Torch not compiled with CUDA enabled\n"
    assert stated(xpu) == ["code-hardcodes-cuda"]
    pip_list = ("FAILED test/xpu/test_ops.py::test_mm_xpu - AssertionError: Torch not compiled with CUDA "
                "enabled\ntorch                        2.13.0.dev20260607+xpu\n")
    assert stated(pip_list) == ["code-hardcodes-cuda"]  # pip list's row names the installed torch
    # an +xpu torch on a machine whose GPUs are NVIDIA's (or AMD's) is the wrong build, not the code
    for gpu in ("NVIDIA GeForce RTX 4070", "AMD Radeon RX 7900 XTX"):
        assert "code-hardcodes-cuda" not in stated(f"{gpu}\n" + xpu), gpu
    # Counter-cases: a CPU build is the install; on a Mac the corpus labels it the CPU-only build
    linux = "PyTorch version: 2.8.0+cpu\nAssertionError: Torch not compiled with CUDA enabled\n"
    assert stated(linux) == ["torch-not-compiled-with-cuda"]
    assert stated("AssertionError: Torch not compiled with CUDA enabled on M1 Mac\n") == [
        "torch-not-compiled-with-cuda"]


def test_no_nvidia_module_for_the_running_kernel_beside_nvidia_smi_is_the_module_not_built_for_it() -> None:
    # kmod's modprobe.c: "Module %s not found in directory %s" (the running kernel's); nvidia-smi ran
    smi = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
           "latest NVIDIA driver is installed and running.\n")
    module = "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic\n"
    (found,) = explain_report(smi + module, CATALOG, kb=KB).explanations
    assert found.signature.id == "nvidia-module-not-built-for-kernel" and "6.8.0-45-generic" in found.cause
    # Counter-cases: no nvidia-smi (the driver may not be installed at all), nvidia-smi missing, WSL
    assert stated(module) == []
    assert stated("bash: nvidia-smi: command not found\n" + module) == ["nvidia-smi-not-found"]  # the family
    wsl = "Linux 5.15.153.1-microsoft-standard-WSL2\n"
    assert "nvidia-module-not-built-for-kernel" not in stated(wsl + smi + module)


def test_the_kernel_modules_api_mismatch_is_the_driver_library_mismatch() -> None:
    # NVIDIA's kernel-open/nvidia/nv.c: "NVRM: API mismatch: the client has the version %s, but ..."
    text = ("[   27.950245] NVRM: API mismatch: the client has the version 415.27, but\n"
            "               NVRM: this kernel module has the version 390.129.  Please\n")
    assert stated(text) == ["nvml-driver-mismatch"]


def test_a_refused_module_signature_is_secure_boot_blocking_the_nvidia_module() -> None:
    # the kernel's module signature check (EKEYREJECTED, ENOKEY) as modprobe prints it; nvidia-installer
    assert stated("modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n") == [
        "secure-boot-blocks-nvidia-module"]
    installer = ("ERROR: The kernel module failed to load. Secure boot is enabled on this system, so this "
                 "is likely because it was not signed by a key that is trusted by the kernel.\n")
    assert stated(installer) == ["secure-boot-blocks-nvidia-module"]
    # Counter-case: another module refused is not the NVIDIA driver's
    assert stated("modprobe: ERROR: could not insert 'r8125': Key was rejected by service\n") == []


def test_an_hsa_override_for_another_target_beside_a_fault_is_the_override() -> None:
    # ROCR's fault report; hsa_override.json: 10.3.0 runs gfx1030 code (gfx1031-36), 11.0.0 gfx1100's (-03)
    fault = "Memory access fault by GPU node-2 (Agent handle: 0x55d1) on address (nil). Reason: Unknown.\n"
    assert stated("export HSA_OVERRIDE_GFX_VERSION=10.3.0\nGPU: AMD Instinct MI210\n" + fault) == [
        "hsa-override-wrong-target"]
    rdna2 = "HSA_OVERRIDE_GFX_VERSION=11.0.0\nAMD Radeon RX 6800 XT\n"
    assert stated(rdna2 + fault) == ["hsa-override-wrong-target"]
    # Counter-cases: a sibling the override is meant for, no override, no GPU named: the family
    # a target of the override's own family the data does not list: no proof either way (9.0.0 on a
    # Vega APU's gfx90c, 11.0.0 on gfx1151)
    for text in ("HSA_OVERRIDE_GFX_VERSION=10.3.0\nAMD Radeon RX 6600 XT\n" + fault, fault,
                 "HSA_OVERRIDE_GFX_VERSION=10.3.0\n" + fault,
                 "HSA_OVERRIDE_GFX_VERSION=9.0.0\nrocminfo: gfx90c\n" + fault,
                 "HSA_OVERRIDE_GFX_VERSION=11.0.0\nrocminfo: gfx1151\n" + fault):
        (family,) = explain_report(text, CATALOG, kb=KB).explanations
        assert family.signature.id == "rocm-memory-access-fault" and len(family.candidates) == 3


def test_a_driver_install_beside_modprobe_shows_the_driver_user_space_is_there() -> None:
    module = "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.2.0-1011-azure\n"
    for install in ("Installing drivers ...\n", "Setting up nvidia-driver-535 (535.129.03-0ubuntu1) ...\n",
                    "Installing the NVIDIA display driver...\n"):
        assert stated(install + module) == ["nvidia-module-not-built-for-kernel"], install
    # Counter-cases: an install of something else, or none at all: the driver may not be installed
    assert stated("Installing collected packages: torch\n" + module) == []
    assert stated(module) == []


def test_nccls_unreachable_network_is_the_interface_it_picked() -> None:
    # NCCL's socket.cc: WARN("Connect to %s failed : %s", ..., strerror(errno))
    assert stated("NCCL Network is unreachable / Connection refused when initializing DDP\n") == [
        "nccl-network-interface"]
    assert stated("node1:42:42 [0] NCCL INFO Call to connect returned No route to host\n") == [
        "nccl-network-interface"]
    # Counter-cases: an unreachable network without NCCL (a download), NCCL with another error
    assert "nccl-network-interface" not in stated(
        "CondaHTTPError: HTTP 000 CONNECTION FAILED\n[Errno 101] Network is unreachable\n")
    assert "nccl-network-interface" not in stated("NCCL error: unhandled cuda error\n")


def test_rdma_that_cannot_allocate_memory_is_the_memlock_family() -> None:
    # rdma-core's libibverbs/init.c warns when RLIMIT_MEMLOCK is 32 KiB or less; verbs and
    # libfabric calls report ENOMEM as 'Cannot allocate memory' / (-12)
    for text in ("ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory.\n",
                 "NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory\n",
                 "Libfabric error: (-12) Cannot allocate memory\nEFA internal error: (4112)\n",
                 "libibverbs: Warning: RLIMIT_MEMLOCK is 32768 bytes.\n"):
        (family,) = explain_report(text, CATALOG, kb=KB).explanations
        assert family.signature.id == "memlock-limit-too-low" and len(family.candidates) == 2, text
    # Counter-cases: ENOMEM from elsewhere, a verbs call failing for another reason
    assert "memlock-limit-too-low" not in stated("OSError: [Errno 12] Cannot allocate memory\n")
    assert "memlock-limit-too-low" not in stated("ibv_create_qp() failed: Invalid argument\n")


def test_runtime_families_state_no_cause_their_message_does_not_prove() -> None:
    # torch's ProcessGroupNCCL.cpp, nvdiffrast's glutil.cpp, Triton's driver.c: each message has
    # several causes, so each is a family with a check per candidate
    for text, family_id in (
            ("[rank=0] RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!\n",
             "nccl-process-group-no-gpus"),
            ("[F glutil.cpp:338] eglInitialize() failed\n", "driver-egl-libs-missing"),
            ("import nvdiffrast.torch as dr\nglctx = dr.RasterizeGLContext()\n"
             "RuntimeError: eglGetDisplay() failed\n", "driver-egl-libs-missing"),
            ("RuntimeError: Triton Error [CUDA]: device kernel image is invalid\n",
             "triton-kernel-image-invalid")):
        (family,) = explain_report(text, CATALOG, kb=KB).explanations
        assert family.signature.id == family_id and len(family.candidates) >= 2, text
    # Counter-cases: EGL failing outside nvdiffrast (an Android or X11 app), a CUDA image error without Triton
    assert stated("E/Renderer: eglInitialize() failed\n") == []
    assert "triton-kernel-image-invalid" not in stated("CUDA error: device kernel image is invalid\n")
