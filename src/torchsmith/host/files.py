"""Bounded reads of regular files: stdlib only, so that even the error module may use them."""

from __future__ import annotations

import os
import stat

from torchsmith import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Tuple

__all__ = ["NotAFileError", "read_bounded", "read_whole"]


class NotAFileError(OSError):
    """A path that is a FIFO, a device or a socket: reading it could block forever or never end."""


def read_bounded(path: str, head: int, tail: int = 0) -> Tuple[bytes, int]:
    """The first ``head`` and last ``tail`` bytes of a regular file, and how many were skipped.

    Refuses (NotAFileError) anything but a regular file, without blocking: it is opened with
    O_NONBLOCK only after ``stat`` said it is one, and checked again once open. Raises OSError.
    """
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO, device or socket"
        raise NotAFileError(f"{path} is not a regular file ({kind})")
    flags = os.O_RDONLY
    for extra in ("O_NONBLOCK", "O_NOCTTY", "O_BINARY"):  # not every OS has each
        flags |= getattr(os, extra, 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotAFileError(f"{path} is not a regular file")
        data = handle.read(head)
        if not tail:
            # /proc and /sys files say size 0 however long they are: one more byte tells.
            return data, max(1, info.st_size - head) if handle.read(1) else 0
        start = max(handle.tell(), info.st_size - tail)
        skipped = start - handle.tell()
        handle.seek(start)
        return data + handle.read(tail), skipped


def read_whole(path: str, limit: int) -> bytes:
    """All of a regular file of at most ``limit`` bytes; OSError for anything else."""
    data, skipped = read_bounded(path, limit)
    if skipped:
        raise OSError(f"{path} is larger than {limit // (1024 * 1024)} MiB")
    return data
