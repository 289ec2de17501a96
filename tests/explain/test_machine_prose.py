"""Reports about the machine in the shapes people post them: a quoted reply, torch's newer capability
warning, a CUDA status named by its code and message in prose, NaN in words, a Jetson in a host name.
Each reader fires on its shape and not on its look-alikes."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report
from torchsmith.explain.messages import unwrap


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


def test_nan_in_words_is_a_value_only_where_it_reads_as_one() -> None:
    # dreamgaussian/dreamgaussian#36, karpathy/nanoGPT#167
    for said in ("the GUI shows a nan loss when training in float16",
                 "I got the nan issue with dtype `float16`",
                 "with fp16 the loss becomes nan after 6000 iters"):
        assert "nan" in extract(said, KB).symptoms, said
        assert stated(said) == ["fp16-nan"], said
    for other in ("nanoGPT trains in float16", "Nan Zhang trained it in float16", "a banana in fp16"):
        assert "nan" not in extract(other, KB).symptoms, other
        assert stated(other) == [], other


def test_a_cuda_status_named_by_its_code_and_message_in_prose() -> None:
    # NVIDIA/gpu-operator#2781: 'error 802 ("system not yet initialized")'
    text = 'all CUDA initialization fails with error 802 ("system not yet initialized"), nvidia-smi works'
    (error,) = extract(text, KB).gpu_errors
    assert (error.name, error.code) == ("cudaErrorSystemNotReady", 802)
    assert stated(text) == ["fabric-manager-not-running"]
    # a code and a message of two different rows of the enum prove neither
    assert extract('it fails with error 2 ("system not yet initialized")', KB).gpu_errors == []
    assert extract("HTTP error 404 (not found)", KB).gpu_errors == []


def test_a_jetson_named_in_a_host_name_is_a_jetson() -> None:
    # ultralytics/ultralytics#17345: the prompt "root@jetsonxavier" is the only sign of the board
    text = ("root@jetsonxavier:~/myenv/bin# python3\n>>> import torch\n>>> torch.cuda.is_available()\n"
            "False\n")
    assert stated(text) == ["jetson-cpu-wheel"]
    assert "jetson-cpu-wheel" not in stated(text.replace("jetsonxavier", "workstation"))


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
