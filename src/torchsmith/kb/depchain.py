"""Which Requires-Dist lead to torch, kept so that chains are followed offline too.

A package's dependencies off the torch stack (``ReleaseRecord.depends``) matter to the plan only
when they lead to a torch requirement: whisperx -> pyannote-audio -> ``torch>=2.8``. The shipped
snapshot and ``kb refresh`` keep, per release, only those requirements (and the ones naming
another snapshot package), and store the records of the packages they lead through in
``package_deps.json`` (read only when a chain is followed). The same records come from a live
read, so the planner's walk (plan/transitive.py) is the same offline and online. Pure.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Collection, Dict, FrozenSet, Iterable, List, Mapping, Sequence, Set

from torchsmith.kb.pkgmeta import STACK, PackageRecord, ReleaseRecord, canonical

__all__ = ["compact", "dependency_document", "depends_problems", "leading_names", "requirement_name"]

FAMILY = ("torch", "torchvision", "torchaudio")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement_name(line: str) -> str:
    """The canonical project name a Requires-Dist line names ("" when it names none)."""
    match = _NAME.match(line)
    return canonical(match.group(1)) if match else ""


def _narrows(release: ReleaseRecord) -> bool:
    """Its own published requirements limit the torch family (a bare ``torch`` does not), or its
    label encodes the torch series it was built against (a CUDA-only label leaves torch free)."""
    build = release.build
    return bool(build is not None and build.torch) or any(release.requirement(n) not in ("", "*")
                                                           for n in FAMILY)


def _followed(line: str) -> bool:
    """A requirement the planner follows: not one only an extra asks for (the walk asks none)."""
    return "extra" not in line.partition(";")[2]


def leading_names(records: Iterable[PackageRecord]) -> FrozenSet[str]:
    """The packages among ``records`` some read release of which limits torch, itself or through
    another such package (to a fixed point)."""
    read = {r.name: [x for x in r.releases if x.metadata != "none"] for r in records}
    leading: Set[str] = {name for name, releases in read.items() if any(_narrows(x) for x in releases)}
    grew = True
    while grew:
        grew = False
        for name, releases in read.items():
            through = {requirement_name(d) for x in releases for d in x.depends if _followed(d)}
            if name not in leading and through & leading:
                leading.add(name)
                grew = True
    return frozenset(leading)


def compact(record: PackageRecord, keep: Collection[str], *, read_only: bool = False) -> PackageRecord:
    """``record`` whose releases keep only the dependencies naming ``keep``; with ``read_only``,
    only the releases whose metadata was read, without wheel tags (what a chain is followed on)."""
    releases: List[ReleaseRecord] = []
    for release in record.releases:
        if read_only and release.metadata == "none":
            continue
        # A requested package's extras are asked for by the user; a dependency's never are.
        depends = tuple(d for d in release.depends if (_followed(d) or not read_only)
                        and requirement_name(d) in keep and requirement_name(d) != record.name)
        releases.append(dataclasses.replace(release, depends=depends, sdist=release.sdist and not read_only,
                                            wheels=() if read_only else release.wheels))
    return dataclasses.replace(record, releases=tuple(releases))


def dependency_document(records: Sequence[PackageRecord], keep: Collection[str], *, retrieved: str,
                        index: str, about: str) -> Dict[str, Any]:
    """``package_deps.json``: the records of the packages chains lead through."""
    packages = [compact(r, keep, read_only=True).to_json() for r in sorted(records, key=lambda r: r.name)
                if r.name in keep]
    return {"about": about, "retrieved": retrieved, "index": index, "packages": packages}


def depends_problems(snapshot: Mapping[str, Any], deps: Mapping[str, Any]) -> List[str]:
    """One line per stored dependency list that is not well-formed: a line that is no PEP 508
    requirement, one on the torch stack (those are ``requires``), or one naming a package that
    neither the snapshot nor ``package_deps.json`` holds (the chain could not be followed)."""
    from packaging.requirements import InvalidRequirement, Requirement

    held = {canonical(str(p["name"])) for doc in (snapshot, deps) for p in doc.get("packages") or ()}
    problems: List[str] = []
    for where, doc in (("package_meta", snapshot), ("package_deps", deps)):
        for package in doc.get("packages") or ():
            for release in package.get("releases") or ():
                depends = release.get("depends", [])
                if not isinstance(depends, list):
                    problems.append(f"{where}: {package['name']} {release['version']}: depends is not a list")
                    continue
                for line in depends:
                    try:
                        name = canonical(Requirement(str(line)).name)
                    except InvalidRequirement:
                        problems.append(f"{where}: {package['name']} {release['version']}: {line!r} is no "
                                        "requirement")
                        continue
                    if name in STACK or name not in held:
                        why = "is on the torch stack" if name in STACK else "is in no stored record"
                        problems.append(f"{where}: {package['name']} {release['version']} depends on {name}, "
                                        f"which {why}")
    return problems
