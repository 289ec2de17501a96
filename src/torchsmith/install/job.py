"""One install's request (:class:`InstallJob`) and result (:class:`InstallOutcome`)."""

from __future__ import annotations

from dataclasses import field
from typing import Any, Dict, List, Optional, Tuple

from torchsmith.errors import InstallError
from torchsmith.install.installers import Installer
from torchsmith.install.lock import Lock
from torchsmith.install.steps import Group
from torchsmith.install.target import Target
from torchsmith.plan.conflict_words import Pairing
from torchsmith.records import dataclass

__all__ = ["InstallInterrupted", "InstallJob", "InstallOutcome"]


class InstallInterrupted(InstallError):
    code = "install-interrupted"


@dataclass
class InstallJob:
    """Everything one install needs, decided before anything changes."""

    target: Target
    installer: Installer
    groups: List[Group]
    expect: str = "cpu"  # the device verify must find: cpu | cuda | rocm | mps
    lock: Lock = field(default_factory=lambda: Lock(packages=[]))  # metadata for the written lock
    lock_path: Optional[str] = None  # default: <prefix>/torchsmith.lock.json
    guard: bool = True
    timeout: float = 3600.0
    verify_timeout: float = 300.0
    pairing: Optional[Pairing] = None  # names the release that pairs when a resolver refuses


@dataclass
class InstallOutcome:
    target: Target
    installer: str
    steps: List[Dict[str, Any]] = field(default_factory=list)
    changed: Dict[str, Tuple[Optional[str], str]] = field(default_factory=dict)  # name -> (old, new)
    verify: Dict[str, Any] = field(default_factory=dict)
    lock_path: Optional[str] = None
    guard_file: Optional[str] = None
    export_path: Optional[str] = None
    seconds: Dict[str, float] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)
    notices: List[str] = field(default_factory=list)  # of the warnings, those shown without -v

    def notice(self, text: str) -> None:
        self.notices.append(text)
        self.warnings.append(text)

    def to_json(self) -> Dict[str, Any]:
        return {
            "python": self.target.python,
            "prefix": self.target.prefix,
            "kind": self.target.kind,
            "new_environment": self.target.new,
            "installer": self.installer,
            "steps": self.steps,
            "changed": {k: {"from": old, "to": new} for k, (old, new) in sorted(self.changed.items())},
            "verify": self.verify,
            "lock": self.lock_path,
            "guard": self.guard_file,
            "export": self.export_path,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }
