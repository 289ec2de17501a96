"""What a text shows after its failure, once it says the problem was fixed (an install that succeeded
below the error, "Solved: ..."), is the stack after the fix: its versions are not the failing build's.
Read as the build in use, they made rules blame the wrong binary (the fix's own torch carries the GPU,
so "an extension lacks it")."""

from __future__ import annotations

from tests.explain.test_signatures import stated

from torchsmith.explain.extract import extract

_NO_IMAGE = ('  File "/home/u/app/run.py", line 12, in <module>\n    x = model(img.cuda())\n'
             "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
_FIX_INSTALL = ("pip install torch --index-url https://download.pytorch.org/whl/cu128\n"
                "Successfully installed torch-2.7.0+cu128\n")


def test_an_install_that_succeeds_below_the_error_is_the_fix_not_the_failing_build() -> None:
    text = "I have an RTX 5090 and get this:\n" + _NO_IMAGE + "\nReinstalled from the cu128 index:\n"
    text += _FIX_INSTALL
    assert extract(text).environment.torch is None
    # the failing build is not shown: the family speaks, no extension is blamed
    assert stated(text) == ["no-kernel-image"]
    solved = "GPU: RTX 5090\n" + _NO_IMAGE + "\nSolved: I installed torch 2.7.0+cu128 and it runs\n"
    assert extract(solved).environment.torch is None
    assert "extension-arch-not-compiled" not in stated(solved)


def test_the_stack_shown_before_the_failure_is_still_read() -> None:
    # the install ran first, then the program failed with that torch: it is the build in use
    first = _FIX_INSTALL + "GPU: NVIDIA GeForce RTX 5090\n" + _NO_IMAGE
    assert extract(first).environment.torch == "2.7.0+cu128"
    assert stated(first) == ["extension-arch-not-compiled"]
    # the failing build named before the error wins over the fix named after it
    both = "torch version: 2.6.0+cu124\nGPU: RTX 5090\n" + _NO_IMAGE + "Fixed it by\n" + _FIX_INSTALL
    assert (extract(both).environment.torch, extract(both).environment.torch_cuda) == ("2.6.0+cu124", "12.4")
    # an update that adds the environment (no fix said) is the same machine and stack
    added = "GPU: RTX 5090\n" + _NO_IMAGE + "Update: my environment is torch 2.7.0+cu128\n"
    assert extract(added).environment.torch == "2.7.0+cu128"
    # a text with no failure line at all is read whole
    assert extract("Solved: torch 2.7.0+cu128 on an RTX 5090").environment.torch == "2.7.0+cu128"


def test_a_failure_said_in_words_or_an_enum_name_ends_the_failing_part_too() -> None:
    # the error named by its enum (cudaErrorNoKernelImageForDevice), the failure said in words
    text = ("A Tesla P100 fails on any CUDA operation with cudaErrorNoKernelImageForDevice: the image's "
            "`torch 2.10.0+cu128` has no sm_60.\n\nUpdate: solved it by reinstalling:\n" + _FIX_INSTALL)
    assert extract(text).environment.torch == "2.10.0+cu128"


def test_a_failure_told_in_prose_ends_where_a_note_says_it_was_solved() -> None:
    # no failure word (error, failed, Traceback...) in the report, only what happened; the note that
    # it was solved still starts the stack after the fix
    told = ("On a Tesla V100 every CUDA call says\n"
            "`no kernel image is available for execution on the device`\n"
            "\nUpdate: solved it with another wheel:\n" + _FIX_INSTALL)
    assert extract(told).environment.torch is None
    assert "extension-arch-not-compiled" not in stated(told)
    before = "On a Tesla V100 with torch 2.3.1+cu121, nothing runs on the GPU\n"
    before += "Update: solved by " + _FIX_INSTALL
    assert extract(before).environment.torch == "2.3.1+cu121"
