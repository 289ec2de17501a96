"""``doctor``: what is wrong with a Python environment's torch stack on this host, and the fix.

The environment is read by child processes of the target interpreter (``snippets/inspect_env.py``
without importing torch, then ``snippets/torch_check.py`` importing it, each with a timeout), so
a broken or hanging torch cannot take torchsmith down. The checks are pure functions of those
reports, the host profile and the data (:mod:`torchsmith.doctor.checks`).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from torchsmith.doctor.build import torch_build
from torchsmith.doctor.checks import CHECKS, run_checks
from torchsmith.doctor.checks.environment import read_companion
from torchsmith.doctor.fixes import KbSource, kb_of
from torchsmith.doctor.inspect import DYNAMIC_TIMEOUT, inspect_dynamic, inspect_kernels, inspect_static
from torchsmith.doctor.model import Diagnosis, Fact, Finding
from torchsmith.host import Host
from torchsmith.machine import Machine, PythonInfo

if TYPE_CHECKING:
    from torchsmith.described_machine import Overrides

__all__ = [
    "CHECKS",
    "Diagnosis",
    "Fact",
    "Finding",
    "diagnose",
    "diagnose_report",
    "environment_summary",
    "examine",
    "probed_with",
    "python_info",
    "quick_verdict",
]


def environment_summary(report: Dict[str, Any], kb: KbSource = None) -> Dict[str, Any]:
    """The inspected environment, as the JSON output shows it."""
    python = report.get("python") or {}
    build = torch_build(report)
    dynamic = report.get("dynamic")
    dynamic = dynamic if isinstance(dynamic, dict) or dynamic is None else {"status": "garbled"}
    summary: Dict[str, Any] = {
        "python": python.get("executable"),
        "python_version": python.get("version"),
        "prefix": python.get("prefix"),
        "kind": "conda" if python.get("conda_prefix") else "venv" if python.get("virtualenv") else "system",
        "torch": None,
        "companions": [],
        "nvidia_wheels": [f"{w['name']}=={w['version']}" for w in report.get("nvidia_wheels") or ()],
        "conda_torch_packages": [f"{r['name']}={r['version']}={r['build']}"
                                 for r in report.get("conda") or ()],
        "guard": bool((report.get("guard") or {}).get("guard_file")),
        "libstdcxx": report.get("libstdcxx"),
        "inspected": "static+import" if dynamic is not None else "static",
        "kernels": report.get("kernels"),
    }
    if build is not None:
        summary["torch"] = {k: build[k] for k in ("version", "variant", "accelerator", "cuda", "hip")}
        summary["torch"]["path"] = (report.get("torch") or {}).get("path")
    for companion in report.get("companions") or ():
        found = read_companion(companion, kb)
        summary["companions"].append({"name": companion.get("name"), "version": companion.get("version"),
                                      "built_for_torch": found.wants,
                                      **({"build_unread": found.unread} if found.unread else {})})
    if dynamic is not None:
        summary["import"] = {k: dynamic.get(k) for k in ("status", "import_seconds", "error", "timeout")
                             if dynamic.get(k) is not None}
        cuda = dynamic.get("cuda")
        if isinstance(cuda, dict) and cuda:
            summary["cuda"] = {k: cuda.get(k) for k in ("available", "device_count", "arch_list",
                                                        "cudnn_version", "nccl_available", "devices")}
        for key in ("tf32", "mps", "loaded"):
            if isinstance(dynamic.get(key), dict):
                summary[key] = dynamic[key]
    return summary


def diagnose_report(report: Dict[str, Any], machine: Machine, kb: KbSource = None) -> Diagnosis:
    """Findings for already gathered snippet reports (pure)."""
    findings = run_checks(report, machine, kb)
    report.pop("_cache", None)
    return Diagnosis(environment=environment_summary(report, kb), findings=findings)


def python_info(report: Dict[str, Any]) -> PythonInfo:
    """The inspected interpreter, as the host profile describes one (from the static report)."""
    python = report.get("python") or {}
    return PythonInfo(
        version=str(python.get("version") or ""),
        implementation=str(python.get("implementation") or "CPython"),
        free_threaded=bool(python.get("free_threaded")),
        executable=str(python.get("executable") or ""),
        prefix=str(python.get("prefix") or ""),
        virtualenv=python.get("virtualenv"),
        conda_prefix=python.get("conda_prefix"),
        source=f"ran {python.get('executable')} (inspect_env.py)",
    )


def diagnose(host: Host, machine: Machine, python: str, kb: KbSource = None, *, quick: bool = False,
             timeout: float = DYNAMIC_TIMEOUT, report: Optional[Dict[str, Any]] = None) -> Diagnosis:
    """Inspect ``python``'s environment through ``host`` and check it against ``machine``.

    ``report``: the static inspection, when the caller has already run it.
    """
    if report is None:
        report = inspect_static(host, python, min(timeout, 20.0))
    if not quick and "dynamic" not in report and (report.get("torch") or report.get("torch_installs")):
        report["dynamic"] = inspect_dynamic(host, python, timeout)
    dynamic = report.get("dynamic")
    cuda = dynamic.get("cuda") if isinstance(dynamic, dict) else None
    if "kernels" not in report and not (isinstance(cuda, dict) and cuda.get("arch_list")):
        # No import, or one that failed: the arch list from libtorch_cuda.so's fatbin instead.
        report["kernels"] = inspect_kernels(host, report)
    # The fixes plan within this machine's pip/uv constraints, as `plan` does here.
    report.setdefault("_cache", {})["read"] = host.read_text
    return diagnose_report(report, machine, kb)


def examine(host: Host, python: str, describe: Callable[[Callable[[], Dict[str, Any]]], Machine],
            kb: KbSource = None, *, quick: bool = False, timeout: float = DYNAMIC_TIMEOUT) -> Diagnosis:
    """``torchsmith doctor`` as one call: inspect ``python`` without importing torch, describe the
    machine (``describe`` gets a call that waits for that report), then diagnose.

    The children run side by side: the torch import (unless ``quick``) is the long pole, started
    at once, and the static inspection, the probe and the data's loading finish inside it. Its
    answer is used only when the static report finds a torch (without one the import fails at
    once)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=3) as pool:
        dynamic = None if quick else pool.submit(inspect_dynamic, host, python, timeout)
        static = pool.submit(inspect_static, host, python)
        data = pool.submit(kb_of, kb)  # read while the children run
        machine = describe(static.result)
        report = static.result()
        if dynamic is not None and (report.get("torch") or report.get("torch_installs")):
            report["dynamic"] = dynamic.result()
    return diagnose(host, machine, python, data.result(), quick=quick, timeout=timeout, report=report)


def probed_with(host: Host, report: Callable[[], Dict[str, Any]], overrides: Overrides) -> Machine:
    """This machine probed, with the inspected interpreter as its Python: probing with that
    interpreter would run it once more only to learn what the static report (``report()``,
    which may still be running) already says."""
    import dataclasses

    from torchsmith.overrides import apply_overrides
    from torchsmith.probe import probe

    machine = probe(host)
    return apply_overrides(dataclasses.replace(machine, python=python_info(report())), overrides)


def quick_verdict(machine: Machine, python: Optional[str], host: Host, kb: KbSource = None) -> List[str]:
    """A few lines on an environment, without importing torch: for the ``torchsmith`` summary.

    ``python`` is the environment's interpreter (None: the one running torchsmith), inspected
    through ``host``. Never raises: a failed inspection is itself a line.
    """
    import sys

    from torchsmith.errors import TorchsmithError

    interpreter = python or sys.executable
    try:
        diagnosis = diagnose(host, machine, interpreter, kb, quick=True)
    except TorchsmithError as exc:
        return [f"Doctor   cannot inspect {interpreter}: {exc}"]
    torch = diagnosis.environment.get("torch")
    what = f"torch {torch['version']} ({torch['accelerator']})" if torch else "no torch"
    problems = [f for f in diagnosis.findings if f.severity in ("error", "warning")]
    if not problems:
        return [f"Doctor   {what}: no problems found (quick check; `torchsmith doctor` imports torch too)"]
    errors, warnings = len(diagnosis.errors), len(problems) - len(diagnosis.errors)
    counts = [f"{n} {word}{'s' if n > 1 else ''}" for n, word in ((errors, "error"), (warnings, "warning"))
              if n]
    lines = [f"Doctor   {what} in {interpreter}: {', '.join(counts)}"]
    lines.extend(f"  {f.severity}[{f.code}] {f.title}" for f in problems[:3])
    command = "torchsmith doctor" + (f" --python {shlex.quote(interpreter)}" if python else "")
    lines.append(f"  run `{command}` for the facts and the fix")
    return lines
