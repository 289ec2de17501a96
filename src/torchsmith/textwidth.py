"""Human output fitted to the terminal's width (80 columns when piped).

Every command's text passes through :func:`fit`: a line wider than the terminal is broken
between words, its continuation indented under its text; a ``$ command`` line is continued with
`` \\`` (never inside a quoted word), so it still pastes. Colour codes take no width, and a word
longer than the line (a URL) is never cut. Rendered files are printed as they are.
"""

from __future__ import annotations

import re
from typing import List, Tuple

__all__ = ["comment_lines", "fit", "split_comment", "visible_length"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_WORD = re.compile(r"""(?:[^\s'"]+|'[^']*'|"(?:[^"\\]|\\.)*")+""")
_PLAIN = re.compile(r"\S+")
_BULLET = re.compile(r"^(\s*)((?:[-*$>·•✗!]|\d+\.)\s+)")
_COLUMN = re.compile(r"^(\s*\S+(?: \S+)*?\s{2,})\S")  # "  System   linux-x86_64 ..."
_LABEL = re.compile(r"^(\s*[\w .-]{1,24}:\s+)\S")  # "  why: ..."
_WIDEST_INDENT = 30


def visible_length(text: str) -> int:
    return len(_ANSI.sub("", text))


def _continuation_indent(line: str) -> str:
    """Under the text of a bullet (``- ``, ``$ ``, ``1. ``), an aligned column or a short label;
    a comment (``# ...``) continues as a comment, so a script stays a script."""
    plain = _ANSI.sub("", line)
    if plain.lstrip(" ").startswith("#"):
        return plain[:len(plain) - len(plain.lstrip(" "))] + "#   "
    bullet = _BULLET.match(line)
    if bullet:
        extra = "    " if bullet.group(2).strip() == "$" else " " * len(bullet.group(2))
        return bullet.group(1) + extra
    for pattern in (_COLUMN, _LABEL):
        found = pattern.match(_ANSI.sub("", line))
        if found and len(found.group(1)) <= _WIDEST_INDENT:
            return " " * len(found.group(1))
    return " " * (len(line) - len(line.lstrip(" ")) + 2)


def _pieces(line: str, command: bool) -> List[Tuple[str, str]]:
    """(the spacing before, the word): the line's own spacing is kept where it is not broken."""
    words = list((_WORD if command else _PLAIN).finditer(line))
    pieces: List[Tuple[str, str]] = []
    end = 0
    for match in words:
        pieces.append((line[end:match.start()], match.group(0)))
        end = match.end()
    return pieces


def split_comment(command: str) -> Tuple[str, str]:
    """``(command, "# remark")``: a shell comment (`` #`` outside quotes) split off, or ``""``."""
    for match in _WORD.finditer(command):
        if match.group(0).startswith("#") and match.start() > 0 and command[match.start() - 1].isspace():
            return command[:match.start()].rstrip(), command[match.start():]
    return command, ""


def comment_lines(lines: List[str], comment: str, indent: str, width: int) -> List[str]:
    """``lines`` (a command) with its comment: after the last line where it fits, else on lines
    of its own under it -- never after a `` \\`` (the shell would run the comment's words)."""
    if not comment:
        return lines
    if visible_length(f"{lines[-1]}  {comment}") <= width:
        return [*lines[:-1], f"{lines[-1]}  {comment}"]
    text = comment.lstrip("#").strip()
    out: List[str] = []
    current = f"{indent}#"
    for word in text.split():
        if current != f"{indent}#" and visible_length(f"{current} {word}") > width:
            out.append(current)
            current = f"{indent}#"
        current = f"{current} {word}"
    return [*lines, *out, current]


def _fit_line(line: str, width: int, continued: bool = False) -> List[str]:
    """``continued``: the line goes on a command the line before ended with `` \\``."""
    if visible_length(line) <= width:
        return [line]
    command = continued or line.lstrip(" ").startswith("$ ")
    indent = " " * (len(line) - len(line.lstrip(" "))) if continued else _continuation_indent(line)
    if command:
        body, comment = split_comment(line)
        if comment:
            return comment_lines(_fit_line(body, width), comment, indent, width)
    suffix = 2 if command else 0  # room for " \"
    lines: List[str] = []
    current = ""
    for space, word in _pieces(line, command):
        if current.strip() and visible_length(current + space + word) + suffix > width:
            lines.append(current + (" \\" if command else ""))
            current = indent + word
        else:
            current += space + word
    lines.append(current)
    return lines


def fit(text: str, width: int) -> str:
    """``text`` with every line at most ``width`` columns where a word boundary allows it."""
    out: List[str] = []
    for line in text.split("\n"):
        out.extend(_fit_line(line, width, continued=bool(out) and out[-1].endswith(" \\")))
    return "\n".join(out)
