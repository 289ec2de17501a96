"""A torch put here by a wheel-variant installer: which variant, and whether it fits this machine.

The installed wheel's ``dist-info/variant.json`` (PEP 825 draft, written by uv's preview
``wheel-variants`` and variantlib) names the one label installed and its properties; the NVIDIA
provider's are the CUDA floor (``cuda_version_lower_bound``) and the ``sm_arch`` targets. They are
judged as ``plan --variants`` judges labels (``plan.variant_pick``): the driver's CUDA at or above
the floor, every GPU running one of the targets.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from torchsmith.doctor.checks.common import Report, nvidia_gpus
from torchsmith.doctor.fixes import KbSource, install_fix
from torchsmith.doctor.model import Fact, Finding
from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb.variant_index import LabelFacts, parse_variants_data
from torchsmith.machine import Machine
from torchsmith.plan.variant_pick import FORCE_DRIVER, FORCE_SM, runs_on_every_gpu
from torchsmith.versions import version_tuple

__all__ = ["check_variant_install"]


def _installed(report: Report) -> Optional[Dict[str, Any]]:
    return next((i for i in report.get("torch_installs") or ()
                 if isinstance(i.get("variant"), dict) and i["variant"].get("variants")), None)


def _describe(label: LabelFacts) -> str:
    if label.is_null:
        return "the null variant (no properties: the CPU build)"
    parts = []
    if label.cuda_lower:
        parts.append(f"CUDA floor {label.cuda_lower}")
    if label.sass or label.ptx:
        parts.append("targets " + ", ".join(label.sass + label.ptx))
    namespaces = ", ".join(sorted(label.properties))
    return f"{namespaces} properties: " + ("; ".join(parts) if parts else "none the NVIDIA provider reads")


def _misfits(label: LabelFacts, gpus: List[str], driver_cuda: Optional[str]) -> List[str]:
    """Why the label does not run here (empty: it fits)."""
    if label.is_null:
        return ["it is the CPU build, and this machine has NVIDIA GPUs"] if gpus else []
    if "nvidia" not in label.properties:
        return []  # another provider's label: nothing here judges it
    out = [f"no code for compute capability {cc}" for cc in gpus if not runs_on_every_gpu(label, [cc])]
    if label.cuda_lower and driver_cuda and version_tuple(driver_cuda) < version_tuple(label.cuda_lower):
        out.append(f"its CUDA floor {label.cuda_lower} is above the driver's CUDA {driver_cuda}")
    return out


def check_variant_install(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    install = _installed(report)
    if install is None:
        return None
    where = str(install["variant"].get("file") or install.get("metadata"))
    try:
        (label,) = parse_variants_data({"variants": install["variant"]["variants"]}, where).values()
    except (KnowledgeBaseError, ValueError, TypeError):
        return Finding("variant-install", "warning", f"torch's variant metadata cannot be read ({where})",
                       (Fact(f"{where} is not a variant.json this doctor reads", where),))
    gpus = [(name, cc, source) for name, cc, source in nvidia_gpus(machine) if cc]
    nv = machine.nvidia
    driver_cuda = nv.driver_cuda if nv is not None else None
    facts = [Fact(f"torch {install.get('version')} was installed by {install.get('source')} as wheel variant "
                  f"{label.label}: {_describe(label)}", where)]
    facts.extend(Fact(f"GPU {name} (compute capability {cc})", source) for name, cc, source in gpus)
    if driver_cuda:
        facts.append(Fact(f"the driver supports CUDA ≤ {driver_cuda}",
                          f"machine.nvidia.driver_cuda ({nv.driver_cuda_source if nv else 'probe'})"))
    misfits = _misfits(label, [cc for _, cc, _ in gpus], driver_cuda)
    if not misfits and "nvidia" in label.properties and not gpus:
        return Finding("variant-install", "info",
                       f"torch is wheel variant {label.label}, built for NVIDIA GPUs; this machine shows "
                       "none",
                       tuple(facts))
    if not misfits:
        return Finding("variant-install", "info",
                       f"torch is wheel variant {label.label}, which fits this machine", tuple(facts))
    ccs = sorted((cc for _, cc, _ in gpus), key=version_tuple)
    parts = (f"{FORCE_DRIVER}={driver_cuda}" if driver_cuda else "", f"{FORCE_SM}={ccs[0]}" if ccs else "")
    override = " ".join(part for part in parts if part)
    fix = list(install_fix(report, machine, kb))
    if override:
        fix.append(f"Or make the variant provider report this machine: {override} uv pip install "
                   f"--preview-features wheel-variants --reinstall torch")
    fix.append("`torchsmith plan --installer uv --variants` says what a variant installer takes here and why")
    return Finding("variant-mismatch", "error",
                   f"torch is wheel variant {label.label}, which does not fit this machine: "
                   + "; ".join(misfits),
                   tuple(facts), tuple(fix),
                   note="a variant installer picks a label from what its providers report (the NVIDIA "
                        "provider: the highest GPU and the driver's CUDA), not from every GPU here")
