"""The fix commands: drawn from the plan for this host when the resolver can make one."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from torchsmith.machine import Machine

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.plan.model import Plan, Request

__all__ = ["KbSource", "fix_request", "install_fix", "kb_of", "pip_command", "plan_for", "python_of",
           "quoted"]

# The data, or a function that loads it (None when it cannot), called only when a fix needs a
# plan: the doctor works, and reads nothing it does not need, in a broken installation too.
KbSource = Union["KnowledgeBase", Callable[[], Optional["KnowledgeBase"]], None]

# Companions the plan can pin next to torch; others are kept out of the fix's request.
_PLANNED_COMPANIONS = ("torchvision", "torchaudio", "xformers", "mmcv", "flash-attn", "torch-scatter",
                       "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib")


def quoted(path: str) -> str:
    return shlex.quote(path)


def python_of(report: Dict[str, Any]) -> str:
    return str((report.get("python") or {}).get("executable") or "python")


def kb_of(kb: KbSource) -> Optional[KnowledgeBase]:
    """The data: ``kb`` itself, or what the loader ``kb`` returns (None when unavailable)."""
    return kb() if callable(kb) else kb


def _cache(report: Dict[str, Any]) -> Dict[str, Any]:
    cache = report.setdefault("_cache", {})
    assert isinstance(cache, dict)
    return cache


def fix_request(report: Dict[str, Any], with_others: bool = True) -> Request:
    """What the fix asks the one policy for: the default stack (as ``plan`` and the summary
    ask), plus each planned companion this environment has (``with_others``: beyond
    torchvision and torchaudio)."""
    from torchsmith.plan.model import Request

    installed = [str(c.get("name")) for c in report.get("companions") or ()]
    keep = ("torchvision", "torchaudio") if not with_others else _PLANNED_COMPANIONS
    names = sorted({n for n in installed if n in keep})
    if set(names) <= {"torchvision"}:
        return Request()
    return Request(requirements=("torch", *names), explicit=True)


def plan_for(report: Dict[str, Any], machine: Machine, kb: KbSource) -> Optional[Plan]:
    """The plan for this host and this environment's packages; None without a resolver or data.

    ``kb`` is the data, or a function returning it (or None), called only when a plan is needed.
    """
    cache = _cache(report)
    if "plan" in cache:
        cached: Optional[Plan] = cache["plan"]
        return cached
    plan: Optional[Plan] = None
    data = kb_of(kb)  # a loader is called only here: the data is read only when a fix needs a plan
    if data is not None:
        try:
            from torchsmith.plan.api import make_plan
        except Exception:  # absent or broken in this build: the generic fix follows
            make_plan = None  # type: ignore[assignment]
        if make_plan is not None:
            for with_others in (True, False):
                try:  # the one policy, within this machine's pip/uv constraints (``read``)
                    candidate, _request = make_plan(machine, fix_request(report, with_others), data,
                                                    read=cache.get("read"))
                except Exception:  # a resolver bug must not cost the diagnosis
                    continue
                if getattr(candidate, "ok", False):
                    plan = candidate
                    break
    cache["plan"] = plan
    return plan


def _conda_owned(report: Dict[str, Any]) -> Optional[str]:
    """The conda prefix, when conda (not pip) installed this environment's torch."""
    prefix = (report.get("python") or {}).get("conda_prefix")
    pip_torch = [i for i in report.get("torch_installs") or () if i.get("source") not in ("conda", "unknown")]
    conda_torch = any(r.get("name") == "pytorch" for r in report.get("conda") or ())
    return str(prefix) if prefix and conda_torch and not pip_torch else None


def _rendered(plan: Plan, pip: List[str], conda_prefix: Optional[str]) -> Optional[List[str]]:
    """The plan's install steps for this environment; None without a renderer.

    pip steps run with the environment's interpreter; in a conda environment whose torch came
    from conda, the steps are conda's (``-p PREFIX``), so conda's records stay true.
    """
    try:
        from torchsmith.render._common import shell_join
        from torchsmith.render.conda import conda_argvs
        from torchsmith.render.pip import install_argvs
    except Exception:  # absent or broken in this build: the generic fix follows
        return None
    try:
        if conda_prefix:
            steps = []
            for step in conda_argvs(plan):
                if step[:2] == ["conda", "install"]:
                    steps.append([*step[:2], "-p", conda_prefix, *step[2:]])
                elif step[:4] == ["python", "-m", "pip", "install"]:
                    steps.append([*pip, *step[4:]])
                else:
                    steps.append(step)
        else:
            steps = install_argvs(plan, prefix=pip)
    except Exception:  # a renderer's bug must not cost the diagnosis: the generic fix follows
        return None
    return [shell_join(step) for step in steps] or None


def _guarded_fix(report: Dict[str, Any], python: str) -> Optional[Tuple[str, ...]]:
    """In an environment torchsmith guards, pip and uv obey the guard's pins: the fix is the
    install that lifts the guard, installs, verifies and writes it anew."""
    if not (report.get("guard") or {}).get("pip_conf_uses_guard"):
        return None
    request = fix_request(report)
    asked = "".join(f"{quoted(text)} " for text in request.requirements) if request.explicit else ""
    return (f"torchsmith install {asked}--python {quoted(python)}",)


def _installer_prefix(report: Dict[str, Any], python: str) -> List[str]:
    """pip through the environment's interpreter; ``uv pip install --python`` where it has no
    pip (venvs made by uv)."""
    if report.get("pip", True):
        return [python, "-m", "pip", "install"]
    return ["uv", "pip", "install", "--python", python]


def pip_command(report: Dict[str, Any], verb: str, *args: str) -> str:
    """``PYTHON -m pip VERB ARGS`` for this environment, or uv's where it has no pip (uv asks
    no question before uninstalling: pip's ``-y`` is dropped)."""
    if report.get("pip", True):
        return " ".join([quoted(python_of(report)), "-m", "pip", verb, *args])
    kept = [a for a in args if a != "-y"]
    return " ".join(["uv", "pip", verb, "--python", quoted(python_of(report)), *kept])


def install_fix(report: Dict[str, Any], machine: Machine, kb: KbSource) -> Tuple[str, ...]:
    """Commands that put the right torch stack for this host into this environment."""
    cache = _cache(report)
    if "install" in cache:
        return tuple(cache["install"])
    python = python_of(report)
    plan = plan_for(report, machine, kb)
    guarded = _guarded_fix(report, python)
    if guarded is not None:
        cache["install"] = guarded
        return guarded
    rendered = (_rendered(plan, _installer_prefix(report, python), _conda_owned(report))
                if plan is not None else None)
    if rendered:
        commands = tuple(rendered)
    else:
        commands = (f"torchsmith plan --python {quoted(python)}",
                    f"torchsmith install --python {quoted(python)}")
    cache["install"] = commands
    return commands
