"""An install as a transaction: journaled, so that a kill at any point is finished or rolled
back by the next torchsmith command that acts on the environment.

Phases, each written to the journal (``.<name>.torchsmith-install-journal`` beside the prefix)
before its first step:

- ``snapshot``: the snapshot (``.<name>.torchsmith-snapshot`` beside the prefix) is being taken;
  nothing in the environment has changed yet. Recovery removes the partial snapshot.
- ``changing``: the snapshot is complete; the old guard is switched off, the installer replaces
  files, verify runs, the lock, guard and export are written. Recovery restores the snapshot.
- ``committed``: all of that is done. Recovery only removes the snapshot.
- ``new``: a new environment is being filled. Recovery removes it.

The journal also names what the install touches and the torch-family versions before it, so a
recovery can say what is back. Both ends remove the snapshot: none is ever left behind.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence

from torchsmith.errors import InstallError
from torchsmith.install import guard as guard_mod
from torchsmith.install import journal
from torchsmith.install.exclusive import TargetBusy, exclusive
from torchsmith.install.guard_hold import dist_versions
from torchsmith.install.snapshot import Snapshot, reason, remove_tree

__all__ = ["Transaction", "journal_path", "journaled_prefix", "pending", "recover", "recover_if_stopped"]

_TORCH_FAMILY = ("torch", "torchvision", "torchaudio", "torchtriton", "triton", "pytorch-triton")


def _beside(prefix: str, suffix: str) -> str:
    prefix = os.path.abspath(prefix).rstrip(os.sep) or os.sep
    return os.path.join(os.path.dirname(prefix), f".{os.path.basename(prefix)}.{suffix}")


def journal_path(prefix: str) -> str:
    return _beside(prefix, "torchsmith-install-journal")


def snapshot_holder(prefix: str) -> str:
    return _beside(prefix, "torchsmith-snapshot")


def torch_family(prefix: str) -> Dict[str, str]:
    """The torch stack's versions in ``prefix``, read from its dist-info names (no interpreter)."""
    return {name: version for name, version in dist_versions(prefix).items()
            if name in _TORCH_FAMILY or name.startswith("nvidia-")}


class Transaction:
    """One install into ``prefix``: ``begin``, ``take_snapshot``, then ``commit`` and ``finish``,
    or ``roll_back``."""

    def __init__(self, prefix: str, *, new: bool, exclude: Sequence[str] = ()) -> None:
        self.prefix = os.path.abspath(prefix)
        self.new = new
        self.journal = journal_path(prefix)
        self.snapshot = Snapshot(prefix, snapshot_holder(prefix), exclude)
        self.record: Dict[str, Any] = {}
        self.phase: Optional[str] = None

    def begin(self, intent: Dict[str, Any]) -> None:
        self.record = {"action": "install", "prefix": self.prefix, "pid": os.getpid(),
                       "snapshot": self.snapshot.holder, "exclude": list(self.snapshot.exclude),
                       "before": {} if self.new else torch_family(self.prefix), **intent}
        self._enter("new" if self.new else "snapshot")

    def _enter(self, phase: str) -> None:
        self.record["phase"] = phase
        journal.begin(self.journal, json.dumps(self.record, indent=1, sort_keys=True) + "\n")
        self.phase = phase

    def take_snapshot(self) -> None:
        self.snapshot.take()
        self._enter("changing")

    def commit(self) -> None:
        """The environment is complete: from here on, nothing rolls it back."""
        self._enter("committed")

    @property
    def committed(self) -> bool:
        return self.phase == "committed"

    def finish(self) -> None:
        self.snapshot.discard()
        journal.end(self.journal)
        self.phase = None

    def roll_back(self) -> str:
        """Undo; a sentence saying what happened."""
        if self.phase is None:
            return "nothing was changed"
        if self.phase == "snapshot":
            self.finish()
            return "nothing was changed"
        if self.phase == "new":
            remove_tree(self.prefix)
            self.finish()
            return f"the new environment {self.prefix} was removed"
        self.snapshot.restore()
        self.finish()
        return f"{self.prefix} was restored exactly as it was"


def pending(prefix: str) -> bool:
    """Whether a journal beside or inside ``prefix`` says a change was stopped part-way (or runs)."""
    journals = (journal_path(prefix), f"{journal_path(prefix)}.torchsmith-tmp",
                os.path.join(prefix, guard_mod.JOURNAL_FILE))
    return any(os.path.lexists(path) for path in journals)


def journaled_prefix(location: str, *, guard: bool = False) -> Optional[str]:
    """The environment at ``location`` (a prefix, or an interpreter in one) whose install journal
    (with ``guard``: or guard journal) is open, if any. Found from the path alone: the interpreter
    may be gone until a rollback is finished."""
    path = os.path.abspath(location)
    for _ in range(4):  # <prefix>, <prefix>/bin/python, <prefix>/Scripts/python.exe
        if (guard and pending(path)) or os.path.lexists(journal_path(path)):
            return path
        path = os.path.dirname(path)
    return None


def recover_if_stopped(location: str, what: str) -> List[str]:
    """For a command that acts on or reports the environment at ``location``: finish or roll back
    a change a kill stopped there, unless a running torchsmith holds it (then it is that one's)."""
    prefix = journaled_prefix(location, guard=True)
    if prefix is None:
        return []
    try:
        with exclusive(prefix, what=what):
            return recover(prefix)
    except TargetBusy:
        return []
    except (OSError, InstallError) as exc:  # reported, and tried again by the next command
        text = reason(exc) if isinstance(exc, OSError) else exc.message
        return [f"a stopped change to {prefix} could not be finished: {text}"]


def recover(prefix: str) -> List[str]:
    """Finish or roll back what a kill stopped in ``prefix`` (an install, then a guard switch):
    one line each. The caller holds the environment's lock."""
    said: List[str] = []
    text = journal.read(journal_path(prefix))
    if text is not None:
        said.append(_recover_install(prefix, text))
    journal.end(journal_path(prefix))  # also a journal a kill stopped before its first rename
    if os.path.isdir(prefix):
        switched = guard_mod.finish_interrupted(prefix)
        if switched is not None:
            said.append(f"`guard {switched}` in {prefix} was stopped part-way: finished it")
    return said


def _recover_install(prefix: str, text: str) -> str:
    try:
        record = json.loads(text)
        phase = str(record["phase"])
    except (ValueError, KeyError, TypeError):
        raise InstallError(f"the install journal {journal_path(prefix)} is unreadable",
                           code="install-journal",
                           hint="compare the environment with its lock (`torchsmith doctor`), then remove "
                                "the journal and any .torchsmith-snapshot beside it") from None
    exclude = [str(entry) for entry in record.get("exclude") or ()]
    transaction = Transaction(prefix, new=phase == "new", exclude=exclude)
    transaction.phase = phase
    before = _stack(record.get("before") or {})
    stopped = f"an install into {prefix} (pid {record.get('pid', '?')}) was stopped"
    if phase == "committed":
        transaction.finish()
        now = torch_family(prefix).get("torch", "?")
        return f"{stopped} after it had completed: finished it (torch {now})"
    if phase == "snapshot":
        transaction.finish()
        return f"{stopped} before it changed anything: removed its partial snapshot"
    undone = transaction.roll_back()
    if phase == "new":
        return f"{stopped} while it made the environment: {undone}"
    return f"{stopped} part-way: rolled back; {undone}" + (f" ({before})" if before else "")


def _stack(versions: Dict[str, Any]) -> str:
    return ", ".join(f"{name} {versions[name]}" for name in ("torch", "torchvision", "torchaudio")
                     if name in versions)
