"""What a report says in words about the torch an install left in place, where no tool's output
shows it: a CPU-only build put in ("resulted in the CPU version of torch", "replaced the CUDA pytorch
with CPU-only pytorch"), or pip uninstalling the GPU build ("uninstalls torch-2.11.0+cu128 and
replaces it", "replace cuda torch"). Statements only: a question, a wish or a negation is none
(the clause's check is the one every pattern that reads a person's words uses, explain/negation.py).
Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Match, Pattern, Set

from torchsmith.explain.extract.model import InstallerError
from torchsmith.explain.negation import denied_in_clause

__all__ = ["cpu_build_said", "interpreters_disagree_said", "mig_one_device_said", "pip_replaced_torch_said",
           "uvm_reload_fixed_said"]

# "CPU-only pytorch", "the cpu only version of pytorch", "non-CUDA version of Torch", "CPU version torch"
# ("pytroch": the transposition people type)
_CPU_TORCH = (r"(?:CPU|non-CUDA)(?:[- ](?:only|enabled))*(?:\s+(?:version|build|variant|wheel)s?)?"
              r"(?:\s+of)?\s+`?(?:py)?t(?:or|ro)ch\b")
# "the CPU version", "the [cpu] version": the build without torch's name, which then stands shortly before
_CPU_ALONE = (r"(?:CPU|\[cpu\]|non-CUDA)(?:[- ](?:only|enabled))*\s+(?:version|build|variant|wheel)\b"
              r"(?!\s+of\b)")
_TORCH_BEFORE = re.compile(r"\b(?:py)?torch\b", re.IGNORECASE)
_TORCH_BEFORE_CHARS = 120


def _cpu_build_said_pattern(cpu: str) -> Pattern[str]:
    return re.compile(
        # an install (or its result) that put it in place ...
        r"\b(?:install(?:s|ed|ing|ation)?|reinstall(?:s|ed|ing|ation)?|resulted in|results in|defaults? to|"
        r"defaulted to|forc(?:e|es|ed|ing)|pull(?:s|ed))\b(?:(?!instead|rather|\bnot\b|n't)[^\n.;?]){0,40}?"
        + cpu
        # ... a replacement, with the CPU build after "with" ...
        + r"|\breplac\w*\b(?:(?!instead|rather|\bnot\b|n't)[^\n.;?]){0,60}?\bwith\s+(?:a\s+|the\s+)?" + cpu
        # ... or the CPU build named first, then installed
        + r"|" + cpu + r"\s+(?:is|was|gets|got|has been|had been|to be)\s+(?:re)?installed\b",
        re.IGNORECASE)


_CPU_BUILD_SAID = _cpu_build_said_pattern(_CPU_TORCH)
_CPU_ALONE_SAID = _cpu_build_said_pattern(_CPU_ALONE)
_CPU_TORCH_NAMED = re.compile(_CPU_TORCH, re.IGNORECASE)
_CPU_ALONE_NAMED = re.compile(_CPU_ALONE, re.IGNORECASE)
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
        if not question and not _NOT_A_STATEMENT.search(before) and not denied_in_clause(text, match.start()):
            yield match


def cpu_build_said(text: str) -> bool:
    """The report says an install put a CPU-only torch in place."""
    for named_by, said in ((_CPU_TORCH_NAMED, _CPU_BUILD_SAID), (_CPU_ALONE_NAMED, _CPU_ALONE_SAID)):
        for count, named in enumerate(named_by.finditer(text)):
            if count >= _MAX_LOOKED_AT:
                break
            if named_by is _CPU_ALONE_NAMED and not _TORCH_BEFORE.search(
                    text, max(0, named.start() - _TORCH_BEFORE_CHARS), named.start()):
                continue  # the build of which package?
            # the sentence around it (a verb up to 60 characters before, the question mark after)
            around = text[max(0, named.start() - 100) : named.end() + 200]
            if next(_statements(said, around), None) is not None:
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


# MIG named as enabled (not nvidia-smi's "MIG M." column header, nor MIG disabled) and torch seeing one
# device: CUDA enumerates a single MIG instance per process (NVIDIA's MIG user guide, "CUDA Device
# Enumeration"), however many the GPU is split into
_MIG = re.compile(r"\bMIG\b(?! M\.)")
_MIG_OFF = re.compile(r"\bMIG\b[^\n]{0,20}\b(?:[Dd]isabled|off|OFF)\b")
_ONE_DEVICE = re.compile(
    r"device_count\(\)`?\W{0,6}(?:(?:shows|returns?|returned|gives|gave|prints|printed|is|was|reports)\W{1,3})?"
    r"(?:only\s+)?(?:one|1)\b(?![.\d])"
    r"|\b(?:sees?|shows?|detects?|finds?|lists?)\s+only\s+(?:one|1)\s+(?:gpu|GPU|device)", re.IGNORECASE)


def mig_one_device_said(text: str) -> bool:
    """The text names MIG in use and says torch sees one device."""
    if "MIG" not in text or not _MIG.search(text) or _MIG_OFF.search(text):
        return False
    return next(_statements(_ONE_DEVICE, text), None) is not None


# Reloading nvidia_uvm (rmmod or modprobe -r, then modprobe) said to have cleared the error, the
# statement before the commands ("these commands solve my problem: ... sudo rmmod nvidia_uvm ...")
_UVM_RELOAD = re.compile(r"(?:rmmod|modprobe -r) nvidia[_-]uvm[ \t]*\n[ \t]*(?:sudo )?"
                         r"modprobe nvidia[_-]uvm\b")
_FIXED = re.compile(r"(?<!to )(?<!can [Ii] )(?<!do [Ii] )(?<!not )(?<!n't )\b(?:fixe[sd]|solved|resolved|"
                    r"solves|resolves|solve my)\b")
_BEFORE_RELOAD = 600  # characters before the commands where the statement may stand


def uvm_reload_fixed_said(text: str) -> bool:
    """The text says that the nvidia_uvm reload it shows fixed the error."""
    if "nvidia" not in text:
        return False
    reload = _UVM_RELOAD.search(text)
    if reload is None:
        return False
    window = text[max(0, reload.start() - _BEFORE_RELOAD):reload.start()]
    return any(not denied_in_clause(window, fixed.start()) for fixed in _FIXED.finditer(window))


# The same `-c` check run by two interpreter names ("python3 -c ..." and "python -c ...", or two
# paths to python): a name resolves to one interpreter, so where one name answers True and the other
# False, the two names start two Pythons (another installation, venv or conda env). Each run's answer
# is the first True/False after it (its output, or "results in TRUE"), before the next run; else the
# last one before it ("I keep getting FALSE for"), after the previous run.
_INTERPRETER_CHECK = re.compile(
    r"(?P<python>(?:python(?:3(?:\.\d{1,2})?)?|\bpy)(?:\.exe)?(?: -3(?:\.\d{1,2})?)?) -c ['\"]"
    r"(?P<code>[^'\"\n]{5,200}print\([^'\"\n]{1,200})['\"]")
_PATH_BEFORE = re.compile(r"[^\s'\"`]{0,200}\Z")  # the rest of the interpreter's path, before its name
_ANSWER = re.compile(r"\b(?:True|False|TRUE|FALSE|true|false)\b")
_TRUE = re.compile(r"\bTrue\b", re.IGNORECASE)
_FALSE = re.compile(r"\bFalse\b", re.IGNORECASE)
_MAX_CHECKS = 40
_AFTER_RUN, _BEFORE_RUN = 300, 200  # characters after / before a run where its answer may stand


def _answer(text: str, start: int, end: int, previous_end: int, next_start: int) -> str:
    """The True/False a run at text[start:end] is shown to give ("" where none is)."""
    after = _ANSWER.search(text, end, min(next_start, end + _AFTER_RUN))
    if after is not None:
        return after.group().lower()
    before = list(_ANSWER.finditer(text, max(previous_end, start - _BEFORE_RUN), start))
    return before[-1].group().lower() if before else ""


def interpreters_disagree_said(text: str) -> bool:
    """The text runs one check with two interpreter names, one answering True and the other False."""
    if " -c " not in text or not _TRUE.search(text) or not _FALSE.search(text):
        return False
    checks = list(_INTERPRETER_CHECK.finditer(text))[:_MAX_CHECKS]
    answers: Dict[str, Dict[str, Set[str]]] = {}
    for at, check in enumerate(checks):
        code = re.sub(r"[\s;]+", "", check.group("code"))
        path = _PATH_BEFORE.search(text, max(0, check.start() - 200), check.start())
        python = ((path.group() if path else "") + check.group("python")).lower()
        previous_end = checks[at - 1].end() if at else 0
        next_start = checks[at + 1].start() if at + 1 < len(checks) else len(text)
        answer = _answer(text, check.start(), check.end(), previous_end, next_start)
        if answer:
            answers.setdefault(code, {}).setdefault(python, set()).add(answer)
    for by_python in answers.values():
        said = [next(iter(a)) for a in by_python.values() if len(a) == 1]
        if len(said) >= 2 and len(set(said)) == 2:
            return True
    return False
