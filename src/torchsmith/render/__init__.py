"""Render a :class:`~torchsmith.plan.model.Plan` for an installer: commands or a file to save.

Pure: plan and data in, text out. What needs the machine (host facts, the base image chosen
against the driver, the conda-forge stack) is decided by the resolver and carried by the plan
(:mod:`torchsmith.plan.artifacts`); the format facts come from ``kb`` (``--kb`` reaches them).

>>> render(plan, "pip", kb=kb)            # shell commands, with a comment header
>>> render_commands(plan, kb=kb)          # {"pip": [...], "uv": [...], "conda": [...], "pixi": [...]}

A renderer is ``fn(plan, inputs) -> str`` (:class:`RenderInputs`: the kb and the options).

Other formats register themselves: a module of this package (``torchsmith/render/<name>.py``)
calls :func:`register_format` at import or defines a ``RENDERERS`` mapping (format -> renderer);
it is imported the first time an unknown format is asked for (or :func:`available_formats` is
called), so adding one needs no edit here.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Tuple

from torchsmith.errors import TorchsmithError, UsageError
from torchsmith.plan.artifacts import attach_artifacts
from torchsmith.plan.model import Plan
from torchsmith.render._common import (
    RenderInputs,
    SlurmOptions,
    Sources,
    exact_pin,
    header_lines,
    require_ok,
    requirement,
    shell_join,
    sources,
)
from torchsmith.render.conda import conda_argvs, pixi_argvs, render_conda, render_pixi
from torchsmith.render.jetson import render_jetson
from torchsmith.render.pip import (
    install_argvs,
    render_pip,
    render_requirements,
    render_uv,
    requirement_files,
)
from torchsmith.render.pyproject import render_pyproject

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = [
    "FORMATS",
    "RenderInputs",
    "Renderer",
    "SlurmOptions",
    "Sources",
    "available_formats",
    "exact_pin",
    "header_lines",
    "install_argvs",
    "load_format_module",
    "register_format",
    "render",
    "render_commands",
    "render_files",
    "require_ok",
    "requirement",
    "requirement_files",
    "shell_join",
    "sources",
]

Renderer = Callable[[Plan, RenderInputs], str]
FileRenderer = Callable[[Plan, RenderInputs], Dict[str, str]]

_RENDERERS: Dict[str, Renderer] = {
    "pip": render_pip,
    "requirements": render_requirements,
    "uv": render_uv,
    "pyproject": render_pyproject,
    "conda": render_conda,
    "pixi": render_pixi,
    "jetson": render_jetson,
}
FORMATS: Tuple[str, ...] = tuple(_RENDERERS)
# The file each format is saved as with `plan --out DIR` (a format module may add its own
# ``FILE_NAMES``, or ``FILES`` for formats that write several files).
FILE_NAMES: Dict[str, str] = {
    "pip": "install.sh", "requirements": "requirements.txt", "uv": "install-uv.sh",
    "pyproject": "pyproject.toml", "conda": "environment.yml", "pixi": "pixi.toml",
    "jetson": "install-jetson.sh",
}
# requirements: one file per index (--index-url applies to every line of a file).
_MULTI_FILE: Dict[str, FileRenderer] = {"requirements": requirement_files}
_plugins_loaded = False


def register_format(name: str, renderer: Renderer) -> None:
    """Add a format (``dockerfile``, ``slurm``...). Built-in formats cannot be replaced."""
    if name in FORMATS and _RENDERERS.get(name) is not renderer:
        raise ValueError(f"format {name!r} is built in")
    _RENDERERS[name] = renderer


def load_format_module(name: str) -> None:
    """Import a module of formats: it calls :func:`register_format`, or has a ``RENDERERS``
    mapping of format name to renderer, registered here.
    """
    module = importlib.import_module(name)
    table = getattr(module, "RENDERERS", None)
    if isinstance(table, Mapping):
        for fmt, renderer in table.items():
            if fmt not in _RENDERERS:
                register_format(fmt, renderer)
    FILE_NAMES.update(getattr(module, "FILE_NAMES", None) or {})
    _MULTI_FILE.update(getattr(module, "FILES", None) or {})


def _load_plugins() -> None:
    """Load every public module of this package (those with formats register them), once."""
    global _plugins_loaded  # noqa: PLW0603 - once per process
    if _plugins_loaded:
        return
    _plugins_loaded = True
    import pkgutil

    for module in pkgutil.iter_modules([os.path.dirname(os.path.abspath(__file__))]):
        if not module.name.startswith("_"):
            load_format_module(f"{__name__}.{module.name}")


def available_formats() -> Tuple[str, ...]:
    """The built-in formats, then those other modules registered (for ``--format`` choices)."""
    _load_plugins()
    return FORMATS + tuple(sorted(n for n in _RENDERERS if n not in FORMATS))


def _renderer(fmt: str) -> Renderer:
    renderer = _RENDERERS.get(fmt)
    if renderer is None:
        _load_plugins()
        renderer = _RENDERERS.get(fmt)
    if renderer is None:
        raise UsageError(
            f"unknown format {fmt!r}",
            code="unknown-format",
            hint="formats: " + ", ".join(available_formats()),
        )
    return renderer


def _attached(plan: Plan, kb: KnowledgeBase) -> Plan:
    """A plan not from resolve() (built by hand) gets the artifacts it can have without a machine."""
    return plan if plan.host is not None else attach_artifacts(plan, None, kb)


def render(plan: Plan, fmt: str, *, kb: KnowledgeBase, options: Optional[SlurmOptions] = None) -> str:
    """The text of ``plan`` in ``fmt``, starting with a comment header (torchsmith, kb, platform).

    Raises :class:`TorchsmithError`: ``unknown-format``; ``no-solution`` for a plan without a
    stack; ``format-not-applicable`` when the format cannot express the plan (conda on a Jetson).
    """
    renderer = _renderer(fmt)
    return renderer(_attached(plan, kb), RenderInputs(kb, options))


def render_files(plan: Plan, fmt: str, *, kb: KnowledgeBase,
                 options: Optional[SlurmOptions] = None) -> Dict[str, str]:
    """``{file name: text}`` for ``plan --out DIR``: one file per artifact (Slurm: two jobs)."""
    plan = _attached(plan, kb)
    text = render(plan, fmt, kb=kb, options=options)  # validates the format and the plan first
    several = _MULTI_FILE.get(fmt)
    if several is not None:
        return several(plan, RenderInputs(kb, options))
    name = FILE_NAMES.get(fmt, f"torchsmith-plan.{fmt}")
    if fmt == "pip" and plan.platform.startswith("windows"):
        name = "install.ps1"
    return {name: text}


def render_commands(plan: Plan, *, kb: KnowledgeBase) -> Dict[str, List[str]]:
    """Shell commands per installer, in order; an installer that cannot express the plan (conda
    on a Jetson) or a plan without a stack gets an empty list.
    """
    commands: Dict[str, List[str]] = {"pip": [], "uv": [], "conda": [], "pixi": []}
    if not (plan.ok and plan.packages):
        return commands
    plan = _attached(plan, kb)
    commands["pip"] = [shell_join(a, plan.platform) for a in install_argvs(plan, "pip")]
    commands["uv"] = [shell_join(a, plan.platform) for a in install_argvs(plan, "uv")]
    builds = (("conda", conda_argvs), ("pixi", lambda p: pixi_argvs(p, kb.document("formats"))))
    for name, build in builds:
        try:
            commands[name] = [shell_join(a, plan.platform) for a in build(plan)]
        except TorchsmithError as exc:
            if exc.code != "format-not-applicable":
                raise
    return commands
