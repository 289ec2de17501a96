"""What a site wheelhouse holds, as the Slurm job pins it: the planned version where the site has
it, else the newest the site has (a site wheelhouse lags upstream), said in a comment.

Pure: the file names come from the caller (``plan --wheelhouse DIR`` lists DIR when it is
reachable from where torchsmith runs); without them the planned versions are pinned and the job
says how to list what the site has.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from torchsmith.plan.model import Plan

__all__ = ["wheelhouse_pins"]


def _python_tag_fits(tags: Sequence[str], python: str) -> bool:
    """A wheel for the plan's Python: ``cp311``/``py3``/``abi3`` (any platform: the node's)."""
    if not python:
        return True
    ours = "cp" + python.rstrip("t").replace(".", "")
    return any(t == ours or t.startswith("py3") for t in tags)


def _versions(files: Sequence[str], python: str) -> Dict[str, List[Version]]:
    found: Dict[str, List[Version]] = {}
    for name in files:
        try:
            project, version, _build, tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        if _python_tag_fits([t.interpreter for t in tags], python):
            found.setdefault(str(project), []).append(version)
    return found


def wheelhouse_pins(plan: Plan, files: Optional[Sequence[str]]) -> Tuple[List[str], List[str]]:
    """(comment lines, requirement pins) for ``pip install --no-index --find-links WHEELHOUSE``."""
    planned = [(p.name, p.version) for p in plan.packages if p.version]
    if files is None:
        patterns = " ".join(f"-e '^{n}-'" for n, _ in planned)
        return ([f"The wheelhouse could not be read where this was written: these are the planned "
                 f"versions. List what the site has with: ls \"$WHEELHOUSE\" | grep -i {patterns}"],
                [f"{n}=={v}" for n, v in planned])
    have = _versions(files, plan.python)
    notes: List[str] = []
    pins: List[str] = []
    for name, version in planned:
        versions = sorted(have.get(canonicalize_name(name), []))
        public = [v.public for v in versions]
        if Version(version).public in public:
            pins.append(f"{name}=={version}")
        elif versions:
            newest = versions[-1].public
            pins.append(f"{name}=={newest}")
            notes.append(f"{name}: the wheelhouse has {', '.join(dict.fromkeys(public))}, not the planned "
                         f"{version}: pinned {newest}, what the site has")
        else:
            pins.append(f"{name}=={version}")
            notes.append(f"{name}: no wheel for Python {plan.python or '?'} in the wheelhouse: pip will "
                         "stop here; ask the site to add it, or build the env where an index is reachable")
    return notes, pins
