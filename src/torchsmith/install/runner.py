"""Carry out install groups in a target environment, verify, guard, lock; undo on any failure.

The order is: journal -> snapshot (an existing environment) -> switch the old guard off -> each
group, one installer command each -> the verify snippet in the target interpreter -> guard, lock
(and a conda-style export for conda prefixes) -> commit -> drop the snapshot, close the journal
(:mod:`.transaction`). Any failure, Ctrl-C, SIGTERM, SIGHUP or SIGQUIT before the commit puts an
existing environment back exactly as it was, or removes a new one; after a kill -9 the next
command does (:func:`~torchsmith.install.transaction.recover`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import tempfile
import threading
import time
from dataclasses import field
from typing import Any, Callable, Dict, Iterator, List, NoReturn, Optional, Set, Tuple

from torchsmith import __version__
from torchsmith.errors import InstallError
from torchsmith.host import Host
from torchsmith.install import guard as guard_mod
from torchsmith.install.closure import closure, guarded_names, requirement_name
from torchsmith.install.export import LOCK_NAME, write_export
from torchsmith.install.installers import installer_kind
from torchsmith.install.installers.base import Hashes, Source
from torchsmith.install.job import InstallInterrupted, InstallJob, InstallOutcome
from torchsmith.install.lock import locked_packages, read_lock, storable_url
from torchsmith.install.snapshot import reason
from torchsmith.install.step import run_step
from torchsmith.install.steps import Group, StepFiles
from torchsmith.install.target import installed_packages
from torchsmith.install.transaction import Transaction
from torchsmith.install.verify import companion_imports, expected_device, verify
from torchsmith.records import dataclass

__all__ = ["InstallInterrupted", "InstallJob", "InstallOutcome", "expected_device", "run_install"]

Progress = Callable[[str], None]


# A closed terminal or dropped ssh session (SIGHUP), SIGQUIT (Ctrl-\\) and SIGTERM roll back as
# Ctrl-C does; a kill -9 cannot be caught: the journal lets the next command finish the job.
_STOPPING = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")


@contextlib.contextmanager
def _signals_as_interrupt() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    # An ignored signal stays ignored: `nohup torchsmith install` must survive a closed terminal.
    names = [name for name in _STOPPING[1:]
             if hasattr(signal, name) and signal.getsignal(getattr(signal, name)) != signal.SIG_IGN]
    previous = {n: signal.signal(getattr(signal, n), raise_interrupt) for n in names}
    try:
        yield
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler if handler is not None else signal.SIG_DFL)


def run_install(host: Host, job: InstallJob, progress: Optional[Progress] = None) -> InstallOutcome:
    """Install ``job`` or leave the environment as it was; raises :class:`InstallError` on failure."""
    say = progress or (lambda _text: None)
    started = time.monotonic()
    outcome = InstallOutcome(job.target, job.installer.name)
    # A conda prefix may be a base install holding every other environment (envs/) and the
    # package cache (pkgs/): pip never writes there.
    exclude = ("pkgs", "envs") if job.target.kind == "conda" else ()
    transaction = Transaction(job.target.prefix, new=job.target.new, exclude=exclude)
    try:
        with _signals_as_interrupt():
            transaction.begin(_intent(job))
            if not job.target.new:
                say(f"snapshot of {job.target.prefix}")
                transaction.take_snapshot()
                outcome.seconds["snapshot"] = time.monotonic() - started
            _install(host, job, outcome, say, transaction)
            _finish(transaction, outcome)
    except BaseException as exc:
        if transaction.committed:  # complete: only the cleanup was stopped
            _finish(transaction, outcome, stopped=exc)
        else:
            _fail(exc, _undo(transaction))
    outcome.seconds["total"] = time.monotonic() - started
    return outcome


def _intent(job: InstallJob) -> Dict[str, Any]:
    """What the journal says this install is about to do, and to which files."""
    prefix = job.target.prefix
    touches = [job.lock_path or os.path.join(prefix, LOCK_NAME)]
    if job.guard:
        touches += [os.path.join(prefix, guard_mod.GUARD_FILE), os.path.join(prefix, "pip.conf"),
                    os.path.join(prefix, "bin", "activate*"), "site-packages/*.dist-info/RECORD (held)"]
    if job.target.kind == "conda":
        touches.append(os.path.join(prefix, "torchsmith-environment.yml"))
    return {"installer": job.installer.name, "touches": touches,
            "requirements": [line for group in job.groups for line in group.requirements]}


def _finish(transaction: Transaction, outcome: InstallOutcome,
            stopped: Optional[BaseException] = None) -> None:
    """Remove the snapshot and close the journal; a signal now no longer undoes the install."""
    try:
        if stopped is None:
            transaction.finish()
            return
    except KeyboardInterrupt as exc:
        stopped = exc
    with _uninterruptible():
        try:
            transaction.finish()
        except OSError as exc:  # the install stands; the next command removes what is left
            outcome.notice(f"the install is complete, but cleaning up failed: {reason(exc)}")
    if isinstance(stopped, KeyboardInterrupt):
        outcome.notice("stopped while cleaning up after the install had completed: the install "
                       "stands, and the cleanup was finished")
    elif isinstance(stopped, Exception):
        outcome.notice(f"the install is complete, but cleaning up failed: {stopped}")


def _fail(exc: BaseException, undone: str) -> NoReturn:
    if isinstance(exc, KeyboardInterrupt):
        raise InstallInterrupted(f"install interrupted; {undone}",
                                 hint="run the same command again to retry") from None
    if isinstance(exc, InstallError):
        exc.context = (*exc.context, undone)
        raise exc
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        raise InstallError(f"install failed: {reason(exc)}{where}; {undone}", code="install-failed",
                           hint="free disk space" if exc.errno == errno.ENOSPC else None) from None
    raise exc


@contextlib.contextmanager
def _uninterruptible() -> Iterator[None]:
    """A second signal while the environment is being put back would leave it half-restored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = [n for n in _STOPPING if hasattr(signal, n)]
    previous = {n: signal.signal(getattr(signal, n), signal.SIG_IGN) for n in names}
    try:
        yield
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler if handler is not None else signal.SIG_DFL)


def _undo(transaction: Transaction) -> str:
    with _uninterruptible():
        try:
            return transaction.roll_back()
        except OSError as exc:  # the journal stays: the next command tries again
            return (f"restoring {transaction.prefix} failed: {reason(exc)}; the next torchsmith command "
                    "on it finishes the rollback")


@dataclass
class _Installed:
    """What the steps of one install did, as they went."""

    before: Dict[str, str]  # versions before the first step (a new venv may hold pip already)
    current: Dict[str, str]
    info: Dict[str, Dict[str, Any]]  # the latest installed metadata
    sources: Dict[str, Source] = field(default_factory=dict)  # name -> where it came from
    pinned: Set[str] = field(default_factory=set)  # came from a pinned source
    hashes: Hashes = field(default_factory=dict)
    urls: Dict[str, str] = field(default_factory=dict)  # the file each pinned package came from

    def took(self, name: str, group: Group) -> None:
        self.sources.setdefault(name, (group.index_url, group.find_links))
        if group.pinned:
            self.pinned.add(name)


def _install(host: Host, job: InstallJob, outcome: InstallOutcome, say: Progress,
             transaction: Transaction) -> None:
    target = job.target
    guarded_before: Set[str] = set()
    if not target.new:
        old_guard = guard_mod.guard_status(target.prefix)
        guarded_before = set(guard_mod.read_pins(os.path.join(target.prefix, guard_mod.GUARD_FILE)))
        if old_guard.pip_hook or old_guard.held:
            guard_mod.guard_off(target.prefix)  # the old pins would block the new stack
    outcome.lock_path = job.lock_path or os.path.join(target.prefix, LOCK_NAME)
    # What an earlier install here locked stays locked: the lock describes the whole environment.
    locked_before = set() if target.new else _previous_lock_names(outcome.lock_path)
    with tempfile.TemporaryDirectory(prefix="torchsmith-install-") as workdir:
        files = StepFiles(workdir)
        done = _run_groups(host, job, outcome, files, say)
        outcome.changed.update(_changes(done.before, done.current))
        roots = {requirement_name(line) for g in job.groups for line in g.requirements} - {""}
        whole = closure(roots | locked_before, done.info)
        versions = {n: done.current[n] for n in whole if n in done.current}
        kept = _from_previous_lock(outcome.lock_path, versions, done.sources, done.pinned, done.urls)
        _verify(host, job, outcome, say, done,
                read_hashes=lambda: _lock_hashes(host, job, files, versions, done))
        _write_lock(job, outcome, versions, done, kept)
        if job.guard:
            _write_guard(job, outcome, done, guarded_before)
        transaction.commit()


def _run_groups(host: Host, job: InstallJob, outcome: InstallOutcome, files: StepFiles,
                say: Progress) -> _Installed:
    """Each group with one installer command; later groups constrained to the pinned ones."""
    info = installed_packages(host, job.target)
    done = _Installed(before=_versions(info), current=_versions(info), info=info)
    constraints: Optional[str] = None
    for number, group in enumerate(job.groups, 1):
        say(f"[{number}/{len(job.groups)}] {job.installer.name}: {group.label}")
        run_step(host, job, outcome, files, step=(number, group), constraints=constraints, done=done)
        done.info = installed_packages(host, job.target)
        now = _versions(done.info)
        for name, version in now.items():
            if done.current.get(name) != version:
                done.took(name, group)
        for line in group.requirements:
            name = requirement_name(line)
            if name:
                done.took(name, group)
        done.current = now
        if group.pinned or group.find_links:
            # Later groups may not move what came from a pinned source.
            keep = {n: now[n] for n in done.pinned if n in now}
            constraints = files.write(f"step{number}-constraints.txt",
                                      [f"{n}=={v}" for n, v in sorted(keep.items())])
    return done


def _lock_hashes(host: Host, job: InstallJob, files: StepFiles, versions: Dict[str, str],
                 done: _Installed) -> Hashes:
    pins: Dict[Source, List[str]] = {}
    for name, version in versions.items():
        if name in done.hashes:  # checked as it was installed
            continue
        pins.setdefault(done.sources.get(name, (None, None)), []).append(f"{name}=={version}")
    kind = installer_kind(job.installer.name)
    return kind.lock_hashes(host, job.installer, job.target, files, pins)


def _verify(host: Host, job: InstallJob, outcome: InstallOutcome, say: Progress, done: _Installed, *,
            read_hashes: Callable[[], Hashes]) -> None:
    """Verify in the target; the installer reads missing hashes meanwhile (both wait on I/O)."""
    def hashing() -> None:
        hash_start = time.monotonic()
        for name, digests in read_hashes().items():
            done.hashes.setdefault(name, digests)
        outcome.seconds["hashes"] = time.monotonic() - hash_start

    hasher: Optional[threading.Thread] = None
    if installer_kind(job.installer.name).hashes_after_install:
        hasher = threading.Thread(target=hashing, name="torchsmith-hashes", daemon=True)
        hasher.start()
    say(f"verify: torch on {job.expect} in {job.target.python}")
    verify_start = time.monotonic()
    try:
        outcome.verify = verify(host, job.target.python, job.expect, companion_imports(done.current),
                                job.verify_timeout)
    finally:
        if hasher is not None:
            hasher.join()
    outcome.seconds["verify"] = time.monotonic() - verify_start
    if not outcome.verify.get("ok"):
        failed = [c for c in outcome.verify.get("checks", []) if not c.get("ok")]
        first = failed[0] if failed else {"name": "verify", "detail": "no result"}
        raise InstallError(
            f"verification failed: {first['name']}: {first['detail']}",
            code="verify-failed",
            context=[f"{c['name']}: {c['detail']}" for c in failed[1:4]],
            hint="see why with `torchsmith doctor`; the plan and its reasons: `torchsmith plan`",
        )


def _write_lock(job: InstallJob, outcome: InstallOutcome, versions: Dict[str, str], done: _Installed,
                kept: Hashes) -> None:
    lock = job.lock
    for name, digests in kept.items():
        done.hashes.setdefault(name, digests)  # unchanged packages: pip downloaded nothing to hash
    lock.packages = locked_packages(versions, done.sources, done.hashes, done.urls)
    missing = sorted(n for n in versions if n not in done.hashes)
    if missing:
        outcome.warnings.append(f"no hash recorded for {', '.join(missing)}: the lock pins their "
                                "versions but cannot check their files, so `install --lock` "
                                "refuses it")
    lock.write(outcome.lock_path or os.path.join(job.target.prefix, LOCK_NAME))
    if job.target.kind == "conda":
        outcome.export_path = write_export(job.target, lock)


def _write_guard(job: InstallJob, outcome: InstallOutcome, done: _Installed,
                 guarded_before: Set[str]) -> None:
    """The guard of the whole environment: this install's torch stack, and what the guard
    held before (an unrelated package installed later does not release torch)."""
    requested = {requirement_name(line) for g in job.groups if g.pinned for line in g.requirements}
    names = sorted(guarded_names(done.info, done.pinned, requested) | (guarded_before & set(done.current)))
    pins = {n: done.current[n] for n in names if n in done.current}
    outcome.guard_file = guard_mod.write_guard_file(
        job.target.prefix, pins, f"Written by torchsmith {__version__}: the torch stack verified in "
                                 "this environment.")
    guard_mod.guard_on(job.target.prefix)


def _versions(info: Dict[str, Dict[str, Any]]) -> Dict[str, str]:
    return {name: str(value.get("version", "")) for name, value in info.items()}


def _changes(before: Dict[str, str], after: Dict[str, str]) -> Dict[str, Tuple[Optional[str], str]]:
    return {n: (before.get(n), v) for n, v in after.items() if before.get(n) != v}


def _previous_lock_names(path: str) -> Set[str]:
    """The packages the lock already at ``path`` names (none when there is no readable lock)."""
    if not os.path.isfile(path):
        return set()
    try:
        return {package.name for package in read_lock(path).packages}
    except InstallError:
        return set()


def _from_previous_lock(path: str, versions: Dict[str, str],
                       sources: Dict[str, Tuple[Optional[str], Optional[str]]],
                       pinned: Set[str], urls: Dict[str, str]) -> Dict[str, Tuple[str, ...]]:
    """What the lock already at ``path`` knows of packages this install left as they were: their
    source (and pin) when this run has none, and their hashes when the source is the same. A
    re-run that changes nothing keeps a fully hashed lock and the same guard."""
    if not os.path.isfile(path):
        return {}
    try:
        old = read_lock(path)
    except InstallError:
        return {}
    kept: Dict[str, Tuple[str, ...]] = {}
    for package in old.packages:
        if versions.get(package.name) != package.version:
            continue
        if package.name not in sources:
            sources[package.name] = (package.index, package.find_links)
            if package.index:
                pinned.add(package.name)
        index, links = sources[package.name]
        same_source = (storable_url(index), storable_url(links)) == (package.index, package.find_links)
        if package.hashes and same_source:
            kept[package.name] = package.hashes
            if package.url:  # nothing was fetched for it this time
                urls.setdefault(package.name, package.url)
    return kept
