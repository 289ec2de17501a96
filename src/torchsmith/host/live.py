"""The live Host: the one module that runs commands and reads the real machine."""

from __future__ import annotations

import json
import os
import stat
import sys
import time

from torchsmith import TYPE_CHECKING
from torchsmith.errors import FetchError
from torchsmith.host import FETCH_LIMIT, OUTPUT_LIMIT, READ_LIMIT, CommandResult, PlatformInfo
from torchsmith.host.files import NotAFileError, read_bounded, read_whole

if TYPE_CHECKING:  # subprocess, signal, platform, threading: imported where used, off a start
    import queue  # that runs nothing and reads nothing
    import subprocess
    from typing import IO, Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

    from torchsmith.host.guard import ReadGuard

__all__ = ["LiveHost", "NotAFileError", "process_environ", "read_bounded", "read_whole"]

# A file on a hung network mount blocks in the kernel, where no timeout reaches: such a read is
# left to a daemon thread and the path counts as unreadable (host/guard.py).
READ_TIMEOUT = 5.0

_CHUNK = 64 * 1024


def terminal_columns() -> int:
    """The width human output wraps at: TORCHSMITH_COLUMNS, else COLUMNS, else the terminal's,
    else 80 (piped)."""
    chosen = os.environ.get("TORCHSMITH_COLUMNS", "")
    if chosen.isdigit() and int(chosen) > 0:
        return max(40, int(chosen))
    import shutil  # (here: shutil loads bz2 and lzma, which a command that asks nothing never needs)
    try:
        return max(40, shutil.get_terminal_size((80, 24)).columns)
    except (OSError, ValueError):
        return 80


def process_environ() -> Dict[str, str]:
    """A copy of torchsmith's own environment: the one place that reads it (the CLI's entry)."""
    return dict(os.environ)


# A command given at most this long is a question (a probe, an inspection), not work.
QUESTION_SECONDS = 60.0


class LiveHost:
    def __init__(self, environ: Optional[Mapping[str, str]] = None,
                 read_timeout: float = READ_TIMEOUT) -> None:
        self._environ = process_environ() if environ is None else dict(environ)
        self._read_timeout = read_timeout
        self._guard_made: Optional[ReadGuard] = None
        self._hung: Set[str] = set()

    @property
    def _guard(self) -> ReadGuard:  # made on the first read
        if self._guard_made is None:
            from torchsmith.host.guard import ReadGuard
            self._guard_made = ReadGuard(self._read_timeout)
        return self._guard_made

    def read_text(self, path: str, limit: int = READ_LIMIT) -> Optional[str]:
        data = self._guard.call(path, lambda: read_bounded(path, min(limit, READ_LIMIT))[0])
        return None if data is None else data.decode("utf-8", errors="replace")

    def open_binary(self, path: str) -> Optional[IO[bytes]]:
        def regular() -> IO[bytes]:
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise NotAFileError(f"{path} is not a regular file")
            return open(path, "rb")  # the caller closes it

        return self._guard.call(path, regular)

    def list_dir(self, path: str) -> Optional[List[str]]:
        return self._guard.call(path, lambda: sorted(os.listdir(path)))

    def real_path(self, path: str) -> str:
        try:
            return os.path.realpath(path)
        except (OSError, ValueError):
            return path

    def which(self, name: str) -> Optional[str]:
        import shutil
        return shutil.which(name, path=self._environ.get("PATH"))

    def run(self, argv: Sequence[str], timeout: float = 5.0,
            env: Optional[Mapping[str, Optional[str]]] = None, stdin: Optional[str] = None
            ) -> CommandResult:
        args = list(argv)
        if args and args[0] in self._hung and timeout <= QUESTION_SECONDS:
            # An interpreter (or tool) that hung on one question will not answer the next either:
            # asking again would only multiply the wait. Long work (an install, a rollback) still runs.
            return CommandResult(args, timed_out=True, skipped="it did not answer an earlier call in time")
        child_env = dict(self._environ)
        for name, value in (env or {}).items():
            if value is None:
                child_env.pop(name, None)
            else:
                child_env[name] = value
        import subprocess
        # An installer dies with a killed torchsmith, writing no more: Linux's PR_SET_PDEATHSIG (1).
        linux = sys.platform == "linux" and timeout > QUESTION_SECONDS
        prctl = __import__("ctypes").CDLL(None).prctl if linux else None  # looked up before the fork
        try:
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env,
                # Own process group, so a hung nvidia-smi and its children can be killed whole.
                start_new_session=sys.platform != "win32",
                preexec_fn=(lambda: prctl(1, 9)) if prctl else None,  # noqa: PLW1509
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError):
            return CommandResult(args, not_found=True)
        except OSError as exc:
            return CommandResult(args, stderr=str(exc))
        if stdin is not None:
            _feed(proc, stdin)
        result = _collect(proc, args, timeout)
        if result.timed_out and args and timeout <= QUESTION_SECONDS:
            self._hung.add(args[0])
        return result

    def environ(self) -> Mapping[str, str]:
        return self._environ

    def spawn(self, argv: Sequence[str]) -> Optional[_Spawned]:
        import subprocess
        try:
            return _Spawned(subprocess.Popen(list(argv), env=dict(self._environ)))
        except OSError:  # not found, not executable
            return None

    def stream(self, argv: Sequence[str]) -> _LineStream:
        return _LineStream(list(argv), dict(self._environ))

    def pid_alive(self, pid: int) -> bool:
        if pid <= 0:
            return False
        try:
            os.kill(pid, 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            return False
        except (PermissionError, OSError):
            return True  # another user's: it exists
        # A zombie (exited, not yet reaped by its parent) still answers signal 0.
        stat = self.read_text(f"/proc/{pid}/stat") if sys.platform.startswith("linux") else None
        fields = (stat or "").rpartition(")")[2].split()
        return not fields or fields[0] not in ("Z", "X")

    def fetch_url(self, url: str, timeout: float, max_bytes: int = FETCH_LIMIT) -> str:
        return fetch_url(url, timeout, max_bytes, self._environ)

    def platform(self) -> PlatformInfo:
        system, machine, release, version, implementation = _interpreter_and_system()
        libc_name, libc_version = _libc() if sys.platform.startswith("linux") else ("", "")
        return PlatformInfo(
            system=system,
            machine=machine,
            release=release,
            python_version=version,
            python_implementation=implementation,
            python_executable=sys.executable,
            python_prefix=sys.prefix,
            python_base_prefix=getattr(sys, "base_prefix", sys.prefix),
            python_free_threaded=_free_threaded(),
            python_bits=64 if sys.maxsize > 2**32 else 32,
            libc=f"{libc_name} {libc_version}".strip() if libc_name else "",
            cpu_count=os.cpu_count() or 0,
            mac_version=__import__("platform").mac_ver()[0] if sys.platform == "darwin" else "",
            windows_version=__import__("platform").version() if sys.platform == "win32" else "",
        )


def _interpreter_and_system() -> Tuple[str, str, str, str, str]:
    """platform's system(), machine(), release(), python_version(), python_implementation(). On
    Linux CPython, read where platform reads them (os.uname(), and sys.version's first word: a
    CPython version has three parts), without importing it: its import compiles a dozen patterns."""
    if sys.platform == "linux" and sys.implementation.name == "cpython":
        uname = os.uname()
        return uname.sysname, uname.machine, uname.release, sys.version.split()[0], "CPython"
    import platform
    return (platform.system(), platform.machine(), platform.release(), platform.python_version(),
            platform.python_implementation())


def _libc() -> Tuple[str, str]:
    """platform.libc_ver(): glibc answers os.confstr, which libc_ver asks first."""
    try:
        parts = (os.confstr("CS_GNU_LIBC_VERSION") or "").split(maxsplit=1)
    except (AttributeError, ValueError, OSError):
        parts = []
    if len(parts) == 2:
        return parts[0], parts[1]
    import platform  # any other libc: it scans the interpreter's binary
    return platform.libc_ver()


def _free_threaded() -> bool:
    """Whether this is a free-threaded build: those exist from 3.13 on, so older versions skip
    sysconfig (and its build-data module) on every probe."""
    if sys.version_info < (3, 13):
        return False
    import sysconfig
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


class _Spawned:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc
        self.pid = proc.pid

    def wait(self, timeout: Optional[float]) -> Optional[int]:
        import subprocess
        try:
            return self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def interrupt(self) -> None:
        import signal
        try:
            self._proc.send_signal(signal.SIGINT)
        except OSError:
            pass


class _LineStream:
    """A helper's stdout, read by one thread into a queue (bounded lines, bounded wait)."""

    _LONGEST = 1024 * 1024

    def __init__(self, argv: List[str], environ: Dict[str, str]) -> None:
        import queue
        import threading
        self._lines: queue.SimpleQueue[Optional[str]] = queue.SimpleQueue()
        self._ended = False
        import subprocess
        try:
            self._proc: Optional[subprocess.Popen[bytes]] = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=environ, start_new_session=sys.platform != "win32")
        except OSError as exc:
            self._proc = None
            self._lines.put(json.dumps({"error": f"cannot start {argv[0]}: {exc}"}))
            self._lines.put(None)
            return
        threading.Thread(target=self._drain, name="torchsmith-stream", daemon=True).start()

    def _drain(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            for raw in iter(lambda: self._proc.stdout.readline(self._LONGEST), b""):  # type: ignore[union-attr]
                self._lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
        except (OSError, ValueError):
            pass
        self._lines.put(None)

    def read_line(self, timeout: float) -> Optional[str]:
        if self._ended:
            return None
        import queue
        try:
            line = self._lines.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        if line is None:
            self._ended = True
        return line

    @property
    def ended(self) -> bool:
        return self._ended

    def close(self) -> None:
        if self._proc is None:
            return
        import subprocess
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()  # the helper stops at the end of its input
            self._proc.wait(timeout=3)
        except (OSError, subprocess.TimeoutExpired):
            _kill_group(self._proc)
        if self._proc.stdout is not None:
            self._proc.stdout.close()


# A whole fetch (connect, headers, body) may take this many times the per-operation timeout: a
# server that sends one byte every few seconds never trips a socket timeout.
FETCH_DEADLINE_FACTOR = 3.0


def fetch_url(url: str, timeout: float, max_bytes: int, environ: Mapping[str, str]) -> str:
    """GET ``url`` within a total deadline; one-line errors (:func:`_fetch_url`)."""
    from torchsmith.redact import redact

    deadline = timeout * FETCH_DEADLINE_FACTOR
    outcome: List[Any] = []

    def attempt() -> None:
        try:
            outcome.append(_fetch_url(url, timeout, max_bytes, environ))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    # A daemon thread: one that outlives its deadline holds at most max_bytes and ends with us.
    import threading
    worker = threading.Thread(target=attempt, name="torchsmith-fetch", daemon=True)
    worker.start()
    worker.join(deadline)
    if not outcome:
        raise FetchError(f"cannot read {redact(url)}: no complete answer within {deadline:g} s",
                         hint="the server answers too slowly; try again, or raise --timeout")
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return str(outcome[0])


def _fetch_url(url: str, timeout: float, max_bytes: int, environ: Mapping[str, str]) -> str:
    """GET ``url`` through urllib (proxies from the environment); one-line errors."""
    import urllib.error
    import urllib.request

    from torchsmith.redact import redact, split_credentials

    headers = {"Accept": "text/html", "User-Agent": "torchsmith"}
    bare, userinfo = split_credentials(url)
    request = urllib.request.Request(bare, headers=headers)
    authorization = _authorization(bare, userinfo, environ)
    if authorization:  # not carried over to another host on a redirect
        request.add_unredirected_header("Authorization", authorization)
    shown = redact(url)  # every message below names the URL without its credentials
    opener = urllib.request.build_opener()  # a fresh ProxyHandler: proxies as set now
    try:
        with opener.open(request, timeout=timeout) as response:
            body: bytes = response.read(max_bytes + 1)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 404:
            raise FetchError(f"{shown}: not found (HTTP 404)", status=404) from None
        raise FetchError(f"cannot read {shown}: HTTP {exc.code} {exc.reason}", status=exc.code,
                         hint="check the index URL, or your proxy settings") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(f"cannot reach {shown}: {reason}",
                         hint="check the network (set https_proxy if you use a proxy)") from None
    if len(body) > max_bytes:
        raise FetchError(f"{shown} is larger than {max_bytes} bytes: not read")
    return body.decode("utf-8", "replace")


def _authorization(url: str, userinfo: str, environ: Mapping[str, str]) -> Optional[str]:
    """An ``Authorization: Basic`` value from the URL's userinfo, else from netrc (as pip does)."""
    import base64
    import urllib.parse

    if userinfo:
        user, _, password = userinfo.partition(":")
        user, password = urllib.parse.unquote(user), urllib.parse.unquote(password)
    else:
        import netrc

        host = urllib.parse.urlsplit(url).hostname or ""
        try:
            entry = netrc.netrc(environ.get("NETRC") or None).authenticators(host)
        except (OSError, netrc.NetrcParseError):
            entry = None
        if not entry:
            return None
        user, password = entry[0] or "", entry[2] or ""
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


class _Capture:
    """One output stream, read in a thread: its first and last ``limit`` bytes are kept."""

    def __init__(self, stream: IO[bytes], limit: int = OUTPUT_LIMIT) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self._limit = limit
        import threading
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        try:
            while True:
                chunk = os.read(stream.fileno(), _CHUNK)
                if not chunk:
                    return
                room = self._limit - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                self.tail += chunk
                excess = len(self.tail) - self._limit
                if excess > 0:
                    del self.tail[:excess]
                    self.dropped += excess
        except (OSError, ValueError):
            return

    def join(self, timeout: float) -> bool:
        self._thread.join(max(0.0, timeout))
        return not self._thread.is_alive()

    def text(self) -> str:
        data = bytes(self.head)
        if self.dropped:
            data += f"\n[torchsmith: {self.dropped} bytes of output not kept]\n".encode()
        return (data + bytes(self.tail)).decode("utf-8", errors="replace")


def _feed(proc: subprocess.Popen[bytes], text: str) -> None:
    """Write ``text`` to the child's stdin from a thread (a child that reads nothing cannot block
    us on a full pipe), then close it."""
    assert proc.stdin is not None
    pipe = proc.stdin

    def write() -> None:
        try:
            pipe.write(text.encode("utf-8"))
        except OSError:  # it exited without reading: its output says why
            pass
        finally:
            try:
                pipe.close()
            except OSError:
                pass

    import threading
    threading.Thread(target=write, name="torchsmith-stdin", daemon=True).start()


def _collect(proc: subprocess.Popen[bytes], args: List[str], timeout: float) -> CommandResult:
    """Wait for ``proc`` at most ``timeout`` seconds, keeping a bounded part of its output."""
    import subprocess
    assert proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + timeout
    out, err = _Capture(proc.stdout), _Capture(proc.stderr)
    try:
        # The pipes close when the child exits: joining their readers wakes at once, where
        # Popen.wait(timeout) polls and oversleeps the exit by up to 50 ms.
        drained = out.join(deadline - time.monotonic()) and err.join(deadline - time.monotonic())
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()) if drained else 0.0)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out.join(1.0)
            err.join(1.0)
            return CommandResult(args, timed_out=True)
        if not drained:  # it exited, but a child it left behind holds the pipes open
            _kill_group(proc)
            out.join(1.0)
            err.join(1.0)
    except KeyboardInterrupt:
        _kill_group(proc)
        raise
    finally:
        for stream in (proc.stdout, proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
    return CommandResult(args, returncode=proc.returncode, stdout=out.text(), stderr=err.text())


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    import signal
    import subprocess
    try:
        if sys.platform != "win32":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=2)
    except (subprocess.TimeoutExpired, OSError):
        pass
