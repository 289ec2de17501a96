"""The answer-first layout every command for people shares (plan, the summary, doctor).

The answer first (the command to run, or the verdict), then at most :data:`WHY_LINES` lines of
why; the rest with ``-v``. A :class:`~torchsmith.output.Caution` (the command would replace a
working torch, or cannot fully run here) is part of the answer: it opens the why, marked ``!``,
and is never hidden. Lines fit the terminal (80 columns when piped); a long command is
continued with `` \\`` where a shell would take it.
"""

from __future__ import annotations

import re
import textwrap
from typing import List, Sequence

from torchsmith.output import Caution, paint, strip_sources
from torchsmith.textwidth import comment_lines, split_comment

__all__ = ["WHY_LINES", "bullets", "cautions_of", "why_lines", "wrap_command"]

WHY_LINES = 5  # the why, shown without -v
_WORD = re.compile(r"""(?:[^\s'"]+|'[^']*'|"(?:[^"\\]|\\.)*")+""")


def wrap_command(command: str, width: int, indent: str = "  ", windows: bool = False) -> List[str]:
    """``$ command`` in lines of at most ``width``, continued with `` \\`` between words (never
    inside a quoted one). PowerShell and cmd continue differently: a Windows command stays one line."""
    first = f"{indent}$ "
    if windows or len(first) + len(command) <= width:
        return [first + command]
    command, comment = split_comment(command)
    if comment:
        return comment_lines(wrap_command(command, width, indent), comment, indent + "    ", width)
    words = _units(_WORD.findall(command))
    lines: List[str] = []
    current = first
    follow = indent + "    "
    for word in words:
        if current.strip() not in ("", "$") and len(current) + 1 + len(word) + 2 > width:
            lines.append(current + " \\")
            current = follow + word
        else:
            current = current + word if current in (first, follow) else f"{current} {word}"
    lines.append(current)
    return lines


def _units(words: List[str]) -> List[str]:
    """Words that stay on one line: an option and its value (``--gpu 8.6``)."""
    units: List[str] = []
    for word in words:
        if units and units[-1].startswith("-") and " " not in units[-1] and "=" not in units[-1] \
                and not word.startswith("-"):
            units[-1] = f"{units[-1]} {word}"
        else:
            units.append(word)
    return units


def bullets(items: Sequence[str], width: int, bullet: str = "  - ") -> List[str]:
    """Each item wrapped under its bullet."""
    out: List[str] = []
    for item in items:
        out.extend(textwrap.wrap(item, width, initial_indent=bullet,
                                 subsequent_indent=" " * len(bullet), break_on_hyphens=False,
                                 break_long_words=False) or [bullet.rstrip()])
    return out


def cautions_of(warnings: Sequence[str]) -> List[str]:
    """The warnings that are part of the answer, each once."""
    return list(dict.fromkeys(w for w in warnings if isinstance(w, Caution)))


def why_lines(reasons: Sequence[str], width: int, verbose: int, *, cautions: Sequence[str] = (),
              color: bool = False, more: str = "") -> List[str]:
    """The why: cautions first (``!``, whole: a safety fact is never cut), then the reasons,
    at most :data:`WHY_LINES` lines in all without ``-v``: whole reasons while they fit, the
    last line saying how to see the rest (``more``: what ``-v`` adds besides; by default the
    reasons' sources)."""
    clean = (lambda text: text) if verbose else strip_sources
    lines = [paint(line, "33", color) for line in bullets([clean(c) for c in cautions], width, "  ! ")]
    told = [bullets([clean(r)], width) for r in reasons]
    if verbose or len(lines) + sum(len(t) for t in told) <= WHY_LINES:
        return lines + [line for t in told for line in t]
    room = max(WHY_LINES - 1 - len(lines), 0)
    kept: List[str] = []
    whole = 0
    for item in told:
        if len(kept) + len(item) > room:
            if room - len(kept) > 0:  # the start of the next reason, marked as cut
                kept.extend(item[:room - len(kept)])
                kept[-1] = _cut(kept[-1], width)
            break
        kept.extend(item)
        whole += 1
    left = len(reasons) - whole
    more = more or ("its source" if left == 1 else "their sources")
    return [*lines, *kept, f"  ... {left} more: `-v` shows {'it' if left == 1 else 'them'} and {more}"]


def _cut(line: str, width: int) -> str:
    """``line`` marked as cut (`` …``), words dropped until the mark fits."""
    while len(line) + 2 > width and " " in line.strip():
        line = line.rsplit(" ", 1)[0]
    return line + " …"
