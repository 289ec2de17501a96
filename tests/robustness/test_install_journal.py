"""An install into an existing environment stopped at every file operation.

The install runs in a forked child (the real runner, journal, snapshot, guard, lock, verify
snippet and file system; a scripted installer that really removes torch 2.6.0's files and writes
2.7.1's). At its Nth file operation the child sends itself SIGKILL (nothing more runs: the next
command must recover), SIGHUP (a closed terminal) or SIGQUIT; or that operation fails with
ENOSPC. Afterwards the parent does what the next torchsmith command does first
(:func:`recover`), then checks the environment: exactly as before, or the new stack whole --
torch's files, its metadata, the lock and the guard all name one version -- and no journal,
snapshot or temporary file anywhere.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest
from tests.robustness.harness import FAILURES, TALLY
from tests.support.envtools import tree_digest
from tests.support.faketorch import fake_torch_files
from tests.support.fixtures import isolated_environ
from tests.support.pkgindex import IndexServer

from torchsmith.cli import main
from torchsmith.errors import InstallError
from torchsmith.host import CommandResult, Host
from torchsmith.host.live import LiveHost
from torchsmith.install import guard
from torchsmith.install.exclusive import exclusive
from torchsmith.install.installers import Installer, find_installer
from torchsmith.install.lock import Lock
from torchsmith.install.runner import InstallJob, run_install
from torchsmith.install.snapshot import Snapshot
from torchsmith.install.steps import Group
from torchsmith.install.target import Target, inspect_target, site_packages
from torchsmith.install.transaction import pending, recover

OPERATIONS = ("replace", "rename", "mkdir", "remove", "unlink", "rmdir", "link", "symlink")
OLD, NEW = "2.6.0+cpu", "2.7.1+cpu"


class _Scripted(LiveHost):
    """The live machine, except that ``fake-installer`` puts ``version``'s torch in place the way
    pip does: the old distribution's files go, then the new ones are written."""

    def __init__(self, site: Path, version: str) -> None:
        super().__init__()
        self.site, self.version = site, version

    def run(self, argv: object, timeout: float = 5.0, env: object = None) -> CommandResult:
        args = list(argv)  # type: ignore[call-overload]
        if args and args[0] == "fake-installer":
            for old in self.site.glob("torch-*.dist-info"):
                shutil.rmtree(old)
            if (self.site / "torch").exists():
                shutil.rmtree(self.site / "torch")
            _torch(self.site, self.version)
            return CommandResult(args, returncode=0)
        return super().run(args, timeout, env)  # type: ignore[arg-type]


def _torch(site: Path, version: str) -> None:
    info = site / f"torch-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    files = fake_torch_files(version, None, [])
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in files))


def _install(host: Host, target: Target) -> None:
    group = Group("torch", ("torch",), index_url="http://idx/cpu", pinned=True)
    job = InstallJob(target=target, installer=Installer("pip", ("fake-installer", "install")), groups=[group],
                     expect="cpu", lock=Lock(packages=[], variant="cpu"))
    run_install(host, job)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An environment torchsmith installed torch 2.6.0 into: lock, guard on, torch held."""
    root = tmp_path_factory.mktemp("journal")
    venv = root / "pristine"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    target = inspect_target(LiveHost(), str(venv / "bin" / "python"))
    site = Path(site_packages(LiveHost(), target)[0])
    _install(_Scripted(site, OLD), target)
    assert guard.guard_status(str(venv)).held == ["torch"]
    yield venv


_REPEATED = {("snapshot.py", "_copy_tree"), ("snapshot.py", "discard"), (__file__, "run")}


def _step(frame: Optional[FrameType]) -> str:
    """``file:function`` of the step repeated over many files (the snapshot copied or removed,
    the installer's work) this operation belongs to; "" for every other operation."""
    while frame is not None:
        code = frame.f_code
        for file, function in _REPEATED:
            if code.co_name == function and code.co_filename.endswith(file):
                return f"{os.path.basename(file)}:{function}"
        frame = frame.f_back
    return ""


def _counting(stop: Callable[[], None], at: int) -> List[str]:
    """Patch the file operations (in this process only); ``stop`` runs in place of the ``at``th.
    Returns the trace: the repeated step each operation belongs to, in order."""
    trace: List[str] = []

    def wrap(real: Callable[..., object]) -> Callable[..., object]:
        def operation(*args: object, **kwargs: object) -> object:
            trace.append(_step(sys._getframe(1)))
            if len(trace) == at:
                stop()
            return real(*args, **kwargs)
        return operation

    for name in OPERATIONS:
        setattr(os, name, wrap(getattr(os, name)))
    shutil.copy2 = wrap(shutil.copy2)  # type: ignore[assignment]
    return trace


def _run_child(install: Callable[[], None], how: str, at: int) -> Tuple[int, List[str]]:
    """(how the child ended: the exit status, or -signal; the paths of the operations it ran,
    when it was not killed)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 3
        try:
            os.close(read)
            # SIGHUP (a closed terminal) and SIGQUIT take turns: one handler serves both.
            hup_or_quit = signal.SIGHUP if at % 2 else signal.SIGQUIT
            sig = {"kill": signal.SIGKILL, "hup-or-quit": hup_or_quit}.get(how)

            def stop() -> None:
                if sig is None:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                os.kill(os.getpid(), sig)

            trace = _counting(stop, at)
            try:
                install()
                status = 0
            except InstallError as exc:
                single_line = "\n" not in exc.message and bool(exc.code)
                status = 130 if exc.code == "install-interrupted" else (1 if single_line else 4)
            os.write(write, json.dumps(trace).encode())
        finally:
            os._exit(status)
    os.close(write)
    _pid, status = os.waitpid(pid, 0)
    with os.fdopen(read) as handle:
        trace = handle.read()
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return code, json.loads(trace) if trace else []


def _stop_points(trace: List[str]) -> List[int]:
    """Every operation (1-based), except that a run of one repeated step (copying the snapshot,
    removing it, the installer replacing files) is tried at its first, middle and last."""
    points: List[int] = []
    for number, step in enumerate(trace, 1):
        if not step:
            points.append(number)
        elif number == 1 or trace[number - 2] != step:  # a run starts
            end = number
            while end < len(trace) and trace[end] == step:
                end += 1
            points += sorted({number, (number + end) // 2, end})
    return points


def _torch_version(site: Path) -> Optional[str]:
    text = (site / "torch" / "version.py").read_text() if (site / "torch" / "version.py").exists() else ""
    found = [line.split("=", 1)[1].strip().strip("'\"") for line in text.splitlines()
             if line.startswith("__version__")]
    return found[0] if found else None


def _problems(prefix: Path, before: Dict[str, Tuple[str, int, str]]) -> List[str]:
    """What is wrong with the environment after the recovery (nothing, when consistent)."""
    problems: List[str] = []
    parent = prefix.parent
    leftovers = sorted(name for name in os.listdir(parent)
                       if name.startswith(f".{prefix.name}.") or name.endswith("-tmp"))
    if leftovers:
        problems.append(f"left beside the environment: {leftovers}")
    strays = [str(p) for p in prefix.rglob("*torchsmith-tmp")]
    if strays or pending(str(prefix)):
        problems.append(f"stray files or an open journal: {strays}")
    if tree_digest(prefix) == before:
        return problems
    site = next(prefix.glob("lib/python*/site-packages"))
    infos = sorted(p.name for p in site.glob("torch-*.dist-info"))
    lock = json.loads((prefix / "torchsmith.lock.json").read_text())
    locked = {p["name"]: p["version"] for p in lock["packages"]}
    state = guard.guard_status(str(prefix))
    seen = (infos, _torch_version(site), locked.get("torch"), state.pins.get("torch"), state.on, state.held)
    if seen != ([f"torch-{NEW}.dist-info"], NEW, NEW, NEW, True, ["torch"]):
        problems.append(f"neither the old environment nor the new stack whole: {seen}")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("how", ["kill", "hup-or-quit", "enospc"])
def test_an_install_stopped_at_any_file_operation_leaves_old_or_new_never_mixed(
        how: str, installed: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "env"  # one path throughout: the guard and lock name it
    shutil.copytree(installed, prefix, symlinks=True)
    (prefix / "bin" / "python").unlink()  # the copied venv's interpreter links to the base python
    os.symlink(os.readlink(installed / "bin" / "python"), prefix / "bin" / "python")
    pristine = tmp_path / "pristine"
    shutil.copytree(prefix, pristine, symlinks=True)
    before = tree_digest(prefix)
    target = inspect_target(LiveHost(), str(prefix / "bin" / "python"))
    site = Path(site_packages(LiveHost(), target)[0])
    runs: Dict[str, int] = {"old": 0, "new": 0}
    install = partial(_install, _Scripted(site, NEW), target)
    ended, trace = _run_child(install, how, 0)  # once through, stopped nowhere
    assert ended == 0 and tree_digest(prefix) != before
    points = _stop_points(trace)
    if how != "kill":  # caught and handled in-process: every other point each, all of them between them
        points = points[how == "enospc"::2]
    # A signal before the install catches signals (or after) ends the process its own way.
    expected = {"kill": (-signal.SIGKILL,), "hup-or-quit": (130, -signal.SIGHUP, -signal.SIGQUIT, 0),
                "enospc": (1, 0)}[how]
    for at in points:
        shutil.rmtree(prefix)
        shutil.copytree(pristine, prefix, symlinks=True)
        ended, _trace = _run_child(install, how, at)
        problems = [] if ended in expected else [f"ended with {ended}"]
        said = recover(str(prefix))  # what the next command does first
        problems += _problems(prefix, before)
        runs["old" if tree_digest(prefix) == before else "new"] += 1
        TALLY["clean" if not problems else "data-lost"] += 1
        if problems:
            FAILURES.append(f"install {how} at file operation {at}: {problems}")
        assert not problems, f"{how} at operation {at} ({trace[at - 1]}): {problems}; recovery said {said}"
    assert len(points) > 20 and runs["old"] and runs["new"], runs  # both ends were reached


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Tuple[int, Dict[str, Any]]:
    code = main(list(argv))
    return code, dict(json.loads(capsys.readouterr().out))


@pytest.mark.slow
def test_after_a_kill_doctor_reports_it_while_locked_and_the_next_command_rolls_back(
        installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefix = tmp_path / "env"
    shutil.copytree(installed, prefix, symlinks=True)
    before = tree_digest(prefix)
    target = inspect_target(LiveHost(), str(prefix / "bin" / "python"))
    site = Path(site_packages(LiveHost(), target)[0])
    install = partial(_install, _Scripted(site, NEW), target)
    _ended, trace = _run_child(install, "kill", 0)
    shutil.rmtree(prefix)
    shutil.copytree(installed, prefix, symlinks=True)
    # Killed half-way through the installer's work: torch 2.6.0's files gone, 2.7.1's not all there.
    halfway = [n for n, step in enumerate(trace, 1) if step.endswith(":run")]
    assert _run_child(install, "kill", halfway[len(halfway) // 2])[0] == -signal.SIGKILL
    assert tree_digest(prefix) != before
    python = str(prefix / "bin" / "python")
    with exclusive(str(prefix), what="test"):  # as if the install still ran
        code, doctor = _cli(capsys, "doctor", "--quick", "--json", "--python", python)
    assert code == 4 and doctor["data"]["recovered"] == []
    errors = [f["code"] for f in doctor["data"]["findings"] if f["severity"] == "error"]
    assert "install-interrupted" in errors
    code, status = _cli(capsys, "guard", "status", "--json", "--python", python)
    assert code == 0 and status["data"]["interrupted"] is None, status
    [said] = status["warnings"]
    assert "was stopped part-way: rolled back" in said and "(torch 2.6.0+cpu)" in said and "\n" not in said
    assert tree_digest(prefix) == before and not pending(str(prefix))
    code, doctor = _cli(capsys, "doctor", "--quick", "--json", "--python", python)
    assert "install-interrupted" not in [f["code"] for f in doctor["data"]["findings"]]


def test_ctrl_c_while_a_complete_install_cleans_up_is_a_note_not_an_interruption(
        installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = tmp_path / "env"
    shutil.copytree(installed, prefix, symlinks=True)
    target = inspect_target(LiveHost(), str(prefix / "bin" / "python"))
    site = Path(site_packages(LiveHost(), target)[0])
    real = Snapshot.discard
    calls: List[int] = []

    def ctrl_c_once(snapshot: Snapshot) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        real(snapshot)

    monkeypatch.setattr(Snapshot, "discard", ctrl_c_once)
    group = Group("torch", ("torch",), index_url="http://idx/cpu", pinned=True)
    job = InstallJob(target=target, installer=Installer("pip", ("fake-installer", "install")), groups=[group],
                     expect="cpu", lock=Lock(packages=[], variant="cpu"))
    outcome = run_install(_Scripted(site, NEW), job)  # no InstallInterrupted: the install stands
    assert outcome.notices == ["stopped while cleaning up after the install had completed: the install "
                               "stands, and the cleanup was finished"]
    assert len(calls) == 2 and _torch_version(site) == NEW and not pending(str(prefix))
    assert sorted(os.listdir(tmp_path)) == ["env"]


def _real_job(host: Host, target: Target, installer: str, index: str, torch: str) -> InstallJob:
    group = Group(f"torch from {index}", (f"torch=={torch}",), index_url=index, pinned=True)
    return InstallJob(target=target, installer=find_installer(host, installer, target), groups=[group],
                      expect="cpu", lock=Lock(packages=[], variant="cpu"))


def _real_install(env: Dict[str, str], target: Target, installer: str, index: str) -> None:
    host = LiveHost(env)  # (a host's reader thread does not survive a fork)
    run_install(host, _real_job(host, target, installer, index, NEW))


@pytest.mark.slow
@pytest.mark.parametrize(("installer", "every"), [("uv", 1), ("pip", 2)])
def test_a_real_install_killed_at_every_file_operation_is_recovered(
        installer: str, every: int, package_index: IndexServer, uv_bin: str, tmp_path: Path) -> None:
    """The same kill -9 sweep with real uv (every stop point) and real pip (every other: pip takes
    seconds a run) installing torch 2.7.1 from the local index over a torchsmith-installed 2.6.0."""
    env = isolated_environ(tmp_path / "cache", dict(os.environ))
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")
    host = LiveHost(env)
    prefix = tmp_path / "env"
    subprocess.run([uv_bin, "venv", "-q", str(prefix)], env=env, check=True)
    target = inspect_target(host, str(prefix / "bin" / "python"))
    index = package_index.index_url("pytorch/cpu")
    run_install(host, _real_job(host, target, installer, index, OLD))
    pristine = tmp_path / "pristine"
    shutil.copytree(prefix, pristine, symlinks=True)
    before = tree_digest(prefix)
    install = partial(_real_install, env, target, installer, index)  # its own host in the child
    ended, trace = _run_child(install, "kill", 0)
    assert ended == 0 and tree_digest(prefix) != before
    points = _stop_points(trace)[::every]
    runs = {"old": 0, "new": 0}
    for at in points:
        shutil.rmtree(prefix)
        shutil.copytree(pristine, prefix, symlinks=True)
        ended, _trace = _run_child(install, "kill", at)
        problems = [] if ended == -signal.SIGKILL else [f"ended with {ended}"]
        said = recover(str(prefix))
        problems += _problems(prefix, before)
        runs["old" if tree_digest(prefix) == before else "new"] += 1
        TALLY["clean" if not problems else "data-lost"] += 1
        if problems:
            FAILURES.append(f"{installer} install killed at file operation {at}: {problems}")
        assert not problems, f"{installer}: kill at operation {at}: {problems}; recovery said {said}"
    assert len(points) > 8 and runs["old"] and runs["new"], runs
