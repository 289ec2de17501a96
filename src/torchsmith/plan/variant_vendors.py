"""What a wheel-variant installer picks on an AMD or Intel machine, next to the plan, and the command
that is right where they differ (the providers' behaviour: :mod:`torchsmith.plan.variant_providers`)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, List, Mapping, Optional, Tuple

from torchsmith.kb.variant_index import LabelFacts
from torchsmith.plan.variant_labels import build_name, namespace_order
from torchsmith.plan.variant_providers import (
    AMD_FORCE_GFX,
    AMD_FORCE_ROCM,
    INTEL_FORCE_IP,
    AmdReport,
    IntelDevice,
    amd_fits,
    amd_report,
    intel_devices,
    intel_fits,
)

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.machine import Machine
    from torchsmith.plan.model import Plan

__all__ = ["amd_pick", "intel_pick", "planned_kind", "vendor_prediction"]

Pick = Tuple[Optional[str], str]  # (label or None for the null variant, why)


def amd_pick(labels: Mapping[str, LabelFacts], report: AmdReport) -> Pick:
    """The AMD label whose gfx list and ROCm version fit the report, else the null variant, with why."""
    rocm_labels = {label: f for label, f in labels.items() if "amd" in f.properties}
    if not report.linux:
        return None, "the AMD provider runs on Linux only: the CPU variant"
    fitting = [label for label, f in rocm_labels.items() if amd_fits(f, report)]
    if fitting:
        return fitting[-1], f"the AMD provider reports {report.describe()}, which {fitting[-1]} lists"
    misses = _amd_misses(rocm_labels, report)
    return None, f"the AMD provider reports {report.describe()}; {misses}: the CPU variant, silently"


def _amd_misses(labels: Mapping[str, LabelFacts], report: AmdReport) -> str:
    """Why each ROCm label does not fit: its ROCm version, or no reported gfx in its list."""
    if not labels:
        return "the index has no ROCm label"
    out = []
    for label, facts in labels.items():
        rocm = facts.values("amd", "rocm_version")
        if rocm and report.rocm not in rocm:
            out.append(f"{label} needs ROCm {'/'.join(rocm)} exactly")
        else:
            out.append(f"{label} lists no {' '.join(report.gfx) or 'reported gfx'}")
    return ", ".join(out)


def intel_pick(labels: Mapping[str, LabelFacts], device: IntelDevice) -> Pick:
    fitting = [label for label, f in labels.items() if intel_fits(f, device)]
    ips = "/".join(device.ips)
    if fitting:
        return fitting[0], (f"the Intel provider reports device IP {ips} ({device.name}), which "
                            f"{fitting[0]} lists")
    listed = " ".join(ip for f in labels.values() for ip in f.values("intel", "device_ip")) or "none"
    return None, (f"the Intel provider reports device IP {ips} ({device.name}); the xpu label lists "
                  f"{listed}: the CPU variant, silently")


def _explicit(plan: Plan) -> str:
    torch = next(p for p in plan.packages if p.name == "torch")
    if not torch.index_url:
        return "the planned install"
    return f"uv pip install --index-url {torch.index_url} {shlex.quote(torch.requirement)}"


def _hsa_gfx(plan: Plan) -> Optional[str]:
    """The gfx the plan's HSA_OVERRIDE_GFX_VERSION makes the GPU run as: 10.3.0 -> gfx1030."""
    value = dict(plan.environment).get("HSA_OVERRIDE_GFX_VERSION")
    parts = value.split(".") if value else []
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return f"gfx{parts[0]}{parts[1]}{int(parts[2]):x}"


def _amd_advice(plan: Plan, labels: Mapping[str, LabelFacts], report: AmdReport, pick: Pick) -> List[str]:
    planned = plan.variant or "cpu"
    label, why = pick
    if label is not None and build_name(label) == planned:
        return []
    facts = next((f for name, f in labels.items() if build_name(name) == planned), None)
    rocm = facts.values("amd", "rocm_version") if facts is not None else ()
    gfx = _hsa_gfx(plan) or (report.known_gfx[0] if report.known_gfx else None)
    force = " ".join(x for x in (f"{AMD_FORCE_GFX}={gfx}" if gfx else "",
                                 f"{AMD_FORCE_ROCM}={rocm[0]}.0" if rocm else "") if x)
    override = f", or set {force} for the installer" if force and report.linux else ""
    taken = "the CPU build" if label is None else label
    return [f"a wheel-variant installer takes {taken} here ({why}), though torchsmith planned {planned}, "
            f"whose wheel carries its own ROCm libraries: install from the explicit index instead "
            f"({_explicit(plan)}){override}"]


def _intel_advice(plan: Plan, labels: Mapping[str, LabelFacts], devices: List[IntelDevice]) -> List[str]:
    planned = plan.variant or "cpu"
    misses = [d for d in devices if intel_pick(labels, d)[0] is None]
    if planned == "cpu" or not misses:
        return []
    listed = next((ip for f in labels.values() for ip in f.values("intel", "device_ip")
                   if any(ip in d.ips for d in devices)), None)
    names = ", ".join(f"{d.name} (device IP {'/'.join(d.ips)})" for d in misses)
    force = f", or set {INTEL_FORCE_IP}={listed} (a debug variable, per its README)" if listed else ""
    where = "here" if len(misses) == len(devices) else f"on {names}"
    return [f"a wheel-variant installer takes the CPU build {where}: the Intel provider reports "
            f"{names}, which torch {_version(plan)}'s xpu label does not list, and nothing at all without "
            f"the GPU driver's Level Zero loader; install from the explicit index instead "
            f"({_explicit(plan)}){force}"]


def planned_kind(plan: Plan) -> str:
    """rocm, xpu or the plan's accelerator (TheRock's Windows builds are planned as "cpu" with a
    ``therock-*`` variant)."""
    variant = plan.variant or ""
    if plan.accelerator == "rocm" or variant.startswith(("rocm", "therock")):
        return "rocm"
    return "xpu" if variant == "xpu" else plan.accelerator


def _version(plan: Plan) -> str:
    torch = next(p for p in plan.packages if p.name == "torch")
    return torch.version or "?"


def vendor_prediction(plan: Plan, machine: Machine, kb: KnowledgeBase, labels: Mapping[str, LabelFacts]
                      ) -> Optional[Tuple[Optional[str], str, Tuple[str, ...]]]:
    """The installer's pick on an AMD or Intel machine (Intel first where both fit, as the recorded
    default-priorities order the namespaces), why, and the advice where it is not the plan."""
    amd = amd_report(machine)
    devices = intel_devices(kb, machine)
    picks: List[Tuple[str, Pick]] = []
    for namespace in namespace_order(kb, _version(plan)):
        if namespace == "intel" and devices:
            picks.append((namespace, intel_pick(labels, devices[0])))
        elif namespace == "amd" and amd is not None:
            picks.append((namespace, amd_pick(labels, amd)))
    if not picks:
        return None
    namespace, pick = next(((n, p) for n, p in picks if p[0] is not None), picks[0])
    advice: List[str] = []
    if amd is not None and planned_kind(plan) == "rocm":
        advice = _amd_advice(plan, labels, amd, pick)
    elif devices and planned_kind(plan) == "xpu":
        advice = _intel_advice(plan, labels, devices)
    elif pick[0] is not None and plan.accelerator == "cpu":
        why = plan.rejected[0].reason if plan.rejected else "see the plan"
        advice = [f"a wheel-variant installer takes {pick[0]} here ({pick[1]}), which torchsmith did not "
                  f"plan: {why}"]
    return pick[0], pick[1], tuple(advice)
