"""A companion package shown installed at a release whose published torch pin excludes the torch
shown installed, where the failure is that companion's own. Pure: the pins are data (companions.json
``torch_requirements``, each read from the release's Requires-Dist)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from torchsmith.explain.extract.model import Extracted

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["companion_other_torch"]


def _satisfies(version: str, specifier: str) -> Optional[bool]:
    """Whether ``version`` meets ``specifier`` (a local label such as +cu128 matches its public
    version, as pip matches it); None when either cannot be parsed."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None


def _fails_in(name: str, extracted: Extracted) -> bool:
    """The failure is the companion's: an exception that names it (torchvision's "operator
    torchvision::nms does not exist"), a frame in it, or a library of it that failed to load."""
    stem = name.replace("-", "_")
    if any(stem in e.message for e in extracted.exceptions):
        return True
    if any(f.package == stem for f in extracted.frames):
        return True
    return any(stem in (lib.needed_by or "") or stem in lib.soname for lib in extracted.libraries) or any(
        stem in (s.library or "") for s in extracted.symbols)


def companion_other_torch(extracted: Extracted,
                          kb: Optional[KnowledgeBase]) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """``env:companion-other-torch``: the text shows torch installed at T and a companion at V whose
    published Requires-Dist pins torch to releases that exclude T, and the failure is the companion's."""
    torch = extracted.versions.get("torch") or extracted.environment.torch
    if kb is None or not torch:
        return None
    for name, shown in extracted.versions.items():
        if name == "torch":
            continue
        public = shown.split("+")[0]
        pin = next((r.torch for r in kb.torch_requirements(name) if r.version == public), None)
        if pin is None or not _fails_in(name, extracted) or _satisfies(torch, pin) is not False:
            continue
        return [f"{name} {shown}", shown], {"companion": name, "companion_version": shown,
                                            "required": f"torch{pin}", "installed": torch}
    return None
