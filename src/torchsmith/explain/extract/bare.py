"""Symptoms a report states in its own words, with no error that names a cause: torch sees no GPU,
the process died of a signal (SIGSEGV, SIGFPE, SIGKILL), nvidia-smi is not there, the GPU idles while
the work runs on the CPU, one process hangs at a step. Pure.

Each is a statement, not a cause: a family (signatures.json) lists the causes that produce it, each
with the check that tells it apart, and yields to any failure a signature names. A symptom the text
also says was resolved or is the opposite ("returns True now") is not reported.
"""

from __future__ import annotations

import re
from typing import Dict, List, Match, Pattern, Sequence, Tuple

from torchsmith.explain.negation import denied_in_clause

__all__ = ["BARE_EVIDENCE", "bare_symptoms"]

# torch says CUDA is unavailable: is_available() False (REPL, print, prose, either order), device
# count 0, or an application's "CUDA is not available" (torch/cuda/__init__.py: is_available() is
# False when torch was built without CUDA or when the device count is 0; c10/cuda/CUDAFunctions.cpp
# counts 0 devices when the driver finds none, is missing or too old)
_NO_CUDA = re.compile(
    r"cuda\.is_available\(\)[^\n\w]{0,6}(?:\n[^\S\n]*(?:Out\[\d+\]:[^\S\n]*)?)?(?:(?:(?:is|was|keeps|still|always)"
    r"[^\S\n]+)*(?:returns?|returning|returned|gives|gave|prints|printed|is|was|shows?|outputs?|==|->|:)"
    r"[^\S\n]*[`'\"]?)?(?i:false)\b|\bCUDA[ _]available\W{0,3}(?i:false)\b"
    r"|\b(?:returns?|returned|gives|gave|prints|printed)[^\S\n]+[`'\"]?(?i:false)[`'\"]?[^\S\n]+(?:for|from|on|when)"
    r"[^\n]{0,30}cuda\.is_available"
    r"|(?:cuda\.)?device_count\(\)(?:[^\S\n]*\n[^\S\n]*(?:Out\[\d+\]:[^\S\n]*)?|[^\S\n]*(?:==|->|:|(?:still[^\S\n]+)?"
    r"(?:returns?|returned|returning|gives|gave|prints|printed|is|was|shows?))[^\S\n]*[`'\"]?)0\b(?![.\d])"
    r"|\b(?i:cuda) (?:is )?not available\b")
# ... and the opposite: CUDA available after all, or now
_CUDA_AVAILABLE = re.compile(
    r"cuda\.is_available\(\)[^\S\n]*(?:\n[^\S\n]*(?:Out\[\d+\]:[^\S\n]*)?|[^\n\w]{0,6}(?:(?:is|was|now|still)[^\S\n]+)*"
    r"(?:returns?|returned|gives|gave|prints|printed|is|was|shows?|outputs?|==|->|:)[^\S\n]*[`'\"]?)True\b"
    r"|\b(?:now|finally)[^\S\n]+(?:it[^\S\n]+)?(?:returns?|gives|prints|shows?)[^\S\n]+[`'\"]?True\b"
    r"|\b(?:returns?|returned|gives|gave|prints|printed|shows?)[^\S\n]+[`'\"]?True[`'\"]?[^\S\n]+(?:now|again)\b"
    r"|\bis (?:now|finally) available\b|\bis available (?:now|again)\b")
# The process ended by a signal, as the shell, Python's faulthandler or a launcher reports it
# (bash's strsignal(3) texts; CPython Modules/faulthandler.c "Fatal Python error: ...", on Windows
# "Windows fatal exception: ..."; torchrun's
# "exitcode: -N"; a shell's exit status 128+N)
# (Windows: faulthandler's "Windows fatal exception: access violation" / "int divide by zero", and the
# process's exit status, the NTSTATUS 0xC0000005 / 0xC0000094)
_SEGFAULT = re.compile(r"Segmentation fault|\bSIGSEGV\b|Fatal Python error: Segmentation fault"
                       r"|\bexit(?:ed with)? (?:code|status)[ :]+(?:-11|139|-1073741819|3221225477)\b"
                       r"|exitcode\s*:\s*-11\b|Windows fatal exception: access violation|\b0xC0000005\b")
_FLOATING_POINT = re.compile(r"Floating point exception|\bSIGFPE\b|exitcode\s*:\s*-8\b"
                             r"|\bexit(?:ed with)? (?:code|status)[ :]+(?:-8|136|-1073741676|3221225620)\b"
                             r"|Windows fatal exception: int divide by zero|\b0xC0000094\b")
_KILLED = re.compile(r"^[^\S\n]*(?:\[\d+\][+-]?[^\S\n]+(?:\d+[^\S\n]+)?)?Killed"
                     r"(?:[^\S\n]+[^\n]{1,200})?[^\S\n]*$"
                     r"|: line \d+:[^\S\n]+\d+[^\S\n]+Killed\b"
                     r"|^zsh: killed\b|\bSIGKILL\b|\bexitcode\s*:\s*-9\b|\bsignal 9\b"
                     r"|\bexit(?:ed with)? (?:code|status)[ :]+(?:-9|137)\b", re.MULTILINE)
# nvidia-smi is not on the PATH: bash, dash/sh, zsh, cmd.exe and PowerShell wordings (the last two also
# localised), and Python's when a script runs it
_SMI_MISSING = re.compile(r"nvidia-smi: (?:command )?not found|command not found: nvidia-smi"
                          r"|'nvidia-smi' is not recognized as an internal or external command"
                          r"|The term 'nvidia-smi' is not recognized|nvidia-smi: No such file or directory"
                          # Python's FileNotFoundError from subprocess; cmd.exe's message in Chinese
                          r"|No such file or directory: '(?:[^'\n]{0,200}/)?nvidia-smi'"
                          r"|'?nvidia-smi'? 不是内部或外部命令")
# the GPU sits idle while the work runs: "GPU usage 0%", "GPU-Util 0%", or the CPU doing the work instead
_SP = r"[^\S\n]+"  # blanks within a line
_MY = r"(?:(?:the|my)" + _SP + r")?"
_GPU_IDLE = re.compile(
    r"\bGPU(?:[- ]?util(?:i[sz]ation)?|" + _SP + r"(?:usage|utili[sz]ation|load|util))[^\n\d]{0,20}?"
    r"(?<![\d.])0(?:\.0)?[^\S\n]?%"
    r"|\b(?:runs?|running|ran|trains?|training|trained|uses?|using|used)" + _SP + r"(?:only" + _SP + r")?"
    r"(?:on" + _SP + r")?" + _MY + r"CPU" + _SP + r"(?:instead of|rather than|and not)" + _SP + _MY + r"GPU\b"
    r"|\b(?:not|isn't|doesn't|does not|is not|never)" + _SP + r"(?:using|use|utili[sz]ing|used)" + _SP + _MY
    + r"GPU\b[^\n.]{0,40}\b(?:CPU|0[^\S\n]?%)", re.IGNORECASE)

# a run that stops making progress at a step it names (training, a batch, the first step, loading, the
# move to the GPU), in the same line; not "I'm stuck with this error"
_HANG_WORD = (r"\b(?:hangs|hanging|hung|freezes|freezing|frozen|deadlock(?:s|ed)?"
              r"|(?:gets?|got|is|was|remains?|stays?) stuck"
              r"|stuck(?:ed)? (?:at|after|before|during|forever))\b")
_AT_STEP = (r"(?:\b(?:training|train|epoch|step|iteration|batch|forward|backward|data ?loader|num_workers"
            r"|loading|first|torch\.compile)\b|\.cuda\(\)|\.to\()")
_HANG = re.compile(_HANG_WORD, re.IGNORECASE)
_STEP = re.compile(_AT_STEP, re.IGNORECASE)
_STEP_CHARS = 80  # either side of the hang word, within its line
# a Python exception raised: the run failed rather than hung
_RAISED = re.compile(r"^(?:Traceback \(most recent call last\)|[\w.]*(?:Error|Exception)\b:)", re.MULTILINE)

# the work runs slower than expected: slower than before ("training speed suddenly slow down"), or no
# faster on more GPUs ("2x H100 ... speed is same as 1x H100")
_GPU_WORD = r"(?:GPUs?|cards?|[A-Z]{1,4}[- ]?\d{2,4}\w{0,4})"
_SLOW = re.compile(
    r"\b(?:training|train|inference|speed|throughput|iterations?|epochs?)\b[^\n.]{0,40}?"
    r"\b(?:slow(?:s|ed|ing)?" + _SP + r"down|(?:much|very|really|extremely|so|too)" + _SP + r"slow(?:er)?)\b"
    r"|\b(?:\d|two|multiple|several)" + r"[^\S\n]?x?[^\S\n]?" + _GPU_WORD + r"\b[^\n]{0,60}?"
    r"(?:\b(?:speed|throughput|performance|time|it/s|s/it)\b[^\n]{0,20}?\bsame|\b(?:no|not|isn't)" + _SP
    + r"(?:any" + _SP + r")?faster|\bslower)\b[^\n]{0,20}?"
    r"\b(?:as|than)" + _SP + r"(?:(?:with|on|using)" + _SP + r")?(?:1|one|a" + _SP + r"single)"
    r"[^\S\n]?x?[^\S\n]?" + _GPU_WORD + r"\b",
    re.IGNORECASE)

# (symptom, the words one of which a text must hold, its pattern)
_BARE: Tuple[Tuple[str, Tuple[str, ...], re.Pattern[str]], ...] = (
    ("torch-sees-no-gpu", ("available", "device_count"), _NO_CUDA),
    ("segfault", ("segmentation", "sigsegv", "139", "-11", "access violation", "c0000005", "3221225477",
                  "-1073741819"), _SEGFAULT),
    ("floating-point-exception", ("floating point", "sigfpe", "-8", "136", "divide by zero", "c0000094",
                                  "3221225620", "-1073741676"), _FLOATING_POINT),
    ("killed", ("killed", "sigkill", "-9", "signal 9", "137"), _KILLED),
    ("nvidia-smi-missing", ("nvidia-smi",), _SMI_MISSING),
    ("gpu-idle", ("gpu",), _GPU_IDLE),
    ("process-hang", ("hang", "hung", "freez", "frozen", "deadlock", "stuck"), _HANG),
    ("training-slow", ("slow", "same", "faster"), _SLOW),
)

# What locates each symptom in the text (the evidence a trigger quotes)
BARE_EVIDENCE: Dict[str, Tuple[str, ...]] = {
    "torch-sees-no-gpu": ("is_available", "device_count", "not available"),
    "segfault": ("Segmentation fault", "SIGSEGV", "access violation", "0xC0000005", "-11", "139"),
    "floating-point-exception": ("Floating point exception", "SIGFPE", "divide by zero", "0xC0000094"),
    "killed": ("Killed", "killed", "SIGKILL", "-9", "137"),
    "nvidia-smi-missing": ("nvidia-smi",),
    "gpu-idle": ("GPU", "CPU", "0%"),
    "process-hang": ("hang", "hung", "freez", "frozen", "deadlock", "stuck"),
    "training-slow": ("slow", "same", "faster"),
}


_MAX_MATCHES = 20  # matches of one pattern looked at for one its clause states


def _at_a_step(text: str, found: Match[str]) -> bool:
    """A hang word with the step it hangs at in its line, a few words either side."""
    start = max(text.rfind("\n", 0, found.start()) + 1, found.start() - _STEP_CHARS)
    end = text.find("\n", found.end(), found.end() + _STEP_CHARS)
    return _STEP.search(text, start, end if end >= 0 else found.end() + _STEP_CHARS) is not None


def _stated(pattern: Pattern[str], text: str) -> bool:
    """A match whose clause states it: not "if is_available() returns False", "it no longer segfaults"."""
    for count, found in enumerate(pattern.finditer(text)):
        if count >= _MAX_MATCHES:
            break
        if pattern is _HANG and not _at_a_step(text, found):
            continue
        if not denied_in_clause(text, found.start()):
            return True
    return False


def bare_symptoms(text: str, found: Sequence[str]) -> List[str]:
    """The bare symptoms the text states (see the module's docstring); ``found`` are the symptoms
    already read: CUDA's own "no device" message has its own signature, so it is not one of these."""
    lower = text.lower()
    out: List[str] = []
    for name, words, pattern in _BARE:
        if any(word in lower for word in words) and _stated(pattern, text):
            out.append(name)
    if "torch-sees-no-gpu" in out and ("no-gpu-visible" in found or _CUDA_AVAILABLE.search(text)):
        out.remove("torch-sees-no-gpu")
    if "process-hang" in out and ("distributed-hang" in found or _RAISED.search(text)):
        out.remove("process-hang")  # the distributed family's, or a failure rather than a hang
    return out
