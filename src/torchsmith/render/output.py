"""A plan's output in one result: its commands, its JSON, and its format rendered or written.

The CLI prints the :class:`PlanOutput` of :func:`plan_output`; nothing is decided there.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from torchsmith.errors import TorchsmithError, UsageError
from torchsmith.plan.model import Plan
from torchsmith.records import dataclass, field
from torchsmith.redact import redact
from torchsmith.render import available_formats, render, render_commands, render_files
from torchsmith.render._common import SlurmOptions

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["PlanOutput", "PlanSettings", "commands_of", "plan_output", "write_files"]


@dataclass(frozen=True)
class PlanSettings:
    """How a plan is shown: a format (printed, or written into a folder) and its options."""

    fmt: Optional[str] = None  # None: the plan for people (or JSON)
    out: Optional[str] = None  # write the format's files into this folder
    as_json: bool = False  # the caller prints JSON: render nothing to print
    options: Optional[SlurmOptions] = None  # the Slurm site conventions


@dataclass(frozen=True)
class PlanOutput:
    """One result: the plan, its commands per installer, its JSON, and what to print."""

    plan: Plan
    commands: Dict[str, List[str]]
    data: Dict[str, object]
    text: Optional[str] = None  # the rendered format, or the files written; None: describe the plan
    files: Tuple[str, ...] = field(default=())


def commands_of(plan: Plan, kb: KnowledgeBase) -> Dict[str, List[str]]:
    """Shell commands per installer; none for a plan without a stack or a renderer's refusal."""
    if not plan.ok:
        return {}
    try:
        return render_commands(plan, kb=kb)
    except TorchsmithError:  # a renderer that cannot express this plan: the plan still stands
        return {}


def plan_output(plan: Plan, kb: KnowledgeBase, settings: PlanSettings) -> PlanOutput:
    """The plan's commands and JSON, and its format rendered (printed, or written into
    ``settings.out``)."""
    if settings.fmt and settings.fmt not in available_formats():  # an error even without a stack
        raise UsageError(f"unknown format {settings.fmt!r}", code="unknown-format",
                         hint="formats: " + ", ".join(available_formats()))
    commands = commands_of(plan, kb)
    data: Dict[str, object] = plan.to_json(commands)
    if not (settings.fmt and plan.ok):
        return PlanOutput(plan, commands, data)
    if settings.out:
        written = write_files(settings.out, render_files(plan, settings.fmt, kb=kb, options=settings.options))
        data["files"] = written
        return PlanOutput(plan, commands, data, "".join(f"wrote {path}\n" for path in written),
                          tuple(written))
    if settings.as_json:  # the files the format gives, in the envelope
        files = render_files(plan, settings.fmt, kb=kb, options=settings.options)
        data["rendered"] = {"format": settings.fmt,
                            "files": {name: redact(text) for name, text in files.items()}}
        return PlanOutput(plan, commands, data)
    return PlanOutput(plan, commands, data, render(plan, settings.fmt, kb=kb, options=settings.options))


def write_files(folder: str, files: Dict[str, str]) -> List[str]:
    """Write each file into ``folder`` (created), credentials redacted; scripts become executable."""
    try:
        os.makedirs(folder, exist_ok=True)
        written = []
        for name, text in files.items():
            path = os.path.join(folder, name)
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(redact(text))
            if text.startswith("#!"):
                os.chmod(path, 0o755)
            written.append(path)
    except OSError as exc:
        raise TorchsmithError(f"cannot write into {folder}: {exc.strerror or exc}",
                              code="output-unwritable") from None
    return written
