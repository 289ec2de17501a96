"""The hung-mount guard of LiveHost's reads (in its own module: a command that reads no file
through the host loads no threads).

A file on a hung network mount blocks in the kernel, where no timeout reaches: such a read is
left to a daemon thread and the path counts as unreadable.
"""

from __future__ import annotations

import queue
import sys
import threading
from typing import Callable, List, Optional, TypeVar

__all__ = ["ReadGuard"]

_T = TypeVar("_T")

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
        self._jobs: Optional[queue.SimpleQueue[Callable[[], None]]] = None

    def call(self, path: str, work: Callable[[], _T]) -> Optional[_T]:
        """``work()``, or None when it raised OSError/ValueError or did not return in time."""
        if path.startswith(_UNGUARDED) and sys.platform.startswith("linux"):
            return _attempt(work)
        with self._lock:
            box: List[Optional[_T]] = []
            done = threading.Event()

            def job() -> None:
                box.append(_attempt(work))
                done.set()

            if self._jobs is None:
                self._jobs = _start_worker()
            self._jobs.put(job)
            if done.wait(self._seconds):
                return box[0]
            self._jobs = None  # its worker is stuck in the kernel: the next read gets a new one
            return None


def _attempt(work: Callable[[], _T]) -> Optional[_T]:
    try:
        return work()
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return None


def _start_worker() -> queue.SimpleQueue[Callable[[], None]]:
    jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def serve() -> None:
        while True:
            jobs.get()()

    threading.Thread(target=serve, name="torchsmith-read", daemon=True).start()
    return jobs
