"""The user's own pip/uv constraints, which every install the plan prints will obey.

pip applies ``PIP_CONSTRAINT`` and ``constraint =`` of its configuration files to every
install; uv applies ``UV_CONSTRAINT`` and ``constraint-dependencies`` of its ``uv.toml``. The
probe already reports where they are set (``machine.env``); here they are read and compared
with the plan's pins. When they only narrow the versions of what was asked for, the plan is made
again within them; when a pin still breaks one, a warning names the file and line, and the
command that runs without it.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, List, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from torchsmith.machine import Machine
from torchsmith.plan.model import Plan, Request

__all__ = ["UserConstraint", "apply_user_constraints", "read_user_constraints"]

Read = Callable[[str], Optional[str]]
_CONSTRAINT_DEPS = re.compile(r"^\s*constraint-dependencies\s*=\s*\[(.*?)\]", re.S | re.M)
_QUOTED = re.compile(r"""["']([^"']+)["']""")


@dataclasses.dataclass(frozen=True)
class UserConstraint:
    name: str  # canonical
    specifier: str  # ">=2.5,<2.6"
    where: str  # "/home/me/constraints.txt:3 (PIP_CONSTRAINT)"
    without: str  # how to run the printed commands without it


def _file_lines(path: str, via: str, without: str, read: Read) -> List[UserConstraint]:
    text = read(path)
    if text is None:
        return []
    found: List[UserConstraint] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue  # comments, options (-c other.txt, --hash ...)
        found.extend(_parsed(line, f"{path}:{number} ({via})", without))
    return found


def _parsed(text: str, where: str, without: str) -> List[UserConstraint]:
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return []
    if not str(req.specifier):
        return []
    return [UserConstraint(canonicalize_name(req.name), str(req.specifier), where, without)]


def read_user_constraints(machine: Machine, read: Read) -> List[UserConstraint]:
    """Every constraint pip or uv applies on this machine, from the places the probe found."""
    found: List[UserConstraint] = []
    variables = machine.env.variables
    pip_off = "PIP_CONSTRAINT= (an empty value switches pip's constraints off)"
    for path in (variables.get("PIP_CONSTRAINT") or "").split():
        found.extend(_file_lines(path, "PIP_CONSTRAINT", pip_off, read))
    if "PIP_CONSTRAINT" not in variables:  # the variable replaces the configuration's constraint
        for key, value in sorted(machine.env.index_settings.items()):
            if key.startswith("pip ") and key.endswith(" constraint"):
                config = key.split(" ", 2)[1]
                for path in value.split():
                    found.extend(_file_lines(path, f"constraint in {config}", pip_off, read))
    for path in (variables.get("UV_CONSTRAINT") or "").split():
        found.extend(_file_lines(path, "UV_CONSTRAINT", "env -u UV_CONSTRAINT", read))
    for key in sorted(machine.env.index_settings):
        if key.startswith("uv ") and key.endswith("constraint-dependencies"):
            config = key.split(" ", 2)[1]
            text = read(config) or ""
            match = _CONSTRAINT_DEPS.search(text)
            for item in _QUOTED.findall(match.group(1) if match else ""):
                found.extend(_parsed(item, f"{config} constraint-dependencies", "UV_NO_CONFIG=1"))
    return found


def _broken(plan: Plan, constraints: Sequence[UserConstraint]) -> List[Tuple[UserConstraint, str]]:
    """(constraint, pinned version) for each pin of the plan a constraint forbids."""
    from packaging.specifiers import SpecifierSet

    out: List[Tuple[UserConstraint, str]] = []
    for constraint in constraints:
        pin = plan.package(constraint.name)
        if pin is None:
            continue
        version = f"{pin.version}{pin.local_version or ''}"
        try:
            allowed = SpecifierSet(constraint.specifier).contains(Version(version), prereleases=True)
        except InvalidVersion:
            continue
        if not allowed:
            out.append((constraint, version))
    return out


def _narrowed(request: Request, constraints: Sequence[UserConstraint]) -> Optional[Request]:
    """The request with the constraints on what it asks for added; None when none applies."""
    changed = False
    texts: List[str] = []
    for text in request.requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            texts.append(text)
            continue
        for constraint in constraints:
            if canonicalize_name(req.name) == constraint.name:
                from packaging.specifiers import SpecifierSet

                req.specifier = req.specifier & SpecifierSet(constraint.specifier)
                changed = True
        texts.append(str(req))
    return dataclasses.replace(request, requirements=tuple(texts)) if changed else None


def apply_user_constraints(machine: Machine, request: Request, plan: Plan, resolve: Callable[[Request], Plan],
                           read: Read) -> Tuple[Plan, Request]:
    """The plan within the user's constraints where one exists, else the plan with a warning
    for every pin a constraint forbids."""
    if not plan.ok:
        return plan, request
    constraints = read_user_constraints(machine, read)
    broken = _broken(plan, constraints)
    if not broken:
        return plan, request
    narrowed = _narrowed(request, [c for c, _v in broken])
    if narrowed is not None:
        again = resolve(narrowed)
        if again.ok and not _broken(again, constraints):
            used = "; ".join(f"{c.name}{c.specifier} ({c.where})" for c, _v in broken)
            note = f"planned within your own constraints: {used}"
            return dataclasses.replace(again, reasons=(*again.reasons, note)), narrowed
    warnings = tuple(
        f"your constraint {c.name}{c.specifier} at {c.where} forbids the planned {c.name} {version}: "
        f"the install commands would fail; run them with {c.without}, or change the constraint"
        for c, version in broken)
    return dataclasses.replace(plan, warnings=(*plan.warnings, *warnings)), request
