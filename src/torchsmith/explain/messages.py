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

__all__ = ["MAX_LINES", "Unwrapped", "line_prefix_length", "one_message", "plain_quotes", "unwrap",
           "without_line_prefixes"]

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


# The prefix a logger, a runner or a quoted reply puts before every line it writes, in its own fixed
# format, and nothing of the message: stripped from each line before anything is read, so that
# readers anchored at a line's start (a traceback's frames, "Successfully installed", an exception's
# name) read the message itself. Indentation after the prefix is kept (a traceback's frames).
_LEVEL = r"\[?(?:INFO|WARN(?:ING)?|ERROR|DEBUG|CRITICAL|FATAL|TRACE|[IWEF])\]?"
_LINE_PREFIX_SOURCE = (
    r"(?:"
    r"[ \t]{0,3}(?:>(?= |$) ?)+"  # a quoted reply (Markdown, e-mail); not a REPL's ">>> "
    r"|\[(?:rank|default)\d+\]: ?"  # torchrun / torch.distributed's per-rank output
    r"|\((?:[\w.:]+ )?pid=\d+(?:, ip=[\d.]+)?\) ?"  # Ray's workers: "(RayWorker pid=123, ip=10.0.0.1) "
    r"|#\d+ \d+\.\d+ "  # docker buildkit: "#12 3.456 "
    # a timestamp, then a level (Python logging's "- name - LEVEL -" too);
    # a glog line "E1127 01:02:03.456 123 f.cc:12] "
    r"|\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?"
    r"(?:[ \t]*[-|][ \t]*[\w.]+(?=[ \t]*[-|][ \t]*" + _LEVEL + r"\b))?"
    r"(?:[ \t]*[-|:]?[ \t]*" + _LEVEL + r"(?![\w-]))?(?:[ \t]*[-|:])?[ \t]?"
    r"|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [\w.-]+:\d+\] "
    # syslog / journalctl: "Nov 27 01:02:03 host name[123]: "
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]+ [\w./-]+(?:\[\d+\])?: "
    r")"
)
# characters that may start one of the prefixes above: a line starting otherwise is left as it is
_PREFIX_STARTS = " \t>[(#0123456789IWEFADJMNOS"
# The prefix as match() finds it at a line's start (held in a lookahead, so that it is not cut short
# to fit what follows), then text on the line after it: a prefix that is the whole line (a timestamp
# alone) is the line's text. "$" (MULTILINE) ends a line; no part of a prefix crosses a line break.
_PREFIXED = (r"(?=[" + re.escape(_PREFIX_STARTS) + r"])"
             r"(?=(?P<prefix>" + _LINE_PREFIX_SOURCE + r"))(?P=prefix)(?=[^\S\n]*\S)")
_FIRST_LINE_PREFIX = re.compile(_PREFIXED, re.MULTILINE)
# every other line's, found after its line break in one scan of the text (str.find fast)
_LINE_PREFIX = re.compile(r"\n" + _PREFIXED, re.MULTILINE)
# a line that is a prefix and nothing else (a quoted reply's empty line "> ", a runner's "[rank0]: ")
_PREFIX_ALONE = re.compile(r"^(?=[" + re.escape(_PREFIX_STARTS) + r"])(?=(?P<prefix>" + _LINE_PREFIX_SOURCE
                           + r"))(?P=prefix)[^\S\n]*$", re.MULTILINE)


def line_prefix_length(line: str) -> int:
    """How long the logger's, runner's or quote's prefix (_LINE_PREFIX_SOURCE) that ``line`` opens with is."""
    prefix = _FIRST_LINE_PREFIX.match(line)
    return prefix.end() if prefix is not None else 0


# A label a program puts before each line it relays (a logger's name after its level, pdsh's
# "node7: ", a worker's name): an identifier with a digit or punctuation in it (not a word such as
# "RuntimeError" or "ERROR", a message's own), then ": ", on most lines of a text
_RELAYED_LABEL = re.compile(r"(?=[\w.@\[\]-]*[\d.@\[\]-])[A-Za-z_][\w.@\[\]-]{0,39}: (?=\S)")
_LABELLED_TEXT = 256 * 1024  # a paste, not a long log: a long log's lines are not all relayed


def _without_relayed_label(lines: List[str]) -> bool:
    """Remove the label (_RELAYED_LABEL) that at least four in five of ``lines`` (three or more)
    start with, the first among them; True when removed."""
    filled = [line for line in lines if line.strip()]
    found = _RELAYED_LABEL.match(filled[0]) if len(filled) >= 3 else None
    if found is None:
        return False
    label = found.group()
    if sum(line.startswith(label) for line in filled) * 5 < len(filled) * 4:
        return False
    for index, line in enumerate(lines):
        if line.startswith(label):
            lines[index] = line[len(label):]
    return True


def without_line_prefixes(text: str) -> str:
    """``text`` with each line's logger, runner or quote prefix (see _LINE_PREFIX_SOURCE) removed,
    and a label relayed on most of its lines; the lines stay the lines they were, so a line number
    is the same in both."""
    if ">" not in text and "[" not in text and "(" not in text and "#" not in text and ":" not in text:
        return text
    first = _FIRST_LINE_PREFIX.match(text)
    stripped, count = _LINE_PREFIX.subn("\n", text[first.end():] if first is not None else text)
    if count and len(text) <= _LABELLED_TEXT:  # a paste whose lines are most prefixed: a prefix alone
        emptied, alone = _PREFIX_ALONE.subn("", stripped)  # is an empty line (a quoted reply's "> ")
        prefixed = count + (first is not None)
        if prefixed >= 2 and (prefixed + alone) * 2 > stripped.count("\n") + 1 - stripped.count("\n\n"):
            stripped = emptied
    if len(text) <= _LABELLED_TEXT:
        lines = stripped.split("\n")
        if _without_relayed_label(lines):
            return "\n".join(lines)
    return stripped


def one_message(text: str, start: int, end: int) -> bool:
    """text[start:end] spans fewer than MAX_LINES line breaks, not counting those a terminal made by
    cutting a line at its width (a long message cut so is still one message)."""
    breaks = text.count("\n", start, end)
    if breaks < MAX_LINES:
        return True
    lines = text[text.rfind("\n", 0, start) + 1 : end].split("\n")[:-1]
    return breaks - sum(1 for line in lines if len(line.rstrip("\r")) in _WIDTHS) < MAX_LINES


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


def _joiner(line: str, following: str, indented: bool) -> str:
    """ "" where a terminal cut the line at its width inside a word or a token ("torchvision:" +
    ":nms", "3" + ".12.0"), else one space (the cut fell on a blank, kept at either side)."""
    if len(line) in _WIDTHS and not line[-1:].isspace() and not indented and following[:1].strip():
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
                glue = _joiner(previous, body, stripped[skip - 1:skip].isspace() if skip else False)
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
