"""Carry out install groups in a target environment, verify, guard, lock; undo on any failure.

The order is: snapshot (an existing environment) -> switch the old guard off -> each group, one
installer command each -> the verify snippet in the target interpreter -> guard, lock (and a
conda-style export for conda prefixes) -> drop the snapshot. Any failure, Ctrl-C or SIGTERM on
the way puts an existing environment back exactly as it was, or removes a new one.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from packaging.utils import canonicalize_name

from torchsmith import __version__
from torchsmith.errors import InstallError
from torchsmith.host import CommandResult, Host
from torchsmith.install import guard as guard_mod
from torchsmith.install.lock import (
    Lock,
    hashes_from_pip_report,
    locked_packages,
    parse_compiled_hashes,
    read_lock,
    storable_url,
)
from torchsmith.install.snapshot import Snapshot, remove_tree
from torchsmith.install.steps import Group, Installer, StepFiles, command, find_uv
from torchsmith.install.target import Target, installed_packages
from torchsmith.redact import redact

__all__ = ["InstallInterrupted", "InstallJob", "InstallOutcome", "expected_device", "run_install"]

VERIFY_SNIPPET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "snippets", "verify.py")
LOCK_NAME = "torchsmith.lock.json"
EXPORT_NAME = "torchsmith-environment.yml"
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
_COMPANIONS_TO_IMPORT = ("torchvision", "torchaudio")

Progress = Callable[[str], None]


class InstallInterrupted(InstallError):
    code = "install-interrupted"


@dataclass
class InstallJob:
    """Everything one install needs, decided before anything changes."""

    target: Target
    installer: Installer
    groups: List[Group]
    expect: str = "cpu"  # the device verify must find: cpu | cuda | rocm | mps
    lock: Lock = field(default_factory=lambda: Lock(packages=[]))  # metadata for the written lock
    lock_path: Optional[str] = None  # default: <prefix>/torchsmith.lock.json
    guard: bool = True
    timeout: float = 3600.0
    verify_timeout: float = 300.0


@dataclass
class InstallOutcome:
    target: Target
    installer: str
    steps: List[Dict[str, Any]] = field(default_factory=list)
    changed: Dict[str, Tuple[Optional[str], str]] = field(default_factory=dict)  # name -> (old, new)
    verify: Dict[str, Any] = field(default_factory=dict)
    lock_path: Optional[str] = None
    guard_file: Optional[str] = None
    export_path: Optional[str] = None
    seconds: Dict[str, float] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {
            "python": self.target.python,
            "prefix": self.target.prefix,
            "kind": self.target.kind,
            "new_environment": self.target.new,
            "installer": self.installer,
            "steps": self.steps,
            "changed": {k: {"from": old, "to": new} for k, (old, new) in sorted(self.changed.items())},
            "verify": self.verify,
            "lock": self.lock_path,
            "guard": self.guard_file,
            "export": self.export_path,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


def expected_device(accelerator: str) -> str:
    return {"cuda": "cuda", "jetson": "cuda", "rocm": "rocm", "mps": "mps"}.get(accelerator, "cpu")


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """A SIGTERM (a killed terminal, a job scheduler) rolls back like Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        yield
        return

    def raise_interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def run_install(host: Host, job: InstallJob, progress: Optional[Progress] = None) -> InstallOutcome:
    """Install ``job`` or leave the environment as it was; raises :class:`InstallError` on failure."""
    say = progress or (lambda _text: None)
    started = time.monotonic()
    outcome = InstallOutcome(job.target, job.installer.name)
    snapshot: Optional[Snapshot] = None
    try:
        with _sigterm_as_interrupt():
            if not job.target.new:
                say(f"snapshot of {job.target.prefix}")
                # A conda prefix may be a base install holding every other environment (envs/)
                # and the package cache (pkgs/): pip never writes there.
                exclude = ("pkgs", "envs") if job.target.kind == "conda" else ()
                taking = Snapshot(job.target.prefix, exclude)
                taking.take()
                snapshot = taking  # set only once complete: a partial one is never restored
                outcome.seconds["snapshot"] = time.monotonic() - started
            _install(host, job, outcome, say)
    except BaseException as exc:
        undone = _undo(job.target, snapshot)
        if isinstance(exc, KeyboardInterrupt):
            raise InstallInterrupted(f"install interrupted; {undone}",
                                     hint="run the same command again to retry") from None
        if isinstance(exc, InstallError):
            exc.context = (*exc.context, undone)
            raise
        if isinstance(exc, OSError):
            raise InstallError(f"install failed: {exc}; {undone}", code="install-failed",
                               hint="free disk space" if getattr(exc, "errno", 0) == 28 else None) from exc
        raise
    if snapshot is not None:
        snapshot.discard()
    outcome.seconds["total"] = time.monotonic() - started
    return outcome


@contextlib.contextmanager
def _uninterruptible() -> Iterator[None]:
    """A second Ctrl-C while the environment is being put back would leave it half-restored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = [n for n in ("SIGINT", "SIGTERM") if hasattr(signal, n)]
    previous = {n: signal.signal(getattr(signal, n), signal.SIG_IGN) for n in names}
    try:
        yield
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler if handler is not None else signal.SIG_DFL)


def _undo(target: Target, snapshot: Optional[Snapshot]) -> str:
    with _uninterruptible():
        return _restore(target, snapshot)


def _restore(target: Target, snapshot: Optional[Snapshot]) -> str:
    try:
        if snapshot is not None:
            snapshot.restore()
            return f"{target.prefix} was restored exactly as it was"
        if target.new:
            remove_tree(target.prefix)
            return f"the new environment {target.prefix} was removed"
    except OSError as exc:
        kept = f" (the snapshot is kept at {snapshot.path})" if snapshot and snapshot.path else ""
        return f"restoring {target.prefix} failed: {exc}{kept}"
    return "nothing was changed"


def _install(host: Host, job: InstallJob, outcome: InstallOutcome, say: Progress) -> None:
    target = job.target
    info = installed_packages(host, target)
    before = _versions(info)  # a new venv may hold pip already
    old_guard = guard_mod.guard_status(target.prefix) if not target.new else None
    if old_guard is not None and (old_guard.pip_hook or old_guard.held):
        guard_mod.guard_off(target.prefix)  # the old pins would block the new stack
    sources: Dict[str, Tuple[Optional[str], Optional[str]]] = {}
    hashes: Dict[str, Tuple[str, ...]] = {}
    pinned: Set[str] = set()
    current = dict(before)
    with tempfile.TemporaryDirectory(prefix="torchsmith-install-") as workdir:
        files = StepFiles(workdir)
        constraints: Optional[str] = None
        for number, group in enumerate(job.groups, 1):
            say(f"[{number}/{len(job.groups)}] {job.installer.name}: {group.label}")
            argv, env, report = command(job.installer, group, files, number, constraints)
            env.update(_drop_guard_env(host))
            step_start = time.monotonic()
            result = host.run(argv, timeout=job.timeout, env=env)
            seconds = time.monotonic() - step_start
            outcome.steps.append({"label": group.label, "argv": argv, "seconds": round(seconds, 3)})
            if not result.ok:
                raise _installer_error(job.installer.name, group, result, job.timeout)
            if report and os.path.exists(report):
                with open(report, encoding="utf-8") as handle:
                    hashes.update(hashes_from_pip_report(handle.read()))
            info = installed_packages(host, target)
            now = _versions(info)
            for name, version in now.items():
                if current.get(name) != version:
                    sources.setdefault(name, (group.index_url, group.find_links))
                    if group.pinned:
                        pinned.add(name)
            for line in group.requirements:
                name = _req_name(line)
                if name:
                    sources.setdefault(name, (group.index_url, group.find_links))
                    if group.pinned:
                        pinned.add(name)
            current = now
            if group.pinned or group.find_links:
                # Later groups may not move what came from a pinned source.
                keep = {n: current[n] for n in pinned if n in current}
                constraints = files.write(f"step{number}-constraints.txt",
                                          [f"{n}=={v}" for n, v in sorted(keep.items())])
        for name, (old, new) in _changes(before, current).items():
            outcome.changed[name] = (old, new)

        closure = _closure({_req_name(line) for g in job.groups for line in g.requirements} - {""}, info)
        versions = {n: current[n] for n in closure if n in current}
        outcome.lock_path = job.lock_path or os.path.join(target.prefix, LOCK_NAME)
        kept = _from_previous_lock(outcome.lock_path, versions, sources, pinned)
        # uv reports no hashes: read them from the indexes while verify runs (both wait on I/O).
        hasher: Optional[threading.Thread] = None
        if job.installer.name == "uv":
            def read_hashes() -> None:
                hash_start = time.monotonic()
                hashes.update(_uv_hashes(host, job, files, versions, sources))
                outcome.seconds["hashes"] = time.monotonic() - hash_start

            hasher = threading.Thread(target=read_hashes, name="torchsmith-hashes", daemon=True)
            hasher.start()
        say(f"verify: torch on {job.expect} in {target.python}")
        verify_start = time.monotonic()
        try:
            outcome.verify = verify(host, target.python, job.expect, _imports(current), job.verify_timeout)
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

        lock = job.lock
        for name, digests in kept.items():
            hashes.setdefault(name, digests)  # unchanged packages: pip downloaded nothing to hash
        lock.packages = locked_packages(versions, sources, hashes)
        missing = sorted(n for n in versions if n not in hashes)
        if missing:
            outcome.warnings.append(f"no hash recorded for {', '.join(missing)}: the lock pins their "
                                    "versions but cannot check their files, so `install --lock` "
                                    "refuses it")
        lock.write(outcome.lock_path)
        if target.kind == "conda":
            outcome.export_path = write_export(target, lock)
        if job.guard:
            requested = {_req_name(line) for g in job.groups if g.pinned for line in g.requirements}
            pins = {n: current[n] for n in sorted(guarded_names(info, pinned, requested)) if n in current}
            outcome.guard_file = guard_mod.write_guard_file(
                target.prefix, pins, f"Written by torchsmith {__version__}: the torch stack verified in "
                                     "this environment.")
            guard_mod.guard_on(target.prefix)


def _versions(info: Dict[str, Dict[str, Any]]) -> Dict[str, str]:
    return {name: str(value.get("version", "")) for name, value in info.items()}


def _changes(before: Dict[str, str], after: Dict[str, str]) -> Dict[str, Tuple[Optional[str], str]]:
    return {n: (before.get(n), v) for n, v in after.items() if before.get(n) != v}


def _req_name(line: str) -> str:
    head = line.split(";", 1)[0].split("@", 1)[0].split("--hash", 1)[0]
    for sep in ("===", "==", ">=", "<=", "~=", "!=", "<", ">", "["):
        head = head.split(sep, 1)[0]
    return canonicalize_name(head.strip()) if head.strip() else ""


def _drop_guard_env(host: Host) -> Dict[str, Optional[str]]:
    """An activated guarded environment exports UV_CONSTRAINT; this install replaces that guard."""
    environ = host.environ()
    return {name: None for name in ("UV_CONSTRAINT", "PIP_CONSTRAINT")
            if guard_mod.GUARD_FILE in environ.get(name, "")}


def _installer_error(name: str, group: Group, result: CommandResult, timeout: float) -> InstallError:
    tail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-6:]
    if result.timed_out:
        message = f"{name} did not finish installing {group.label} in {timeout:.0f} s and was stopped"
    elif result.returncode is not None and result.returncode < 0:
        message = f"{name} was killed (signal {-result.returncode}) while installing {group.label}"
    elif result.not_found:
        message = f"{name} could not be started: {result.argv[0]}"
    else:
        first = next((line for line in reversed(tail) if "error" in line.lower()), tail[-1] if tail else "")
        message = f"{name} failed installing {group.label}: {first.strip()[:300]}"
    text = result.stderr + result.stdout
    hint = None
    if result.timed_out:
        hint = "raise --timeout, or check the connection to the index"
    elif result.returncode is not None and result.returncode < 0:
        hint = "stopped from outside (often the out-of-memory killer: see `dmesg`); run it again"
    elif "No space left on device" in text:
        hint = "free disk space on the environment's filesystem and retry"
    elif "ResolutionImpossible" in text or "No solution found" in text or "conflict" in text.lower():
        hint = "a requirement conflicts with the planned torch; see `torchsmith plan` for a stack that fits"
    return InstallError(message, code="installer-failed", context=[line[:300] for line in tail], hint=hint)


def _imports(installed: Dict[str, str]) -> Tuple[str, ...]:
    return tuple(name for name in _COMPANIONS_TO_IMPORT if name in installed)


def verify(host: Host, python: str, expect: str, imports: Sequence[str], timeout: float) -> Dict[str, Any]:
    """Run the verify snippet in ``python``; its JSON report (``ok`` false when it could not run)."""
    argv = [python, VERIFY_SNIPPET, "--expect", expect]
    for name in imports:
        argv += ["--import", name]
    result = host.run(argv, timeout=timeout)
    if not result.ok:
        detail = result.problem()
        return {"ok": False, "checks": [{"name": "verify", "ok": False, "detail": detail}]}
    try:
        report = result.last_json()
    except ValueError:
        return {"ok": False, "checks": [{"name": "verify", "ok": False, "detail": "printed no JSON"}]}
    return report if isinstance(report, dict) else {"ok": False, "checks": []}


_DEP = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?([^;]*?)\)?\s*(?:;(.*))?$")


def _dependency(text: str) -> Optional[Tuple[str, str, str]]:
    """(canonical name, specifier text, marker text) of a Requires-Dist line, without importing
    packaging's marker machinery (start-up time is torchsmith's overhead)."""
    match = _DEP.match(text)
    if not match:
        return None
    return canonicalize_name(match.group(1)), (match.group(3) or "").strip(), (match.group(4) or "").strip()


def _closure(roots: Set[str], info: Dict[str, Dict[str, Any]]) -> Set[str]:
    """The installed dependency closure of ``roots``. Markers other than extras are not
    evaluated: a dependency for another platform is simply not installed, so not in ``info``."""
    seen: Set[str] = set()
    todo = [r for r in roots if r in info]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in info[name].get("requires") or ():
            dep = _dependency(str(text))
            if dep is None or "extra" in dep[2]:
                continue
            if dep[0] in info and dep[0] not in seen:
                todo.append(dep[0])
    return seen


def _from_previous_lock(path: str, versions: Dict[str, str],
                       sources: Dict[str, Tuple[Optional[str], Optional[str]]],
                       pinned: Set[str]) -> Dict[str, Tuple[str, ...]]:
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
    return kept


_CUDA_BOUND = re.compile(r"^(nvidia-.+|triton|pytorch-triton(-.+)?|torchtriton)$")


def guarded_names(info: Dict[str, Dict[str, Any]], pinned: Set[str], requested: Set[str]) -> Set[str]:
    """What the guard pins: the packages asked for from the PyTorch index (the torch family),
    the CUDA-bound packages that came with them (nvidia-*, triton), and the packages tied to
    torch. Generic dependencies (filelock, sympy, jinja2 ...) stay free to upgrade."""
    held = {n for n in pinned if n in requested or n in TORCH_FAMILY or _CUDA_BOUND.match(n)}
    return held | _tied(info, held)


def _tied(info: Dict[str, Dict[str, Any]], pinned: Set[str]) -> Set[str]:
    """Installed packages that require a torch-family package exactly or below a bound (mmcv,
    xformers): they break when torch moves, so the guard holds them too."""
    tied: Set[str] = set()
    for name, value in info.items():
        for text in value.get("requires") or ():
            dep = _dependency(str(text))
            if dep is None or dep[2] or dep[0] not in TORCH_FAMILY:
                continue
            if re.search(r"(===?|<=?|~=)", dep[1]):
                tied.add(name)
    return tied - pinned


def _uv_hashes(host: Host, job: InstallJob, files: StepFiles, versions: Dict[str, str],
               sources: Dict[str, Tuple[Optional[str], Optional[str]]]) -> Dict[str, Tuple[str, ...]]:
    """Hashes of the installed versions, read from each package's own source by uv's resolver."""
    uv = job.installer.base[0] if job.installer.name == "uv" else find_uv(host)
    if not uv:
        return {}
    grouped: Dict[Tuple[Optional[str], Optional[str]], List[str]] = {}
    for name, version in versions.items():
        grouped.setdefault(sources.get(name, (None, None)), []).append(f"{name}=={version}")
    out: Dict[str, Tuple[str, ...]] = {}
    for number, ((index, links), pins) in enumerate(sorted(grouped.items(), key=str), 1):
        req = files.write(f"hash{number}.in", sorted(pins))
        argv = [uv, "pip", "compile", req, "--generate-hashes", "--no-deps", "--no-header",
                "--no-annotate", "--quiet", "--python", job.target.python]
        env: Dict[str, Optional[str]] = {}
        if index:
            argv += ["--index-url", index, "--no-config", "--index-strategy", "first-index"]
            env = {"UV_INDEX": None, "UV_EXTRA_INDEX_URL": None, "UV_FIND_LINKS": None,
                   "UV_DEFAULT_INDEX": None, "UV_CONSTRAINT": None}
        if links:
            argv += ["--find-links", links]
        result = host.run(argv, timeout=300.0, env=env)
        if result.ok:
            out.update(parse_compiled_hashes(result.stdout))
    return out


def write_export(target: Target, lock: Lock) -> str:
    """``torchsmith-environment.yml``: a ``conda env export``-style file of the locked stack.

    A local version (``+cu126``) exists only on the PyTorch index, so the pip section names
    that index (without credentials: pip takes them from your netrc or keyring), and every
    package carries its hashes so no other index can slip in a same-named file.
    """
    path = os.path.join(target.prefix, EXPORT_NAME)
    packages = sorted(lock.packages, key=lambda p: p.name)
    indexes = sorted({storable_url(p.index) or "" for p in packages if p.index})
    links = sorted({storable_url(p.find_links) or "" for p in packages if p.find_links})
    own = any(p.index is None and p.find_links is None for p in packages)
    # All from PyTorch indexes: that index alone. Some from your own index: it stays first.
    options = [f"--index-url {indexes[0]}"] if len(indexes) == 1 and not own else []
    options += [f"--extra-index-url {url}" for url in indexes if f"--index-url {url}" not in options]
    options += [f"--find-links {url}" for url in links]
    hashed = all(p.hashes for p in packages)
    lines = [
        f"# Written by torchsmith {__version__}. The same pins, each from its own index: {LOCK_NAME}",
        "# (`torchsmith install --lock`). Index credentials are not written here: pip reads them",
        "# from your netrc or keyring.",
        f"name: {os.path.basename(target.prefix)}",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        f"  - python={'.'.join(target.python_version.split('.')[:2])}",
        "  - pip",
        "  - pip:",
    ]
    lines.extend(f"    - {option}" for option in options)
    lines.extend(f"    - {p.requirement_line() if hashed else f'{p.name}=={p.version}'}" for p in packages)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(redact("\n".join(lines) + "\n"))
    return path
