"""The NVIDIA driver against the build's CUDA."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from torchsmith.compat import Variant, driver_support
from torchsmith.doctor.build import (
    torch_build,
    version_tuple,
)
from torchsmith.doctor.checks.common import (
    Report,
    dynamic_of,
    torch_fact,
)
from torchsmith.doctor.fixes import KbSource, install_fix, kb_of, plan_for
from torchsmith.doctor.model import Fact, Finding
from torchsmith.machine import Machine


def _driver_floor(machine: Machine, cuda_major: int, kb: KbSource) -> Optional[Tuple[str, str]]:
    """(the oldest driver running CUDA ``cuda_major`` builds, its source): cuda.json#minor_compat's."""
    windows = machine.os.system == "windows" or machine.os.wsl
    data = kb_of(kb)
    try:
        row = data.minor_compat(str(cuda_major)) if data is not None else None
    except (AttributeError, TypeError, ValueError):
        row = None
    if data is None or row is None:  # no data (or no row for that major): no floor is claimed
        return None
    floor = row.min_driver_windows if windows else row.min_driver_linux
    cited = data.sources.get(row.sources[0]) if row.sources else None
    return floor, str(getattr(cited, "url", "") or "compatibility data (minor-compat)")


def check_driver_too_old(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    build = torch_build(report)
    nv = machine.nvidia
    if build is None or build["accelerator"] != "cuda" or build["jetson"] or nv is None:
        return None
    torch_cuda = version_tuple(build["cuda"])
    if len(torch_cuda) < 2:
        return None
    facts = [torch_fact(build)]
    floor = _driver_floor(machine, torch_cuda[0], kb)
    severity = ""
    if nv.driver_cuda:
        facts.append(Fact(f"the driver supports CUDA ≤ {nv.driver_cuda}",
                          f"machine.nvidia.driver_cuda ({nv.driver_cuda_source or 'probe'})"))
        driver_cuda = version_tuple(nv.driver_cuda)
        if driver_cuda[:1] < torch_cuda[:1]:
            severity = "error"
        elif driver_cuda[:2] < torch_cuda[:2]:
            severity = "warning"
    if nv.driver_version:
        facts.append(Fact(f"NVIDIA driver {nv.driver_version}",
                          f"machine.nvidia.driver_version ({nv.driver_version_source or 'probe'})"))
        if floor and version_tuple(nv.driver_version) < version_tuple(floor[0]):
            severity = "error"
    if not severity:
        return None
    if floor:
        facts.append(Fact(f"CUDA {torch_cuda[0]}.x builds need driver ≥ {floor[0]}", floor[1]))
    warnings = (dynamic_of(report).get("cuda") or {}).get("warnings") or ()
    facts.extend(Fact(w.splitlines()[0][:200], "import torch (warning)") for w in warnings if "driver" in w)
    if severity == "error":
        title = (f"the NVIDIA driver is too old for torch {build['version']} "
                 f"(CUDA {build['cuda']})")
        note = "upgrade the driver, or install the build the plan picks for this driver"
        fix = install_fix(report, machine, kb)
    else:
        title = (f"the driver supports CUDA {nv.driver_cuda}, older than torch's CUDA {build['cuda']}: "
                 "it runs through minor-version compatibility only")
        note = ("kernels needing a newer driver fail with cudaErrorCallRequiresNewerDriver and PTX "
                "cannot be JIT-compiled")
        # Reinstalling helps only when the plan's build is one this driver supports fully.
        plan = plan_for(report, machine, kb)
        variant = str(getattr(plan, "variant", "") or "")
        parsed = Variant.parse(variant)
        plan_cuda = parsed.cuda_tuple if parsed else None
        if plan_cuda is not None and plan_cuda <= version_tuple(nv.driver_cuda)[:2]:
            note += f"; the plan's {variant} build avoids both"
            fix = install_fix(report, machine, kb)
        elif plan is not None:
            note += (f"; a driver with full CUDA {build['cuda']} support avoids both (the plan for this "
                     f"driver, {variant or 'its build'}, relies on minor-version compatibility too)")
            fix = ()
        else:
            note += f"; a newer driver, or a build for CUDA ≤ {nv.driver_cuda}, avoids both"
            fix = ()
    return Finding("driver-too-old", severity, title, tuple(facts), fix, note=note)


def driver_mode_of(build: Dict[str, Any], machine: Machine, kb: KbSource) -> str:
    """How the machine's driver runs the build's CUDA (full | minor-compat | too-old | unknown)."""
    nv, data, cuda = machine.nvidia, kb_of(kb), str(build.get("cuda") or "")
    if nv is None or not cuda:
        return "unknown"
    system = "windows" if machine.os.system == "windows" or machine.os.wsl else "linux"
    try:
        toolkit = data.cuda_release(cuda) if data is not None else None
    except (AttributeError, TypeError, ValueError):
        toolkit = None
    return driver_support(toolkit, cuda, system, nv.driver_version, nv.driver_cuda).mode
