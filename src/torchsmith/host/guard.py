"""The hung-mount guard of LiveHost's reads (in its own module: a command that reads no file
through the host loads no threads).

A file on a hung network mount blocks in the kernel, where no timeout reaches: such a read is
left to a daemon thread and the path counts as unreadable.
"""

from __future__ import annotations

import sys
import threading

from torchsmith import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Callable, List, Optional, TypeVar

    _T = TypeVar("_T")

__all__ = ["ReadGuard"]

# Kernel pseudo-filesystems answer from memory and are never network mounts: read directly.
# /proc/driver/ is left guarded, as its files call into drivers that can wedge.
_UNGUARDED = ("/proc/self/", "/proc/cpuinfo", "/proc/meminfo", "/proc/version", "/sys/")


class ReadGuard:
    """One worker thread for every guarded read of a host, not one thread per read.

    A read that does not return within the timeout leaves its worker stuck in the kernel; that
    worker is abandoned (a daemon) and the next read starts a fresh one.
    """

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._lock = threading.Lock()
        self._worker: Optional[_Worker] = None

    def call(self, path: str, work: Callable[[], _T]) -> Optional[_T]:
        """``work()``, or None when it raised OSError/ValueError or did not return in time."""
        if path.startswith(_UNGUARDED) and sys.platform.startswith("linux"):
            return _attempt(work)
        with self._lock:
            box: List[Optional[_T]] = []
            done = threading.Lock()  # held until the job has run (a lock: cheaper than an Event)
            done.acquire()

            def job() -> None:
                box.append(_attempt(work))
                done.release()

            if self._worker is None:
                self._worker = _Worker()
            self._worker.hand(job)
            if done.acquire(timeout=self._seconds):
                return box[0]
            self._worker = None  # stuck in the kernel: the next read gets a new one
            return None


def _attempt(work: Callable[[], _T]) -> Optional[_T]:
    try:
        return work()
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return None


class _Worker:
    """A daemon thread that runs the jobs handed to it, one at a time (the guard's lock makes
    sure of that), each handed over through a lock: no queue module."""

    def __init__(self) -> None:
        self._job: Optional[Callable[[], None]] = None
        self._ready = threading.Lock()
        self._ready.acquire()
        threading.Thread(target=self._serve, name="torchsmith-read", daemon=True).start()

    def hand(self, job: Callable[[], None]) -> None:
        self._job = job
        self._ready.release()

    def _serve(self) -> None:
        while True:
            self._ready.acquire()
            job, self._job = self._job, None
            if job is not None:
                job()
