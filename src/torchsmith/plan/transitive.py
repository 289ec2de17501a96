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
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

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
                   applied: Applied, *, python: str = "") -> PackageRecord:
    """``record`` whose releases carry the torch limits their dependencies bring (``torches``: the
    torch releases the data knows, newest first; ``python``: the planned one, "3.11")."""
    walk = _Walk(tuple(torches), lookup, fits, applied)
    walk.python = python
    releases = tuple(dataclasses.replace(r, inherited=walk.inherited(r, DEPTH, (record.name,)))
                     if r.depends else r for r in record.releases)
    return dataclasses.replace(record, releases=releases)


class _Walk:
    def __init__(self, torches: Tuple[str, ...], lookup: Lookup, fits: Fits, applied: Applied) -> None:
        self.torches, self.lookup, self.fits, self.applied = torches, lookup, fits, applied
        self.every = frozenset(torches)
        self.python = ""
        self.memo: Dict[Tuple[str, str, int], Optional[Inherited]] = {}
        self.varied: Set[str] = set()  # chains whose dependency's releases need different torches

    def inherited(self, release: ReleaseRecord, depth: int, path: Tuple[str, ...]) -> Tuple[Inherited, ...]:
        """One Inherited per dependency of ``release`` that narrows torch."""
        if depth <= 0:
            return ()
        own: Optional[FrozenSet[str]] = None  # the torches the release's own pins allow
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
            through = self.memo[key]
            if through is None:
                continue
            if own is None:
                own = frozenset(t for t in self.torches if self.fits(release, t))
            # Said where it narrows what the release allows, or where which release of the
            # dependency installs depends on the torch chosen.
            if not own <= through.allowed or through.chain in self.varied:
                found.append(through)
        return tuple(found)

    def _through(self, name: str, spec: str, depth: int, path: Tuple[str, ...]) -> Optional[Inherited]:
        """What ``name`` within ``spec`` allows of torch; None: it leaves torch free, or is unknown."""
        record = self.lookup(name)
        if record is None:
            return None
        in_range = [r for r in record.releases
                    if r.metadata != "none" and (not spec or _allows(spec, r.version))][:NEWEST]
        candidates = [self.applied(r) for r in in_range if self._python_ok(r)]
        if in_range and not candidates:  # none of them installs on the planned Python
            newest = in_range[0]
            return Inherited(f"{name}{spec} ({newest.version}), which needs Python {newest.requires_python}",
                             frozenset(), _newer_python(self.python, [r.requires_python for r in in_range]))
        allowed: FrozenSet[str] = frozenset()
        needs: Dict[str, str] = {}  # what a release needs -> the newest release that needs it
        pythons: List[str] = []  # what deeper dependencies need of Python
        for release in candidates:
            deeper = self.inherited(release, depth - 1, (*path, name))
            allowed |= frozenset(t for t in self.torches if self.fits(release, t)
                                 and all(t in i.allowed for i in deeper))
            needs.setdefault(_needs(release, deeper), release.version)
            pythons.extend(i.python for i in deeper if i.python and not i.allowed)
        if not candidates or allowed >= self.every:
            return None
        python = "" if allowed or len(pythons) < len(candidates) else min(pythons, key=_minor)
        if len(needs) == 1:
            only = next(iter(needs))
            return Inherited(f"{name}{spec} ({candidates[0].version}), which needs {only}", allowed, python)
        said = " or ".join(f"{need} ({version})" for need, version in list(needs.items())[:3])
        self.varied.add(f"{name}{spec}, whose releases need {said}")
        return Inherited(f"{name}{spec}, whose releases need {said}", allowed, python)

    def _python_ok(self, release: ReleaseRecord) -> bool:
        if not self.python or not release.requires_python:
            return True
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            return SpecifierSet(release.requires_python).contains(self.python, prereleases=True)
        except InvalidSpecifier:
            return True


def _minor(python: str) -> int:
    return int(python.split(".")[1])


def _newer_python(planned: str, requires: Sequence[str]) -> str:
    """The oldest Python 3 newer than ``planned`` that some of ``requires`` (Requires-Python) allow."""
    if not planned.startswith("3.") or not planned[2:].isdigit():
        return ""
    for minor in range(_minor(planned) + 1, 30):
        if any(_allows(spec, f"3.{minor}") for spec in requires if spec):
            return f"3.{minor}"
    return ""


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
    return "; ".join([p for p in (", ".join(parts),) if p] + [i.chain for i in deeper]) or "any torch"
