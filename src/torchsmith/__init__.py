"""torchsmith: a PyTorch that works on your machine, and exactly why when it doesn't."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
