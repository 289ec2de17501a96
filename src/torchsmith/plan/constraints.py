"""Request handling the resolver's walk builds on: local-label pins and downstream packages.

``torch==2.7.0+cu126`` is how maintainers write a fix: the public version pins the release and
the local label names the build. A PEP 440 specifier with a local label matches only versions
carrying that label, and the releases in the data carry none, so the label is taken apart here:
the public part pins the release, the label pins the variant.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional, Tuple

from torchsmith.plan.request import Wanted

__all__ = ["split_local_label"]

_LOCAL_PIN = re.compile(r"^\s*(===?)\s*([0-9][^+,\s]*)\+([A-Za-z0-9.]+)\s*$")


def split_local_label(want: Wanted) -> Tuple[Wanted, Optional[str]]:
    """(the requirement without its local label, the label) for ``==X+label``; else (want, None)."""
    parts = [p for p in want.spec.split(",") if p.strip()]
    label: Optional[str] = None
    kept = []
    for part in parts:
        match = _LOCAL_PIN.match(part)
        if match and label is None:
            label = match.group(3).lower()
            kept.append(f"=={match.group(2)}")
        else:
            kept.append(part.strip())
    if label is None:
        return want, None
    return dataclasses.replace(want, spec=",".join(kept)), label
