"""The plan being assembled: the mutable record the planners fill, and the frozen Plan it becomes.

Each planner creates the draft it returns (``plan_cpu(job, constraints, why) -> Draft``) and
fills it with pins, reasons, rejections and warnings; a planner that falls back to another
(CUDA to CPU, Jetson Thor to CUDA) returns ``what_it_found.then(other_planner(...))``.
``resolve`` may try the request with and without its soft preferences and keep one draft;
:meth:`Draft.finish` turns it into the :class:`~torchsmith.plan.model.Plan` (duplicates folded,
the data rows the stack relies on that are ``uncertain`` named).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.plan.hostview import HostView
from torchsmith.plan.model import Blocker, Door, PackagePin, Plan, Rejection
from torchsmith.records import dataclass, field

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["Draft"]


@dataclass
class Draft:
    """A plan being assembled (see the module docstring); ``status`` is "ok" or "no-solution"."""

    status: str = "ok"
    accelerator: Optional[str] = None  # None: not decided, "cpu" in the plan
    packages: List[PackagePin] = field(default_factory=list)
    reasons: List[str] = field(default_factory=list)
    rejected: List[Rejection] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    prerequisites: List[str] = field(default_factory=list)
    environment: List[Tuple[str, str]] = field(default_factory=list)
    conda: Dict[str, Any] = field(default_factory=dict)
    variant: Optional[str] = None
    python: str = ""
    blocker: Optional[Blocker] = None
    alternatives: List[Door] = field(default_factory=list)
    assumptions: List[str] = field(default_factory=list)
    unplanned: List[str] = field(default_factory=list)  # requirements left to the configured index

    def reject(self, rejection: Rejection) -> None:
        """Add a rejection unless the same candidate is already rejected."""
        if all(r.candidate != rejection.candidate for r in self.rejected):
            self.rejected.append(rejection)

    def then(self, later: Draft) -> Draft:
        """This draft's findings followed by ``later``, the plan a fallback made after them.

        Lists are joined (rejections of a candidate already rejected are dropped); the status
        and the plan's own facts (accelerator, variant, Python, blocker) are ``later``'s where
        it decided them.
        """
        joined = Draft(
            status=later.status,
            accelerator=later.accelerator or self.accelerator,
            packages=self.packages + later.packages,
            reasons=self.reasons + later.reasons,
            rejected=list(self.rejected),
            warnings=self.warnings + later.warnings,
            prerequisites=self.prerequisites + later.prerequisites,
            environment=self.environment + later.environment,
            conda={**self.conda, **later.conda},
            variant=later.variant or self.variant,
            python=later.python or self.python,
            blocker=later.blocker or self.blocker,
            alternatives=self.alternatives + later.alternatives,
            assumptions=self.assumptions + later.assumptions,
            unplanned=self.unplanned + later.unplanned,
        )
        for rejection in later.rejected:
            joined.reject(rejection)
        return joined

    def finish(self, view: HostView, kb: KnowledgeBase) -> Plan:
        """The frozen plan."""
        return Plan(
            status=self.status,
            packages=tuple(self.packages) if self.status == "ok" else (),
            platform=view.shown_platform,
            python=self.python or view.python,
            accelerator=self.accelerator or "cpu",
            variant=self.variant if self.status == "ok" else None,
            reasons=tuple(dict.fromkeys(self.reasons)),
            rejected=_compact(self.rejected),
            warnings=tuple(dict.fromkeys(self.warnings)),
            system_prerequisites=tuple(dict.fromkeys(self.prerequisites)),
            environment=tuple(self.environment),
            conda=dict(self.conda),
            kb_version=str(getattr(kb, "kb_version", "")),
            uncertain=_uncertain_rows(kb, self, view.platform) if self.status == "ok" else (),
            blocker=self.blocker,
            alternatives=tuple(dict.fromkeys(self.alternatives)),
            assumptions=tuple(dict.fromkeys(self.assumptions)),
            unplanned=tuple(dict.fromkeys(self.unplanned)) if self.status == "ok" else (),
        )


def _uncertain_rows(kb: KnowledgeBase, draft: Draft, platform: str) -> Tuple[str, ...]:
    """The rows of the data the chosen stack relies on that are marked ``uncertain``."""
    torch = next((p for p in draft.packages if p.name == "torch"), None)
    release = kb.release(torch.version) if torch is not None and not torch.wheel_url else None
    if release is None:
        return ()
    lines: List[str] = []
    if release.uncertain:
        lines.append(f"torch {release.version}: its release row (Python wheels, companion versions)")
    build = release.variant(draft.variant) if draft.variant else None
    if build is not None and build.uncertain:
        lines.append(f"torch {release.version} {build.name}: its build row (platforms, compiled archs)")
    elif build is not None and platform in build.unverified:
        lines.append(f"torch {release.version} {build.name}: its {platform} arch list (not read from "
                     f"the release branch's own build script)")
    toolkit = kb.cuda_release(build.cuda) if build is not None and build.cuda else None
    if toolkit is not None and toolkit.uncertain:
        lines.append(f"CUDA {toolkit.version}: its driver minimums")
    return tuple(lines)


def _compact(rejections: Sequence[Rejection]) -> Tuple[Rejection, ...]:
    """Fold the same failure across patch releases into one line: ``torch 2.12.0 … 2.15.0 cpu``."""
    groups: Dict[Tuple[str, str, str], List[Tuple[str, Rejection]]] = {}
    order: List[Tuple[str, str, str]] = []
    for rejection in rejections:
        parts = rejection.candidate.split(" ")
        if len(parts) == 3 and parts[0] == "torch":
            key = (rejection.code, parts[2], rejection.reason.replace(parts[1], "{v}"))
        else:
            key = (rejection.code, rejection.candidate, rejection.reason)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((parts[1] if len(parts) == 3 else "", rejection))
    out: List[Rejection] = []
    for key in order:
        members = groups[key]
        first = members[0][1]
        if len(members) == 1:
            out.append(first)
            continue
        versions = [v for v, _ in members]
        span = f"torch {versions[-1]} … {versions[0]} {key[1]}"
        out.append(Rejection(span, first.reason, first.code))
    return tuple(out)
