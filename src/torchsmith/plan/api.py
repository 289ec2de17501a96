"""``torchsmith plan`` as a library: the plan for a machine, within the user's pip/uv settings.

The CLI parses its flags into a :class:`~torchsmith.plan.model.Request`, calls
:func:`make_plan`, and shows the result through :func:`torchsmith.render.output.plan_output`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from torchsmith.machine import Machine
from torchsmith.output import Caution
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.request import parse_requirements, read_pyproject, read_requirements_file
from torchsmith.plan.resolve import resolve
from torchsmith.plan.user_constraints import Read, apply_user_constraints, with_door_caps
from torchsmith.records import replace

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["INSTALLED_TORCH_CHANGES", "extra_sources_warning", "make_plan", "optional_choices",
           "replaces_installed_torch", "requested", "unread_constraints", "user_constrained"]


def requested(texts: Sequence[str], files: Sequence[str] = (), project: Optional[str] = None,
              origins: Optional[Dict[str, str]] = None) -> Tuple[Tuple[str, ...], bool]:
    """(requirements, stated): requirement texts, then the lines of requirement files and a
    pyproject's dependencies; the default stack when none is given (``stated`` False).
    ``origins`` gets where each line from a file is written (``reqs.txt:3``).

    Raises :class:`~torchsmith.errors.RequirementError` for garbage in ``texts`` before any
    file is read.
    """
    wanted: List[str] = list(texts)
    parse_requirements(wanted)
    for path in files:
        wanted.extend(read_requirements_file(path, origins=origins))
    if project:
        found = read_pyproject(project)
        wanted.extend(found)
        if origins is not None:
            origins.update((text, project) for text in found if text not in origins)
    return (tuple(wanted) if wanted else Request().requirements), bool(texts or files or project)


def user_constrained(machine: Machine, request: Request, plan: Plan, kb: KnowledgeBase,
                     read: Optional[Read]) -> Tuple[Plan, Request]:
    """pip and uv will apply the user's constraint files to the printed commands: plan within
    them, or say which pin they forbid. ``read`` None: the files are not on this machine
    (a ``--host`` profile, a described machine), so nothing to apply."""
    env = machine.env
    if read is None or not (
            "PIP_CONSTRAINT" in env.variables or "UV_CONSTRAINT" in env.variables
            or any(key.endswith(("constraint", "constraint-dependencies")) for key in env.index_settings)):
        return plan, request
    # A door names a release (or keeps one), on a dead end or next to a CPU fallback: one that
    # pip/uv would refuse is no way out, so the doors are found again within the caps.
    capped = (with_door_caps(machine, request, read)
              if any(door.kind in ("release", "python") for door in plan.alternatives) else None)
    if capped is not None:
        plan, request = resolve(machine, capped, kb), capped
    if not plan.ok:
        return plan, request
    return apply_user_constraints(machine, request, plan, lambda again: resolve(machine, again, kb), read)


def make_plan(machine: Machine, request: Request, kb: KnowledgeBase, *, read: Optional[Read],
              described: bool = False, lifting_guard: bool = False, profile: bool = False
              ) -> Tuple[Plan, Request]:
    """The one answer to "which stack to install": the summary, ``plan``, doctor's fixes,
    ``fleet`` and ``install`` all ask here.

    The plan for ``machine`` within the user's constraint files (``read`` reads them; None for a
    machine that is not this one), the choice an optional package of the default stack leaves
    (:func:`optional_choices`), and a warning where the user's pip/uv settings add sources next
    to the PyTorch index. ``described``: flags or a profile describe another machine, so this
    one's constraints, CPU count and configured sources say nothing of it. ``lifting_guard``:
    the caller is ``install``, which lifts torchsmith's guard, so its pins are no limit.
    ``profile``: the machine is a ``--host`` profile, which names its constraint files but
    does not hold them.
    """
    if described:
        read = None
    elif lifting_guard and read is not None:  # `install` lifts torchsmith's guard and writes it anew
        read = _without_guard(read)
    plan, request = user_constrained(machine, request, resolve(machine, request, kb), kb, read)
    choices = optional_choices(machine, request, plan, kb, read)
    if choices:  # they say it, with the way to keep torchaudio
        plan = replace(plan, choices=choices, warnings=tuple(
            w for w in plan.warnings if not w.startswith("no torchaudio release pairs with")))
    if described and plan.host is not None:
        plan = replace(plan, host=replace(plan.host, cpu_count=0))
    leak = (extra_sources_warning(machine) if plan.ok and not described
            and any(p.index_url for p in plan.packages) else None)
    if leak:
        plan = replace(plan, warnings=(*plan.warnings, leak))
    unread = unread_constraints(machine) if profile and read is None and plan.ok else None
    if unread is not None:
        plan = replace(plan, warnings=(*plan.warnings, unread))
    replacing = replaces_installed_torch(plan, request)
    if replacing is not None:  # it decides whether the command is safe to run: part of the answer
        plan = replace(plan, warnings=(replacing, *plan.warnings))
    return plan, request


def unread_constraints(machine: Machine) -> Optional[Caution]:
    """A profile names the constraint files its pip/uv applies, not what they hold: a pin they
    forbid would make the command fail there, so say which files to check (None: it names none)."""
    env = machine.env
    pip = (env.variables.get("PIP_CONSTRAINT") or "").split()
    if "PIP_CONSTRAINT" not in env.variables:  # the variable replaces the configuration's
        pip = [path for key, value in sorted(env.index_settings.items())
               if key.startswith("pip ") and key.endswith(" constraint") for path in value.split()]
    uv = (env.variables.get("UV_CONSTRAINT") or "").split()
    uv += [key.split(" ", 2)[1] for key in sorted(env.index_settings)
           if key.startswith("uv ") and key.endswith("constraint-dependencies") and len(key.split(" ")) > 2]
    files = list(dict.fromkeys([*pip, *uv]))
    if not files:
        return None
    tool = "pip/uv" if pip and uv else ("pip" if pip else "uv")
    return Caution(f"the node's {tool} applies constraints from {', '.join(files)}, which torchsmith "
                   f"cannot read from a profile: check them there ({tool} refuses a pin they forbid)")


# How a caution saying the installed torch cannot stay begins (plan/resolve.py's, and the one below).
INSTALLED_TORCH_CHANGES = "the installed torch "


def replaces_installed_torch(plan: Plan, request: Request) -> Optional[Caution]:
    """The plan pins another torch than the environment has: its command replaces that torch,
    which may be working. None when it keeps it, or a caution already says it must change."""
    have = dict(request.installed).get("torch")
    pin = plan.package("torch")
    if (not plan.ok or have is None or pin is None or not pin.version
            or have == pin.version + (pin.local_version or "")
            or any(w.startswith(INSTALLED_TORCH_CHANGES) for w in plan.warnings)):
        return None
    public = have.partition("+")[0]
    return Caution(f"{INSTALLED_TORCH_CHANGES}{have} is replaced by {pin.version}{pin.local_version or ''}: "
                   f"to keep it, plan for 'torch=={public}'")


def _without_guard(read: Read) -> Read:
    from torchsmith.plan.user_constraints import is_guard_file

    return lambda path: None if is_guard_file(path) else read(path)


def optional_choices(machine: Machine, request: Request, plan: Plan, kb: KnowledgeBase,
                     read: Optional[Read]) -> Tuple[str, ...]:
    """The default stack leaves torchaudio out where none pairs with the newest torch that fits:
    one line saying so, one giving the stack with it and the command for that."""
    from torchsmith.plan.core import is_default

    if not (plan.ok and is_default(request) and plan.package("torchaudio") is None
            and plan.package("torch") is not None):
        return ()
    torch = plan.package("torch")
    assert torch is not None
    kept = replace(request, explicit=True)
    older, _request = user_constrained(machine, kept, resolve(machine, kept, kb), kb, read)
    older_torch = older.package("torch")
    if not older.ok or older.package("torchaudio") is None or older_torch is None:
        return (f"torchaudio is left out: none pairs with torch {torch.version}, nor with any "
                "older torch that works here",)
    stack = " ".join(p.requirement for p in older.packages)
    return (f"torchaudio is left out: none pairs with torch {torch.version}; the newest torch "
            f"that has one here is {older_torch.version}",
            f"with torchaudio instead: {stack} (torchsmith plan torch torchvision torchaudio)")


# The start of the warning above: it concerns the pip and uv of this machine, so only the
# formats run by them repeat it (not a Dockerfile, a conda or pixi file, a pyproject).
EXTRA_SOURCES_WARNING = "your pip/uv configuration adds package sources to every install"
_EXTRA_SOURCES = ("extra-index-url", "find-links", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS",
                  "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_FIND_LINKS")


def extra_sources_warning(machine: Machine) -> Optional[str]:
    """pip and uv add configured extra indexes to any --index-url: say where that happens.

    Then a same-named package on such an index can still win over the PyTorch index.
    """
    found = [key for key in machine.env.index_settings if key.endswith(_EXTRA_SOURCES)]
    found += [key for key in machine.env.variables if key in _EXTRA_SOURCES]
    if not found:
        return None
    return (f"{EXTRA_SOURCES_WARNING} ("
            + "; ".join(sorted(found)) + "): they are searched next to the PyTorch index, so a "
            "same-named package there could still win. Run the torch command with "
            "PIP_EXTRA_INDEX_URL= PIP_FIND_LINKS= (uv: UV_INDEX= UV_EXTRA_INDEX_URL= UV_FIND_LINKS=), "
            "or let `torchsmith install` do it (your constraints still apply)")
