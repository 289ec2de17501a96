"""The ``torchsmith plan`` flags that describe the machine a text names (its GPU, driver, Python),
for the plan explain's fix runs on that machine. Pure: no I/O."""

from __future__ import annotations

from typing import List, Optional

from torchsmith.explain.extract.model import Environment
from torchsmith.explain.reason import capability
from torchsmith.explain.triggers import named_capabilities
from torchsmith.kb import KnowledgeBase

__all__ = ["plan_flags"]


def plan_flags(env: Environment, kb: Optional[KnowledgeBase]) -> str:
    """``torchsmith plan`` flags describing the machine the text names ("" when it names none)."""
    flags: List[str] = []  # no --platform: the fix runs the plan on the machine that shows the error
    named = named_capabilities(env, kb)
    cc = capability(env, {}, kb)
    if cc:
        name = named[0][0] if named and named[0][1] == cc else ""
        flags.append(f"--gpu '{cc}:{name}'" if name else f"--gpu {cc}")
    if env.driver:
        flags.append(f"--driver {env.driver}")
    elif env.driver_cuda:
        flags.append(f"--driver-cuda {env.driver_cuda}")
    if env.python:
        flags.append(f"--python {env.python}")
    return " ".join(flags)
