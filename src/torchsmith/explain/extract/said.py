"""What a report says in words about the torch an install left in place, where no tool's output
shows it: a CPU-only build put in ("resulted in the CPU version of torch", "replaced the CUDA pytorch
with CPU-only pytorch"), or pip uninstalling the GPU build ("uninstalls torch-2.11.0+cu128 and
replaces it", "replace cuda torch"). Statements only: a question, a wish or a negation is none.
Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Match, Pattern

from torchsmith.explain.extract.model import InstallerError

__all__ = ["cpu_build_said", "pip_replaced_torch_said"]

# "CPU-only pytorch", "the cpu only version of pytorch", "non-CUDA version of Torch", "CPU version torch"
# ("pytroch": the transposition people type)
_CPU_TORCH = (r"(?:CPU|non-CUDA)(?:[- ](?:only|enabled))*(?:\s+(?:version|build|variant|wheel)s?)?"
              r"(?:\s+of)?\s+`?(?:py)?t(?:or|ro)ch\b")
_CPU_BUILD_SAID = re.compile(
    # an install (or its result) that put it in place ...
    r"\b(?:install(?:s|ed|ing|ation)?|reinstall(?:s|ed|ing|ation)?|resulted in|results in|defaults? to|"
    r"defaulted to|forc(?:e|es|ed|ing)|pull(?:s|ed))\b(?:(?!instead|rather|\bnot\b|n't)[^\n.;?]){0,40}?"
    + _CPU_TORCH
    # ... a replacement, with the CPU build after "with" ...
    + r"|\breplac\w*\b(?:(?!instead|rather|\bnot\b|n't)[^\n.;?]){0,60}?\bwith\s+(?:a\s+|the\s+)?" + _CPU_TORCH
    # ... or the CPU build named first, then installed
    + r"|" + _CPU_TORCH + r"\s+(?:is|was|gets|got|has been|had been|to be)\s+(?:re)?installed\b",
    re.IGNORECASE)
_CPU_TORCH_NAMED = re.compile(_CPU_TORCH, re.IGNORECASE)
# A question or a wish before the verb ("how to install", "should I install", "want to force")
_NOT_A_STATEMENT = re.compile(r"\b(?:(?:how|want|wants|wanted|need|needs|try|trying|like|able|going|have|has)"
                              r" to|should|shall|can|could|would|please|must|if)\s+(?:\S+\s+)?$",
                              re.IGNORECASE)


_MAX_LOOKED_AT = 100  # matches looked at (a log may repeat one sentence)


def _statements(pattern: Pattern[str], text: str) -> Iterator[Match[str]]:
    """The matches that state something: not in a question, nor after a wish or a condition."""
    at = 0
    for _ in range(_MAX_LOOKED_AT):
        match = pattern.search(text, at)
        if match is None:
            return
        at = match.start() + 1
        line_start = text.rfind("\n", 0, match.start()) + 1
        before = text[max(line_start, match.start() - 24) : match.start()]
        after = text[match.end() : match.end() + 200]  # the rest of its sentence
        ends = [i for i in (after.find(c) for c in ".?\n") if i >= 0]
        question = bool(ends) and after[min(ends)] == "?"
        if not question and not _NOT_A_STATEMENT.search(before):
            yield match


def cpu_build_said(text: str) -> bool:
    """The report says an install put a CPU-only torch in place."""
    for count, named in enumerate(_CPU_TORCH_NAMED.finditer(text)):
        if count >= _MAX_LOOKED_AT:
            break
        # the sentence around it (a verb up to 60 characters before, the question mark after)
        around = text[max(0, named.start() - 100) : named.end() + 200]
        if next(_statements(_CPU_BUILD_SAID, around), None) is not None:
            return True
    return False


# pip uninstalling the GPU build: "uninstall the `torch-2.11.0+cu128`", "replace cuda torch"
# (not a command the user typed: "pip uninstall torch==...")
_REPLACED_SAID = re.compile(
    r"(?<!pip )(?<!pip3 )\b(?:uninstall|remov|replac)\w*\s+(?:the\s+|my\s+)?`?torch[-= ]=?"
    r"(?P<build>\d[\w.]*\+(?:cu\d{2,3}|rocm[\d.]+|xpu))"
    r"|\breplac\w*\s+(?:the\s+|my\s+)?(?:installed\s+)?(?:cuda|gpu)(?:[- ]enabled)?\s+"
    r"(?:(?:version|build)\s+of\s+)?(?:py)?torch\b",
    re.IGNORECASE)
# The report runs pip itself, and no other installer (uv and conda replace builds too, in the same words)
_PIP_INSTALL = re.compile(r"(?<!uv )\bpip3?(?:\.exe)? install\b")
_OTHER_INSTALLER = re.compile(r"\b(?:uv|conda|mamba|micromamba|pixi|poetry)(?: pip)? (?:install|add|sync)\b")
_PIP_SOURCE = "https://github.com/pypa/pip/blob/main/src/pip/_internal/req/req_install.py"


def pip_replaced_torch_said(text: str) -> List[InstallerError]:
    """The report says that a ``pip install`` it ran uninstalled or replaced the installed GPU build
    of torch; the build, where it names it (torch X+cuNNN)."""
    if "torch" not in text.lower() or not _PIP_INSTALL.search(text) or _OTHER_INSTALLER.search(text):
        return []
    said = next(_statements(_REPLACED_SAID, text), None)
    if said is None:
        return []
    meaning = f"the report says a pip install did it: \"{said.group(0).strip()[:120]}\""
    return [InstallerError("pip", "torch-replaced-said", said.group(0).strip()[:240], meaning,
                           said.group("build"), (_PIP_SOURCE,))]
