"""The user's pip/uv constraints on torch, torchvision and torchaudio, as a dead end's doors must
meet them: pip and uv apply them to every door's command, so a door they forbid is no way out.

``Request.door_caps`` carries them ((requirement text, where it is written) pairs); they are
set only for this machine (a described one takes no local caps). ``packaging`` is imported only
where a cap is set, so the common plan starts light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from torchsmith.plan.core import Check, Job
from torchsmith.plan.index import Release

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

__all__ = ["blocked_words", "cap_words", "forbidding", "within_caps"]

_FAMILY = ("torch", "torchvision", "torchaudio")


def forbidding(job: Job, release: Release) -> List[str]:
    """The caps that forbid ``release``'s torch, or the torchvision/torchaudio paired with it,
    each as ``text (where)``; empty when they all allow it."""
    if not job.request.door_caps:
        return []
    from packaging.requirements import InvalidRequirement, Requirement

    out: List[str] = []
    for text, where in job.request.door_caps:
        try:
            cap = Requirement(text)
        except InvalidRequirement:
            continue
        name = cap.name.lower()
        if name not in _FAMILY:
            continue
        version = release.text if name == "torch" else getattr(release.data, name, None)
        if not _cap_allows(cap.specifier, version):
            out.append(f"{text} ({where})")
    return out


def within_caps(job: Job, checks: Sequence[Check]) -> Tuple[List[Check], str]:
    """The builds whose torch (and the torchvision/torchaudio paired with it) the user's pip/uv
    configuration allows, as pip/uv would apply it to the door's plan; and the caps that left
    one out, with where each is written ("" when none did)."""
    kept: List[Check] = []
    caps: List[str] = []
    for check in checks:
        against = forbidding(job, check.release)
        if against:
            caps.extend(c for c in against if c not in caps)
        else:
            kept.append(check)
    return kept, ", ".join(caps)


def cap_words(caps: str) -> str:
    return f" within your pip/uv constraint {caps}" if caps else ""


def blocked_words(caps: str) -> str:
    """A door the caps forbid is still the way out they leave: say which cap blocks it."""
    return f"; but your pip/uv constraint {caps} forbids it: change that first"


def _cap_allows(specifier: SpecifierSet, version: Optional[str]) -> bool:
    from packaging.version import InvalidVersion, Version  # only where a constraint is set

    try:
        return not version or specifier.contains(Version(str(version)), prereleases=True)
    except InvalidVersion:
        return True
