"""What a package asks of torch through its dependencies (whisperx -> pyannote-audio -> torch).

A release's ``depends`` (its Requires-Dist off the torch stack, read live) names packages whose
own records (read live too, or in the shipped snapshot) may pin torch. A release then allows
only the torch releases that *some* release of each such dependency, within the range it asks
for, allows -- followed to a bounded depth, cycles cut, a dependency with no readable record
left free (the plan then does not see through it). The result is an :class:`Inherited` per
dependency that narrows torch, with the chain in words. Pure.
"""

from __future__ import annotations

import dataclasses
import re
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from torchsmith.kb.pkgmeta import Inherited, PackageRecord, ReleaseRecord, canonical

__all__ = ["DEPTH", "with_inherited"]

DEPTH = 3  # whisperx -> pyannote-audio -> lightning -> torch
NEWEST = 4  # releases of a dependency looked at within its range (newest first)
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$")

# (release, torch version) -> whether its own published pins allow that torch.
Fits = Callable[[ReleaseRecord, str], bool]
Lookup = Callable[[str], Optional[PackageRecord]]
Applied = Callable[[ReleaseRecord], ReleaseRecord]  # its requirements as they apply on the machine


def with_inherited(record: PackageRecord, torches: Sequence[str], lookup: Lookup, fits: Fits,
                   applied: Applied) -> PackageRecord:
    """``record`` whose releases carry the torch limits their dependencies bring (``torches``: the
    torch releases the data knows, newest first)."""
    walk = _Walk(tuple(torches), lookup, fits, applied)
    releases = tuple(dataclasses.replace(r, inherited=walk.inherited(r, DEPTH, (record.name,)))
                     if r.depends else r for r in record.releases)
    return dataclasses.replace(record, releases=releases)


class _Walk:
    def __init__(self, torches: Tuple[str, ...], lookup: Lookup, fits: Fits, applied: Applied) -> None:
        self.torches, self.lookup, self.fits, self.applied = torches, lookup, fits, applied
        self.every = frozenset(torches)
        self.memo: Dict[Tuple[str, str, int], Optional[Inherited]] = {}

    def inherited(self, release: ReleaseRecord, depth: int, path: Tuple[str, ...]) -> Tuple[Inherited, ...]:
        """One Inherited per dependency of ``release`` that narrows torch."""
        if depth <= 0:
            return ()
        found: List[Inherited] = []
        for line in release.depends:
            parsed = _NAME.match(line)
            if parsed is None:
                continue
            name, spec = canonical(parsed.group(1)), parsed.group(2).split(";", 1)[0].strip()
            if name in path:  # a cycle: the package's own limits already count
                continue
            key = (name, spec, depth)
            if key not in self.memo:
                self.memo[key] = self._through(name, spec, depth, path)
            if self.memo[key] is not None:
                found.append(self.memo[key])  # type: ignore[arg-type]
        return tuple(found)

    def _through(self, name: str, spec: str, depth: int, path: Tuple[str, ...]) -> Optional[Inherited]:
        """What ``name`` within ``spec`` allows of torch; None: it leaves torch free, or is unknown."""
        record = self.lookup(name)
        if record is None:
            return None
        candidates = [self.applied(r) for r in record.releases
                      if r.metadata != "none" and (not spec or _allows(spec, r.version))][:NEWEST]
        if not candidates:
            return None
        allowed: FrozenSet[str] = frozenset()
        words: List[str] = []
        for release in candidates:
            deeper = self.inherited(release, depth - 1, (*path, name))
            own = frozenset(t for t in self.torches if self.fits(release, t)
                            and all(t in i.allowed for i in deeper))
            allowed |= own
            if not words:
                words.append(_needs(release, deeper))
        if allowed >= self.every:
            return None
        chain = f"{name}{spec} ({candidates[0].version}), which needs {words[0]}"
        return Inherited(chain, allowed)


@lru_cache(maxsize=4096)
def _allows(spec: str, version: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(spec).contains(version, prereleases=True)
    except InvalidSpecifier:
        return True


def _needs(release: ReleaseRecord, deeper: Sequence[Inherited]) -> str:
    parts = [f"{n}{release.requirement(n)}" for n in ("torch", "torchvision", "torchaudio")
             if release.requirement(n) not in ("", "*")]
    parts.extend(i.chain for i in deeper)
    return "; ".join(parts) or "any torch"
