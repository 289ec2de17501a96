"""One message, however it was split over lines. Pure: no I/O.

A terminal wraps a long line at its width, a logger prefixes every line it writes (a timestamp
and level, ``[rank0]:``, a Docker build step), a quoted reply marks its lines ``> ``, a traceback
indents a message's continuation. The message is still one message: :func:`unwrap` gives the
text with every line's prefix removed and the lines joined, plus the way back from a position in
it to the original text, so a match found there is reported on the line it starts in the original.

A traceback also shows the source line that raised, where a long message is often written as
adjacent string literals (``raise RuntimeError("... have NCCL " "built in")``, or one literal per
line): Python joins them into one string, and so does :func:`unwrap`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import List, Tuple

from torchsmith.records import dataclass

__all__ = ["MAX_LINES", "Unwrapped", "plain_quotes", "unwrap"]

# A wrapped message spans at most this many original lines; a match over more is two messages.
MAX_LINES = 4
# Terminal widths a hard wrap cuts at (a word may be cut in two there).
_WIDTHS = frozenset({80, 100, 120, 132, 140, 150, 160, 200})
# What loggers and runners put before every line.
_PREFIX = re.compile(
    r"^(?:"
    r"\s*\[(?:rank|default)\d+\]:?"  # torchrun / torch.distributed
    r"|\s*\d{4}-\d\d-\d\d[ T][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?(?:\s*[|\-]?\s*(?:[A-Z]{4,8}|[A-Z]))?\s*[|:\-]?"
    r"|\s*#\d+ \d+\.\d+"  # docker buildkit: "#12 3.456 "
    r"|\s*\w[\w.-]*\s*\|"  # docker compose: "service  | "
    r"|\s*E {2,}"  # pytest's failure lines
    r"|\s*(?:INFO|WARN(?:ING)?|ERROR|DEBUG|CRITICAL)\s*[:|]"
    r"|\s*>(?:[ \t]*>)*"  # a quoted reply (Markdown, e-mail): "> ", "> > "
    r")?[ \t]*"
)


# Typographic quotes a word processor, a chat client or an input method puts in a pasted message
# ("couldn\u2018t", \u201clibcudnn.so\u201d): read as the ASCII quotes every message is written with.
_QUOTES = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\uff07": "'",
           "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"', "\uff02": '"'}


def plain_quotes(text: str) -> str:
    """``text`` with typographic quotes as ASCII ones; one character for one, so every position
    in it is the same position in the original."""
    if text.isascii():  # most logs: one fast pass, nothing to replace
        return text
    for quote, plain in _QUOTES.items():
        if quote in text:
            text = text.replace(quote, plain)
    return text


@dataclass(frozen=True)
class Unwrapped:
    text: str
    # (position in text, position in the original) at the start of each joined piece
    _marks: Tuple[Tuple[int, int], ...]
    _starts: Tuple[int, ...]

    def original(self, position: int) -> int:
        """The original text's position of ``position`` in the unwrapped text."""
        index = bisect_right(self._starts, position) - 1
        joined, original = self._marks[max(index, 0)]
        return original + (position - joined)


# Where one string literal ends and the next begins: the closing quote, blanks, an optional
# prefix (f, r, b, u) and the same quote, between text on both sides (Python joins them).
_ADJACENT_LITERALS = re.compile(r"""(?<=[^"'\\])(["'])[ \t]+(?:[rRbBfFuU]{1,2})?\1(?=[^\s"',)\]])""")
_LITERAL_END = re.compile(r"""[^"'\\](["'])$""")
_LITERAL_START = re.compile(r"""^(?:[rRbBfFuU]{1,2})?(["'])[^\s"',)\]]""")


def _joiner(line: str, following: str) -> str:
    """ "" where a terminal cut a word in two at its width, else one space."""
    if len(line) in _WIDTHS and line[-1:].isalnum() and following[:1].isalnum():
        return ""
    return " "


def _literal_continues(before: str, body: str) -> int:
    """Where ``body``'s text starts when it opens a string literal right after ``before`` closed
    one with the same quote (0: it does not)."""
    end = _LITERAL_END.search(before[-2:])
    start = _LITERAL_START.match(body) if end else None
    return start.end(1) if start and end and start.group(1) == end.group(1) else 0


def _literal_pieces(body: str, start: int) -> List[Tuple[int, str]]:
    """(offset in ``body``, text) of the pieces of ``body`` from ``start`` with the quotes
    between adjacent string literals left out."""
    if '"' not in body and "'" not in body:
        return [(start, body[start:])]
    pieces: List[Tuple[int, str]] = []
    for found in _ADJACENT_LITERALS.finditer(body, start):
        pieces.append((start, body[start:found.start()]))
        start = found.end()
    pieces.append((start, body[start:]))
    return [piece for piece in pieces if piece[1]] or [(start, "")]


def unwrap(text: str) -> Unwrapped:
    """The text as one line: prefixes stripped, lines joined (see the module's docstring)."""
    pieces: List[str] = []
    marks: List[Tuple[int, int]] = []
    length = 0
    position = 0
    previous = ""
    for line in text.split("\n"):
        stripped = line.rstrip("\r")
        prefix = _PREFIX.match(stripped)
        skip = prefix.end() if prefix else 0
        body = stripped[skip:].rstrip()
        if body:
            start = _literal_continues(pieces[-1], body) if pieces else 0
            if start:  # the line goes on with the string literal the previous one closed
                pieces[-1] = pieces[-1][:-1]
                length -= 1
            elif pieces:
                glue = _joiner(previous, body)
                pieces.append(glue)
                length += len(glue)
            for offset, piece in _literal_pieces(body, start):
                marks.append((length, position + skip + offset))
                pieces.append(piece)
                length += len(piece)
            previous = stripped
        position += len(line) + 1
    if not marks:
        marks.append((0, 0))
    return Unwrapped("".join(pieces), tuple(marks), tuple(m[0] for m in marks))
