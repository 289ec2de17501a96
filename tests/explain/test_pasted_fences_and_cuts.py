"""Two marks of a paste, read as the message they hold: a Markdown code fence around a text (its
lines, a language tag, tildes, an inline span on one line), and a terminal's hard wrap that cuts
inside an upper-case word (``CUDA_ERROR_NO_BINA`` / ``RY_FOR_GPU``), joined only into a word the
vendors' enums or the signatures spell. Texts written for these tests."""

from __future__ import annotations

from typing import Callable, Dict

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.cutwords import cut_words
from torchsmith.explain.matcher import explain_report
from torchsmith.explain.pasted import as_written

# one-line texts: a rule that reads a text made of one loader error, and an enum's message
_OPENBLAS = "OSError: libopenblas.so.0: cannot open shared object file: No such file or directory"
_CUBLAS = "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"
_TRACEBACK = ("Traceback (most recent call last):\n"
              '  File "/opt/app/serve.py", line 8, in <module>\n'
              "    import numpy\n" + _OPENBLAS)

_FENCES: Dict[str, Callable[[str], str]] = {
    "bare": lambda text: "```\n" + text + "\n```",
    "language tag": lambda text: "```python\n" + text + "\n```\n",
    "tag after a blank": lambda text: "``` console\n" + text + "\n```",
    "tildes": lambda text: "~~~\n" + text + "\n~~~\n",
    "four backticks": lambda text: "````text\n" + text + "\n````",
    "indented (a list item)": lambda text: "   ```\n" + text + "\n   ```",
    "inline": lambda text: "```" + text + "```",
    "inline, in a sentence": lambda text: "I get ```" + text + "``` on import",
    "quoted": lambda text: "> ```\n" + "\n".join("> " + row for row in text.split("\n")) + "\n> ```",
}


@pytest.mark.parametrize("fence", sorted(_FENCES))
@pytest.mark.parametrize("text", [_OPENBLAS, _CUBLAS, _TRACEBACK], ids=["openblas", "cublas", "traceback"])
def test_a_fenced_text_states_the_plain_texts_causes(fence: str, text: str) -> None:
    assert stated(text) != []
    assert stated(_FENCES[fence](text)) == stated(text)


def test_a_fence_is_markdowns_and_the_match_stays_on_the_users_line() -> None:
    fenced = "Importing fails:\n\n```python\n" + _TRACEBACK + "\n```\n\nAny idea?"
    assert "```" not in as_written(fenced).text
    [plain] = explain_report(_TRACEBACK, CATALOG, kb=KB).explanations
    [read] = explain_report(fenced, CATALOG, kb=KB).explanations
    assert read.signature.id == plain.signature.id
    assert fenced.split("\n")[read.line - 1] == _OPENBLAS


def test_what_is_no_fence_is_kept() -> None:
    kept = ("  `torch==2.4.1` has no wheels with a matching platform tag\n"  # uv's single backticks
            "    x = y ~~~ z\n"  # tildes inside a line
            "src/k.cu(12): error: identifier \"uint32_t\" is undefined\n"
            "      ~~~~~~~~^~~~~\n"  # a compiler's underline: a caret in it
            "``\n")  # two backticks are no fence
    assert as_written(kept).text == kept


def _cut_inside(line: str, word: str) -> str:
    """``line`` hard-wrapped at the first usual terminal width that cuts inside ``word``."""
    at = line.index(word)
    width = next(w for w in (80, 100, 120) if at + 2 <= w <= at + len(word) - 2)
    return "\n".join(line[i:i + width] for i in range(0, len(line), width))


_CUTS = {
    # a CUDA driver enum (cuda.h) in a library's message
    "driver enum": ("pycuda._driver.LogicError: cuModuleLoadDataEx failed: device kernel image is invalid - "
                    "CUDA_ERROR_NO_BINARY_FOR_GPU", "CUDA_ERROR_NO_BINARY_FOR_GPU"),
    # a cuBLAS status (cublas_api.h) behind a long path
    "cublas status": ("RuntimeError: CUDA error at /srv/build/workspace/kernels/gemm_dispatch.cu:211 (status "
                      "CUBLAS_STATUS_NOT_INITIALIZED) when calling cublasCreate(handle)",
                      "CUBLAS_STATUS_NOT_INITIALIZED"),
    # a CUDA runtime enum (driver_types.h), cut before one of its capitals
    "runtime enum": ("[rank13]: RuntimeError: cudaLaunchKernel(fused_rms_layer_norm_fwd_kernel, "
                     "grid=(4096,128,16)) returned cudaErrorNoKernelImageForDevice", "KernelImage"),
    # pip's hash refusal in a docker build's output: a word of the signature's own pattern
    "signature word": ("#12 41.27 ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS "
                       "FILE. If you have updated the package versions, please update the hashes.", "FILE"),
}


@pytest.mark.parametrize("kind", sorted(_CUTS))
def test_a_cut_inside_an_upper_case_word_is_joined_into_the_known_word(kind: str) -> None:
    line, word = _CUTS[kind]
    cut = _cut_inside(line, word)
    assert word not in cut
    assert as_written(cut, cut_words(CATALOG, KB)).text == line
    assert stated(line) != [] and stated(cut) == stated(line)


def test_a_cut_before_a_capital_is_not_joined_into_an_unknown_word() -> None:
    words = cut_words(CATALOG, KB)
    # "GPUFound", "REQUIREMENTSNext" are no words of an enum or a signature: the next line is its own
    for end, following in ((" on the GPU", "Found 2 devices"), ("REQUIREMENTS", "Next line"),
                           ("THE_HASHE", "S")):
        text = "x" * (80 - len(end)) + end + "\n" + following
        assert as_written(text, words).text == text
    # a word the caller knows, but no caller: nothing is joined across a capital
    cut = "x" * 61 + " CUDA_ERROR_NO_BINA\nRY_FOR_GPU"
    assert as_written(cut).text == cut and as_written(cut, words).text == cut.replace("\n", "")
    # the known word cut, but at a line shorter than the text's width: no terminal cut it there
    short = "x" * 60 + " CUDA_ERROR_NO_BINA\nRY_FOR_GPU\n" + "y" * 80
    assert as_written(short, words).text == short


def test_a_fence_and_a_terminals_cut_are_both_undone_in_either_order() -> None:
    line, word = _CUTS["cublas status"]
    words = cut_words(CATALOG, KB)
    # the message cut by the terminal, then fenced in the report (its first line is longer than the
    # width by the fence's three backticks) ...
    fenced_after = "```" + _cut_inside(line, word) + "```"
    # ... or the fenced report shown raw and cut with its fence (the width counts the backticks)
    fenced_before = _cut_inside("```" + line + "```", word)
    for text in (fenced_after, fenced_before):
        assert as_written(text, words).text == line
        assert stated(text) == stated(line) != []


def test_a_messages_own_backtick_beside_an_inline_span_is_kept() -> None:
    # accelerate's message ends in a backtick; the span's three follow it
    message = "Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`"
    assert as_written("```" + message + "```").text == message
    assert stated("```" + message + "```") == stated(message) != []
