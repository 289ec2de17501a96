"""A float32 discrepancy on an Ampere GPU shown the way people show it: a GeForce card written by its
number alone ("on 3090"), and results printed under headings that name the device each ran on."""

from __future__ import annotations

from typing import List, Optional, Tuple

from tests.explain.test_signatures import KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.extract.gpunames import gpu_names, named_gpus

NAMES = gpu_names(KB.gpus, KB.gfx_targets)


def read(text: str) -> List[Tuple[str, Optional[str]]]:
    return [(gpu.name, gpu.capability) for gpu in named_gpus(text, NAMES)]


def test_a_geforce_card_written_by_its_number_alone() -> None:
    assert read("can't get correct results on 3090 !!") == [("3090", "8.6")]
    assert read("on a machine with 3090 or 3080:") == [("3090", "8.6")]
    assert read("my 1080 Ti card") == [("1080 Ti", "6.1")]
    assert read("with 2080 or Titan RTX") == [("2080", "7.5"), ("Titan RTX", "7.5")]


def test_numbers_that_are_no_card_are_left_alone() -> None:
    assert read("listening on 3090.") == read("served on port 3090:") == []
    assert read("trained with 2080 images.") == read("a batch of 4090 samples") == []
    assert read("on 3090 steps") == read("on 1234:") == read("at 3090,") == []
    assert read("see https://example.com on 3090.") == []
    assert read("render with 1080 or 720 lines of output") == read("with 1080, 720 and 480") == []
    # a line about sizes: 1080 is a video or image height as often as a card
    assert read("Resizing the frames with 1080 and 720 heights fails") == []
    assert read("works at 720p, fails with 1080 and 1440 (1920x1080)") == []
    sizes = ("Resizing the frames with 1080 and 720 heights fails after upgrading to torch 2.8.0+cu128:\n"
             "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert "gpu-too-old-for-torch" not in stated(sizes)  # no GTX 1080 here


def test_results_under_headings_that_name_devices_show_the_discrepancy() -> None:
    # pytorch/pytorch#84334
    text = ("RTX 3080, torch 1.10.0 OUTPUT:\ntensor(0.3640)\n\nRTX 3080, torch 1.7.1 OUTPUT:\n"
            "tensor(4.3363e-05)\n\nRTX 2080, torch 1.10.0 OUTPUT:\ntensor(4.3363e-05)\n")
    assert "discrepancy" in extract(text, KB).symptoms
    assert stated(text) == ["tf32-precision"]
    # pytorch/pytorch#53635: a code fence between the heading and the value, the cards by number
    fenced = ("I get the following result on a machine with 3090 or 3080:\n```\ntensor([1025.], "
              "device='cuda:0')\n```\n\nFor a machine with 2080 or Titan RTX the result is okay:\n```\n"
              "tensor([1024.5], device='cuda:0')\n```\n")
    assert stated(fenced) == ["tf32-precision"]


def test_headings_that_differ_in_no_device_or_values_that_agree_are_no_discrepancy() -> None:
    # the same value on both devices
    same = "RTX 3080 OUTPUT:\ntensor(0.5)\n\nRTX 2080 OUTPUT:\ntensor(0.5)\n"
    assert "discrepancy" not in extract(same, KB).symptoms
    # headings that name no device (a batch size is no device) on an A100
    batches = "GPU 0: NVIDIA A100\nbatch size 1024:\ntensor(0.5)\nbatch size 2048:\ntensor(0.7)\n"
    assert "discrepancy" not in extract(batches, KB).symptoms and stated(batches) == []
    # a float16 run is not a TF32 question; nor are the numbers of older GPUs only
    assert stated("RTX 3080 OUTPUT:\ntensor(0.5, dtype=torch.float16)\n\nCPU OUTPUT:\ntensor(0.7)\n") == []
    assert stated("RTX 2080 OUTPUT:\ntensor(0.5)\n\nCPU OUTPUT:\ntensor(0.7)\n") == []


def test_a_matmul_on_a_torch_that_runs_it_in_full_float32_is_not_tf32() -> None:
    # torch 1.12 on: torch.backends.cuda.matmul.allow_tf32 defaults to False (convolutions keep TF32)
    text = ("torch 2.1.0+cu121, x = torch.mm(a, b)\nRTX 3080 OUTPUT:\ntensor(0.3640)\n\n"
            "CPU OUTPUT:\ntensor(4.3363e-05)\n")
    assert "tf32-precision" not in stated(text)
    # the code switches TF32 on, or a convolution is in it: TF32 may be at work
    assert stated(text.replace("\nRTX", "\ntorch.backends.cuda.matmul.allow_tf32 = True\nRTX")) == [
        "tf32-precision"]
    assert stated(text.replace("torch.mm(a, b)", "torch.mm(a, b); y = conv(x)")) == ["tf32-precision"]
