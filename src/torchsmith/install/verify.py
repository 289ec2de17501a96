"""Verify an installed stack: the verify snippet runs torch in the target interpreter."""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Sequence, Tuple

from torchsmith.host import Host

__all__ = ["VERIFY_SNIPPET", "companion_imports", "expected_device", "verify"]

VERIFY_SNIPPET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "snippets", "verify.py")
_COMPANIONS_TO_IMPORT = ("torchvision", "torchaudio")


def expected_device(accelerator: str) -> str:
    """The device verify must find for a plan's or lock's accelerator."""
    return {"cuda": "cuda", "jetson": "cuda", "rocm": "rocm", "mps": "mps"}.get(accelerator, "cpu")


def companion_imports(installed: Mapping[str, str]) -> Tuple[str, ...]:
    """The companions installed in the target, which verify imports too."""
    return tuple(name for name in _COMPANIONS_TO_IMPORT if name in installed)


def verify(host: Host, python: str, expect: str, imports: Sequence[str], timeout: float) -> Dict[str, Any]:
    """Run the verify snippet in ``python``; its JSON report (``ok`` false when it could not run)."""
    argv = [python, VERIFY_SNIPPET, "--expect", expect]
    for name in imports:
        argv += ["--import", name]
    result = host.run(argv, timeout=timeout)
    if not result.ok:
        detail = result.problem()
        return {"ok": False, "checks": [{"name": "verify", "ok": False, "detail": detail}]}
    try:
        report = result.last_json()
    except ValueError:
        return {"ok": False, "checks": [{"name": "verify", "ok": False, "detail": "printed no JSON"}]}
    return report if isinstance(report, dict) else {"ok": False, "checks": []}
