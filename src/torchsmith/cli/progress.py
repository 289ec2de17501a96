"""Progress for long waits: a spinner with the elapsed time on stderr, on a terminal only.

Nothing is shown when stderr is not a terminal (a pipe, a log, CI), under ``-q``, or for a
wait shorter than :data:`DELAY` seconds; stdout (``--json`` included) never carries any of it.
rich is imported only when a spinner is actually shown.
"""

from __future__ import annotations

import sys

from torchsmith import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    import threading
    from types import TracebackType
    from typing import IO, Any, ContextManager, List, Optional, Type

__all__ = ["DELAY", "Waiting", "waiting"]

DELAY = 1.0  # seconds before a wait is worth a spinner
_ACTIVE: List[Waiting] = []  # the waits now shown or about to be: one spinner at a time


class Waiting:
    """``with Waiting("importing torch", stream):`` -- a transient spinner, after ``delay``."""

    def __init__(self, text: str, stream: Optional[IO[str]] = None, *, enabled: bool = True,
                 delay: float = DELAY) -> None:
        self.stream = stream or sys.stderr
        self.text = text
        self.enabled = enabled and bool(getattr(self.stream, "isatty", lambda: False)())
        self.delay = delay
        import threading  # here: a command that waits on nothing does not pay for it

        self._lock = threading.Lock()
        self._timer: Optional[threading.Timer] = None
        self._progress: Any = None
        self._task: Any = None
        self._stopped = False
        self.shown = threading.Event()  # set once the spinner is on screen

    def __enter__(self) -> Waiting:
        if self.enabled:
            _ACTIVE.append(self)
            import threading

            self._timer = threading.Timer(self.delay, self._show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _show(self) -> None:
        with self._lock:
            if self._stopped:
                return
            try:
                from rich.console import Console
                from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
            except ImportError:  # rich missing: the wait stays silent, as when piped
                return
            console = Console(file=self.stream, stderr=self.stream is sys.stderr)
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                      TimeElapsedColumn(), console=console, transient=True)
            self._task = self._progress.add_task(self._label(self.text))
            self._progress.start()
            self.shown.set()

    @staticmethod
    def _label(text: str) -> str:
        from torchsmith.redact import redact

        return redact(text)  # labels name indexes and paths

    def update(self, text: str) -> None:
        """A new label, its clock from zero (the install's next step)."""
        with self._lock:
            self.text = text
            if self._progress is not None:
                self._progress.reset(self._task, description=self._label(text))

    def stop(self) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        with self._lock:
            self._stopped = True
            if self._timer is not None:
                self._timer.cancel()
            if self._progress is not None:
                self._progress.stop()
                self._progress = None

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.stop()


def waiting(args: argparse.Namespace, text: str) -> ContextManager[object]:
    """A :class:`Waiting` on stderr when it is a terminal and ``-q`` was not given; else nothing
    (the probe's path stays as fast as without it)."""
    if getattr(args, "quiet", False) or not getattr(sys.stderr, "isatty", lambda: False)() or _ACTIVE:
        return _Silent()  # (inside another wait, e.g. the probe within the doctor's: that one shows)
    return Waiting(text, delay=DELAY)


class _Silent:
    enabled = False

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
