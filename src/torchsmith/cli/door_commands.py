"""The ways out of a dead end, as commands that describe the same machine the user described.

A door's command changes one thing (``--python 3.10``, ``torch==2.2.0``); every other flag that
described the machine (``--gpu``, ``--driver``, ``--host`` …) is carried over, or running it
would plan for the machine torchsmith runs on instead.
"""

from __future__ import annotations

import argparse
import re
import shlex
from typing import Dict, FrozenSet, List, Tuple

from torchsmith.plan.model import Plan
from torchsmith.records import replace

__all__ = ["plan_command_for", "with_machine_flags"]

# (argparse attribute, flag), in the order they are written back.
_DESCRIBING: Tuple[Tuple[str, str], ...] = (
    ("host", "--host"), ("platform", "--platform"), ("python", "--python"), ("gpu", "--gpu"),
    ("driver", "--driver"), ("driver_cuda", "--driver-cuda"), ("no_gpu", "--no-gpu"),
    ("jetson", "--jetson"), ("rocm_gfx", "--rocm-gfx"), ("rocm_version", "--rocm-version"),
    ("glibc", "--glibc"), ("kb", "--kb"),
)
_GPU_FACTS = frozenset({"--gpu", "--driver", "--driver-cuda", "--jetson", "--rocm-gfx", "--rocm-version"})
# A flag the door sets itself replaces the user's flags that would contradict it.
_REPLACES: Dict[str, FrozenSet[str]] = {
    "--no-gpu": _GPU_FACTS,
    "--gpu": frozenset({"--gpu", "--no-gpu"}),
    "--driver": frozenset({"--driver", "--driver-cuda", "--no-gpu"}),
    "--python": frozenset({"--python"}),
    "--glibc": frozenset({"--glibc"}),
}


def _carried(command: str, args: argparse.Namespace) -> str:
    if not command.startswith("torchsmith plan"):
        return command
    own = {word for word in shlex.split(command) if word.startswith("--")}
    dropped = set(own)
    for flag in own:
        dropped |= _REPLACES.get(flag, frozenset())
    extra: List[str] = []
    for attr, flag in _DESCRIBING:
        value = getattr(args, attr, None)
        if flag in dropped or value in (None, False, "", []):
            continue
        if value is True:
            extra.append(flag)
        else:
            for item in value if isinstance(value, list) else [value]:
                extra += [flag, str(item)]
    return " ".join([command, *(shlex.quote(word) for word in extra)])


def plan_command_for(args: argparse.Namespace, *extra: str) -> str:
    """``torchsmith plan [extra]`` describing the machine ``args`` described (the summary's pointers)."""
    return _carried(" ".join(("torchsmith plan", *extra)), args)


# A choice names its command in parentheses: "with torchaudio instead: ... (torchsmith plan ...)".
_CHOICE_COMMAND = re.compile(r"\((torchsmith plan [^()]*)\)")


def with_machine_flags(plan: Plan, args: argparse.Namespace) -> Plan:
    """``plan`` whose ways out (and the commands its choices name) keep describing the machine
    that ``args`` described."""
    if not plan.alternatives and not plan.choices:
        return plan
    doors = tuple(replace(d, command=_carried(d.command, args)) for d in plan.alternatives)
    choices = tuple(_CHOICE_COMMAND.sub(lambda m: f"({_carried(m.group(1), args)})", c) for c in plan.choices)
    return replace(plan, alternatives=doors, choices=choices)
