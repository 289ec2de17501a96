"""A plan for people: the command to run first, then at most five lines of why.

``-v`` adds everything the JSON has: the reasons with their sources, the builds turned down,
what was assumed and what no primary source confirms. Lines fit the terminal (80 columns when
piped); a long command is continued with `` \\`` where a shell would take it.
"""

from __future__ import annotations

import re
import textwrap
from typing import IO, Dict, List, Optional, Tuple

from torchsmith.cli.layout import WHY_LINES, bullets, cautions_of, why_lines, wrap_command
from torchsmith.output import paint, strip_sources, terminal_columns
from torchsmith.plan.model import Plan

__all__ = ["WHY_LINES", "answer_lines", "describe", "is_command", "target", "title", "wrap_command"]

_wrapped = bullets


# The programs a plan's prerequisites are written for (package managers, the Python installers):
# a line that starts with another word is a step said in words (install the Intel GPU driver).
_PROGRAMS = frozenset(("apt", "apt-get", "dnf", "yum", "zypper", "pacman", "apk", "brew", "port", "winget",
                       "choco", "conda", "mamba", "micromamba", "pixi", "pip", "pip3", "python", "python3",
                       "py", "uv", "export", "set", "setx", "$env", "curl", "wget", "git"))


def is_command(line: str) -> bool:
    """Whether ``line`` is a shell command (its program first, quotes balanced), not prose."""
    import shlex

    try:
        words = shlex.split(line)
    except ValueError:
        return False
    while words and (words[0] in ("sudo", "$SUDO", "env") or re.match(r"^[A-Z_][A-Z0-9_]*=", words[0])):
        words = words[1:]
    return bool(words) and (words[0].rsplit("/", 1)[-1] in _PROGRAMS or words[0].startswith(("/", "./")))


def title(plan: Plan) -> str:
    torch = next((p for p in plan.packages if p.name == "torch"), None)
    build = plan.variant or plan.accelerator
    if torch is None:
        what = f"a {build} stack"
    else:  # an unpinned torch (a nightly index) has no version to name
        what = " ".join(part for part in ("torch", torch.version, f"({build})") if part)
    return f"{what} for {target(plan)}"


def target(plan: Plan) -> str:
    """``linux-x86_64, Python 3.12``; a Python not known (a Jetson's, not stated) is not named."""
    return f"{plan.platform}, Python {plan.python}" if plan.python else plan.platform


def answer_lines(plan: Plan, commands: Dict[str, List[str]], installer: str, width: int,
            color: bool) -> List[str]:
    """The lines to run, in order: system prerequisites, the environment, the install."""
    windows = plan.platform.startswith("windows")
    lines: List[str] = []
    for line in plan.system_prerequisites:  # a step said in words is a bullet, never after `$`
        lines.extend(wrap_command(line, width, windows=windows) if is_command(line)
                     else bullets([f"before installing: {line}"], width))
    for name, value in plan.environment:
        lines.extend(wrap_command(f"export {name}={value}", width, windows=windows))
    for command in commands.get(installer) or []:
        lines.extend(wrap_command(command, width, windows=windows))
    return [paint(line, "1", color) for line in lines]


def describe(plan: Plan, commands: Dict[str, List[str]], installer: str, out: IO[str],
             *, verbose: int = 0, environment: str = "") -> None:
    """The plan for people: the command first, the environment it is for, then why; with
    ``verbose`` every section."""
    from torchsmith.output import use_color

    color = use_color(out)
    width = terminal_columns()
    lines: List[str] = []
    answer = answer_lines(plan, commands, installer, width, color) if plan.ok else []
    if plan.ok:
        forge, why_forge = _conda_release(plan, installer)
        cuda = (plan.conda or {}).get("cuda-version")
        headline = title(plan) if forge is None else \
            f"pytorch {forge} ({f'CUDA {cuda}' if cuda else 'cpu'}) from conda-forge for {target(plan)}"
        lines.append(paint(f"Install {headline} ({installer}):", "1", color))
        lines.extend(answer or ["  (no command for this installer: see `--format`)"])
        lines.extend(_wrapped([why_forge] if why_forge else [], width))
        lines.extend(_wrapped(list(plan.choices), width))  # an optional package left out, and how to keep it
    else:
        lines.append(paint(f"No working torch stack for {target(plan)}.", "1;31",
                           color))
    if environment:
        lines.append(f"Environment: {environment}")
    if plan.blocker is not None:
        lines.append(f"Blocked by {plan.blocker.constraint} [{plan.blocker.code}]")
        if not any(plan.blocker.detail in reason for reason in plan.reasons):  # else Why says it
            detail = plan.blocker.detail if verbose else strip_sources(plan.blocker.detail)
            lines.extend(_wrapped([detail], width, "  "))
    if plan.alternatives:
        lines.append("Ways out:")
        for door in plan.alternatives:
            lines.extend(_wrapped([door.summary], width))
            lines.extend(wrap_command(door.command, width, indent="    "))
    cautions = cautions_of(plan.warnings)
    if plan.reasons or cautions:
        lines.append("Why:")
        lines.extend(why_lines(_confirmed_first(plan), width, verbose, cautions=cautions, color=color))
    if plan.assumptions:
        lines.append("Assumed (not stated):")
        lines.extend(_wrapped(list(plan.assumptions), width))
    lines.extend(_details(plan, width, verbose))
    out.write("\n".join(lines) + "\n")


def _conda_release(plan: Plan, installer: str) -> Tuple[Optional[str], str]:
    """(the pytorch conda-forge gives, why) when a conda/pixi command installs another release
    than the pip plan's torch (the data knows no conda-forge build of it); else (None, "")."""
    torch = plan.package("torch")
    conda = plan.conda or {}
    forge = str(conda.get("pytorch-gpu") or conda.get("pytorch") or "")
    if installer not in ("conda", "pixi") or torch is None or not forge or forge == torch.version:
        return None, ""
    notes = conda.get("notes") or ()
    return forge, (strip_sources(str(notes[0])) if notes
                   else f"pytorch {forge}, not {torch.version}: the release conda-forge has")


def _confirmed_first(plan: Plan) -> List[str]:
    """The reasons, the resolver's acceptance first: it is never cut from the five lines."""
    if not plan.confirmed:
        return list(plan.reasons)
    return [plan.confirmed, *(r for r in plan.reasons if r != plan.confirmed)]


def _details(plan: Plan, width: int, verbose: int) -> List[str]:
    """Shown with -v: what was turned down and what no primary source confirms; else one line each."""
    lines: List[str] = []
    if plan.packages and verbose:
        lines.append("Packages:")
        lines.extend(_pin_lines(plan))
    if plan.uncertain and verbose:
        lines.append("Unverified (no primary source confirms; `torchsmith kb show` lists the sources):")
        lines.extend(_wrapped(list(plan.uncertain), width))
    elif plan.uncertain:
        lines.append(f"Unverified: {'; '.join(plan.uncertain)} (`-v` for details)")
    if plan.rejected and verbose:
        lines.append("Turned down:")
        lines.extend(_wrapped([f"{r.candidate} [{r.code}]: {r.reason}" for r in plan.rejected], width))
    elif plan.rejected and not plan.ok:
        count = len(plan.rejected)
        lines.append(f"{count} build{'s' if count != 1 else ''} turned down: `-v` says why "
                     f"{'each does' if count != 1 else 'it does'} not run here")
    return [line if len(line) <= width else "\n".join(textwrap.wrap(line, width, subsequent_indent="  "))
            for line in lines]


def _pin_lines(plan: Plan) -> List[str]:
    """Each pin and where it comes from (a wheel pip refuses by URL: the file it is saved as)."""
    lines = []
    for pin in plan.packages:
        if pin.wheel_filename:
            lines.append(f"  {pin.name}=={pin.version}  {pin.wheel_filename} from {pin.wheel_url}")
            continue
        where = pin.wheel_url or pin.index_url or pin.find_links or (
            "build from source" if pin.variant == "source" else "the configured index")
        lines.append(f"  {pin.requirement}  {where}")
    return lines
