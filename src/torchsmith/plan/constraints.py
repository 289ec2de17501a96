"""The constraints the resolver's walk obeys: the user's pins on the torch family (local-label
pins included) and the glibc the machine has.

``torch==2.7.0+cu126`` is how maintainers write a fix: the public version pins the release and
the local label names the build. A PEP 440 specifier with a local label matches only versions
carrying that label, and the releases in the data carry none, so the label is taken apart here:
the public part pins the release, the label pins the variant.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.machine import Machine
from torchsmith.plan.core import Constraint, is_default
from torchsmith.plan.hostview import HostView
from torchsmith.plan.model import Request
from torchsmith.plan.request import Wanted, constrained
from torchsmith.records import replace
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase, TorchRelease, VariantBuild

__all__ = ["allowed_by_user", "family_constraints", "first_conflict", "glibc_constraint",
           "split_local_label", "wheel_glibc_floor"]

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
    return replace(want, spec=",".join(kept)), label


def glibc_constraint(machine: Machine, view: HostView, kb: KnowledgeBase) -> Optional[Constraint]:
    """Refuse wheels whose manylinux tag needs a newer glibc than the machine has (pip would)."""
    have = machine.os.glibc
    if not have or not view.platform.startswith("linux-") or machine.jetson is not None:
        return None
    table = kb.document("manylinux")
    urls = table["sources"]
    rows = [r for r in table["rows"] if r["platform"] == view.platform]

    def fits(release: TorchRelease, variant: Optional[VariantBuild]) -> Optional[str]:
        row = _manylinux_row(rows, release.version, variant.name if variant is not None else None)
        if row is None or version_tuple(have) >= version_tuple(row["min_glibc"]):
            return None
        cite = "; ".join(urls[i].split(" ", 1)[0] for i in row["source"][:2])
        which = f"torch {release.version}" + (f" {variant.name}" if row.get("variants") and variant else "")
        return (f"{which} wheels for {view.platform} are {row['tag']}, which "
                f"needs glibc ≥ {row['min_glibc']}; this machine has glibc {have} and pip "
                f"refuses them [source: {cite}]")

    return Constraint(f"glibc {have}", fits, code="glibc-too-old")


def cxx11_abi(kb: KnowledgeBase, platform: str, version: str, variant: Optional[str]) -> Optional[bool]:
    """Whether torch's own Linux wheels of this build use the C++11 ABI: those built on manylinux
    2.28 do, the older manylinux1/2014 ones do not (manylinux.json's sources); None off Linux."""
    if not platform.startswith("linux-"):
        return None
    rows = [r for r in kb.document("manylinux")["rows"] if r["platform"] == platform]
    row = _manylinux_row(rows, version, variant)
    if row is None:
        return None
    glibc = re.search(r"manylinux_(\d+)_(\d+)", str(row["tag"]))
    return glibc is not None and (int(glibc.group(1)), int(glibc.group(2))) >= (2, 28)


def wheel_glibc_floor(kb: KnowledgeBase, platform: str, version: str,
                      variant: Optional[str]) -> Optional[str]:
    """The glibc torch's own Linux wheels of this build need (manylinux.json ``min_glibc``); None
    off Linux or where the data has no row."""
    if not platform.startswith("linux-") or not version:
        return None
    row = _manylinux_row([r for r in kb.document("manylinux")["rows"] if r["platform"] == platform],
                         version, variant)
    return str(row["min_glibc"]) if row is not None else None


def _manylinux_row(rows: List[Dict[str, Any]], version: str,
                   variant: Optional[str]) -> Optional[Dict[str, Any]]:
    """The row for this build: one naming its variant first, else its release range's."""
    number = version_tuple(version)
    within = [r for r in rows if number >= version_tuple(r["first"])
              and not (r["last"] and number > version_tuple(r["last"]))]
    named = [r for r in within if variant and variant in r.get("variants", ())]
    plain = [r for r in within if not r.get("variants")]
    found = named or plain
    return found[0] if found else None


def family_constraints(wanted: Dict[str, Wanted], request: Request) -> List[Constraint]:
    """The user's pins on torch, torchvision and torchaudio, as constraints on the torch release."""
    out: List[Constraint] = []
    pre = request.allow_prerelease
    torch = wanted.get("torch") or _capped_torch(request)
    if torch is not None and torch.spec:
        out.append(_torch_constraint(torch, pre))
    for name in ("torchvision", "torchaudio"):
        want = wanted.get(name)
        if want is None or (not want.spec and name == "torchaudio" and is_default(request)):
            continue
        out.append(_companion_version_constraint(name, want, pre))
    return out


def _capped_torch(request: Request) -> Optional[Wanted]:
    """torch not asked for, planned all the same (``plan whisperx``): the user's pip/uv
    constraints on it still apply, as pip applies them to the printed commands."""
    capped = constrained([Wanted("torch", "", frozenset(), "torch")], request.constraints)[0]
    return capped if capped.spec else None


def _torch_constraint(torch: Wanted, pre: bool) -> Constraint:
    spec, label = split_local_label(torch)

    def torch_ok(release: TorchRelease, variant: Optional[VariantBuild]) -> Optional[str]:
        if not spec.allows(release.version, pre):
            return f"{torch.text} excludes torch {release.version}"
        if label and variant is not None and variant.name != label:
            built = ", ".join(v.name for v in release.variants)
            return (f"{torch.text} names the {label} build, not {variant.name}" if
                    release.variant(label) is not None else
                    f"{torch.text} names a {label} build, which torch {release.version} does "
                    f"not have (builds: {built})")
        return None

    return Constraint(f"{torch.text} ({torch.origin})", torch_ok, user_pin=True)


def _companion_version_constraint(name: str, asked: Wanted, pre: bool) -> Constraint:
    want, label = split_local_label(asked)

    def ok(release: TorchRelease, variant: Optional[VariantBuild]) -> Optional[str]:
        paired = getattr(release, name, None)
        if not paired:
            return f"no {name} release pairs with torch {release.version}"
        if not want.allows(paired, pre):
            return f"{asked.text} excludes {name} {paired}, the one that pairs with torch {release.version}"
        if label and variant is not None and variant.name != label:
            return f"{asked.text} names the {label} build, not {variant.name}"
        return None

    return Constraint(f"{asked.text} ({asked.origin})", ok, user_pin=True)


def first_conflict(constraints: Sequence[Constraint], release: TorchRelease, variant: VariantBuild
                   ) -> Optional[Tuple[Constraint, str]]:
    """The first constraint refusing this build, with its reason; None when all allow it."""
    for constraint in constraints:
        why = constraint.check(release, variant)
        if why:
            return constraint, why
    return None


def allowed_by_user(constraints: Sequence[Constraint], release: TorchRelease) -> bool:
    """The user's own pins allow this release (whatever other constraints say)."""
    return all(c.check(release, None) is None for c in constraints if c.user_pin)
