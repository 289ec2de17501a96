"""Verify an installed stack: the verify snippet runs torch in the target interpreter."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from torchsmith.compat import kernel_for
from torchsmith.host import Host

__all__ = ["VERIFY_SNIPPET", "architecture_check", "companion_imports", "expected_device", "verify"]

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
    if not isinstance(report, dict):
        return {"ok": False, "checks": []}
    capability = report.get("device_capability")
    if isinstance(capability, list) and len(capability) == 2 and isinstance(report.get("checks"), list):
        _insert_architecture_check(report, (int(capability[0]), int(capability[1])))
    return report


def architecture_check(cc: Tuple[int, int], arch_list: Sequence[str], *, integrated: bool = False
                       ) -> Tuple[bool, str]:
    """How a CUDA device of capability ``cc`` runs a build with ``arch_list``
    (``torch.cuda.get_arch_list()``): (runs, how), by :func:`torchsmith.compat.kernel_for`."""
    kernel = kernel_for(cc, arch_list, integrated=integrated)
    arch = f"sm_{cc[0]}{cc[1]}"
    if kernel is None:
        return False, f"{arch} is not in torch's compiled list {','.join(arch_list) or '(empty)'}"
    if kernel.how == "ptx":
        return True, f"PTX {kernel.name}, compiled by the driver at first use (slow start)"
    if kernel.arch.cc == cc:
        return True, f"SASS for {kernel.name}"
    return True, f"SASS for {kernel.name} (same major, binary compatible)"


def _insert_architecture_check(report: Dict[str, Any], cc: Tuple[int, int]) -> None:
    """The architecture check, right after "cuda available", and ``ok`` recomputed."""
    arch_list = [str(a) for a in report.get("arch_list") or ()]
    runs, how = architecture_check(cc, arch_list, integrated=bool(report.get("integrated")))
    checks: List[Dict[str, Any]] = report["checks"]
    after = next((i + 1 for i, c in enumerate(checks) if c.get("name") == "cuda available"), len(checks))
    checks.insert(after, {"name": "architecture", "ok": runs, "detail": how})
    report["ok"] = bool(report.get("ok")) and runs
