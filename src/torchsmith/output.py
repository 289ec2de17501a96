"""Results and how they are shown: one JSON envelope, or text for people.

Commands return a :class:`Result`; only this module and the CLI print. With ``--json`` stdout
carries exactly one document (keys sorted, no colour)::

    {"schema": 1, "torchsmith": VERSION, "kb_version": ..., "command": ..., "status": ...,
     "exit_code": N, "data": {...}, "warnings": [...], "errors": [{code, message, context, hint}]}
"""

from __future__ import annotations

import enum
import io
import json
import re
import sys

from torchsmith import TYPE_CHECKING, __version__
from torchsmith.records import dataclass, field

if TYPE_CHECKING:
    from typing import IO, Any, Callable, Dict, List, Optional

__all__ = ["ENVELOPE_SCHEMA", "Caution", "ExitCode", "Presentation", "Result", "emit", "hidden_hint",
           "paint", "strip_sources", "terminal_columns", "use_color"]

ENVELOPE_SCHEMA = 1


class ExitCode(enum.IntEnum):
    """Documented in docs/reference/exit-codes.md; a test keeps the two in step."""

    OK = 0
    FAILURE = 1
    USAGE = 2
    NO_SOLUTION = 3
    PROBLEMS_FOUND = 4
    WOULD_BREAK = 5
    INTERNAL = 70
    INTERRUPTED = 130


class Caution(str):
    """A warning that decides whether the answer's command is safe to run here: it would replace
    a working torch, or what it installs cannot (fully) run on this machine. It is part of the
    answer: shown without ``-v`` (with the answer's why where the command has one), never hidden.
    Every other warning is a note: ``-v`` shows it; ``--json`` always carries both, as strings."""

    __slots__ = ()


def hidden_hint(count: int) -> str:
    """The line that says notes were left out: ``2 notes hidden; -v shows them``."""
    return f"{count} note{'s' if count != 1 else ''} hidden; -v shows {'them' if count != 1 else 'it'}"


@dataclass
class Result:
    command: str
    data: Dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    exit_code: ExitCode = ExitCode.OK
    warnings: List[str] = field(default_factory=list)
    errors: List[Dict[str, Any]] = field(default_factory=list)
    kb_version: Optional[str] = None
    # Renders the human form; receives the stream to write to. None = print data as JSON.
    human: Optional[Callable[[IO[str]], None]] = None
    # The human form is a file's text (a rendered Dockerfile): printed as it is, never re-wrapped.
    preformatted: bool = False
    # The human form already shows the cautions (in its why): stderr does not repeat them.
    cautions_shown: bool = False

    def envelope(self) -> Dict[str, Any]:
        return {
            "schema": ENVELOPE_SCHEMA,
            "torchsmith": __version__,
            "kb_version": self.kb_version,
            "command": self.command,
            "status": self.status,
            "exit_code": int(self.exit_code),
            "data": self.data,
            "warnings": list(self.warnings),
            "errors": list(self.errors),
        }


@dataclass(frozen=True)
class Presentation:
    """How the human form is shown: ``-q``, ``-v`` (a count) and ``--color auto|always|never``."""

    quiet: bool = False
    verbose: int = 0
    color: str = "auto"


_PLAIN = Presentation()


def use_color(stream: IO[str], environ: Optional[Dict[str, str]] = None) -> bool:
    """``--color always|never`` when given; else never under NO_COLOR, always under FORCE_COLOR,
    and on a terminal only."""
    chosen = getattr(stream, "color_choice", "auto")
    if chosen in ("always", "never"):
        return chosen == "always"
    if environ is None:
        from torchsmith.host.live import process_environ

        environ = process_environ()
    env = environ
    if env.get("NO_COLOR") is not None:
        return False
    if env.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


# Patterns as text, compiled (and cached) by re when first used: `--json` output needs none.
_SOURCE = r"\s*[\[(]sources?: [^\])]*[\])]"


def strip_sources(text: str) -> str:
    """``text`` without its ``[source: URL; URL]`` citations: ``-v`` and --json keep them."""
    return re.sub(_SOURCE, "", text)


def paint(text: str, sgr: str, enabled: bool) -> str:
    """``text`` in an ANSI style (``"1"`` bold, ``"31"`` red) when colour is on."""
    return f"\x1b[{sgr}m{text}\x1b[0m" if enabled and text else text


def terminal_columns() -> int:
    """The width to wrap human output at (80 when piped and COLUMNS is unset)."""
    from torchsmith.host.live import terminal_columns as columns

    return columns()


class _Buffer(io.StringIO):
    """Collects the human form for redaction; a terminal stays a terminal (colour), and the
    ``--color`` choice travels with it."""

    def __init__(self, stream: IO[str], color_choice: str = "auto") -> None:
        super().__init__()
        self._tty = bool(getattr(stream, "isatty", lambda: False)())
        self.color_choice = color_choice

    def isatty(self) -> bool:
        return self._tty


def emit(result: Result, as_json: bool, out: Optional[IO[str]] = None,
         err: Optional[IO[str]] = None, presentation: Presentation = _PLAIN) -> None:
    from torchsmith.redact import redact, redact_data

    out = out or sys.stdout
    err = err or sys.stderr
    if as_json:  # every string of the envelope, credentials masked
        out.write(json.dumps(redact_data(result.envelope()), sort_keys=True, indent=2) + "\n")
        return
    text = _Buffer(out, presentation.color)
    if result.human is not None:
        result.human(text)
    elif result.data:
        text.write(json.dumps(result.data, sort_keys=True, indent=2) + "\n")
    shown = text.getvalue()
    if result.human is not None and not result.preformatted:
        from torchsmith.textwidth import fit

        if not presentation.verbose:  # citations with -v (and always in --json)
            shown = strip_sources(shown)
        shown = fit(shown, terminal_columns())
    shown = redact(shown)
    out.write(printable(shown, keep_colour=bool(re.search(_CONTROL, shown)) and use_color(text)))
    out.flush()
    _warn(result, presentation, err)
    for error in result.errors:
        err.write(printable(redact(format_error(error))) + "\n")


def _warn(result: Result, presentation: Presentation, err: IO[str]) -> None:
    """Each warning once: cautions always, ``-q`` too (unless the answer showed them); notes with
    ``-v``, else one line saying how many were left out (none under ``-q``)."""
    import textwrap  # here: --json never wraps

    from torchsmith.redact import redact

    unique = list(dict.fromkeys(result.warnings))
    shown: List[str] = [] if result.cautions_shown else [w for w in unique if isinstance(w, Caution)]
    notes = [w for w in unique if not isinstance(w, Caution)]
    if presentation.verbose and not presentation.quiet:
        shown = [w for w in unique if w in shown or w in notes]
    width = terminal_columns()
    for warning in shown:
        line = f"warning: {warning if presentation.verbose else strip_sources(warning)}"
        wrapped = textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False,
                                break_long_words=False) or [line]
        err.write(printable(redact("\n".join(wrapped))) + "\n")
    if notes and not presentation.verbose and not presentation.quiet:
        err.write(hidden_hint(len(notes)) + "\n")


# Control characters other than newline and tab, C1 controls included: printed raw, text from a
# tool's output or a flag could move the cursor, retitle the terminal or hide lines.
_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"
_SGR = r"\x1b\[[0-9;]*m"  # colour and style only, as rich writes them


def printable(text: str, keep_colour: bool = False) -> str:
    """``text`` with every control character shown escaped (``\\x1b``), except our own colours."""
    if not re.search(_CONTROL, text):
        return text
    if keep_colour:
        parts = re.split(_SGR, text)
        styles = re.findall(_SGR, text)
        out = [_escape_controls(parts[0])]
        for style, part in zip(styles, parts[1:]):
            out.append(style + _escape_controls(part))
        return "".join(out)
    return _escape_controls(text)


def _escape_controls(text: str) -> str:
    return re.sub(_CONTROL, lambda m: f"\\x{ord(m.group(0)):02x}", text)


def format_error(error: Dict[str, Any]) -> str:
    lines = [f"error[{error.get('code', 'error')}]: {error.get('message', '')}"]
    lines.extend(f"  {line}" for line in error.get("context") or ())
    if error.get("hint"):
        lines.append(f"  hint: {error['hint']}")
    return "\n".join(lines)
