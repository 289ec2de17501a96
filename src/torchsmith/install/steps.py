"""Install steps: which packages come from which source (the commands: :mod:`.installers`).

Each :class:`Group` installs from one source. A *pinned* group (the PyTorch index) runs with
every other index switched off, including ones from the user's pip/uv configuration and
environment, so a same-named package elsewhere can never be picked: the torchtriton dependency
confusion of December 2022. The other groups use the user's configured index, constrained to
what the pinned groups installed, so they can neither swap torch nor pull a torch dependency
from another index.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from torchsmith.errors import InstallError
from torchsmith.plan.model import Plan

__all__ = ["Group", "StepFiles", "groups_from_plan"]


@dataclass(frozen=True)
class Group:
    label: str  # "torch, torchvision from https://download.pytorch.org/whl/cu126"
    requirements: Tuple[str, ...]  # requirement lines, with --hash options when locked
    index_url: Optional[str] = None  # None: the user's configured index
    find_links: Optional[str] = None
    pinned: bool = False  # only this source: the user's other indexes are switched off
    no_deps: bool = False  # a lock lists the whole closure
    require_hashes: bool = False
    no_build_isolation: bool = False  # a source build compiles against the torch just installed


@dataclass(frozen=True)
class StepFiles:
    """Scratch files of one install: requirement files, reports, the neutral pip settings."""

    workdir: str

    @property
    def empty_dir(self) -> str:  # PIP_FIND_LINKS for pinned groups: no extra local wheels
        path = os.path.join(self.workdir, "no-links")
        os.makedirs(path, exist_ok=True)
        return path

    @property
    def empty_file(self) -> str:  # PIP_CONSTRAINT for pinned groups: no inherited constraints
        path = os.path.join(self.workdir, "no-constraints.txt")
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8"):
                pass
        return path

    def write(self, name: str, lines: Sequence[str]) -> str:
        path = os.path.join(self.workdir, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(f"{line}\n" for line in lines))
        return path


def groups_from_plan(plan: Plan) -> Tuple[List[Group], List[str]]:
    """The plan's install groups in order, and warnings for what cannot be installed here."""
    from torchsmith.plan.render._common import exact_pin, requirement, sources

    src = sources(plan)
    saved = [p for p in src.wheels if p.wheel_filename]
    if saved:  # pip refuses the URL and install downloads nothing itself
        pin = saved[0]
        raise InstallError(
            f"{pin.name} {pin.version}: NVIDIA's link {pin.wheel_url} ends in no wheel file name, "
            f"so it must be saved as {pin.wheel_filename} first, which `torchsmith install` does not do",
            code="install-needs-download",
            hint="run the steps of `torchsmith plan --format jetson` "
                 "(wget -O FILE URL, then pip install ./FILE)")
    groups: List[Group] = []
    for url, pins in src.indexes:
        names = ", ".join(p.name for p in pins)
        groups.append(Group(f"{names} from {url}", tuple(exact_pin(p) for p in pins),
                            index_url=url, pinned=True))
    if src.wheels:
        groups.append(Group(", ".join(p.name for p in src.wheels) + " from their wheel URLs",
                            tuple(requirement(p) for p in src.wheels)))
    for url, pins in src.find_links:
        groups.append(Group(f"{', '.join(p.name for p in pins)} from {url}",
                            tuple(exact_pin(p) for p in pins), find_links=url))
    if src.default:
        groups.append(Group(", ".join(p.name for p in src.default) + " from your configured index",
                            tuple(exact_pin(p) for p in src.default)))
    if src.source_builds:
        groups.append(Group(", ".join(p.name for p in src.source_builds)
                            + " built from source against the planned torch",
                            tuple(exact_pin(p) for p in src.source_builds), no_build_isolation=True))
    return groups, []
