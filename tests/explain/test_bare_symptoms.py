"""Symptoms users write in their own words (is_available() False, a segfault, "Killed", no nvidia-smi,
an idle GPU): the family of causes speaks, with a check per cause; it never asserts one of them, is
silent where the text says the opposite, and yields to a failure another signature names."""

from __future__ import annotations

from typing import List

import pytest
from tests.explain.test_signatures import CATALOG, KB

from torchsmith.explain.extract.symptoms import symptoms
from torchsmith.explain.matcher import explain_report


def stated_ids(text: str) -> List[str]:
    return [found.signature.id for found in explain_report(text, CATALOG, kb=KB).explanations]


SHAPES = {
    "torch-sees-no-cuda-gpu": (
        "torch.cuda.is_available() returns False",
        ">>> import torch\n>>> torch.cuda.is_available()\nFalse\n",
        "In [2]: torch.cuda.is_available()\nOut[2]: False\n",
        "print(torch.cuda.is_available())  # False",
        "torch.cuda.is_available() keeps returning false on my laptop",
        "It returns False for torch.cuda.is_available() even after installing the driver",
        ">>> torch.cuda.device_count()\n0\n",
        "torch.cuda.device_count() == 0 on the new node",
        "torch.cuda.device_count() returns 0",
        "CUDA available: False",
        "Warning: CUDA is not available, falling back to CPU",
    ),
    "process-segfault": (
        "Segmentation fault (core dumped)",
        "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n",
        "Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)",
        "./train.sh: line 12: 4242 Segmentation fault      python train.py",
        "Windows fatal exception: access violation\n\nCurrent thread 0x00001980 (most recent call first):",
        "Process finished with exit code -1073741819 (0xC0000005)",
    ),
    "process-floating-point-exception": (
        "Floating point exception (core dumped)",
        "Fatal Python error: Floating point exception",
        "Process finished with exit code 136 (interrupted by signal 8: SIGFPE)",
        "Windows fatal exception: int divide by zero",
        "Process finished with exit code -1073741676 (0xC0000094)",
    ),
    "process-killed": (
        "Epoch 1: 12%|█▏        | 120/1000\nKilled\n",
        "./run.sh: line 3:  1234 Killed                  python train.py",
        "zsh: killed     python train.py",
        "[1]+  Killed                  python train.py",
        "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)",
        "exitcode  : -9 (pid: 5150)",
    ),
    "nvidia-smi-not-found": (
        "bash: nvidia-smi: command not found",
        "/bin/sh: 1: nvidia-smi: not found",
        "zsh: command not found: nvidia-smi",
        "'nvidia-smi' is not recognized as an internal or external command,\noperable program or batch file.",
        "nvidia-smi : The term 'nvidia-smi' is not recognized as the name of a cmdlet, function, script file",
        "FileNotFoundError: [Errno 2] No such file or directory: 'nvidia-smi'",
        "'nvidia-smi' 不是内部或外部命令，也不是可运行的程序",
    ),
    "process-hangs": (
        "training hangs at the first step",
        "The DataLoader hangs when num_workers > 0",
        "model.cuda() is stuck forever",
        "the code stuck at epoch 1",
        "It freezes while loading the model",
    ),
    "gpu-idle-work-on-cpu": (
        "GPU utilization stays at 0% the whole epoch",
        "The GPU usage is 0 % while training",
        "the model trains on the CPU instead of the GPU",
        "It is not using the GPU at all, only the CPU",
    ),
}


@pytest.mark.parametrize("family,text", [(f, t) for f, texts in SHAPES.items() for t in texts])
def test_each_shape_of_a_symptom_gives_its_family(family: str, text: str) -> None:
    report = explain_report(text, CATALOG, kb=KB)
    (found,) = report.explanations
    assert found.signature.id == family
    assert found.signature.harmless and len(found.candidates) >= 2
    assert all(candidate.check for candidate in found.candidates)


@pytest.mark.parametrize("text", [
    ">>> torch.cuda.is_available()\nTrue\n",
    "torch.cuda.is_available() returned False, but after reinstalling it returns True now",
    "is_available() was False; after the reboot CUDA is now available",
    "if torch.cuda.device_count() > 0:\n    model.cuda()",
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'",
    "GPU utilization 10% while training",
    "GPU usage at 100% and Killed processes? no",
    "I killed the job myself",
    "nvidia-smi works: Driver Version: 550.54.15",
    "If torch.cuda.is_available() returns False, check the driver first.",
    "After the upgrade it no longer shows Segmentation fault (core dumped)",
    "The training is not running on the CPU instead of the GPU any more",
    "I am stuck on this error while training",
    "It no longer hangs at the first step",
    "training hangs at the first step\nTraceback (most recent call last):\nValueError: bad shape",
])
def test_the_opposite_or_code_that_only_asks_is_not_the_symptom(text: str) -> None:
    bare = {"torch-sees-no-cuda-gpu", "process-segfault", "process-floating-point-exception",
            "process-killed", "nvidia-smi-not-found", "gpu-idle-work-on-cpu", "process-hangs"}
    assert not bare & set(stated_ids(text)), text


def test_a_hang_across_gpus_is_the_distributed_family_not_the_one_process_family() -> None:
    assert stated_ids("training with DDP on 4 GPUs hangs at the first step") == ["distributed-hang"]


def test_the_family_yields_to_a_failure_another_signature_names() -> None:
    # is_available() False beside torch's own CPU-build error: that signature speaks, not the family
    text = ("torch.cuda.is_available() returns False\n"
            "AssertionError: Torch not compiled with CUDA enabled\n")
    assert stated_ids(text) == ["torch-not-compiled-with-cuda"]
    # "Killed" beside the DataLoader's own message: its signature speaks
    text = "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.\nKilled\n"
    assert "process-killed" not in stated_ids(text) and stated_ids(text)


def test_a_fact_in_the_text_decides_instead_of_the_family() -> None:
    # a +cpu torch beside is_available() False: the CPU-build reader names it
    text = "PyTorch version: 2.3.1+cpu\n>>> torch.cuda.is_available()\nFalse\n"
    assert stated_ids(text) == ["torch-not-compiled-with-cuda"]
    # device_count() 0 with CUDA_VISIBLE_DEVICES set empty: the visible-devices reader names it
    text = 'CUDA_VISIBLE_DEVICES="" python -c "import torch; print(torch.cuda.is_available())"\nFalse\n'
    assert "cuda-visible-devices-hides-gpu" in stated_ids(text)


def test_device_count_zero_counts_as_cuda_unavailable_for_the_readers() -> None:
    found = symptoms(">>> torch.cuda.device_count()\n0\n")
    assert "cuda-unavailable" in found and "torch-sees-no-gpu" in found
    assert "cuda-unavailable" not in symptoms(">>> torch.cuda.device_count()\n2\n")


@pytest.mark.parametrize("text,named", [
    ("#SBATCH --partition=gpu\nsrun python train.py\n>>> torch.cuda.is_available()\nFalse\n",
     "scheduler-job-without-gpu"),
    ("Jetson Orin Nano, JetPack 6.0\n>>> torch.cuda.is_available()\nFalse\n", "jetson-cpu-wheel"),
    ("Collecting torch\n  Downloading torch-2.1.0-cp310-cp310-manylinux1_x86_64.whl (670.2 MB)\nKilled\n",
     "pip-killed"),
])
def test_the_readers_of_the_machine_name_the_narrower_cause(text: str, named: str) -> None:
    assert stated_ids(text) == [named]
