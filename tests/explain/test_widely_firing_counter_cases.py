"""Counter-cases for the assertions that fire most widely: an unseen text of the same shape whose
cause is another, where the older signature stated its own. Each keeps the shape it was written
for stating its cause."""

from __future__ import annotations

from tests.explain.test_signatures import stated


def test_nvcc_not_found_answering_a_lookup_by_hand_is_not_a_failed_build() -> None:
    # an issue template's environment dump: the user typed `nvcc --version`; nothing was being built
    dump = ("Environment:\n - torch 2.1.0+cu118\n$ nvcc --version\nbash: nvcc: command not found\n\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    assert "cuda-home-not-set" not in stated(dump)
    assert "cuda-home-not-set" not in stated("-bash: nvcc: command not found\n")
    # the same lookup beside a build that needed nvcc, and a build script's own shell: the cause
    build = "$ nvcc --version\nbash: nvcc: command not found\n  Building wheel for flash-attn (setup.py) ... error\n"
    assert stated(build) == ["cuda-home-not-set"]
    assert stated("Obtained compute capability 80 from PyTorch\nsh: 1: nvcc: not found\n") == ["cuda-home-not-set"]
