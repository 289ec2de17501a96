"""A time budget shared by every command of one probe.

Each tool has its own timeout (8 s for nvidia-smi, 10 s for rocminfo...), but a machine where
several of them hang would add these up to about a minute. Under a budget, a command gets at most
what is left of it, and once it is spent the rest are not started: ``probe`` answers within the
budget (plus a second or two to kill what hung) whatever the tools do.
"""

from __future__ import annotations

import time

from torchsmith import TYPE_CHECKING
from torchsmith.host import FETCH_LIMIT, READ_LIMIT, CommandResult, Host, PlatformInfo

if TYPE_CHECKING:
    from typing import IO, Callable, List, Mapping, Optional, Sequence

__all__ = ["BUDGET_ENV", "DEFAULT_PROBE_BUDGET", "BudgetHost", "probe_budget"]

# A healthy machine answers every probe command in 1-3 s (an 8-GPU node without persistence
# mode is the slow case); 10 s leaves room for that and still bounds a wedged one.
DEFAULT_PROBE_BUDGET = 10.0
BUDGET_ENV = "TORCHSMITH_PROBE_BUDGET"
_SMALLEST = 0.05  # below this, a command could not even start: do not try


def probe_budget(environ: Mapping[str, str]) -> float:
    """Seconds the probe's commands may take together: TORCHSMITH_PROBE_BUDGET, else the default."""
    raw = environ.get(BUDGET_ENV, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_PROBE_BUDGET
    except ValueError:
        return DEFAULT_PROBE_BUDGET
    return value if 0 < value <= 3600 else DEFAULT_PROBE_BUDGET  # also false for nan


class BudgetHost:
    """Wraps a host so that all its commands together take at most ``seconds``."""

    def __init__(self, inner: Host, seconds: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._inner = inner
        self._seconds = seconds
        self._clock = clock
        self._deadline = clock() + seconds
        self.skipped: List[str] = []

    def remaining(self) -> float:
        return max(0.0, self._deadline - self._clock())

    def run(self, argv: Sequence[str], timeout: float = 5.0,
            env: Optional[Mapping[str, Optional[str]]] = None, stdin: Optional[str] = None
            ) -> CommandResult:
        left = self.remaining()
        if left < _SMALLEST:
            self.skipped.append(" ".join(argv[:1]))
            return CommandResult(list(argv), skipped=f"the probe's {self._seconds:g} s time budget "
                                                    f"was spent ({BUDGET_ENV} sets it)")
        return self._inner.run(argv, min(timeout, left), env, stdin)

    def read_text(self, path: str, limit: int = READ_LIMIT) -> Optional[str]:
        return self._inner.read_text(path, limit)

    def open_binary(self, path: str) -> Optional[IO[bytes]]:
        return self._inner.open_binary(path)

    def list_dir(self, path: str) -> Optional[List[str]]:
        return self._inner.list_dir(path)

    def which(self, name: str) -> Optional[str]:
        return self._inner.which(name)

    def real_path(self, path: str) -> str:
        return self._inner.real_path(path)

    def environ(self) -> Mapping[str, str]:
        return self._inner.environ()

    def platform(self) -> PlatformInfo:
        return self._inner.platform()

    def fetch_url(self, url: str, timeout: float, max_bytes: int = FETCH_LIMIT) -> str:
        return self._inner.fetch_url(url, timeout, max_bytes)
