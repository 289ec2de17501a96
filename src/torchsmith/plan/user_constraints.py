"""The user's own pip/uv constraints, which every install the plan prints will obey.

pip applies ``PIP_CONSTRAINT`` and ``constraint =`` of its configuration files to every
install; uv applies ``UV_CONSTRAINT`` and ``constraint-dependencies`` of its ``uv.toml``. The
probe already reports where they are set (``machine.env``); here they are read and compared
with the plan's pins. When they only narrow the versions of what was asked for, the plan is made
again within them, and each cap names the file and line it comes from; when a pin still breaks
one, a warning names the file and line and a way on that keeps it (never switching it off).
"""

from __future__ import annotations

import re
from typing import Callable, List, Optional, Sequence, Tuple

from torchsmith.machine import Machine
from torchsmith.output import Caution
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.request import canonical_name
from torchsmith.records import dataclass, replace

__all__ = ["UserConstraint", "apply_user_constraints", "is_guard_file", "read_user_constraints",
           "with_door_caps"]

Read = Callable[[str], Optional[str]]
_CONSTRAINT_DEPS = re.compile(r"^\s*constraint-dependencies\s*=\s*\[(.*?)\]", re.S | re.M)
_QUOTED = re.compile(r"""["']([^"']+)["']""")


@dataclass(frozen=True)
class UserConstraint:
    name: str  # canonical
    specifier: str  # ">=2.5,<2.6"
    where: str  # "/home/me/constraints.txt:3 (PIP_CONSTRAINT)"
    guard: bool = False  # torchsmith's own guard file: `torchsmith install` lifts and rewrites it
    file: str = ""  # the constraints file itself


def _file_lines(path: str, via: str, read: Read) -> List[UserConstraint]:
    text = read(path)
    if text is None:
        return []
    found: List[UserConstraint] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue  # comments, options (-c other.txt, --hash ...)
        found.extend(replace(c, file=path)
                     for c in _parsed(line, f"{path}:{number} ({via})", is_guard_file(path)))
    return found


def is_guard_file(path: str) -> bool:
    """The file is torchsmith's guard (its constraints file), by its name."""
    from torchsmith.install.guard import GUARD_FILE

    return path.replace("\\", "/").rsplit("/", 1)[-1] == GUARD_FILE


def _parsed(text: str, where: str, guard: bool = False) -> List[UserConstraint]:
    from packaging.requirements import InvalidRequirement, Requirement  # only where a constraint is set

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return []
    if not str(req.specifier):
        return []
    return [UserConstraint(canonical_name(req.name), str(req.specifier), where, guard)]


def read_user_constraints(machine: Machine, read: Read) -> List[UserConstraint]:
    """Every constraint pip or uv applies on this machine, from the places the probe found."""
    found: List[UserConstraint] = []
    variables = machine.env.variables
    for path in (variables.get("PIP_CONSTRAINT") or "").split():
        found.extend(_file_lines(path, "PIP_CONSTRAINT", read))
    if "PIP_CONSTRAINT" not in variables:  # the variable replaces the configuration's constraint
        for key, value in sorted(machine.env.index_settings.items()):
            if key.startswith("pip ") and key.endswith(" constraint"):
                config = key.split(" ", 2)[1]
                for path in value.split():
                    found.extend(_file_lines(path, f"constraint in {config}", read))
    for path in (variables.get("UV_CONSTRAINT") or "").split():
        found.extend(_file_lines(path, "UV_CONSTRAINT", read))
    for key in sorted(machine.env.index_settings):
        if key.startswith("uv ") and key.endswith("constraint-dependencies"):
            config = key.split(" ", 2)[1]
            text = read(config) or ""
            match = _CONSTRAINT_DEPS.search(text)
            for item in _QUOTED.findall(match.group(1) if match else ""):
                found.extend(_parsed(item, f"{config} constraint-dependencies"))
    return found


def _broken(plan: Plan, constraints: Sequence[UserConstraint]) -> List[Tuple[UserConstraint, str]]:
    """(constraint, pinned version) for each pin of the plan a constraint forbids."""
    if not constraints:
        return []
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

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
    """The request with the constraints on what it asks for added, each with where it is written
    (the cap's reason names it); None when none applies."""
    from packaging.requirements import InvalidRequirement, Requirement

    asked = {c.name for c in constraints}  # what the plan pins: torch for `plan whisperx` too
    for text in request.requirements:
        try:
            asked.add(canonical_name(Requirement(text).name))
        except InvalidRequirement:
            continue
    extra = tuple((f"{c.name}{c.specifier}", c.where) for c in constraints if c.name in asked)
    return replace(request, constraints=(*request.constraints, *extra)) if extra else None


def _forbidden(constraint: UserConstraint, version: str, request: Request) -> str:
    """Why the printed commands would fail, and a way on that keeps the constraint."""
    if constraint.guard:
        import os
        import shlex

        prefix = os.path.dirname(constraint.file)
        python = os.path.join(prefix, "Scripts", "python.exe") if "\\" in prefix else os.path.join(
            prefix, "bin", "python")
        asked = "".join(f"{shlex.quote(text)} " for text in request.requirements) if request.explicit else ""
        return (f"torchsmith's guard pins {constraint.name}{constraint.specifier} ({constraint.where}), "
                f"which forbids the planned {constraint.name} {version}: install it with "
                f"`torchsmith install {asked}--python {shlex.quote(python)}`, which lifts the guard, "
                "verifies and writes it anew")
    return (f"your constraint {constraint.name}{constraint.specifier} at {constraint.where} forbids the "
            f"planned {constraint.name} {version}: pip/uv would refuse the install commands; change "
            f"that constraint, or ask for a stack within it ('{constraint.name}{constraint.specifier}')")


def with_door_caps(machine: Machine, request: Request, read: Read) -> Optional[Request]:
    """The request carrying the user's constraints on torch, torchvision and torchaudio, which a
    dead end's door must meet (torchsmith's guard aside: `install` lifts it); None without any."""
    caps = tuple((f"{c.name}{c.specifier}", c.where) for c in read_user_constraints(machine, read)
                 if c.name in ("torch", "torchvision", "torchaudio") and not c.guard)
    return replace(request, door_caps=caps) if caps else None


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
    narrowed = _narrowed(request, [c for c, _v in broken if not c.guard])
    if narrowed is not None:
        again = resolve(narrowed)
        if again.ok and not _broken(again, constraints):
            return again, narrowed
    # The printed commands would fail: part of the answer, never a hidden note.
    warnings = tuple(Caution(_forbidden(c, version, request)) for c, version in broken)
    return replace(plan, warnings=(*plan.warnings, *warnings)), request
