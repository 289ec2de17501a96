"""GPUs named in prose are read through the GPU data (extract.gpunames), and the rules reason with
what the data says of them: a build that carries no code for the GPU's capability."""

from __future__ import annotations

from typing import List, Optional, Tuple

from torchsmith.explain.extract import extract
from torchsmith.explain.extract.gpunames import gpu_names, named_gpus
from torchsmith.explain.matcher import explain_report
from torchsmith.explain.planflags import plan_flags
from torchsmith.explain.reason import capability, conclusions

from .test_signatures import CATALOG, KB, stated

NAMES = gpu_names(KB.gpus, KB.gfx_targets)


def read(text: str) -> List[Tuple[str, Optional[str], Optional[str]]]:
    return [(gpu.name, gpu.capability, gpu.gfx) for gpu in named_gpus(text, NAMES)]


def test_names_as_people_write_them_find_their_row() -> None:
    assert read("GPU RTX 5070 user") == [("RTX 5070", "12.0", None)]
    assert read("on my NVIDIA GeForce RTX 3080Ti") == [("GeForce RTX 3080Ti", "8.6", None)]
    assert read("built on gtx1080ti") == [("gtx1080ti", "6.1", None)]
    assert read("an RTX PRO 6000 here") == [("RTX PRO 6000", "12.0", None)]  # cut at the model number
    assert read("AMD Instinct MI300X and a Radeon RX 7900 XTX") == [
        ("Instinct MI300X", None, "gfx942"), ("Radeon RX 7900 XTX", None, "gfx1100")]
    assert read("my 6800 XT on ROCm") == [("6800 XT", None, "gfx1030")]


def test_aliases_and_the_jetson_lines_without_their_form_factor() -> None:
    (thor,) = named_gpus("uv sync on a Jetson Thor (JetPack 7)", NAMES)
    assert (thor.capability, thor.jetson) == ("11.0", True)
    assert read("AGX Thor dev kit") == [("AGX Thor", "11.0", None)]
    assert read("a DGX Spark") == [("DGX Spark", "12.1", None)]
    assert read("NVIDIA GB10") == [("NVIDIA GB10", "12.1", None)]
    assert read("Jetson Orin with JetPack 6") == [("Jetson Orin", "8.7", None)]  # every Orin is 8.7
    # a GeForce series: every row of it has the capability (the workstation "RTX 5000 Ada" is not one)
    assert read("RTX 50-series GPUs") == [("RTX 50-series", "12.0", None)]
    assert read("on RTX 40xx cards") == [("RTX 40xx", "8.9", None)]


def test_a_spelling_rows_share_gives_no_capability_unless_they_agree() -> None:
    # "RTX 6000": the Turing Quadro (7.5) or the Ada card (8.9)
    assert read("RTX 6000 gpu") == [("RTX 6000", None, None)]
    assert read("RTX 6000 Ada gpu") == [("RTX 6000 Ada", "8.9", None)]
    # a name is cut at a word's end only: the GTX 950 is not the GTX 950M
    assert read("GTX 950 and GTX 950M") == [("GTX 950", "5.2", None), ("GTX 950M", "5.0", None)]
    assert read("Titan X gpu") == [("Titan X", None, None)]  # Maxwell's or Pascal's


def test_codes_that_are_not_gpus_are_left_alone() -> None:
    assert read("L4T R35.2.1 with CUDA 11.4") == []  # Jetson's Linux, not the L4
    assert read("the T4 instance") == []  # a short model number needs a line about GPUs
    assert read("T4 GPU") == [("T4", "7.5", None)]
    assert read("Tesla K20m") == [("Tesla K20m", "3.5", None)]  # a one-letter variant suffix
    assert read("port 4090 on cuda") == []  # a bare number
    assert read("NVIDIA Pascal GPU") == [] and read("Jetson Nano") != [] and read("nano cuda") == []
    assert read("AMD Ryzen 4000 CPU and GPU") == []  # a CPU's name alone
    assert read("GA100 die, cuda") == []  # inside a word
    # tokens a name always glues ("GB10", "A100") written apart are a size or a count
    assert read("CUDA device: 24 GB 10 GB free") == [] and read("A 100 cuda") == []


def test_the_environment_keeps_text_order_and_names_the_data_lacks() -> None:
    text = "NVIDIA GeForce GTX 680 and RTX 3090 (cuda); another NVIDIA GeForce RTX 3090"
    env = extract(text, KB).environment
    assert env.gpus == ["NVIDIA GeForce GTX 680", "RTX 3090"]
    assert [gpu.model for gpu in env.gpu_models] == ["GeForce RTX 3090"]
    assert capability(env, {}, KB) == "8.6"
    assert plan_flags(env, KB) == "--gpu '8.6:RTX 3090'"  # the capability's own GPU, not the first named
    assert extract("RTX 6000 gpu", KB).environment.gpu_models[0].capability is None
    assert capability(extract("RTX 6000 gpu", KB).environment, {}, KB) is None
    # an unbranded code the GPU data does not know is no NVIDIA GPU (Intel's Arc Pro B70 here)
    assert extract("Level Zero sees the B70 device", KB).environment.gpus == []


def test_a_named_gpu_without_a_named_build_says_which_releases_carry_it() -> None:
    # Comfy-Org/ComfyUI#7380: the family stands (no build named), and the reasoning names the releases
    text = "GPU RTX 5070 user\nCUDA error: no kernel image is available for execution on the device\n"
    assert stated(text) == ["no-kernel-image"]
    (line,) = conclusions(extract(text, KB), {}, KB)
    assert line.startswith("the text names no torch build; RTX 5070 is sm_120, which torch 2.7.0 (cu128) to")
    # with a build named, the arch reasoning speaks instead; without a kernel-image error, nothing
    assert not any("names no torch build" in c
                   for c in conclusions(extract(text + "torch 2.7.0+cu128\n", KB), {}, KB))
    assert conclusions(extract("GPU RTX 5070 user\nCUDA error: out of memory\n", KB), {}, KB) == []


def test_the_repls_answer_to_get_device_capability_is_the_capability() -> None:
    shown = ">>> torch.cuda.get_device_capability()\n(12, 0)\n>>> torch.__version__\n'2.5.1+cu124'"
    assert extract(shown, KB).environment.capability == "12.0"
    printed = ">>> print(torch.cuda.get_device_capability(0))\n(8, 6)"
    assert extract(printed, KB).environment.capability == "8.6"
    assert extract(">>> torch.cuda.get_device_capability()\n>>> (1, 2)", KB).environment.capability is None


def test_a_gpu_in_prose_proves_the_build_lacks_its_arch() -> None:
    # cubert-hyperspectral/cuvis-ai#107: the cu128 aarch64 wheel carries sm_80..sm_120, no sm_110
    text = ('uv sync on a Jetson Thor (JetPack 7, aarch64) installed torch 2.11.0+cu128 and failed with '
            '"no kernel image is available for execution on the device"')
    read_text = extract(text, KB)
    assert (read_text.environment.torch, read_text.environment.machine) == ("2.11.0+cu128", "aarch64")
    assert any("carries no sm_110" in line for line in conclusions(read_text, {}, KB))
    # the cu130 wheel carries sm_110: nothing to conclude
    fine = extract(text.replace("+cu128", "+cu130"), KB)
    assert not any("sm_110" in line for line in conclusions(fine, {}, KB))


def test_the_build_lacking_the_named_gpu_states_the_cause_and_only_then() -> None:
    text = ('uv sync on a Jetson Thor (JetPack 7, aarch64) installed torch 2.11.0+cu128 and failed with '
            '"no kernel image is available for execution on the device"')
    # the runtime's message quoted in prose is read as the error it is (cudaGetErrorString's wording)
    assert [e.name for e in extract(text, KB).gpu_errors] == ["cudaErrorNoKernelImageForDevice"]
    assert stated(text) == ["arch-not-compiled"]
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert "The GPU (Jetson Thor, sm_110)" in found.cause  # the GPU read in prose fills the cause
    assert stated(text.replace("+cu128", "+cu130")) == ["no-kernel-image"]  # the family: not torch's
    assert stated(text.replace("Jetson Thor", "board")) == ["no-kernel-image"]  # no GPU named
    assert extract('failed with "no kernel image for this device at all"', KB).gpu_errors == []
    capital = "CUDA Error: no kernel image is available for execution on the device (209)"  # sglang#1058
    assert [e.name for e in extract(capital, KB).gpu_errors] == ["cudaErrorNoKernelImageForDevice"]


def test_several_gpus_named_prove_the_build_lacks_an_arch_only_where_it_lacks_every_one() -> None:
    # the RTX 3090 (sm_86) runs torch 2.5.1+cu124: the kernel missing is not torch's, whichever
    # GPU failed; the RTX 5090 (sm_120) named first does not make it torch's
    text = ("I tested this before on an RTX 5090 at work. Now at home on my RTX 3090 with torch 2.5.1+cu124, "
            "my compiled extension fails:\nRuntimeError: CUDA error: no kernel image is available for "
            "execution on the device\n")
    assert stated(text) == ["no-kernel-image"]
    # both lack it (an RTX 5090 and an RTX 5080, sm_120): the build's cause
    assert stated(text.replace("RTX 3090", "RTX 5080")) == ["arch-not-compiled"]


LISTING = ("ERROR: Could not find a version that satisfies the requirement torch==2.5.1 (from versions: "
           "2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1, 2.2.2)\n"
           "ERROR: No matching distribution found for torch==2.5.1\n")


def test_an_apple_chip_named_beside_an_x86_64_listing_is_rosetta() -> None:
    # disler/always-on-ai-assistant#2: pip's listing stops at 2.2.2 (macOS x86_64) on an "Apple M3 Max"
    assert extract("Apple M3 Max - MacOS 15.2", KB).environment.chip == "M3 Max"
    assert extract("on my M2 MacBook Pro", KB).environment.chip == "M2"
    assert extract("the M2 milestone of the Mac port", KB).environment.chip is None
    assert stated(LISTING + "\nApple M3 Max - MacOS 15.2\n") == ["x86-python-on-apple-silicon"]
    # an Intel Mac, or no chip named: the family, whose candidates differ in the fix
    assert stated(LISTING + "\nIntel Core i9 - MacOS 13.6\n") == ["macos-x86-64-python"]
    assert stated(LISTING) == ["macos-x86-64-python"]
    # an Apple silicon Mac and an Intel one both named: the listing may be the Intel Mac's
    both = "It works on my M1 MacBook, but on my Intel MacBook Pro (2019) I get:\n" + LISTING
    assert extract(both, KB).environment.chip is None
    assert stated(both) == ["macos-x86-64-python"]
    # an Intel Python on the Apple silicon Mac is Rosetta's case, not a second Mac
    rosetta = "Apple M2 Pro, but my conda Python is the Intel (x86_64) build\n" + LISTING
    assert stated(rosetta) == ["x86-python-on-apple-silicon"]
