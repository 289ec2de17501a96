"""Compiler and build messages: nvcc, ptxas, gcc/g++, clang, hipcc, MSVC, the linker, CMake; the
targets and toolchain versions they name. Pure."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from torchsmith.explain.extract.model import CompilerMessage
from torchsmith.explain.literals import finditer, may_match

__all__ = ["build_shown", "compiler_messages", "toolchain_versions"]

_MESSAGES: Tuple[Tuple[str, re.Pattern[str]], ...] = (
    ("nvcc", re.compile(r"nvcc (?:fatal|error)\s*:\s*(?P<text>[^\n]{3,200})")),
    ("ptxas", re.compile(r"ptxas (?:fatal|error)\s*:\s*(?P<text>[^\n]{3,200})")),
    ("cicc", re.compile(r"cicc(?:\.exe)?\W[^\n]{0,40}?error[^\n]{0,200}", re.IGNORECASE)),
    (
        "nvcc",
        re.compile(r"#error\s+--\s*(?P<text>unsupported (?:GNU|clang|Microsoft Visual Studio)[^\n]{0,200})"),
    ),
    ("clang", re.compile(r"clang(?:\+\+)?(?:-\d+)?: (?:fatal )?error: (?P<text>[^\n]{3,200})")),
    ("gcc", re.compile(r"(?:gcc|g\+\+|cc1plus|c\+\+)(?:-\d+)?: (?:fatal )?error: (?P<text>[^\n]{3,200})")),
    ("hipcc", re.compile(r"hipcc[^\n]{0,40}?(?:error|fatal)[: ]+(?P<text>[^\n]{3,200})")),
    ("cl", re.compile(r"error (?P<text>C\d{4}: [^\n]{3,200})")),
    (
        "ld",
        re.compile(r"(?:/usr/bin/)?ld(?:\.lld|\.gold)?: (?:error: )?(?P<text>cannot find [^\n]{1,160})"),
    ),
    # CMake's own errors: "CMake Error at FILE:LINE (COMMAND):" or "CMake Error in FILE:", the message
    # indented on the next line; "CMake Error: MESSAGE"
    # (Kitware/CMake@93812f95c6cc2e4bc693b7f34b8684ba85d5cb82 Source/cmMessenger.cxx, printMessagePreamble)
    ("cmake", re.compile(r"CMake Error (?:at|in) [^\n]{1,300}:[ \t]*\n[ \t]*(?P<text>\S[^\n]{2,200})")),
    ("cmake", re.compile(r"CMake Error: (?P<text>\S[^\n]{2,200})")),
    ("compiler", re.compile(r"fatal error: (?P<text>[^\n]{3,200})")),
    ("compiler", re.compile(r"error: (?P<text>'[^'\n]+' file not found)")),
)
# Errors located in a source file, where the compiler prints no tool name: nvcc's front end (EDG:
# "kernel.cu(90): error: identifier "FLT_MAX" is undefined", "error #20012-D:" with a number) and
# gcc's or clang's "file.cpp:12:5: error: ...". Each is looked for only where its literal is.
_LOCATED: Tuple[Tuple[str, str, re.Pattern[str]], ...] = (
    ("nvcc", "): ", re.compile(r"[\w.+-]\.(?:cu|cuh)\(\d+\): (?:catastrophic )?error(?: #\d+-D)?: "
                               r"(?P<text>[^\n]{3,200})")),
    ("compiler", ": error: ", re.compile(r"[\w.+-]\.(?:cu|cuh|c|cc|cpp|cxx|h|hpp|hxx|inl):\d+:\d+: error: "
                                         r"(?P<text>[^\n]{3,200})")),
)
_TARGET = re.compile(r"(?:compute|sm|gfx)_?\d{2,4}[a-z]?\b")
_HEADER = re.compile(r"(?:fatal error: |')(?P<header>[\w./+-]+\.(?:h|hpp|cuh|hxx))'?(?::| file not found)")
_VERSIONS: Tuple[Tuple[str, re.Pattern[str]], ...] = (
    ("nvcc", re.compile(r"Cuda compilation tools, release (?P<v>\d+\.\d+)")),
    ("nvcc", re.compile(r"nvcc(?: version)?\s*[:=]?\s*(?:V|release )?(?P<v>\d+\.\d+)\.\d+")),
    ("gcc", re.compile(r"gcc version (?P<v>\d+\.\d+(?:\.\d+)?)")),
    ("gcc", re.compile(r"(?:gcc|g\+\+|c\+\+) \([^)\n]{1,60}\) (?P<v>\d+\.\d+(?:\.\d+)?)")),
    ("gcc", re.compile(r"GCC version: \([^)\n]*\) (?P<v>\d+\.\d+(?:\.\d+)?)")),
    ("clang", re.compile(r"clang version (?P<v>\d+\.\d+(?:\.\d+)?)")),
    ("cmake", re.compile(r"cmake version (?P<v>\d+\.\d+(?:\.\d+)?)")),
    ("msvc", re.compile(r"Microsoft \(R\) C/C\+\+ Optimizing Compiler Version (?P<v>\d+\.\d+)")),
)


def _target(text: str) -> Optional[str]:
    match = _TARGET.search(text)
    return match.group() if match else None


def compiler_messages(text: str) -> List[CompilerMessage]:
    """Each compiler error, once: the tool, its text, the GPU target and missing header it names."""
    found: Dict[str, CompilerMessage] = {}
    patterns = [*_MESSAGES, *((tool, pattern) for tool, literal, pattern in _LOCATED if literal in text)]
    for tool, pattern in patterns:
        for match in finditer(pattern, text):
            body = (match.groupdict().get("text") or match.group()).strip()
            if body in found or any(body in other for other in found) or len(found) >= 20:
                continue
            header = _HEADER.search(match.group())
            found[body] = CompilerMessage(
                tool, body, _target(body), header.group("header") if header else None
            )
    return list(found.values())


def toolchain_versions(text: str) -> Dict[str, str]:
    versions: Dict[str, str] = {}
    for tool, pattern in _VERSIONS:
        match = pattern.search(text)
        if match and tool not in versions:
            versions[tool] = match.group("v")
    return versions


# The marks of a build in progress: setuptools' and pip's build steps, torch's cpp_extension, CMake,
# make and ninja, nvcc's own command lines.
_BUILD = re.compile(r"setup\.py|build_ext|cpp_extension|pip-build-env|bdist_wheel"
                    r"|[Bb]uilding (?:wheel|editable|[\w-]+ extension|PyTorch|CUDA|')|[Rr]unning build"
                    r"|CMake|cmake|make(?:\[\d+\])?:|\bninja\b|-gencode|\bnvcc\b[^\n]{0,200}\s-c\s")


def build_shown(text: str) -> bool:
    """The text shows a package or extension being built (not only a tool looked up by hand)."""
    return may_match(_BUILD, text) and bool(_BUILD.search(text))
