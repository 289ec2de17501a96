"""A message is read the same whatever a logger, a runner or a quoted reply put before each of its
lines, and wherever a terminal cut it at its width: the readers anchored at a line's start (a
traceback, an exception's name, pip's lines) see the message itself. Each prefix is the tool's own
fixed format (torchrun's per-rank output, Ray's worker prefix, Python logging's asctime format,
Markdown's quote, docker buildkit's step, glog, syslog); text that merely starts alike is left alone."""

from __future__ import annotations

from typing import Callable

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report
from torchsmith.explain.messages import unwrap, without_line_prefixes

# torch's own refusal (torch/cuda/__init__.py, _lazy_init) under a script's traceback
_NOT_COMPILED = ('Traceback (most recent call last):\n  File "/home/u/train.py", line 7, in <module>\n'
                 '    model.cuda()\n  File "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py",'
                 " line 310, in _lazy_init\n"
                 '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
                 "AssertionError: Torch not compiled with CUDA enabled\n")
_PREFIXES = {
    "torchrun": "[rank0]: ",
    "ray": "(RayWorker pid=4242, ip=10.0.0.7) ",
    "logging": "2025-03-01 12:00:01,123 - trainer - ERROR - ",
    "iso-level": "2025-03-01T12:00:01.123Z [ERROR] ",
    "quote": "> ",
    "nested-quote": "> > ",
    "buildkit": "#12 3.456 ",
    "glog": "E1127 01:02:03.456789  4242 trainer.cc:88] ",
    "syslog": "Nov 27 01:02:03 node7 python[4242]: ",
}


def each_line(prefix: str) -> Callable[[str], str]:
    return lambda text: "\n".join(prefix + line for line in text.split("\n"))


@pytest.mark.parametrize("kind", sorted(_PREFIXES))
def test_a_prefix_on_every_line_leaves_the_message_and_its_lines(kind: str) -> None:
    prefixed = each_line(_PREFIXES[kind])(_NOT_COMPILED.rstrip("\n"))
    assert without_line_prefixes(prefixed) == _NOT_COMPILED.rstrip("\n")
    assert stated(prefixed) == stated(_NOT_COMPILED) != []
    [plain] = explain_report(_NOT_COMPILED, CATALOG, kb=KB).explanations
    [read] = explain_report(prefixed, CATALOG, kb=KB).explanations
    assert read.line == plain.line  # the line numbers are the original text's


def test_what_only_starts_like_a_prefix_is_kept() -> None:
    kept = (">>> import torch\n>>> torch.cuda.is_available()\nFalse\n"  # a REPL's prompt, not a quote
            "ERROR: Could not find a version that satisfies the requirement torch==2.0.1+cu118\n"
            "RuntimeError: CUDA error: out of memory\n"
            "2025-03-01 12:00:01\n"  # a timestamp alone is the line, not a prefix of it
            "[rank0]:\n"
            "(pid=12) \n"
            "#1 [internal] load build definition from Dockerfile\n")
    assert without_line_prefixes(kept) == kept
    # a logger's name is stripped only with the level that follows it; a message's own "Name: " stays
    line = "2025-03-01 12:00:01,123 RuntimeError: CUDA error: out of memory"
    assert without_line_prefixes(line) == "RuntimeError: CUDA error: out of memory"


def test_a_line_cut_at_the_terminal_width_inside_a_token_is_joined_without_a_blank() -> None:
    message = ("Automatic Mask Generation fail: NotImplementedError: Could not run 'torchvision::nms' "
               "with arguments from the 'CUDA' backend.")
    cut = message[:80] + "\n" + message[80:]  # the cut falls between the two colons of "::"
    assert cut.split("\n")[0].endswith("torchvision:")
    assert unwrap(cut).text == message
    assert stated(cut) == stated(message) != []
    # a line of the width that ends with a blank, or a next line that is indented, was not cut in a word
    assert unwrap("a" * 79 + " \nword").text == "a" * 79 + " word"
    assert unwrap("a" * 80 + "\n  File x").text == "a" * 80 + " File x"
