"""The only door from torchsmith to the operating system.

Every hardware or OS read goes through a :class:`Host`. ``LiveHost`` talks to this machine;
``RecordedHost`` replays a capture (a JSON file of files read and commands run), which is how
the tests stand in for GPUs this machine does not have, and how users send bug reports.
"""

from __future__ import annotations

import os

from torchsmith import TYPE_CHECKING
from torchsmith.records import dataclass, field_names

if TYPE_CHECKING:
    from typing import IO, Any, Dict, List, Mapping, Optional, Protocol, Sequence
else:
    Protocol = object  # the protocols below are for the type checker: plain classes at run time

__all__ = ["FETCH_LIMIT", "OUTPUT_LIMIT", "READ_LIMIT", "CommandResult", "Host", "JobHost", "LineStream",
           "PlatformInfo", "Spawned", "bound_output", "command_key"]

# No file torchsmith reads about a machine is legitimately larger than this.
READ_LIMIT = 4 * 1024 * 1024
# Of each stream of a command, the first and the last OUTPUT_LIMIT characters are kept: the head
# for the first error line, the tail for the JSON the snippets print last. A runaway tool (50 MB
# of garbage) then costs at most 2 MiB of memory per stream, and what parses it stays quick.
OUTPUT_LIMIT = 1024 * 1024
# The largest web page torchsmith reads (a PEP 503 page of torch is about 1 MB).
FETCH_LIMIT = 64 * 1024 * 1024
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class CommandResult:
    """What one command did. ``returncode`` is None when it never finished or never started."""

    argv: List[str]
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    not_found: bool = False
    skipped: str = ""  # why it was never started (e.g. the probe's time budget was spent)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.not_found

    def problem(self) -> str:
        """A one-line description of why this command gave no usable answer."""
        name = self.argv[0] if self.argv else "command"
        if self.skipped:
            return f"{os.path.basename(name)} not run: {self.skipped}"
        if self.not_found:
            return f"{os.path.basename(name)} not found"
        if self.timed_out:
            return f"{os.path.basename(name)} did not answer in time (killed)"
        detail = (self.stderr.strip() or self.stdout.strip()).splitlines()
        first = detail[0][:200] if detail else "no output"
        return f"{os.path.basename(name)} exited with {self.returncode}: {first}"

    def last_json(self) -> Any:
        """The JSON on the last line of stdout, where the snippets print their answer.

        Raises ValueError when there is no output or it is not JSON."""
        import json

        lines = self.stdout.strip().splitlines()
        if not lines:
            raise ValueError(f"{self.argv[0] if self.argv else 'command'} printed nothing")
        try:
            return json.loads(lines[-1])
        except RecursionError as exc:  # nesting deeper than the parser's stack
            raise ValueError("its JSON is nested too deeply") from exc


def bound_output(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """``text`` with its middle cut out when it is longer than twice ``limit``, saying so."""
    if len(text) <= 2 * limit:
        return text
    dropped = len(text) - 2 * limit
    return f"{text[:limit]}\n[torchsmith: {dropped} characters of output not kept]\n{text[-limit:]}"


@dataclass(frozen=True)
class PlatformInfo:
    """Facts Python itself knows about the interpreter running torchsmith and its OS."""

    system: str  # platform.system(): Linux, Windows, Darwin
    machine: str  # platform.machine(): x86_64, aarch64, arm64, AMD64
    release: str  # kernel release
    python_version: str  # 3.11.7
    python_implementation: str  # CPython
    python_executable: str
    python_prefix: str
    python_base_prefix: str
    python_free_threaded: bool = False
    python_bits: int = 64
    libc: str = ""  # "glibc 2.36", "" when not glibc
    cpu_count: int = 0
    mac_version: str = ""  # platform.mac_ver()[0]
    windows_version: str = ""

    def to_json(self) -> Dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlatformInfo:
        known = set(field_names(cls) or ())
        return cls(**{k: v for k, v in data.items() if k in known})


class Host(Protocol):
    """Small on purpose: everything above it is pure and testable from captures."""

    def read_text(self, path: str, limit: int = READ_LIMIT) -> Optional[str]:
        """The file's text, at most its first ``limit`` bytes (a version line near the top of
        a 1 MB header needs no more), or None when it is absent or unreadable."""

    def open_binary(self, path: str) -> Optional[IO[bytes]]:
        """The file opened for binary reads (the caller closes it), or None when unreadable.

        For large binaries read in bounded pieces (the GPU code of libtorch_cuda.so)."""

    def list_dir(self, path: str) -> Optional[List[str]]:
        """Sorted entry names, or None when the directory is absent or unreadable."""

    def which(self, name: str) -> Optional[str]:
        """The executable's path on PATH, or None."""

    def real_path(self, path: str) -> str:
        """``path`` with every symbolic link resolved (itself when unknown): one install
        reached through several links (/usr/local/cuda -> cuda-13 -> cuda-13.0) is one."""

    def run(self, argv: Sequence[str], timeout: float = 5.0,
            env: Optional[Mapping[str, Optional[str]]] = None, stdin: Optional[str] = None
            ) -> CommandResult:
        """Run a command without a shell; never raises, never waits past ``timeout``.

        ``env`` changes the child's environment only: a value sets a variable, None removes it
        (installers must not inherit e.g. ``PIP_EXTRA_INDEX_URL`` where torchsmith pins indexes).
        ``stdin``: text given to the child's standard input (``uv pip compile -``); else none.
        """

    def environ(self) -> Mapping[str, str]:
        """The environment variables torchsmith may read."""

    def platform(self) -> PlatformInfo:
        """What Python knows of the interpreter and OS."""

    def fetch_url(self, url: str, timeout: float, max_bytes: int = FETCH_LIMIT) -> str:
        """The text at ``url`` (HTTP GET; proxies from the environment, credentials from the URL
        or netrc). Raises ``torchsmith.errors.FetchError``, also for a body over ``max_bytes``."""


class Spawned(Protocol):
    """A command started with the user's terminal (``watch -- CMD``)."""

    pid: int

    def wait(self, timeout: Optional[float]) -> Optional[int]:
        """Its exit status, or None when it is still running after ``timeout`` seconds."""

    def interrupt(self) -> None:
        """Pass on the user's Ctrl-C (SIGINT), as a terminal would."""


class LineStream(Protocol):
    """The stdout of a long-running helper (a sampler), line by line, never blocking longer than asked."""

    def read_line(self, timeout: float) -> Optional[str]:
        """The next line, or None when none came within ``timeout`` or the helper has ended."""

    @property
    def ended(self) -> bool:
        """The helper closed its output and every line was read."""

    def close(self) -> None:
        """Stop the helper (its stdin is closed, then it is killed if it lingers)."""


class JobHost(Host, Protocol):
    """A host that can also start the user's job and follow a sampler: what ``watch`` needs."""

    def spawn(self, argv: Sequence[str]) -> Optional[Spawned]:
        """Start ``argv`` with torchsmith's stdin, stdout and stderr; None when it cannot start."""

    def stream(self, argv: Sequence[str]) -> LineStream:
        """Start a helper whose stdout is read line by line."""

    def pid_alive(self, pid: int) -> bool:
        """Whether process ``pid`` still exists (in this PID namespace)."""


# Interpreter flags that only change how Python starts (isolated, no site), not what a snippet
# reports: a capture recorded with or without them replays the same.
_START_FLAGS = frozenset({"-I", "-S", "-IS", "-E", "-s", "-B"})


def command_key(argv: Sequence[str]) -> str:
    """A stable name for a command, the same on every machine, for captures.

    The executable is reduced to its basename (without ``.exe``), any Python interpreter to
    ``python`` (its start flags dropped), and files inside the torchsmith package to
    ``torchsmith:<relative path>``.
    """
    parts: List[str] = []
    python = bool(argv) and argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower().startswith("python")
    for index, arg in enumerate(argv):
        if python and index == 1 and arg in _START_FLAGS:
            continue
        if index == 0:
            # Both separators and no ".exe": a Windows capture replays the same on Linux.
            base = arg.replace("\\", "/").rsplit("/", 1)[-1]
            if base.lower().endswith(".exe"):
                base = base[:-4]
            parts.append("python" if base.lower().startswith("python") else base)
        elif os.path.isabs(arg) and arg.startswith(_PACKAGE_DIR):
            rel = os.path.relpath(arg, _PACKAGE_DIR).replace(os.sep, "/")
            parts.append(f"torchsmith:{rel}")
        else:
            parts.append(arg)
    return " ".join(parts)

