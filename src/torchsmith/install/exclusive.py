"""One change at a time per environment: an exclusive lock held for a whole install.

Two installs into one target interleave badly: the failing one's rollback puts back (or
removes) the environment the other one just reported as installed. The lock is an advisory
``flock`` on a file *beside* the target (``<parent>/.<name>.torchsmith.lock``): a file inside
it would be swapped away with the directory when a snapshot is restored. The holder writes its
pid into the file, so a refused run can name it. The kernel drops the lock when the holder
exits, however it exits.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import IO, Callable, Iterator, Optional

from torchsmith.errors import TorchsmithError

__all__ = ["TargetBusy", "exclusive", "lock_path"]

_POLL = 0.1  # seconds between tries while waiting


class TargetBusy(TorchsmithError):
    code = "target-busy"


def lock_path(prefix: str) -> str:
    prefix = os.path.realpath(prefix).rstrip(os.sep) or os.sep  # --venv X and --python X/bin/python
    return os.path.join(os.path.dirname(prefix), f".{os.path.basename(prefix)}.torchsmith.lock")


def _try_lock(handle: IO[str]) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined,unused-ignore]
            return True
        except OSError:
            return False
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def _holder(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            pid = handle.read(32).strip()
    except OSError:
        pid = ""
    return f"pid {pid}" if pid.isdigit() else "another process"


def _open(path: str, prefix: str) -> IO[str]:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return open(path, "a+", encoding="utf-8")
    except OSError as exc:
        raise TorchsmithError(f"cannot lock {prefix}: {exc.strerror or exc}", code="target-unusable",
                              hint=f"torchsmith needs to write {path} beside the environment") from exc


def _still_there(handle: IO[str], path: str) -> bool:
    """Whether the locked file is still the one at ``path``: the last holder removes it."""
    try:
        return os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
    except OSError:
        return False


@contextlib.contextmanager
def exclusive(prefix: str, wait: float = 0.0, what: str = "install",
              waiting: Optional[Callable[[str], None]] = None) -> Iterator[str]:
    """Hold the lock of the environment at ``prefix``; wait up to ``wait`` seconds for it."""
    path = lock_path(prefix)
    deadline = time.monotonic() + max(wait, 0.0)
    told = False
    handle = _open(path, prefix)
    try:
        while not (_try_lock(handle) and _still_there(handle, path)):
            if not _still_there(handle, path):  # removed by the holder that just finished
                handle.close()
                handle = _open(path, prefix)
                continue
            holder = _holder(path)
            if time.monotonic() >= deadline:
                raise TargetBusy(f"{prefix} is being changed by another torchsmith ({holder})",
                                 hint=f"run `{what}` again when it has finished"
                                      + (" or pass --wait SECONDS" if what == "install" else "")
                                      + f" (lock file: {path})")
            if waiting is not None and not told:
                waiting(f"waiting for {holder}, which is changing {prefix} (up to {wait:.0f} s)")
                told = True
            time.sleep(_POLL)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield path
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)  # still held: whoever opened it re-opens a new one
    finally:
        handle.close()  # releases the lock
