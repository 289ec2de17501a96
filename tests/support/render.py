"""The renderers as the tests call them: a plan and, where the test has one, the machine.

The library renders ``render(plan, fmt, kb=kb)`` a plan that carries its host facts, base image
and conda stack (attached by resolve()); here they are attached for the test's machine, or for
none (the plan's own facts only), with the packaged data unless a test gives its own kb.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Optional

from torchsmith import render as api
from torchsmith.kb import KnowledgeBase, load_kb
from torchsmith.machine import Machine
from torchsmith.plan.artifacts import attach_artifacts
from torchsmith.plan.model import BaseImage, CondaStack, Plan
from torchsmith.render._common import RenderInputs, SlurmOptions

__all__ = ["attached", "base_image", "packaged_kb", "render", "render_commands", "render_files",
           "slurm_scripts", "stack"]


@lru_cache(maxsize=1)
def packaged_kb() -> KnowledgeBase:
    return load_kb(None)


def attached(plan: Plan, machine: Optional[Machine] = None, kb: Optional[KnowledgeBase] = None) -> Plan:
    return attach_artifacts(plan, machine, kb or packaged_kb())


def render(plan: Plan, fmt: str, machine: Optional[Machine] = None,
           options: Optional[SlurmOptions] = None) -> str:
    return api.render(attached(plan, machine), fmt, kb=packaged_kb(), options=options)


def render_files(plan: Plan, fmt: str, machine: Optional[Machine] = None,
                 options: Optional[SlurmOptions] = None) -> Dict[str, str]:
    return api.render_files(attached(plan, machine), fmt, kb=packaged_kb(), options=options)


def render_commands(plan: Plan, machine: Optional[Machine] = None) -> Dict[str, List[str]]:
    return api.render_commands(attached(plan, machine), kb=packaged_kb())


def slurm_scripts(plan: Plan, machine: Optional[Machine] = None,
                  options: Optional[SlurmOptions] = None) -> Dict[str, str]:
    from torchsmith.render.slurm import slurm_scripts as scripts

    return scripts(attached(plan, machine), RenderInputs(packaged_kb(), options))


def base_image(plan: Plan, machine: Optional[Machine] = None) -> BaseImage:
    """The Dockerfile base image the plan carries for ``machine``."""
    from torchsmith.plan.images import choose_base_image

    return choose_base_image(plan, machine, packaged_kb())


def stack(plan: Plan, fmt: str = "conda") -> CondaStack:
    """The conda-forge stack of ``plan`` (raises when conda cannot express it)."""
    from torchsmith.plan.conda_env import conda_stack

    return conda_stack(plan, packaged_kb(), fmt)
