"""Run one adversarial case through the real CLI and judge how it ended.

A case is *clean* when the command answered with a documented exit code and either its normal
output or exactly one error (``error[code]: ...`` on stderr, or under ``--json`` one envelope on
stdout whose ``exit_code`` matches). It is a *traceback* when an exception escaped (the in-process
runs set ``TORCHSMITH_DEBUG=1`` so none is hidden behind exit 70), a *hang* when a subprocess
outlived its bound, *data lost* when a file that must survive was changed or removed, and
*unclean* for any other broken contract (invalid JSON, an undocumented exit code, no error line).

Every run is added to :data:`TALLY`; ``tools/battery_report.py`` prints it.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import io
import json
import os
import subprocess
import sys
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from hypothesis import HealthCheck, settings

from torchsmith.cli import main
from torchsmith.output import ExitCode

__all__ = [
    "FAILURES",
    "KINDS",
    "TALLY",
    "Outcome",
    "battery_settings",
    "check",
    "run_cli",
    "run_subprocess",
]

KINDS = ("clean", "traceback", "hang", "data-lost", "unclean")
TALLY: Counter[str] = Counter()
FAILURES: List[str] = []
_INTERNAL = 70  # ExitCode.INTERNAL; spelled out so the battery can also judge older versions
_CODES = {int(code) for code in ExitCode} - {_INTERNAL}
ENVELOPE_KEYS = {"schema", "torchsmith", "kb_version", "command", "status", "exit_code", "data",
                 "warnings", "errors"}

# Deterministic and bounded: the same examples on every run, no deadline on a loaded machine.
battery_settings = settings(derandomize=True, deadline=None, max_examples=25, database=None,
                            suppress_health_check=list(HealthCheck))


@dataclass
class Outcome:
    argv: List[str]
    kind: str
    exit_code: Optional[int]
    detail: str = ""
    stdout: str = ""
    stderr: str = ""
    envelope: Optional[Dict[str, Any]] = field(default=None, repr=False)

    @property
    def clean(self) -> bool:
        return self.kind == "clean"


def _digest(paths: Sequence[Path]) -> Dict[str, Optional[str]]:
    out: Dict[str, Optional[str]] = {}
    for path in paths:
        if path.is_file():
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            out[str(path)] = "dir:" + ",".join(sorted(os.listdir(path)))
        else:
            out[str(path)] = None
    return out


def judge(argv: Sequence[str], code: Optional[int], out: str, err: str) -> Outcome:
    """The contract every command keeps, whatever it was given."""
    args = list(argv)
    if "Traceback (most recent call last)" in err or code == _INTERNAL:
        return Outcome(args, "traceback", code, err.strip().splitlines()[-1:][0] if err.strip() else "",
                       out, err)
    if code not in _CODES:
        return Outcome(args, "unclean", code, f"undocumented exit code {code}", out, err)
    if code == ExitCode.INTERRUPTED:  # whatever was printed before, it ends with one line
        last = err.strip().splitlines()[-1:] or [""]
        kind = "clean" if last == ["interrupted"] else "unclean"
        return Outcome(args, kind, code, f"interrupted with {err.strip()[-80:]!r}", out, err)
    if "--json" in args and "--help" not in args:
        try:
            envelope = json.loads(out)
        except ValueError as exc:
            return Outcome(args, "unclean", code, f"stdout is not one JSON document: {exc}", out, err)
        if not isinstance(envelope, dict) or set(envelope) != ENVELOPE_KEYS:
            return Outcome(args, "unclean", code, "not the envelope", out, err)
        if envelope["exit_code"] != code:
            return Outcome(args, "unclean", code, "envelope exit_code differs", out, err)
        if code in (ExitCode.FAILURE, ExitCode.USAGE) and not envelope["errors"]:
            return Outcome(args, "unclean", code, "an error exit without an error", out, err)
        if any("\n" in str(e.get("message", "")) for e in envelope["errors"]):
            return Outcome(args, "unclean", code, "an error message of several lines", out, err)
        return Outcome(args, "clean", code, "", out, err, envelope)
    if code in (ExitCode.FAILURE, ExitCode.USAGE):
        lines = [line for line in err.splitlines() if line and not line.startswith((" ", "warning:"))]
        first = next((line for line in lines if not line.startswith("usage:")), "")
        if not (first.startswith("error[") or ": error: " in first):
            return Outcome(args, "unclean", code, f"no one-line error on stderr: {first[:80]!r}", out, err)
    return Outcome(args, "clean", code, "", out, err)


@contextlib.contextmanager
def _environ(changes: Mapping[str, Optional[str]]) -> Any:
    saved = {name: os.environ.get(name) for name in changes}
    try:
        for name, value in changes.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def record(outcome: Outcome, label: str) -> Outcome:
    TALLY["tried"] += 1
    TALLY[outcome.kind] += 1
    if not outcome.clean:
        FAILURES.append(f"{outcome.kind}: {label or ' '.join(outcome.argv)[:160]}: {outcome.detail}")
    return outcome


def run_cli(argv: Sequence[str], *, env: Optional[Mapping[str, Optional[str]]] = None,
            keep: Sequence[Path] = (), stdin: Optional[bytes] = None, label: str = "",
            interrupt_at: Optional[int] = None) -> Outcome:
    """``torchsmith ARGV`` in this process; ``keep``: files that must come through unchanged;
    ``interrupt_at``: raise KeyboardInterrupt at that Python call, as Ctrl-C would."""
    before = _digest(keep)
    # Streams like a real process's: UTF-8, strict on stdout, so an unprintable string fails here too.
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    changes: Dict[str, Optional[str]] = {"TORCHSMITH_DEBUG": "1", **(env or {})}
    saved_stdin = sys.stdin
    try:
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="replace")
        with _environ(changes), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            if interrupt_at is not None:
                sys.settrace(raise_at_call(interrupt_at))
            try:
                code: Optional[int] = main(list(argv))
            finally:
                sys.settrace(None)
    except BaseException:  # what a user would have seen as a traceback (KeyboardInterrupt too)
        err.write(traceback.format_exc().encode("utf-8", "replace").decode("utf-8"))
        code = None
    finally:
        sys.stdin = saved_stdin
    outcome = judge(argv, code, _text(out), _text(err))
    if outcome.clean and _digest(keep) != before:
        outcome = Outcome(list(argv), "data-lost", code, "a file that had to survive changed",
                          outcome.stdout, outcome.stderr)
    return record(outcome, label)


GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def raise_at_call(at: int, make: Any = KeyboardInterrupt) -> Any:
    """A trace function that raises ``make()`` at torchsmith's ``at``-th plain call."""
    calls = [0]

    def trace(frame: Any, event: str, arg: Any) -> None:
        # Only torchsmith's own plain calls: raised in a gc callback or in a generator being
        # closed by the collector, an exception is "unraisable", which no Ctrl-C could cause.
        code = frame.f_code
        if "torchsmith" in code.co_filename and not code.co_flags & GENERATOR_FLAGS:
            calls[0] += 1
            if calls[0] == at:
                sys.settrace(None)
                raise make()

    return trace


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer
    assert isinstance(raw, io.BytesIO)
    return raw.getvalue().decode("utf-8", errors="replace")


def run_subprocess(argv: Sequence[str], *, env: Mapping[str, str], bound: float = 120.0,
                   stdin: Optional[bytes] = None, label: str = "") -> Outcome:
    """``python -m torchsmith ARGV`` as a user runs it. ``bound`` is a limit, not a timing check:
    a run that outlives it is counted as a hang (and killed)."""
    try:
        done = subprocess.run([sys.executable, "-m", "torchsmith", *argv], env=dict(env),
                              input=stdin if stdin is not None else b"", capture_output=True,
                              timeout=bound, check=False)
    except subprocess.TimeoutExpired:
        return record(Outcome(list(argv), "hang", None, f"still running after {bound:g} s"), label)
    code = done.returncode if done.returncode >= 0 else 128 - done.returncode
    outcome = judge(argv, code, done.stdout.decode("utf-8", "replace"),
                    done.stderr.decode("utf-8", "replace"))
    return record(outcome, label)


def check(outcome: Outcome) -> None:
    """Fail the test with what went wrong."""
    assert outcome.clean, f"{outcome.kind}: {' '.join(outcome.argv)[:300]}\n{outcome.detail}\n" \
                          f"{outcome.stderr[-2000:]}"
