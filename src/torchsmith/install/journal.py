"""The journal of one change to an environment (``guard on``/``off``, ``install``).

A change writes its journal (one rename: never torn) before its first step and removes it after
its last. A kill cannot be caught, so a journal found later means that change was stopped
part-way: the next command that takes the environment's lock reads it and finishes the change or
rolls it back, as a database replays its log. ``guard`` keeps its journal inside the prefix
(``torchsmith-guard-journal``); ``install`` keeps its own beside the prefix, with the snapshot,
because rolling an install back swaps the prefix directory itself.
"""

from __future__ import annotations

import os
from typing import Optional

from torchsmith.install.guard_files import read_bytes, write_atomic

__all__ = ["begin", "end", "read"]


def begin(path: str, text: str) -> None:
    """Record ``text`` as the change under way (also to move it on to its next phase)."""
    write_atomic(path, text.encode("utf-8"))


def read(path: str) -> Optional[str]:
    """The open journal's text; None when no change is under way. (Changes nothing: a running
    change may be writing its next phase.)"""
    data = read_bytes(path)
    return None if data is None else data.decode("utf-8", "replace")


def end(path: str) -> None:
    """The change is complete (or rolled back): its last step. A temporary file a kill left
    before its rename was never the journal, and goes too. The caller holds the lock."""
    for leftover in (f"{path}.torchsmith-tmp", path):
        if os.path.lexists(leftover):
            os.remove(leftover)
