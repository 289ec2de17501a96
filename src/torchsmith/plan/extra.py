"""What the requirements besides torch/torchvision/torchaudio add to a plan (see companions)."""

from __future__ import annotations

from typing import Callable, List, Optional

from torchsmith.plan.core import Constraint
from torchsmith.plan.draft import Draft
from torchsmith.plan.hostview import HostView
from torchsmith.plan.index import Index
from torchsmith.plan.model import PackagePin, Rejection

__all__ = ["Extra", "Finisher"]

# Adds a companion's pin, reasons and warnings once torch is chosen (None: no torch planned).
Finisher = Callable[[Optional[PackagePin], Draft, HostView, Index], None]


class Extra:
    """What the non-family requirements add to a plan."""

    def __init__(self) -> None:
        self.wants_torch = True
        self.constraints: List[Constraint] = []
        self.soft: List[Constraint] = []  # prebuilt-wheel preferences, dropped when nothing fits
        self.warnings: List[str] = []
        self.reasons: List[str] = []
        self.rejected: List[Rejection] = []
        self.fatal = False
        self.finishers: List[Finisher] = []

    def finish(self, torch: Optional[PackagePin], draft: Draft, view: HostView, idx: Index) -> None:
        """Run every finisher against the chosen torch."""
        for finisher in self.finishers:
            finisher(torch, draft, view, idx)
