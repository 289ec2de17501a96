"""What the doctor says: findings with a stable code, the facts behind them, and the fix."""

from __future__ import annotations

from dataclasses import field
from typing import Any, Dict, List, Tuple

from torchsmith.records import dataclass

__all__ = ["SEVERITIES", "Diagnosis", "Fact", "Finding"]

# Worst first: the order findings are shown in.
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Fact:
    """One observation and where it was read (a probe field, a file, a command)."""

    text: str
    source: str

    def to_json(self) -> Dict[str, str]:
        return {"text": self.text, "source": self.source}


@dataclass(frozen=True)
class Finding:
    code: str  # stable kebab-case, documented in docs/findings.md
    severity: str  # error | warning | info
    title: str  # one line: what is wrong, found vs needed
    facts: Tuple[Fact, ...] = ()
    fix: Tuple[str, ...] = ()  # exact commands, in order
    note: str = ""  # what it means, when the title cannot say it all

    def to_json(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "title": self.title,
            "facts": [f.to_json() for f in self.facts],
            "fix": list(self.fix),
            "note": self.note,
        }

    @property
    def rank(self) -> int:
        return SEVERITIES.index(self.severity) if self.severity in SEVERITIES else len(SEVERITIES)


@dataclass
class Diagnosis:
    """The environment as inspected, and what is wrong with it, worst first."""

    environment: Dict[str, Any]
    findings: List[Finding] = field(default_factory=list)

    @property
    def errors(self) -> List[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def healthy(self) -> bool:
        return not self.errors

    def to_json(self) -> Dict[str, Any]:
        return {
            "environment": self.environment,
            "findings": [f.to_json() for f in self.findings],
            "healthy": self.healthy,
        }
