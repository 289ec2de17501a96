"""What is installed in a target environment, read without importing torch.

Runs the doctor's stdlib-only snippet (``snippets/inspect_env.py``) with the target interpreter
through a :class:`~torchsmith.host.Host`, and keeps the names and versions the resolver needs.
"""

from __future__ import annotations

import json
import os
from typing import Any, List, Tuple

from torchsmith.host import Host
from torchsmith.output import Caution

__all__ = ["parse_installed", "read_installed"]

_SNIPPET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "snippets", "inspect_env.py")


def parse_installed(stdout: str) -> Tuple[Tuple[str, str], ...]:
    """(name, version) of torch and its companions from the snippet's JSON (last line)."""
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    if not lines:
        return ()
    try:
        report: Any = json.loads(lines[-1])
    except (ValueError, RecursionError):
        return ()
    if not isinstance(report, dict):
        return ()
    found: List[Tuple[str, str]] = []
    torch = report.get("torch") or {}
    installs = report.get("torch_installs") or []
    version = (torch.get("version") if isinstance(torch, dict) else None) or next(
        (i.get("version") for i in installs if isinstance(i, dict) and i.get("version")), None)
    if isinstance(version, str) and version:
        found.append(("torch", version))
    for companion in report.get("companions") or []:
        if isinstance(companion, dict) and companion.get("name") and companion.get("version"):
            found.append((str(companion["name"]), str(companion["version"])))
    return tuple(found)


def read_installed(host: Host, python: str, warnings: List[str]) -> Tuple[Tuple[str, str], ...]:
    """Installed torch-family packages of ``python``; () with a warning when it cannot tell."""
    result = host.run([python, _SNIPPET], 30.0)
    if not result.ok:
        # The install could then replace a torch that works.
        warnings.append(Caution(f"could not read what is installed in {python}: {result.problem()}"))
        return ()
    return parse_installed(result.stdout)
