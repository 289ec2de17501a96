"""What each wheel-variant provider plugin (PEP 850 draft) reports on a machine, from the plugins' code.

- NVIDIA (wheelnext/nvidia-variant-provider): the driver's CUDA version and the *highest* compute
  capability (``get_sm_architectures``); see :mod:`torchsmith.plan.variant_pick`.
- AMD (wheelnext/amd-variant-provider@4d985a99, Linux only): ``gfx_arch`` = every gfx that
  ``rocminfo`` (else ``rocm_agent_enumerator -name``) lists, so none without ROCm's tools installed;
  ``rocm_version`` = the installed ROCm's ``major.minor`` from ``$ROCM_PATH`` or ``/opt/rocm``
  ``/.info/version``, one value, which a label's ``rocm_version`` must equal (variantlib
  filter_variants_by_property). torch's ROCm wheels bundle their own ROCm, yet a host with another
  (or no) system ROCm gets no ROCm label. Overrides: AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH,
  AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION (three parts, X.Y.Z: the plugin asserts it).
- Intel (wheelnext/intel-variant-provider@9516bd28, Linux and Windows): ``device_ip`` = each Intel
  GPU's IP (GMDID) read through Level Zero, and its compat IP; IPs not in the plugin's table are
  dropped, and nothing is reported without the GPU driver's Level Zero loader.
  Override: INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP (the README calls it a debug/test variable).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from torchsmith.kb.variant_index import LabelFacts
from torchsmith.records import dataclass

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.machine import Machine

__all__ = ["AMD_FORCE_GFX", "AMD_FORCE_ROCM", "INTEL_FORCE_IP", "AmdReport", "IntelDevice", "amd_fits",
           "amd_report", "intel_devices", "intel_fits"]

AMD_FORCE_GFX = "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH"
AMD_FORCE_ROCM = "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION"
INTEL_FORCE_IP = "INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP"
_ROCM_TOOLS = ("rocminfo", "rocm_agent_enumerator")


@dataclass(frozen=True)
class AmdReport:
    gfx: Tuple[str, ...]  # what rocminfo / rocm_agent_enumerator list; () without ROCm's tools
    rocm: Optional[str]  # the installed ROCm's "major.minor"; None: no ROCm installed
    linux: bool  # the plugin is enabled on Linux only
    known_gfx: Tuple[str, ...] = ()  # the GPUs' gfx as torchsmith knows them, reported or not

    def describe(self) -> str:
        gfx = " ".join(self.gfx) or "no gfx (no rocminfo or rocm_agent_enumerator on this machine)"
        rocm = (f"ROCm {self.rocm} (the installed ROCm)" if self.rocm
                else "no ROCm version (no ROCm installed)")
        return f"{gfx} and {rocm}"


def amd_report(machine: Machine) -> Optional[AmdReport]:
    """What the AMD provider reports here; None when the machine has no AMD GPU."""
    rocm = machine.rocm
    if rocm is None or not rocm.gpus:
        return None
    tools = rocm.version is not None or any(g.source in _ROCM_TOOLS for g in rocm.gpus)
    known = tuple(sorted({g.gfx for g in rocm.gpus if g.gfx}))
    version = ".".join(rocm.version.split(".")[:2]) if rocm.version else None
    return AmdReport(known if tools else (), version, machine.os.system == "linux", known)


def amd_fits(facts: LabelFacts, report: AmdReport) -> bool:
    """variantlib's rule: each feature the label declares has one of its values among the reported."""
    if "amd" not in facts.properties or not report.linux:
        return False
    gfx, rocm = facts.values("amd", "gfx_arch"), facts.values("amd", "rocm_version")
    return (not gfx or bool(set(gfx) & set(report.gfx))) and (not rocm or report.rocm in rocm)


@dataclass(frozen=True)
class IntelDevice:
    name: str  # the plugin's device name: "acm-g10", "mtl-u"
    ips: Tuple[str, ...]  # what the plugin reports for it: its IP, then its compat IP
    family: str


def intel_devices(kb: KnowledgeBase, machine: Machine) -> List[IntelDevice]:
    """The devices the machine's first supported Intel GPU may be (a family name such as "Arc
    Graphics" does not tell Meteor Lake H from U): what the Intel provider would report for each."""
    from torchsmith.plan.variant_labels import intel_families
    from torchsmith.plan.xpu import supported_family

    families = {row["family"]: row for row in intel_families(kb)}
    for gpu in machine.intel_gpus:
        row = supported_family(kb, gpu.name)
        family = families.get(row["family"]) if row is not None else None
        if family is not None:
            return [IntelDevice(name, tuple(ips), family["family"])
                    for name, ips in family["devices"].items()]
    return []


def intel_fits(facts: LabelFacts, device: IntelDevice) -> bool:
    return bool(set(facts.values("intel", "device_ip")) & set(device.ips))
