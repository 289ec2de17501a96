"""``plan``: the best working stack for a machine, explained. See :mod:`torchsmith.plan.model`."""

from __future__ import annotations

from torchsmith.plan.model import PackagePin, Plan, Rejection, Request

__all__ = ["PackagePin", "Plan", "Rejection", "Request"]
