"""Reports about the machine in the shapes people post them: a quoted reply, torch's newer capability
warning, a CUDA status named by its code and message in prose, NaN in words, a Jetson in a host name.
Each reader fires on its shape and not on its look-alikes."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report
from torchsmith.explain.messages import unwrap
from torchsmith.explain.readout import next_checks, read_lines


def test_a_quoted_reply_is_unwrapped_like_a_logger_prefix() -> None:
    # FlashML-org/FreeToken#253 quotes its report, the CUDA message wrapped inside the quote
    text = ("> Tesla V100 / other Volta GPUs: `no kernel image is available for execution on\n"
            "> the device` on every CUDA op, before even reaching the runtime kernels.\n")
    assert "execution on the device" in unwrap(text).text
    assert stated(text) == ["no-kernel-image"]
    nested = "> > no kernel image is available for\n> > execution on the device\n"
    assert stated(nested) == ["no-kernel-image"]
    # lines quoted apart are still apart
    far = "> no kernel image is available\n" + "> x\n" * 6 + "> for execution on the device\n"
    assert stated(far) == []


def test_torchs_autocast_refusing_bfloat16_names_a_gpu_without_bf16() -> None:
    # torch/amp/autocast_mode.py raises it when torch.cuda.is_bf16_supported() is False (karpathy/nanoGPT#277)
    text = ('  File "/usr/local/lib64/python3.10/site-packages/torch/amp/autocast_mode.py", line 234\n'
            "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.\n")
    assert stated(text) == ["bf16-unsupported-gpu"]
    project = "ValueError: Requested bf16 precision, but the current CUDA device does not support bfloat16.\n"
    assert stated(project) == ["bf16-unsupported-gpu"]
    assert stated("The current CUDA device does support bfloat16.\n") == []
    # an Ampere GPU shown has bfloat16: before torch 2.3 is_bf16_supported() was also False for a build
    # of CUDA before 11 (torch/cuda/__init__.py), so the GPU is not the cause there
    assert "bf16-unsupported-gpu" not in stated("GPU: NVIDIA A100-SXM4-40GB, torch 1.12.1+cu102\n" + text)
    assert stated("GPU: Tesla V100-SXM2-32GB\n" + text) == ["bf16-unsupported-gpu"]
    # torch 2.3 on answers is_bf16_supported() True on any GPU that can hold a bf16 tensor (emulated,
    # pytorch#115924): beside it the refusal is not the GPU's age
    assert "bf16-unsupported-gpu" not in stated("PyTorch version: 2.4.1+cu121\nGPU: Tesla V100\n" + text)
    assert stated("PyTorch version: 2.1.2+cu121\nGPU: Tesla V100\n" + text) == ["bf16-unsupported-gpu"]


def test_nan_in_words_is_a_value_only_where_it_reads_as_one() -> None:
    # dreamgaussian/dreamgaussian#36, karpathy/nanoGPT#167
    for said in ("the GUI shows a nan loss when training in float16",
                 "I got the nan issue with dtype `float16`",
                 "with fp16 the loss becomes nan after 6000 iters",
                 "使用V100 FP16推理/训练出现大量的数值溢出(nan)问题",  # QwenLM/Qwen3#868
                 "fp16 output: tensor([nan, nan], device='cuda:0', dtype=torch.float16)"):
        assert "nan" in extract(said, KB).symptoms, said
        assert stated(said) == ["fp16-nan"], said
    for other in ("nanoGPT trains in float16", "Nan Zhang trained it in float16", "a banana in fp16",
                  "(nanoGPT, fp16)"):
        assert "nan" not in extract(other, KB).symptoms, other
        assert stated(other) == [], other


def test_a_cuda_status_named_by_its_code_and_message_in_prose() -> None:
    # NVIDIA/gpu-operator#2781: 'error 802 ("system not yet initialized")'
    text = 'all CUDA initialization fails with error 802 ("system not yet initialized"), nvidia-smi works'
    (error,) = extract(text, KB).gpu_errors
    assert (error.name, error.code) == ("cudaErrorSystemNotReady", 802)
    assert stated(text) == ["fabric-manager-not-running"]
    (upper,) = extract('error 100 ("no CUDA-capable device is detected")', KB).gpu_errors
    assert upper.name == "cudaErrorNoDevice"
    (short,) = extract('it fails with error 2 ("out of memory")', KB).gpu_errors
    assert short.name == "cudaErrorMemoryAllocation"
    # a code and a message of two different rows of the enum prove neither
    assert extract('it fails with error 3 ("out of memory")', KB).gpu_errors == []
    assert extract("HTTP error 404 (not found)", KB).gpu_errors == []


def test_a_jetson_named_in_a_host_name_is_a_jetson() -> None:
    # ultralytics/ultralytics#17345: the prompt "root@jetsonxavier" is the only sign of the board
    text = ("root@jetsonxavier:~/myenv/bin# python3\n>>> import torch\n>>> torch.cuda.is_available()\n"
            "False\n")
    assert stated(text) == ["jetson-cpu-wheel"]
    assert "jetson-cpu-wheel" not in stated(text.replace("jetsonxavier", "workstation"))


def test_a_jetson_shown_running_a_gpu_build_of_torch_is_not_the_cpu_wheel() -> None:
    # NVIDIA's own Jetson build (.nvYY.MM), or any build whose torch.version.cuda is a version: CUDA
    # unavailable there has another cause (a container without the NVIDIA runtime, a JetPack mismatch)
    nvidia = ("Jetson AGX Orin, JetPack 5.1.2\n>>> torch.__version__\n'2.1.0a0+41361538.nv23.06'\n"
              ">>> torch.cuda.is_available()\nFalse\n")
    assert "jetson-cpu-wheel" not in stated(nvidia)
    cuda = ("Jetson Orin Nano (L4T R36.3)\n>>> torch.version.cuda\n'12.2'\n>>> torch.cuda.is_available()\n"
            "False\n")
    assert "jetson-cpu-wheel" not in stated(cuda)
    cpu = cuda.replace("'12.2'", "None")  # the generic wheel prints None
    assert stated(cpu) == ["jetson-cpu-wheel"]
    # JetPack 7 and Jetson Thor run the SBSA CUDA stack, where upstream aarch64 CUDA wheels use the GPU
    for board in ("Jetson AGX Thor, JetPack 7.0", "Jetson Orin (L4T R38.2.0)", "Jetson Thor dev kit"):
        said = board + "\n>>> torch.cuda.is_available()\nFalse\n"
        assert "jetson-cpu-wheel" not in stated(said), board
    assert stated("Jetson Orin, JetPack 6.1\n>>> torch.cuda.is_available()\nFalse\n") == ["jetson-cpu-wheel"]


NEWER_WARNING = (
    "torch/cuda/__init__.py:384: UserWarning: Found GPU0 {gpu} which is of compute capability (CC) {cc}.\n"
    "The following list shows the CCs this version of PyTorch was built for and the hardware CCs it "
    "supports:\n"
    "{listed}"
    "Please follow the instructions at https://pytorch.org/get-started/locally/ to install a PyTorch release "
    "that supports one of these CUDA versions: 12.6\n")


def _listed(*ccs: str) -> str:
    return "".join(f"- {cc} which supports hardware CC >={cc},<{int(cc.split('.')[0]) + 1}.0\n" for cc in ccs)


def test_torchs_newer_capability_warning_tells_a_gpu_too_old_from_a_missing_arch() -> None:
    # torch/cuda/__init__.py _warn_unsupported_code: printed when no code of the build runs on the GPU
    old = NEWER_WARNING.format(gpu="NVIDIA GeForce GTX 1080 Ti", cc="6.1",
                               listed=_listed("7.5", "8.0", "12.0"))
    report = explain_report(old, CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["gpu-too-old-for-torch"]
    assert report.explanations[0].facts["arch_list"] == ["sm_75", "sm_80", "sm_120"]
    assert "arch-not-compiled" in [c for c, _ in report.contradicted]
    new = NEWER_WARNING.format(gpu="NVIDIA GeForce RTX 5090", cc="12.0", listed=_listed("5.0", "8.6", "9.0"))
    assert stated(new) == ["arch-not-compiled"]
    # indented as a Windows log quotes it
    indented = "".join("    " + line + "\n" for line in old.splitlines())
    assert stated(indented) == ["gpu-too-old-for-torch"]


def test_cuda_visible_devices_that_names_no_gpu_of_the_machine_hides_them_all() -> None:
    # thuml/Autoformer#25: the scripts export CUDA_VISIBLE_DEVICES=1 on a machine with one GPU
    said = ("On systems with 1 GPU the scripts train on CPU: they contain\n`export CUDA_VISIBLE_DEVICES=1`\n"
            "and then `torch.cuda.is_available()` returns False\n")
    env = extract(said, KB).environment
    assert (env.visible_devices, env.gpu_count) == ("1", 1)
    report = explain_report(said, CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["cuda-visible-devices-hides-gpu"]
    assert "GPU index 1, but the machine has 1 GPU" in report.explanations[0].cause
    smi = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0)\nGPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-1)\n"
           "$ CUDA_VISIBLE_DEVICES=2 python train.py\nRuntimeError: No CUDA GPUs are available\n")
    assert extract(smi, KB).environment.gpu_count == 2
    assert stated(smi) == ["cuda-visible-devices-hides-gpu"]
    python = "os.environ['CUDA_VISIBLE_DEVICES'] = ''\n>>> torch.cuda.is_available()\nFalse\n"
    assert stated(python) == ["cuda-visible-devices-hides-gpu"]
    assert stated("export CUDA_VISIBLE_DEVICES=-1\nRuntimeError: No CUDA GPUs are available\n") == [
        "cuda-visible-devices-hides-gpu"]


def test_cuda_visible_devices_proves_nothing_where_it_may_name_an_existing_gpu() -> None:
    # an index the machine has, a count the text does not show, a variable's expansion, two values
    for text in ("export CUDA_VISIBLE_DEVICES=0\non a machine with one GPU cuda.is_available() is False\n",
                 "export CUDA_VISIBLE_DEVICES=1\ntorch.cuda.is_available() returns False\n",
                 "export CUDA_VISIBLE_DEVICES=$GPU\nRuntimeError: No CUDA GPUs are available\n",
                 "CUDA_VISIBLE_DEVICES=3 python a.py\nCUDA_VISIBLE_DEVICES=0 python b.py\n"
                 "I have one GPU.\ntorch.cuda.is_available() returns False\n"):
        assert "cuda-visible-devices-hides-gpu" not in stated(text), text
    # "train with one GPU" is a choice, not the machine's count; CUDA available: nothing hidden
    assert extract("I train with one GPU", KB).environment.gpu_count is None
    assert stated("I have a single GPU and export CUDA_VISIBLE_DEVICES=1 works fine\n") == []


def test_cuda_unavailable_in_words_is_read_and_checked_when_nothing_is_recognised() -> None:
    # googlecolab/colabtools#482: nothing in the text says why
    text = "AssertionError: CUDA is not available\n> assert torch.cuda.is_available() is returning False\n"
    read = extract(text, KB)
    assert "cuda-unavailable" in read.symptoms
    assert stated(text) == ["torch-sees-no-cuda-gpu"]  # the family of causes, asserting none of them
    assert "The text says CUDA is not available to torch: it sees no GPU" in read_lines(read)
    assert any("CUDA_VISIBLE_DEVICES" in check for check in next_checks(read))
    for other in ("if torch.cuda.is_available(): model.cuda()", "CUDA is available"):
        assert "cuda-unavailable" not in extract(other, KB).symptoms, other


def test_torchs_no_device_check_in_a_rocm_build_is_the_hip_family() -> None:
    # c10/cuda/CUDAFunctions.cpp's "No CUDA GPUs are available", hipified (vllm-project/vllm#7207)
    (found,) = explain_report("RuntimeError: No HIP GPUs are available\n", CATALOG, kb=KB).explanations
    assert found.signature.id == "no-hip-gpus-available" and len(found.candidates) == 4
    assert any("/dev/kfd" in c.check for c in found.candidates)
    assert stated("RuntimeError: No CUDA GPUs are available\n") == ["no-cuda-gpus-available"]


def test_a_dataloader_worker_that_exited_is_a_family_unless_its_signal_is_shown() -> None:
    # torch/utils/data/dataloader.py (aws/sagemaker-python-sdk#937)
    exited = "RuntimeError: DataLoader worker (pid(s) 76, 77) exited unexpectedly\n"
    (found,) = explain_report(exited, CATALOG, kb=KB).explanations
    assert found.signature.id == "dataloader-worker-exited" and len(found.candidates) == 3
    bus = ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
           "memory\n")
    assert stated(bus + exited) == ["dataloader-worker-bus-error"]
    assert stated("DataLoader worker (pid(s) 76) exited normally\n") == []


def test_cuda_unavailable_in_words_on_a_jetson_release_is_the_generic_wheel() -> None:
    # pinokiocomputer/pinokio#1027: the JetPack release named, CUDA unavailable said in words
    text = ("Running `pip install torch` installs a generic manylinux version that does not support CUDA on "
            "this board.\nNVIDIA's wheels for JetPack 5.1.2 are the ones to use.\n")
    assert "cuda-unavailable" in extract(text, KB).symptoms
    assert stated(text) == ["jetson-cpu-wheel"]
    # no Jetson shown; a CUDA build that found no device; a CUDA release named, not CUDA itself
    assert stated(text.replace("JetPack 5.1.2", "my PC")) == []
    assert "jetson-cpu-wheel" not in stated("JetPack 5.1.2\nRuntimeError: No CUDA GPUs are available\n")
    assert "cuda-unavailable" not in extract("JetPack 4.6 does not support CUDA 12", KB).symptoms


def test_lightnings_mps_accelerator_refusal_is_the_mps_family_with_rosetta_among_its_causes() -> None:
    # Lightning-AI/pytorch-lightning#14634; Lightning's docs name an emulated (x86_64) Python first
    text = ("lightning_fabric.utilities.exceptions.MisconfigurationException: `MPSAccelerator` can not run "
            "on your system since the accelerator is not available.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "mps-unavailable"
    assert any("Rosetta" in c.cause for c in found.candidates)
    assert stated(text + "ProductVersion: 12.1\n") == ["macos-too-old-for-mps"]
    # the CUDA accelerator's refusal is not MPS: it is torch seeing no CUDA device
    cuda = "`CUDAAccelerator` can not run on your system since the accelerator is not available.\n"
    assert stated(cuda) == ["torch-sees-no-cuda-gpu"]


def test_torchs_cuda_init_failure_cut_before_its_error_is_a_family_the_error_itself_settles() -> None:
    # c10/cuda/CUDAFunctions.cpp prints "... Error N: <message>" after it (nanoporetech/dorado#1214 cut it)
    head = ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some "
            "cuda functions before calling NumCudaDevices() that might have already set an error?")
    (found,) = explain_report(head + "\n", CATALOG, kb=KB).explanations
    assert found.signature.id == "cuda-init-unexpected-error" and len(found.candidates) == 4
    full = head + " Error 802: system not yet initialized\n"
    report = explain_report(full, CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["fabric-manager-not-running"]
    assert "cuda-init-unexpected-error" in [c for c, _ in report.contradicted]


def test_torchs_cuda_driver_error_wording_is_read_as_the_status_it_names() -> None:
    # noonghunna/club-3090#50: torch's driver API check prints the driver's own string
    (error,) = extract("RuntimeError: CUDA driver error: device not ready\n", KB).gpu_errors
    assert (error.name, error.code) == ("cudaErrorNotReady", 600)
    (oom,) = extract("RuntimeError: CUDA driver error: out of memory\n", KB).gpu_errors
    assert oom.name == "cudaErrorMemoryAllocation"
    assert extract("the CUDA driver errors out sometimes\n", KB).gpu_errors == []
