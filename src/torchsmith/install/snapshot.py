"""Snapshot an environment before an install, and put it back exactly if the install fails.

The snapshot is a tree next to the environment (same filesystem): small files are copied, large
ones hardlinked. pip and uv never write into an installed file in place (they remove or rename
it, then write a new one), so a hardlink keeps the old bytes. Restoring swaps the trees with
renames: whatever the installer added (files, ``__pycache__``) goes, whatever it removed or
replaced comes back byte for byte, with its mode and times.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
from typing import Optional, Sequence

from torchsmith.errors import InstallError

__all__ = ["Snapshot", "reason", "remove_tree"]

_LINK_ABOVE = 256 * 1024  # bytes; smaller files are cheap to copy and the likeliest to be rewritten


class Snapshot:
    """``take()`` before changing ``prefix``; then ``restore()`` on failure or ``discard()``.

    The snapshot lives in ``holder`` (a directory beside the prefix that the install journal
    names), so that the next command can finish either after a kill: every step of ``restore``
    and ``discard`` can be run again from wherever a kill stopped it.
    """

    def __init__(self, prefix: str, holder: str, exclude: Sequence[str] = ()) -> None:
        self.prefix = os.path.abspath(prefix)
        self.holder = holder
        # Top-level entries no installer touches and too big to copy (conda's pkgs/ and envs/):
        # left out of the snapshot, and carried over as they are on restore.
        self.exclude = tuple(exclude)
        self.path: Optional[str] = None
        self.files = 0
        self.bytes_copied = 0

    @property
    def copy(self) -> str:
        return os.path.join(self.holder, os.path.basename(self.prefix))

    def take(self) -> None:
        try:
            if os.path.lexists(self.holder):  # an older run's, unfinished: never a complete one
                remove_tree(self.holder)
            os.mkdir(self.holder)
        except OSError as exc:
            raise InstallError(f"cannot write a snapshot next to {self.prefix}: {exc.strerror}",
                               code="snapshot-failed",
                               hint="torchsmith changes an environment only when it can restore it") from exc
        try:
            self._copy_tree(self.prefix, self.copy, self.exclude)
        except OSError as exc:
            remove_tree(self.holder)
            raise InstallError(f"cannot snapshot {self.prefix}: {reason(exc)}", code="snapshot-failed",
                               hint="free some disk space next to the environment and retry") from exc
        except BaseException:  # Ctrl-C half-way: a partial copy must never be restored
            remove_tree(self.holder)
            raise
        self.path = self.copy  # only a complete snapshot can be restored

    def _copy_tree(self, src: str, dst: str, exclude: Sequence[str] = ()) -> None:
        os.mkdir(dst)
        with os.scandir(src) as entries:
            for entry in entries:
                if entry.name in exclude:
                    continue
                source, dest = entry.path, os.path.join(dst, entry.name)
                if entry.is_symlink():
                    os.symlink(os.readlink(source), dest)
                elif entry.is_dir():
                    self._copy_tree(source, dest)
                else:
                    size = entry.stat(follow_symlinks=False).st_size
                    linked = False
                    if size >= _LINK_ABOVE:
                        try:
                            os.link(source, dest)
                            linked = True
                        except OSError:
                            pass
                    if not linked:
                        shutil.copy2(source, dest, follow_symlinks=False)
                        self.bytes_copied += size
                    self.files += 1
        shutil.copystat(src, dst, follow_symlinks=False)

    def restore(self) -> None:
        """Put the environment back as it was at ``take()`` (the snapshot is used up). Each step
        checks what is there first, so a run stopped anywhere is finished by running it again."""
        broken = os.path.join(self.holder, "failed")
        if os.path.lexists(self.copy):
            if os.path.lexists(self.prefix):
                if os.path.lexists(broken):
                    remove_tree(broken)
                os.rename(self.prefix, broken)
            os.rename(self.copy, self.prefix)
        self.path = None
        for name in self.exclude:
            carried, back = os.path.join(broken, name), os.path.join(self.prefix, name)
            if os.path.lexists(carried) and not os.path.lexists(back):
                os.rename(carried, back)
        self.discard()

    def discard(self) -> None:
        if os.path.lexists(self.holder):
            remove_tree(self.holder)
            if os.path.lexists(self.holder):  # remove_tree is silent: the journal must stay then
                remove_tree(self.holder)
                if os.path.lexists(self.holder):
                    raise OSError(errno.ENOTEMPTY, f"could not remove {self.holder}", self.holder)
        self.path = None


def reason(exc: OSError) -> str:
    """``[Errno 28] No space left on device (ENOSPC)``: the code a search finds, once."""
    code = errno.errorcode.get(exc.errno or 0)
    text = exc.strerror or str(exc)
    return f"{text} ({code})" if code else text


def remove_tree(path: str) -> None:
    """Remove a directory tree, read-only entries included; silent when already gone."""
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_force_remove)
    else:
        shutil.rmtree(path, onerror=_force_remove)


def _force_remove(func: object, path: str, _exc: object) -> None:
    """rmtree's error hook: make read-only files and dirs writable, then try once more."""
    try:
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        os.chmod(path, stat.S_IRWXU)
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)
        else:
            os.remove(path)
    except OSError:
        pass
