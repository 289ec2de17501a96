"""What a build preflight finds: the values the checks (CUDA, ROCm, cmake) fill in."""

from __future__ import annotations

from dataclasses import field
from typing import Any, Dict, List, Optional, Tuple

from torchsmith.records import dataclass

__all__ = ["Finding", "Preflight"]


@dataclass(frozen=True)
class Finding:
    code: str  # kebab-case: memory-low, cmake-too-old, gcc-too-new, ...
    severity: str  # "error" (the build fails) | "warning" (slow, fragile or wrong result) | "ok"
    message: str
    fix: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "message": self.message, "fix": self.fix}


@dataclass
class Preflight:
    kind: str  # "cuda" | "rocm"
    prefix: Optional[str]
    findings: List[Finding] = field(default_factory=list)
    facts: Dict[str, Any] = field(default_factory=dict)
    exports: List[Tuple[str, str]] = field(default_factory=list)  # what the script sets
    requirements: Dict[str, Any] = field(default_factory=dict)  # the kb's buildreqs document

    @property
    def problems(self) -> List[Finding]:
        return [f for f in self.findings if f.severity != "ok"]

    def add(self, code: str, severity: str, message: str, fix: Optional[str] = None) -> None:
        self.findings.append(Finding(code, severity, message, fix))
