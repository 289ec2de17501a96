"""The fix commands: drawn from the plan for this host when the resolver can make one."""

from __future__ import annotations

import shlex
from typing import Any, Dict, List, Optional, Tuple

from torchsmith.errors import TorchsmithError
from torchsmith.machine import Machine

__all__ = ["install_fix", "kb_of", "plan_for", "python_of", "quoted"]

# Companions the plan can pin next to torch; others are kept out of the fix's request.
_PLANNED_COMPANIONS = ("torchvision", "torchaudio", "xformers", "mmcv", "flash-attn", "torch-scatter",
                       "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib")


def quoted(path: str) -> str:
    return shlex.quote(path)


def python_of(report: Dict[str, Any]) -> str:
    return str((report.get("python") or {}).get("executable") or "python")


def kb_of(kb: Any) -> Any:
    """The data: ``kb`` itself, or what the loader ``kb`` returns (None when unavailable)."""
    return kb() if callable(kb) else kb


def _cache(report: Dict[str, Any]) -> Dict[str, Any]:
    cache = report.setdefault("_cache", {})
    assert isinstance(cache, dict)
    return cache


def _requirements(report: Dict[str, Any], with_others: bool) -> Tuple[str, ...]:
    installed = [str(c.get("name")) for c in report.get("companions") or ()]
    keep = ("torchvision", "torchaudio") if not with_others else _PLANNED_COMPANIONS
    return ("torch", *sorted({n for n in installed if n in keep}))


def plan_for(report: Dict[str, Any], machine: Machine, kb: Any) -> Optional[Any]:
    """The plan for this host and this environment's packages; None without a resolver or data.

    ``kb`` is the data, or a function returning it (or None), called only when a plan is needed.
    """
    cache = _cache(report)
    if "plan" in cache:
        return cache["plan"]
    plan = None
    kb = kb_of(kb)  # a loader is called only here: the data is read only when a fix needs a plan
    if kb is not None:
        try:
            from torchsmith.plan.model import Request
            from torchsmith.plan.resolve import resolve
        except ImportError:
            resolve = None  # type: ignore[assignment]
        if resolve is not None:
            for with_others in (True, False):
                try:
                    candidate = resolve(machine, Request(requirements=_requirements(report, with_others)), kb)
                except (TorchsmithError, LookupError, ValueError, TypeError, AttributeError):
                    continue
                if getattr(candidate, "ok", False):
                    plan = candidate
                    break
    cache["plan"] = plan
    return plan


def _rendered(plan: Any, python: str) -> Optional[List[str]]:
    """The plan's install steps, run with this environment's interpreter; None without a renderer."""
    try:
        from torchsmith.plan.render._common import shell_join
        from torchsmith.plan.render.pip import install_argvs
    except ImportError:
        return None
    try:
        steps = install_argvs(plan, prefix=[python, "-m", "pip", "install"])
    except TorchsmithError:
        return None
    return [shell_join(step) for step in steps] or None


def install_fix(report: Dict[str, Any], machine: Machine, kb: Any) -> Tuple[str, ...]:
    """Commands that put the right torch stack for this host into this environment."""
    cache = _cache(report)
    if "install" in cache:
        return tuple(cache["install"])
    python = python_of(report)
    plan = plan_for(report, machine, kb)
    rendered = _rendered(plan, python) if plan is not None else None
    if rendered:
        commands = tuple(rendered)
    else:
        commands = (f"torchsmith plan --python {quoted(python)}",
                    f"torchsmith install --python {quoted(python)}")
    cache["install"] = commands
    return commands
