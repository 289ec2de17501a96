"""Python tracebacks: the exception's type and message, and the packages of its frames. Pure."""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from torchsmith.explain.extract.model import Frame, PyException

__all__ = ["exceptions", "frames", "warnings"]

_FRAME = re.compile(
    r'File "(?P<path>[^"\n]+)", line \d+'
    # IPython / Jupyter: "/opt/x/torch/__init__.py in <module>()", "File ~/x/torch/__init__.py:84"
    r"|^(?P<ipython>[^\s\"'<>]{1,400}\.py) in <?[\w.]{1,80}>?\("
    r"|^File (?P<ipython2>[^\s\"'<>:]{1,400}\.py):\d+"
    # a frame line whose head was cut when the text was copied: '...\pkg\mod.py", line 53, in forward'
    r"|^(?P<cut>[^\s\"'<>]{1,400}?\.py)\", line \d+, in ",
    re.MULTILINE,
)
_SITE = re.compile(
    r"[\\/](?:python(?P<python>\d\.\d+)[\\/])?(?:site|dist)-packages[\\/](?P<package>[A-Za-z_][\w.-]*)"
)
_LIB_PYTHON = re.compile(r"[\\/]python(\d\.\d+)[\\/]")
# "RuntimeError: ...", "torch.OutOfMemoryError: ...", "subprocess.CalledProcessError: ..."
_EXCEPTION = re.compile(
    r"^[ \t]*(?:\[rank\d+\]:\s*)?(?:E\s+)?"
    r"(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|"
    r"Failure|NotFound|Unavailable))(?::[ \t]*(?P<message>[^\n]*))?$",
    re.MULTILINE,
)
# A warning as Python's warnings module prints it: "FILE:LINE: CATEGORY: MESSAGE" (Lib/warnings.py,
# formatwarning), the category a Warning subclass
_WARNING = re.compile(
    r"^[^\n]{0,400}?:\d+: (?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*Warning): (?P<message>[^\n]*)$", re.MULTILINE)
_MAX = 20


def _code(text: str, match: re.Match[str]) -> Optional[str]:
    """The source line Python prints indented under a ``File "...", line N`` frame, if shown."""
    start = text.find("\n", match.end()) + 1
    end = text.find("\n", start)
    line = text[start : end if end >= 0 else len(text)] if start else ""
    if line.startswith("    "):
        return line.strip() or None
    # indented with tabs (an editor's paste): deeper than the frame's own line, and no frame itself
    head = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
    if not line.startswith("\t") or line.lstrip().startswith("File "):
        return None
    return line.strip() if _indent(line) > _indent(head) else None


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def frames(text: str) -> List[Frame]:
    """Every traceback frame's file, with its package and Python where the path shows them."""
    found: List[Frame] = []
    seen = set()
    for match in _FRAME.finditer(text):
        path = match.group("path") or match.group("ipython") or match.group("ipython2") or match.group("cut")
        if path in seen:
            continue
        seen.add(path)
        site = _SITE.search(path)
        python = site.group("python") if site and site.group("python") else None
        if python is None:
            lib = _LIB_PYTHON.search(path)
            python = lib.group(1) if lib else None
        package = site.group("package") if site else None
        if package is not None:
            package = re.sub(r"\.py$", "", package)
        found.append(Frame(path, package, python, _code(text, match) if match.group("path") else None))
        if len(found) >= 200:
            break
    return found


def _continuation(text: str, end: int) -> str:
    """The lines after an exception line that continue its message (indented, or up to a blank)."""
    lines: List[str] = []
    for line in text[end : end + 2000].split("\n")[1:6]:
        if not line.strip() or _EXCEPTION.match(line) or line.startswith(("Traceback", "  File ")):
            break
        lines.append(line.strip())
    return " ".join(lines)


def exceptions(text: str, found_frames: List[Frame]) -> List[PyException]:
    """The exceptions the text raises, last (the one that ended the program) kept last."""
    out: List[PyException] = []
    seen: List[Tuple[str, str]] = []
    packages = tuple(dict.fromkeys(f.package for f in found_frames if f.package))
    for match in _EXCEPTION.finditer(text):
        kind = match.group("type")
        message = (match.group("message") or "").strip()
        if not message:
            message = _continuation(text, match.end())
        elif len(message) < 200:
            more = _continuation(text, match.end())
            if more and not more.startswith(("During handling", "The above exception")):
                message = f"{message} {more}"[:600]
        key = (kind, message[:200])
        if key in seen:
            continue
        seen.append(key)
        out.append(PyException(kind, message[:600], packages))
        if len(out) >= _MAX:
            break
    return out


def warnings(text: str) -> List[PyException]:
    """The warnings the text shows, as Python's warnings module formats them, in order: what a
    program reported and went on from (a library that caught an error and warns it)."""
    if "Warning: " not in text:
        return []
    found: List[PyException] = []
    for match in _WARNING.finditer(text):
        found.append(PyException(match.group("type"), match.group("message").strip()[:600]))
        if len(found) >= _MAX:
            break
    return found
