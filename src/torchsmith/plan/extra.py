"""What the requirements besides torch/torchvision/torchaudio add to a plan (see companions).

Each companion contributes constraints on torch before the walk and a :data:`Finisher` after
it: a function of the chosen torch that returns its :class:`Addition` (pins, reasons, warnings).
"""

from __future__ import annotations

from typing import Callable, List, NamedTuple, Optional, Tuple

from torchsmith.plan.core import Constraint
from torchsmith.plan.draft import Draft
from torchsmith.plan.hostview import HostView
from torchsmith.plan.index import Index
from torchsmith.plan.model import PackagePin, Rejection

__all__ = ["NOTHING", "Addition", "Extra", "Finisher"]


class Addition(NamedTuple):
    """What one companion adds to the plan once torch is chosen."""

    packages: Tuple[PackagePin, ...] = ()
    reasons: Tuple[str, ...] = ()
    warnings: Tuple[str, ...] = ()
    accelerator: Optional[str] = None  # a GPU framework planned without a GPU build of torch


NOTHING = Addition()

# (the chosen torch pin or None, its variant or None, the host, the data) -> what it adds.
Finisher = Callable[[Optional[PackagePin], Optional[str], HostView, Index], Addition]


class Extra:
    """What the non-family requirements add to a plan."""

    def __init__(self) -> None:
        self.wants_torch = True
        self.constraints: List[Constraint] = []
        self.soft: List[Constraint] = []  # prebuilt-wheel preferences, dropped when nothing fits
        # Per package, its releases' torch needs newest first: the newest that can be met wins.
        self.preferred: List[List[Constraint]] = []
        self.warnings: List[str] = []
        self.reasons: List[str] = []
        self.rejected: List[Rejection] = []
        self.fatal = False
        self.finishers: List[Finisher] = []
        self.unplanned: List[str] = []  # requirement texts left to the configured index

    def finish(self, torch: Optional[PackagePin], draft: Draft, view: HostView, idx: Index) -> None:
        """Add what every finisher returns for the chosen torch to the draft, in order."""
        for finisher in self.finishers:
            added = finisher(torch, draft.variant, view, idx)
            draft.packages.extend(added.packages)
            draft.reasons.extend(added.reasons)
            draft.warnings.extend(added.warnings)
            if added.accelerator:
                draft.accelerator = added.accelerator
