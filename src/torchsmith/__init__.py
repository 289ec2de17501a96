"""torchsmith: a PyTorch that works on your machine, and exactly why when it doesn't."""

from __future__ import annotations

__version__ = "0.1.0"

# typing.TYPE_CHECKING without importing typing, which costs `probe` about 2 ms of its ~35: the
# modules a probe loads import typing's names under `if TYPE_CHECKING:` (type checkers read any
# name TYPE_CHECKING as true; tests/test_startup.py keeps typing off the probe's path).
TYPE_CHECKING = False

__all__ = ["TYPE_CHECKING", "__version__"]
