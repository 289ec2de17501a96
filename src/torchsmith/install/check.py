"""``guard check``: what a pip or uv command would do to a guarded torch stack, changing nothing.

The command runs twice as a dry run in the target environment: once without the guard (what
would happen if the guard were not there: pip's ``--dry-run --report``, ``uv pip install
--dry-run``), and once with it (what fits instead). A change to a pinned package is a break;
the package whose requirement drags it is named from pip's report.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from torchsmith.errors import TorchsmithError, UsageError
from torchsmith.host import CommandResult, Host
from torchsmith.install.installers.pip import pip_command
from torchsmith.install.installers.uv import find_uv
from torchsmith.install.target import Target, installed_packages
from torchsmith.install.uv_dry_run import read_dry_run
from torchsmith.records import dataclass

__all__ = ["Prediction", "parse_user_command", "predict"]



@dataclass
class Prediction:
    installer: str
    command: List[str]
    # without the guard: name -> (installed version, version it would become)
    changes: Dict[str, Tuple[Optional[str], str]] = field(default_factory=dict)
    breaks: Dict[str, Tuple[Optional[str], str]] = field(default_factory=dict)  # changes to pinned packages
    # broken name -> ["xformers 0.0.31 requires torch==2.7.1"]
    dragged_by: Dict[str, List[str]] = field(default_factory=dict)
    fits: Dict[str, str] = field(default_factory=dict)  # requested name -> version that keeps the stack
    guarded_ok: bool = True
    guarded_problem: str = ""
    unguarded_problem: str = ""

    def to_json(self) -> Dict[str, Any]:
        return {
            "installer": self.installer,
            "command": self.command,
            "would_break": bool(self.breaks),
            "changes": {n: {"from": o, "to": v} for n, (o, v) in sorted(self.changes.items())},
            "breaks": {n: {"from": o, "to": v} for n, (o, v) in sorted(self.breaks.items())},
            "dragged_by": self.dragged_by,
            "fits": self.fits,
            "guarded_ok": self.guarded_ok,
            "guarded_problem": self.guarded_problem,
            "unguarded_problem": self.unguarded_problem,
        }


def parse_user_command(argv: Sequence[str]) -> Tuple[str, List[str]]:
    """("pip" | "uv", the arguments after ``install``) of ``pip install ...``/``uv pip install ...``."""
    words = list(argv)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UsageError("give the install command to check after --, e.g. -- pip install xformers")
    head = os.path.basename(words[0])
    if head.startswith("python") and words[1:3] == ["-m", "pip"]:
        words = ["pip", *words[3:]]
        head = "pip"
    if re.fullmatch(r"pip(3(\.\d+)?)?(\.exe)?", head) and words[1:2] == ["install"]:
        return "pip", words[2:]
    if re.fullmatch(r"uv(\.exe)?", head) and words[1:3] == ["pip", "install"]:
        return "uv", words[3:]
    raise UsageError(f"not a pip or uv install command: {' '.join(words)[:120]}",
                     hint="guard check understands `pip install ...`, `python -m pip install ...` "
                          "and `uv pip install ...`")


def _problem(result: CommandResult) -> str:
    lines = [line.strip() for line in (result.stderr or result.stdout).splitlines() if line.strip()]
    for line in lines:
        if line.lower().startswith(("error", "×", "because", "  ╰")) or "conflict" in line.lower():
            return line[:300]
    return result.problem()


def predict(host: Host, target: Target, command: Sequence[str], guard_file: str,
            pins: Dict[str, str]) -> Prediction:
    kind, args = parse_user_command(command)
    installed = {n: str(v.get("version")) for n, v in installed_packages(host, target).items()}
    prediction = Prediction(kind, list(command))
    pinned = {canonicalize_name(n) for n in pins}
    with tempfile.TemporaryDirectory(prefix="torchsmith-check-") as work:
        empty = os.path.join(work, "none.txt")
        with open(empty, "w", encoding="utf-8"):
            pass
        if kind == "pip":
            free = _pip_dry_run(host, target, args, os.path.join(work, "free.json"),
                                {"PIP_CONSTRAINT": empty})
            held = _pip_dry_run(host, target, args, os.path.join(work, "held.json"),
                                {"PIP_CONSTRAINT": guard_file})
        else:
            free = _uv_dry_run(host, target, args, {"UV_CONSTRAINT": None})
            held = _uv_dry_run(host, target, args, {"UV_CONSTRAINT": guard_file})
    items, problem = free
    prediction.unguarded_problem = problem
    for name, (version, _requires, _requested) in items.items():
        if installed.get(name) != version:
            prediction.changes[name] = (installed.get(name), version)
    prediction.breaks = {n: c for n, c in prediction.changes.items() if n in pinned}
    for name in prediction.breaks:
        prediction.dragged_by[name] = _draggers(name, items)
    if kind == "uv" and prediction.breaks:
        via = _uv_via(host, target, args)
        for name in prediction.breaks:
            prediction.dragged_by[name] = [
                " ".join(w for w in (who, items[who][0] if who in items else "", "requires", name) if w)
                for who in via.get(name, ())]
    held_items, held_problem = held
    prediction.guarded_ok = not held_problem
    prediction.guarded_problem = held_problem
    requested = {n for n, (_v, _r, req) in items.items() if req} or set(_names(args))
    for name in sorted(requested):
        if name in held_items and name not in pinned:
            prediction.fits[name] = held_items[name][0]
    return prediction


Items = Dict[str, Tuple[str, List[str], bool]]  # name -> (version, requires, requested)


def _pip_dry_run(host: Host, target: Target, args: Sequence[str], report: str,
                 env: Dict[str, Optional[str]]) -> Tuple[Items, str]:
    pip, reports = pip_command(host, target)
    if not reports:
        raise TorchsmithError("guard check needs a pip that writes --report (22.2 or newer)",
                              code="installer-missing", hint=f"{target.python} -m pip install -U pip")
    argv = [*pip, "install", "--dry-run", "--quiet", "--no-input",
            "--disable-pip-version-check", "--report", report, *args]
    result = host.run(argv, timeout=600.0, env=env)
    if not result.ok:
        return {}, _problem(result)
    try:
        with open(report, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}, "pip wrote no report"
    items: Items = {}
    for item in data.get("install") or ():
        try:
            meta = item["metadata"]
            requires = [str(r) for r in meta.get("requires_dist") or ()]
            items[canonicalize_name(meta["name"])] = (str(meta["version"]), requires,
                                                      bool(item.get("requested")))
        except (KeyError, TypeError):
            continue
    return items, ""


def _uv_dry_run(host: Host, target: Target, args: Sequence[str],
                env: Dict[str, Optional[str]]) -> Tuple[Items, str]:
    uv = find_uv(host)
    if not uv:
        raise TorchsmithError("uv is not installed", code="installer-missing", hint="pip install uv")
    argv = [uv, "pip", "install", "--dry-run", "--python", target.python, *args]
    if env.get("UV_CONSTRAINT"):
        argv[4:4] = ["-c", str(env["UV_CONSTRAINT"])]
    result = host.run(argv, timeout=600.0, env={"UV_CONSTRAINT": None})
    if not result.ok:
        return {}, _problem(result)
    changes = read_dry_run(result.stderr + result.stdout)
    if changes is None:  # never read as "nothing would change"
        raise TorchsmithError("could not read what uv would change from its --dry-run output, so "
                              "nothing was predicted", code="installer-output-unreadable",
                              context=[line[:300] for line in result.stderr.strip().splitlines()[-4:]],
                              hint="check the same command written for pip (`pip install …`), whose "
                                   "--report says it")
    requested = set(_names(args))
    items: Items = {name: (new, [], name in requested) for name, (_old, new) in changes.items() if new}
    return items, ""


def _uv_via(host: Host, target: Target, args: Sequence[str]) -> Dict[str, List[str]]:
    """name -> the packages whose requirements pull it in, from ``uv pip compile``'s annotations
    (uv's dry run does not say)."""
    uv = find_uv(host)
    requirements = [a for a in args if not a.startswith("-")]
    if not uv or not requirements:
        return {}
    with tempfile.TemporaryDirectory(prefix="torchsmith-check-") as work:
        source = os.path.join(work, "requested.in")
        with open(source, "w", encoding="utf-8") as handle:
            handle.write("\n".join(requirements) + "\n")
        argv = [uv, "pip", "compile", source, "--python", target.python, "--no-header",
                "--annotation-style", "line", "--quiet"]
        result = host.run(argv, timeout=600.0, env={"UV_CONSTRAINT": None})
    via: Dict[str, List[str]] = {}
    if not result.ok:
        return via
    for line in result.stdout.splitlines():
        pin, _, comment = line.partition("# via ")
        if "==" in pin and comment:
            name = canonicalize_name(pin.split("==", 1)[0].strip())
            via[name] = [canonicalize_name(w.strip()) for w in comment.split(",") if w.strip()
                         and not w.strip().startswith("-r ")]
    return via


def _names(args: Sequence[str]) -> List[str]:
    names: List[str] = []
    for arg in args:
        if arg.startswith("-"):
            continue
        try:
            names.append(canonicalize_name(Requirement(arg).name))
        except InvalidRequirement:
            continue
    return names


def _draggers(name: str, items: Items) -> List[str]:
    """Who in the would-be install requires ``name``: "xformers 0.0.31 requires torch==2.7.1"."""
    out: List[str] = []
    seen: Set[str] = set()
    for other, (version, requires, _requested) in sorted(items.items()):
        for text in requires:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if canonicalize_name(req.name) == name and req.marker is None and other not in seen:
                seen.add(other)
                out.append(f"{other} {version} requires {req.name}{req.specifier}")
    return out
