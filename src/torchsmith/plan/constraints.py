"""Request handling the resolver's walk builds on: local-label pins and downstream packages.

``torch==2.7.0+cu126`` is how maintainers write a fix: the public version pins the release and
the local label names the build. A PEP 440 specifier with a local label matches only versions
carrying that label, and the releases in the data carry none, so the label is taken apart here:
the public part pins the release, the label pins the variant.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any, Optional, Tuple

from torchsmith.machine import Machine
from torchsmith.plan.hostview import HostView
from torchsmith.plan.request import Wanted
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.plan.resolve import Constraint

__all__ = ["glibc_constraint", "split_local_label"]

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


def glibc_constraint(machine: Machine, view: HostView, kb: Any) -> Optional[Constraint]:
    """Refuse wheels whose manylinux tag needs a newer glibc than the machine has (pip would)."""
    from torchsmith.plan import resolve as core

    have = machine.os.glibc
    if not have or not view.platform.startswith("linux-") or machine.jetson is not None:
        return None
    table = kb.document("manylinux")
    urls = table["sources"]
    rows = [r for r in table["rows"] if r["platform"] == view.platform]

    def fits(release: Any, _variant: Any) -> Optional[str]:
        version = version_tuple(release.version)
        for row in rows:
            if version < version_tuple(row["first"]):
                continue
            if row["last"] and version > version_tuple(row["last"]):
                continue
            if version_tuple(have) < version_tuple(row["min_glibc"]):
                cite = "; ".join(urls[i].split(" ", 1)[0] for i in row["source"][:2])
                return (f"torch {release.version} wheels for {view.platform} are {row['tag']}, which "
                        f"needs glibc ≥ {row['min_glibc']}; this machine has glibc {have} and pip "
                        f"refuses them [source: {cite}]")
        return None

    return core.Constraint(f"glibc {have}", fits, code="glibc-too-old")
