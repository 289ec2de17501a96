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
from typing import List, Optional, Sequence, Tuple

from torchsmith.errors import InstallError
from torchsmith.plan.model import Plan
from torchsmith.plan.steps import install_steps
from torchsmith.records import dataclass

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
    """Scratch files of one install: requirement files, reports, hash inputs."""

    workdir: str

    def write(self, name: str, lines: Sequence[str]) -> str:
        path = os.path.join(self.workdir, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(f"{line}\n" for line in lines))
        return path


def groups_from_plan(plan: Plan) -> Tuple[List[Group], List[str]]:
    """The plan's install steps as groups, in order, and warnings for what cannot be installed here."""
    saved = [p for p in plan.packages if p.wheel_url and p.wheel_filename]
    if saved:  # pip refuses the URL and install downloads nothing itself
        pin = saved[0]
        raise InstallError(
            f"{pin.name} {pin.version}: NVIDIA's link {pin.wheel_url} ends in no wheel file name, "
            f"so it must be saved as {pin.wheel_filename} first, which `torchsmith install` does not do",
            code="install-needs-download",
            hint="run the steps of `torchsmith plan --format jetson` "
                 "(wget -O FILE URL, then pip install ./FILE)")
    groups = [Group(step.label, step.requirements, pinned=step.pinned,
                    index_url=step.url if step.source == "index" else None,
                    find_links=step.url if step.source == "find-links" else None,
                    no_build_isolation=step.no_build_isolation)
              for step in install_steps(plan)]
    return groups, []
