"""`kb validate`: the hand-kept companion tables and the package-metadata snapshot must reach the
newest torch release in the data, or they are stale caches of what the indexes publish.

- the snapshot (``package_meta.json``) was read when the newest torch in the data was already
  out (its ``torch_newest`` is at least that release);
- every package a companion or downstream table names is in the snapshot (so the planner can
  read past the table);
- a table of torch pins (``torch_requirements``) reaches the newest release the snapshot saw of
  its package (a ``.post`` of the same release counts as reached);
- torch's own requirements (``torch_requires.json``) were read up to the newest torch;
- the stored dependency lists (``depends``, followed to torch offline) are well-formed and name
  packages the snapshot or ``package_deps.json`` holds (kb/depchain.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Tuple

from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb.pkgmeta import canonical

if TYPE_CHECKING:
    from torchsmith.kb.knowledge import KnowledgeBase

__all__ = ["coverage_problems"]

_HINT = "run `torchsmith kb refresh`, or tools/package_snapshot.py, then update the table from the snapshot"


def _base(version: str) -> Tuple[int, ...]:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version).release
    except (InvalidVersion, ValueError):  # ValueError: a number too long for int()
        return ()


def _final(version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return not Version(version).is_prerelease
    except (InvalidVersion, ValueError):
        return False


def coverage_problems(kb: KnowledgeBase) -> List[str]:
    """One line per table or snapshot that stops short; empty when all reach."""
    snapshot = kb.document("package_meta")
    problems: List[str] = []
    newest_torch = kb.releases[0].version if kb.releases else ""
    if newest_torch and _base(snapshot["torch_newest"]) < _base(newest_torch):
        problems.append(f"the package-metadata snapshot ({snapshot['retrieved']}) saw torch "
                        f"{snapshot['torch_newest']} at most; the data has torch {newest_torch}")
    requires = kb.document("torch_requires")
    read_newest = max((r["version"] for r in requires["releases"] if _final(r["version"])),
                      key=_base, default="")
    if newest_torch and _base(read_newest) < _base(newest_torch):
        problems.append(f"torch's requirements ({requires['retrieved']}) were read up to torch "
                        f"{read_newest}; the data has torch {newest_torch} (tools/torch_requires.py)")
    packages = {canonical(p["name"]): p for p in snapshot["packages"]}
    named = {r.package for r in kb.torch_requirements()}
    named |= {r["package"] for r in kb.document("downstream")["rows"]}
    for name in sorted(canonical(n) for n in named if n not in packages):
        problems.append(f"{name} is in a companion table but not in the package-metadata snapshot")
    for name in sorted({r.package for r in kb.torch_requirements()}):
        table = [r.version for r in kb.torch_requirements(name)]
        releases = packages.get(canonical(name), {}).get("releases", ())
        seen = [r["version"] for r in releases if _final(r["version"])]
        if table and seen and max(_base(v) for v in seen) > max(_base(v) for v in table):
            problems.append(f"the {name} torch pins stop at {max(table, key=_base)}; its index has "
                            f"{max(seen, key=_base)} (snapshot of {packages[canonical(name)]['retrieved']})")
    from torchsmith.kb.depchain import depends_problems

    problems.extend(depends_problems(snapshot, kb.document("package_deps")))
    return problems


def check_coverage(kb: KnowledgeBase) -> None:
    problems = coverage_problems(kb)
    if problems:
        raise KnowledgeBaseError(f"stale data: {problems[0]}" + (f" (+{len(problems) - 1} more)"
                                                                 if len(problems) > 1 else ""),
                                 context=problems[1:], hint=_HINT)
