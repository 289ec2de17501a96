"""A message is read the same whatever shape its paste gave it: Windows line ends, a terminal's colour
codes, a web page's no-break spaces and HTML references, a JSON log record or a Python repr holding
it on one line, a Markdown fence, tabs, a byte-order mark, a terminal's hard wrap at its width. The
causes stated are the plain text's, and a match is reported on the line the user sees."""

from __future__ import annotations

import json
import re
from typing import Callable, Dict

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report
from torchsmith.explain.pasted import as_written

# torch's capability warning (torch/cuda/__init__.py, _check_capability) for a GPU older than the
# build's oldest architecture: its long lines are what a terminal cuts
_TOO_OLD = (
    "/srv/env/lib/python3.11/site-packages/torch/cuda/__init__.py:262: UserWarning:\n"
    "Quadro P2000 with CUDA capability sm_61 is not compatible with the current PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120.\n"
    "If you want to use the Quadro P2000 GPU with PyTorch, please check the instructions at "
    "https://pytorch.org/get-started/locally/\n"
)
# a traceback whose lines hold quotes, angle brackets and indentation (torch's own refusal)
_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/bench/run.py", line 12, in <module>\n'
    "    net = Net().to('cuda')\n"
    '  File "/home/ana/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py", line 363,'
    " in _lazy_init\n"
    '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
    "AssertionError: Torch not compiled with CUDA enabled\n"
)
# torch's own CUDA mismatch refusal (torch/utils/cpp_extension.py, CUDA_MISMATCH_MESSAGE), 80 wide
_MISMATCH = (
    "Traceback (most recent call last):\n"
    '  File "/src/ext/setup.py", line 21, in <module>\n'
    "    setup(\n"
    '  File "/opt/py/lib/python3.11/site-packages/torch/utils/cpp_extension.py", line 414,'
    " in _check_cuda_version\n"
    "    raise RuntimeError(CUDA_MISMATCH_MESSAGE.format(cuda_str_version, torch.version.cuda))\n"
    "RuntimeError:\n"
    "The detected CUDA version (12.6) mismatches the version that was used to compile\n"
    "PyTorch (12.1). Please make sure to use the same CUDA versions.\n"
)
# nvcc refusing an architecture, quoted: HTML references replace its quotes
_NVCC = ("[3/7] /usr/local/cuda/bin/nvcc -gencode=arch=compute_89,code=sm_89 -c kern.cu -o kern.o\n"
         "FAILED: kern.o\n"
         "nvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
         "ninja: build stopped: subcommand failed.\n")
# conda's refusal, its lists indented: read line by line
_CONDA = ("$ conda install pytorch torchvision pytorch-cuda=12.1 -c pytorch -c nvidia\n"
          "Collecting package metadata (current_repodata.json): done\n"
          "Solving environment: failed\n\n"
          "PackagesNotFoundError: The following packages are not available from current channels:\n\n"
          "  - pytorch-cuda=12.1\n\n"
          "Current channels:\n\n"
          "  - https://conda.anaconda.org/pytorch/osx-arm64\n"
          "  - https://conda.anaconda.org/nvidia/osx-arm64\n")
# torch's exporter importing its optional requirement: the frame's source line names the import
_OPTIONAL = (
    "Traceback (most recent call last):\n"
    '  File "/home/lee/export.py", line 9, in <module>\n'
    '    torch.onnx.export(model, x, "m.onnx", dynamo=True)\n'
    '  File "/home/lee/.venv/lib/python3.12/site-packages/torch/onnx/_internal/exporter/_core.py", line 18,'
    " in <module>\n"
    "    import onnxscript\n"
    "ModuleNotFoundError: No module named 'onnxscript'\n"
)
_TEXTS = {"too-old": (_TOO_OLD, "gpu-too-old-for-torch"),
          "traceback": (_TRACEBACK, "torch-not-compiled-with-cuda"),
          "mismatch": (_MISMATCH, "extension-cuda-mismatch"), "nvcc": (_NVCC, "nvcc-unsupported-arch"),
          "conda": (_CONDA, "conda-pytorch-cuda-unavailable"),
          "optional": (_OPTIONAL, "optional-dependency-not-installed")}


def _wrap(width: int) -> Callable[[str], str]:
    def cut(text: str) -> str:
        lines = []
        for line in text.split("\n"):
            rest = line
            while len(rest) > width:
                lines.append(rest[:width])
                rest = rest[width:]
            lines.append(rest)
        return "\n".join(lines)
    return cut


def _references(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


_SHAPES: Dict[str, Callable[[str], str]] = {
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "colours": lambda text: "\n".join("\x1b[0m" + re.sub(r"(\w*Error|UserWarning)", "\x1b[31m\\1\x1b[0m", row)
                                      for row in text.split("\n")),
    "no-break spaces": lambda text: text.replace(" ", "\u00a0"),
    "html references": _references,
    "json record": lambda text: json.dumps({"level": "error", "logger": "train", "msg": text}),
    # docker's json-file log driver: a record per line, the line's end escaped in it
    "docker json log": lambda text: "\n".join(json.dumps({"log": row + "\n", "stream": "stderr"})
                                              for row in text.split("\n")),
    "python repr": repr,
    "list of lines": lambda text: repr(text.splitlines()),
    "fence": lambda text: "```console\n" + text + "```\n",
    "quoted fence": lambda text: "> ```\n" + "\n".join("> " + row for row in text.split("\n")) + "\n> ```\n",
    "tabs": lambda text: re.sub(r"(?m)^(?:  )+", lambda level: "\t" * (len(level.group()) // 2), text),
    "byte-order mark": lambda text: "\ufeff" + text,
    "wrap80": _wrap(80),
    "wrap120": _wrap(120),
    # an old Windows console's copy: cut at its width, every line padded with blanks to it
    "console copy": lambda text: "\n".join(row.ljust(80) for row in _wrap(80)(text).split("\n")),
    # a terminal's copy trims the blank each line was cut at
    "wrap80 trimmed": lambda text: "\n".join(row.rstrip() for row in _wrap(80)(text).split("\n")),
}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
@pytest.mark.parametrize("kind", sorted(_TEXTS))
def test_a_pasted_shape_states_the_plain_texts_causes(shape: str, kind: str) -> None:
    text, cause = _TEXTS[kind]
    assert stated(text) == [cause]
    assert stated(_SHAPES[shape](text)) == [cause]


def test_a_wrapped_fact_is_read_whole() -> None:
    # cut at 80, the GPU's capability ("sm_61 ... the curr" / "ent PyTorch") and the arch list ("sm_89 s" /
    # "m_90") are not read; joined, the GPU is below every entry: the build is newer than the GPU,
    # it does not lack one architecture
    cut = _wrap(80)(_TOO_OLD)
    assert "sm_89 s\nm_90" in cut
    assert "sm_89 sm_90 sm_100 sm_120" in as_written(cut).text
    [plain] = explain_report(_TOO_OLD, CATALOG, kb=KB).explanations
    [read] = explain_report(cut, CATALOG, kb=KB).explanations
    assert read.signature.id == plain.signature.id == "gpu-too-old-for-torch"
    assert read.line == plain.line  # reported on the original's line


def test_a_line_its_program_ended_at_the_width_is_not_joined() -> None:
    # torch's CUDA mismatch message is written 80 wide (cpp_extension's CUDA_MISMATCH_MESSAGE): its
    # next line starts with a capital, as a new line may; a separator filled to the width and an
    # indented frame are not cut lines either
    lines = ["The detected CUDA version (12.4) mismatches the version that was used to compile",
             "PyTorch (11.8). Please make sure to use the same CUDA versions.",
             "=" * 80, "RuntimeError: boom",
             "x" * 79 + ",", "  File \"y.py\", line 1"]
    assert len(lines[0]) == 80
    text = "\n".join(lines)
    assert as_written(text).text == text
    assert stated(text) == stated(lines[0] + " " + lines[1]) != []


def test_only_a_cut_inside_a_token_or_at_a_blank_is_joined() -> None:
    head = "a" * 75
    assert as_written(head + " sm_9\n0 sm_100").text == head + " sm_90 sm_100"
    assert as_written(head + "a wor\nd next").text == head + "a word next"
    assert as_written(head + "word \nnext").text == head + "word next"
    assert as_written(head + "words\n next").text == head + "words next"
    # a console's copy pads each line with blanks to the width: no line was cut
    # a line of the width before a logger's prefix alone (an empty record) is a line of its own
    logged = "2025-03-01 12:00:01,123 - app - ERROR - "
    assert as_written(logged + "a" * 40 + "\n" + logged + "\n" + logged + "b").text.count("\n") == 2
    padded = "\n".join(row.ljust(80) for row in ("RuntimeError: boom", "next line", "x"))
    assert as_written(padded).text == padded
    # one less than the width: the blank the cut fell on was trimmed; only a token's start goes on
    other = "x" * 80 + "\ny\n"  # the text's other cut line: 80 is its width
    assert as_written(other + head + "word\nnext").text == "x" * 80 + "y\n" + head + "word next"
    assert as_written(other + head + "word\nNext").text.endswith(head + "word\nNext")
    # a text with a longer line was not cut at 80
    assert as_written(head + " sm_9\n0 sm_100\n" + "b" * 81).text.startswith(head + " sm_9\n")


def test_what_only_looks_escaped_or_referenced_is_kept() -> None:
    kept = ("C:\\new\\nvidia\\Users\\me\\bin\\nvcc.exe failed\n"  # a Windows path: \U is no escape
            "see https://example.org/find?q=cuda&not=1&amp=2\n"  # no semicolon: not a reference
            "['sm_80', 'sm_86', 'sm_90']\n"  # a list of names (torch.cuda.get_arch_list()), not of lines
            "value = 'a\\nb'\n")  # one escaped line break: a value, not a message
    assert as_written(kept).text == kept


def test_an_escaped_message_is_read_on_the_line_it_was_pasted_in() -> None:
    record = "started\n" + json.dumps({"msg": _TRACEBACK}) + "\n"
    written = as_written(record)
    assert written.text.split("\n")[1] == "Traceback (most recent call last):"
    assert written.line(3) == 2  # the traceback's lines were the record's line
    [read] = explain_report(record, CATALOG, kb=KB).explanations
    assert read.line == 2


def test_a_long_logs_cut_message_is_joined_at_its_end_on_its_line() -> None:
    noise = "step 12 loss=0.53 lr=3e-4\n" * 12000  # past the part read for cut lines
    cut = _wrap(80)(_TOO_OLD)
    [plain] = explain_report(_TOO_OLD, CATALOG, kb=KB).explanations
    [read] = explain_report(noise + cut, CATALOG, kb=KB).explanations
    assert read.signature.id == "gpu-too-old-for-torch"
    assert read.line == 12000 + plain.line  # the original's line of the joined message


@pytest.mark.parametrize("label", ["worker-0: ", "node7: ", "app.trainer: ", "python[4242]: "])
def test_a_label_relayed_on_every_line_is_not_the_message(label: str) -> None:
    # a logger's name after its level ("%(asctime)s [%(levelname)s] %(name)s: %(message)s"), pdsh's host
    for kind, (text, cause) in sorted(_TEXTS.items()):
        relayed = "\n".join(f"2025-03-01 12:00:{i:02d} [ERROR] {label}{row}" if row else row
                            for i, row in enumerate(text.split("\n")))
        assert stated(relayed) == [cause], kind
        assert stated("\n".join(label + row for row in text.split("\n"))) == [cause], kind


def test_a_label_on_few_lines_or_a_word_is_the_message() -> None:
    from torchsmith.explain.messages import without_line_prefixes

    kept = ["RuntimeError: a\nRuntimeError: b\nRuntimeError: c",  # a word: a message's own name
            "ERROR: a\nERROR: b\nERROR: c",
            "node7: a\nb\nc\nd",  # on one line of four
            "node7: a\nnode7: b"]  # two lines
    for text in kept:
        assert without_line_prefixes(text) == text


@pytest.mark.parametrize("prefix", ["> ", "[rank0]: ", "(RayWorker pid=4242) ",
                                    "2025-03-01 12:00:01,123 - app - ERROR - "])
def test_a_prefixed_texts_empty_lines_are_empty(prefix: str) -> None:
    # conda's refusal is read by its blocks, which empty lines separate: a prefix alone is such a line
    prefixed = "\n".join(prefix + row for row in _CONDA.split("\n"))
    assert stated(prefixed) == ["conda-pytorch-cuda-unavailable"]


def test_a_one_line_messages_repr_or_list_is_read_as_the_message() -> None:
    # holding both quotes, its repr escapes the apostrophe: "doesn\'t"
    line = 'On Windows 11, backend="nccl": RuntimeError: Distributed package doesn\'t have NCCL built in'
    assert "\\'" in repr(line)
    assert stated(line) == ["nccl-unavailable-on-platform"]
    for shape in (repr(line), repr([line]), "[" + repr(line) + ", '']", json.dumps({"msg": line})):
        assert as_written(shape).text.split("\n")[0] == line, shape
        assert stated(shape) == ["nccl-unavailable-on-platform"], shape
    # a list of paths is lines; a list of names or requirements is not
    paths = repr(["C:\\env\\Lib\\site-packages\\torch\\lib\\c10.dll", "C:\\env\\Lib\\site-packages\\x.dll"])
    assert as_written(paths).text.split("\n") == ["C:\\env\\Lib\\site-packages\\torch\\lib\\c10.dll",
                                                  "C:\\env\\Lib\\site-packages\\x.dll"]
    names = "['torch==2.4.1', 'numpy<2', 'sm_80']"
    assert as_written(names).text == names
    # text between brackets that only holds a literal is no list: "[rank0]: ... "C:\x.dll" ... [1]"
    bracketed = '[rank0]: Error loading "C:\\env\\torch\\lib\\c10.dll" or one of its dependencies. [1]'
    assert as_written(bracketed).text == bracketed


def test_a_loggers_name_after_its_level_is_its_prefix_on_any_number_of_lines() -> None:
    two = "\n".join(_MISMATCH.rstrip("\n").split("\n")[-2:])
    assert stated(two) == ["extension-cuda-mismatch"]
    logged = "\n".join(f"2025-03-01 12:00:0{i} [ERROR] worker-0: {row}"
                       for i, row in enumerate(two.split("\n")))
    assert stated(logged) == ["extension-cuda-mismatch"]
    from torchsmith.explain.messages import without_line_prefixes

    # the message's own name after a level stays; the indentation after a logger's name too
    assert without_line_prefixes("2025-03-01 12:00:01 [ERROR] RuntimeError: boom") == "RuntimeError: boom"
    assert without_line_prefixes("2025-03-01 12:00:01 [ERROR] app.io:   - item") == "  - item"

