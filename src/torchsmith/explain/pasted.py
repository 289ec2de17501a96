"""The text as its program wrote it, from the shape a paste gave it. Pure: no I/O.

Between the program and explain a message passes through a terminal, a browser, a chat client or a
log collector, and each leaves its own marks, none of them part of the message:

- a byte-order mark and Windows line ends (an editor on Windows, PowerShell's redirection);
- a terminal's colour and cursor codes (ANSI escape sequences, ECMA-48) kept by a captured log;
- the blanks a web page or a rich-text editor writes as no-break, thin or ideographic spaces, and
  the zero-width ones a chat client inserts;
- HTML's character references (``&quot;`` ``&#39;`` ``&lt;``) of a page copied as its source;
- a JSON log record or a Python repr holding the whole message on one line, its line breaks as
  ``\\n`` escapes, or a Python list of the message's lines (``traceback.format_exception``);
- a Markdown code fence around the message (GitHub's ```` ``` ```` or ``~~~`` lines, with or without a
  language tag, and ```` ``` ```` spans inside a line): Markdown's markup, never a program's output;
- a terminal's hard wrap: a line cut at the terminal's width goes on at the next line's start. A cut
  inside a word that goes on with a capital (``CUDA_ERROR_NO_BINA`` / ``RY_FOR_GPU``) is joined only
  where the joined word is one the caller knows (an error enum's name, a word of a signature).

:func:`as_written` undoes each before anything is read, and maps each of its lines back to the line
of the original it starts in, so a match is reported on the line the user sees.
"""

from __future__ import annotations

import re
from typing import AbstractSet, Callable, List, Optional, Sequence, Tuple

from torchsmith.explain.messages import line_prefix_length
from torchsmith.records import dataclass

__all__ = ["Words", "Written", "as_written"]

# The words a cut line may be joined into across a capital, asked for only when such a cut is seen
Words = Callable[[], AbstractSet[str]]

# A log longer than this is read for escaped and cut lines at its end only
_LINES_READ = 256 * 1024
# Terminal widths a hard wrap cuts at (as messages._WIDTHS).
_WIDTHS = frozenset({80, 100, 120, 132, 140, 150, 160, 200})
# CSI (colours, cursor moves) and OSC (titles, links) sequences, ECMA-48 sections 5.4 and 8.3.89
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
# HTML's character references, only those written with their semicolon (a URL's "&not=1" stays)
_REFERENCE = re.compile(r"&(?:(quot|apos|lt|gt|amp|nbsp)|#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED = {"quot": '"', "apos": "'", "lt": "<", "gt": ">", "amp": "&", "nbsp": " "}
# A string literal (JSON's or Python's), and the escapes that may appear in one
_LITERAL = re.compile(r"""[bu]?(["'])((?:\\.|(?!\1)[^\\\n])*)\1""")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(.))")
_VALID_ESCAPE = re.compile(r"\\(?:[nrt\"'\\/0]|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2})")
_SIMPLE = {"n": "\n", "t": "\t", "r": "", '"': '"', "'": "'", "\\": "\\", "/": "/", "0": ""}
# A name, a version, a requirement: what a list of names holds, not a message's line
_NAME = re.compile(r"[\w.+\-=<>!~,*@]+")
# A line that is a list of string literals: only brackets, commas and blanks between them
_LIST_GLUE = re.compile(r"[\[\],\s]*")
# A Markdown fence line (CommonMark 4.5: three or more backticks or tildes, indented by at most three
# blanks, then an info string such as a language tag), after a quote's marks; and a run of three or
# more backticks inside a line (an inline span, or a fence written on the message's own line)
_FENCE_LINE = re.compile(r"((?:[ \t]{0,3}>)*[ \t]*)(?:`{3,}|~{3,})[ \t]*[\w+#.-]{0,30}[ \t]*")
_BACKTICKS = re.compile(r"`{3,}")
# A line its writer filled to the width (a separator, a box of Rich's traceback), not a cut one
_FILLED = re.compile(r"(?:([=\-_#*~.+])\1{4,}|[\u2500-\u259f])$")


@dataclass(frozen=True)
class Written:
    text: str
    # the original's 0-based line where each line of text starts (None: the same lines)
    _origin: Optional[Tuple[int, ...]]

    def line(self, number: int) -> int:
        """The original's 1-based line where this text's line ``number`` starts."""
        if self._origin is None or not 0 < number <= len(self._origin):
            return number
        return self._origin[number - 1] + 1


def _reference(found: re.Match[str]) -> str:
    named, decimal, hexadecimal = found.groups()
    if named:
        return _NAMED[named]
    code = int(decimal) if decimal else int(hexadecimal, 16)
    return chr(code) if 0 < code < 0x110000 and not 0xD800 <= code < 0xE000 else found.group()


def _characters(text: str) -> str:
    """The marks inside lines: line ends, colour codes, Unicode blanks, HTML references."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if not text.isascii():
        text = _ZERO_WIDTH.sub("", _SPACES.sub(" ", text))
    if "&" in text and ";" in text:
        text = _REFERENCE.sub(_reference, text)
    return text


def _unescape(found: re.Match[str]) -> str:
    unicode, byte, simple = found.groups()
    if unicode or byte:
        return chr(int(unicode or byte, 16))
    return _SIMPLE.get(simple, found.group())


def _list_of_lines(line: str, literals: List[re.Match[str]]) -> bool:
    """``line`` is a Python list of string literals, most of them not names (lines of a message,
    not ``['sm_80', 'sm_86']`` or ``['torch==2.4.1']``)."""
    outside = "".join(line[a.end():b.start()] for a, b in zip(literals, literals[1:]))
    outside += line[:literals[0].start()] + line[literals[-1].end():]
    bracketed = line.strip()[:1] == "[" and line.rstrip()[-1:] == "]"
    return (bracketed and _LIST_GLUE.fullmatch(outside) is not None
            and sum(not _NAME.fullmatch(literal.group(2)) for literal in literals) * 2 >= len(literals))


def _record_message(line: str, literals: List[re.Match[str]]) -> Optional[List[str]]:
    """The lines of the message a JSON record or a dict on ``line`` holds: its string value
    (docker's json-file ``{"log": "...\\n", "stream": ...}``, a logger's ``{"msg": ...}``)."""
    stripped = line.strip()
    if not (stripped[:1] == "{" and stripped[-1:] == "}"):
        return None
    values = [literal for literal in literals if line[literal.end():].lstrip()[:1] != ":"]
    if not values or len(values) == len(literals):
        return None
    # the value that ends a line (a log driver's), else the longest
    body = max(values, key=lambda literal: ("\\n" in literal.group(2), len(literal.group(2)))).group(2)
    if "\\" in _VALID_ESCAPE.sub("", body):
        return None
    return _ESCAPE.sub(_unescape, body).rstrip("\n").split("\n")


def _escaped_lines(line: str) -> Optional[List[str]]:
    """The lines the string literals on ``line`` hold: one each in a list of lines; a repr alone
    on the line; a record's message (see _record_message); a literal's ``\\n`` escapes (at
    least two: a value holds one). None when the line holds none. Every backslash of such a
    literal starts an escape: a Windows path's ``C:\\new\\Users`` is no literal."""
    literals = list(_LITERAL.finditer(line))
    if not literals:
        return None
    if _list_of_lines(line, literals):
        return [_ESCAPE.sub(_unescape, literal.group(2)).rstrip("\n") for literal in literals]
    message = _record_message(line, literals)
    if message is not None:
        return message
    whole = literals[0]
    alone = whole.start() == len(line) - len(line.lstrip()) and whole.end() == len(line.rstrip())
    escapes = "\\" in whole.group(2) and "\\" not in _VALID_ESCAPE.sub("", whole.group(2))
    if len(literals) == 1 and alone and escapes:
        return _ESCAPE.sub(_unescape, whole.group(2)).rstrip("\n").split("\n")  # a message's repr, alone
    for literal in literals:
        body = literal.group(2)
        if body.count("\\n") >= 2 and "\\" not in _VALID_ESCAPE.sub("", body):
            before, after = line[:literal.start()].rstrip(), line[literal.end():].strip()
            lines = _ESCAPE.sub(_unescape, body).split("\n")
            return ([before] if before else []) + lines + ([after] if after else [])
    return None


def _decoded(lines: List[str]) -> Optional[Tuple[List[str], List[int]]]:
    """The lines with each escaped one decoded (see _escaped_lines) and each new line's original
    line; None when no line was escaped."""
    out: List[str] = []
    origin: List[int] = []
    changed = False
    for index, line in enumerate(lines):
        held = _escaped_lines(line) if _may_hold_escapes(line) else None
        if held is None:
            out.append(line)
            origin.append(index)
            continue
        changed = True
        out.extend(held)
        origin.extend([index] * len(held))
    return (out, origin) if changed else None


def _wrap_width(lines: Sequence[str]) -> Optional[int]:
    """The terminal width the text was cut at: its longest line is one of the widths (no line of
    a hard-wrapped text is longer)."""
    width = max(map(len, lines), default=0)
    return width if width in _WIDTHS else None


# How a line cut inside a word, a number or a path goes on: a letter in lower case, a digit, a
# character that continues a token. One that starts otherwise (a capital, an indented line) is as
# likely a new line its program wrote, which a line filled to the width by chance also precedes.
_GOES_ON = re.compile(r"[a-z0-9_.,;:)\]}/\\%=+*&|@#~^-]| \S")
# A line that opens with a tool's own label (rustc's, uv's, gcc's "error:", "note:"...) starts a
# message of its own
_LABEL = re.compile(r"(?:error|warning|note|help|hint|info|debug|fatal error|caused by)(?:\[\w-]+\])?:", re.I)


# The word a line's cut ends in and the one the next line starts with
_WORD_END = re.compile(r"\w+$")
_WORD_START = re.compile(r"\w+")


def _cut_word(line: str, following: str, words: Optional[Words]) -> bool:
    """``line`` was cut inside a word that ``following`` goes on with, and the joined word is one of
    ``words``: a capital at the next line's start is otherwise as often a new line of its own."""
    if words is None or not following[:1].isupper():
        return False
    end, start = _WORD_END.search(line), _WORD_START.match(following)
    return end is not None and start is not None and end.group() + start.group() in words()


def _goes_on(line: str, following: str, trimmed: bool = False) -> bool:
    """``following`` continues ``line`` where the terminal cut it: the cut fell after a blank (a
    program does not end a line with one), before a single one, or inside a token; and it does not
    open as a line of its own (a label, a logger's or a runner's prefix). After a ``trimmed``
    blank, a line that starts as a token goes on only."""
    if not following or following.isspace() or _LABEL.match(following):
        return False
    if line_prefix_length(following.rstrip() + " ."):  # a logger's prefix, alone or before text
        return False
    if trimmed:
        return not following.startswith(" ") and _GOES_ON.match(following) is not None
    if line.endswith("  "):  # a line padded with blanks to the width (a console's copy), not one cut
        return False
    if line.endswith(" "):
        return not following.startswith(" ")
    return _GOES_ON.match(following) is not None


def _glue(line: str, width: int) -> Optional[str]:
    """How ``line`` joins the next one if the terminal cut it: "" at the width; one blank at one
    less (a terminal's copy trims the blank it was cut at); None for other lines and for a line its
    writer filled to the width (a separator, a box border)."""
    if len(line) == width and not _FILLED.search(line):
        return ""
    if len(line) == width - 1 and line[-1:].strip() and not _FILLED.search(line):
        return " "
    return None


def _dewrapped(lines: List[str], origin: Sequence[int], width: int,
               words: Optional[Words]) -> Tuple[List[str], List[int]]:
    """A line cut at the terminal's width joined with the line it goes on at, as many times as it
    was cut (see _glue, _goes_on, _cut_word)."""
    out: List[str] = []
    starts: List[int] = []
    glue: Optional[str] = None
    for line, index in zip(lines, origin):
        if glue is not None and (_goes_on(out[-1], line, trimmed=bool(glue))
                                 or (not glue and _cut_word(out[-1], line, words))):
            out[-1] += glue + line
        else:
            out.append(line)
            starts.append(index)
        glue = _glue(line, width)
    return out, starts


def _may_hold_escapes(text: str) -> bool:
    return "\\" in text or "', " in text or '", ' in text or "['" in text or '["' in text or "{'" in text \
        or '{"' in text


def _less_three(run: re.Match[str]) -> str:
    return run.group()[3:]


def _unfenced(lines: List[str], origin: Sequence[int]) -> Optional[Tuple[List[str], List[int]]]:
    """The lines without Markdown's fences: a fence line dropped (a quoted one keeps its quote's
    marks), a run of backticks inside a line removed; None when no line holds one."""
    out: List[str] = []
    kept: List[int] = []
    changed = False
    for line, index in zip(lines, origin):
        if "``" not in line and "~~~" not in line:
            out.append(line)
            kept.append(index)
            continue
        fence = _FENCE_LINE.fullmatch(line)
        changed = changed or fence is not None or _BACKTICKS.search(line) is not None
        if fence is not None and not fence.group(1).strip():
            continue  # a fence line of its own: nothing of the message
        # a run of more than three: the message's own backtick beside the span's three
        out.append(fence.group(1).rstrip() if fence is not None else _BACKTICKS.sub(_less_three, line))
        kept.append(index)
    return (out, kept) if changed else None


def _lines_written(text: str, words: Optional[Words]) -> Optional[Tuple[List[str], Sequence[int]]]:
    """The lines of ``text`` decoded, dewrapped and unfenced, with each one's original line; None
    when nothing changed. A terminal cut the lines with their fences where the longest line, fences
    and all, is its width (a fenced message shown raw); else those without (a fence put around a
    copied output)."""
    lines = text.split("\n")
    decoded = _decoded(lines) if _may_hold_escapes(text) else None
    origin: Sequence[int] = decoded[1] if decoded is not None else range(len(lines))
    if decoded is not None:
        lines = decoded[0]
    width = _wrap_width(lines)
    if width is not None:
        lines, origin = _dewrapped(lines, origin, width, words)
    unfenced = _unfenced(lines, origin) if "``" in text or "~~~" in text else None
    if unfenced is not None:
        lines, origin = unfenced
        cut_at = _wrap_width(lines) if width is None else None
        if cut_at is not None:
            lines, origin = _dewrapped(lines, origin, cut_at, words)
    if width is None and decoded is None and unfenced is None:
        return None
    return lines, origin


def as_written(text: str, words: Optional[Words] = None) -> Written:
    """``text`` without the marks of its paste (see the module's docstring). A long log's lines are
    read at its end, where its last messages are (as the matcher reads its joined messages).
    ``words`` gives the words a cut before a capital may be joined into (none: no such join)."""
    text = _characters(text.lstrip("\ufeff"))
    head = text.find("\n", len(text) - _LINES_READ) + 1 if len(text) > _LINES_READ else 0
    written = _lines_written(text[head:], words)
    if written is None:
        return Written(text, None)
    lines, origin = written
    skipped = text.count("\n", 0, head)
    return Written(text[:head] + "\n".join(lines), (*range(skipped), *(skipped + line for line in origin)))
