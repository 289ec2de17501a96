"""What a wheel-variant installer (uv's preview ``wheel-variants``, pip with variantlib) will pick on
a machine, next to what runs there, and the command that is right when they differ.

The NVIDIA provider (wheelnext/nvidia-variant-provider, plugin.py ``get_sm_architectures``:
``sorted(architectures, reverse=True)[0]``) reports the highest compute capability among the GPUs and
the driver's CUDA version; a label fits when its ``cuda_version_lower_bound`` (the driver floor the
file declares: 2.8's cu128 12.8, 2.9/2.10's 12.x labels 12.0) is at most that CUDA version and the
reported GPU can run one of its ``sm_arch`` targets. No fitting label: the null (CPU) variant.
torchsmith's own verdict uses every GPU and minor-version compatibility (``compat``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Mapping, Optional, Sequence, Tuple

from torchsmith.compat import parse_cc
from torchsmith.kb.variant_index import LabelFacts
from torchsmith.plan.variant_labels import build_name, first_variant_release, labels_of, mainline_uv_caveat
from torchsmith.records import dataclass
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.machine import Machine
    from torchsmith.plan.model import PackagePin, Plan

__all__ = ["VariantPick", "VariantPrediction", "installer_pick", "predict_variants",
           "runs_on_every_gpu", "variant_advice", "variant_command"]

# The provider's own override variables (nvidia-variant-provider's tests set them), so a user can
# make the installer see the machine torchsmith planned for.
FORCE_DRIVER = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
FORCE_SM = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"


@dataclass(frozen=True)
class VariantPick:
    label: Optional[str]  # None: the null (CPU) variant
    reason: str


def _runs(facts: LabelFacts, cc: Tuple[int, int]) -> bool:
    """Whether a GPU of compute capability ``cc`` runs one of the label's targets."""
    number = cc[0] * 10 + cc[1]
    for arch in facts.sass:  # SASS runs on the same major, same or newer minor
        value = int("".join(ch for ch in arch.split("_", 1)[1] if ch.isdigit()))
        if value // 10 == number // 10 and value <= number and arch[-1].isdigit():
            return True
    return any(int("".join(ch for ch in p.split("_", 1)[1] if ch.isdigit())) <= number for p in facts.ptx)


def runs_on_every_gpu(facts: LabelFacts, ccs: Sequence[str]) -> bool:
    return all(_runs(facts, _cc(cc)) for cc in ccs)


def _cc(text: str) -> Tuple[int, int]:
    return parse_cc(text) or (0, 0)  # unreadable: runs nothing, so the advice names it


def installer_pick(labels: Mapping[str, LabelFacts], ccs: Sequence[str],
                   driver_cuda: Optional[str]) -> VariantPick:
    """The label the installer takes: the newest CUDA whose floor and targets fit what the
    provider reports (the highest GPU, the driver's CUDA), else the null variant."""
    if not ccs or not driver_cuda:
        return VariantPick(None, "the provider reports no NVIDIA GPU or driver: the CPU variant")
    cc = max(_cc(text) for text in ccs)
    fitting = [f for f in labels.values() if f.cuda_lower
               and version_tuple(f.cuda_lower) <= version_tuple(driver_cuda)
               and (not f.cuda_upper or version_tuple(driver_cuda) < version_tuple(f.cuda_upper))
               and ((not f.sass and not f.ptx) or _runs(f, cc))]
    if not fitting:
        floors = ", ".join(sorted({f.cuda_lower for f in labels.values() if f.cuda_lower},
                                  key=version_tuple))
        return VariantPick(None, f"no label's CUDA floor ({floors}) is at or below the driver's CUDA "
                                 f"{driver_cuda} for sm_{cc[0]}{cc[1]}: the CPU variant, silently")
    # the newest floor; between equal floors (2.9/2.10 declare 12.0 for both 12.x labels) the label
    # PyTorch ranks first with its static priority property
    best = max(fitting, key=lambda f: (version_tuple(f.cuda_lower or "0"), -f.priority))
    return VariantPick(best.label, f"the newest CUDA label whose floor ({best.cuda_lower}) the driver's "
                                   f"CUDA {driver_cuda} meets and whose targets sm_{cc[0]}{cc[1]} runs")


def variant_advice(labels: Mapping[str, LabelFacts], ccs: Sequence[str], driver_cuda: Optional[str],
                   planned: str, planned_index: str) -> Tuple[str, ...]:
    """Warnings when a variant-aware installer would take another build than the one planned:
    a silent CPU fallback, a build missing one GPU's architecture; each with the right command."""
    pick = installer_pick(labels, ccs, driver_cuda)
    explicit = f"uv pip install --index-url {planned_index} torch"
    out = []
    if pick.label is None and planned != "cpu":
        out.append(f"a wheel-variant installer takes the CPU build here ({pick.reason}), though {planned} "
                   f"runs on this driver: install from the explicit index instead ({explicit}), or set "
                   f"{FORCE_DRIVER}={_floor(labels, planned) or driver_cuda} for the installer")
    elif pick.label is not None and not runs_on_every_gpu(labels[pick.label], ccs):
        missing = [cc for cc in ccs if not _runs(labels[pick.label], _cc(cc))]
        lowest = min(ccs, key=_cc)
        out.append(f"a wheel-variant installer takes {pick.label} for the newest GPU (its provider reports "
                   f"only the highest compute capability), but "
                   f"{pick.label} has no code for compute capability {', '.join(missing)} on this machine: "
                   f"install {planned} from its index ({explicit}), or set {FORCE_SM}={lowest}")
    elif pick.label is not None and build_name(pick.label) != planned:
        out.append(f"a wheel-variant installer would take {pick.label} ({pick.reason}); torchsmith "
                   f"planned {planned}: {explicit} installs exactly that")
    return tuple(out)


def _floor(labels: Mapping[str, LabelFacts], planned: str) -> Optional[str]:
    facts = next((f for label, f in labels.items() if build_name(label) == planned), None)
    return facts.cuda_lower if facts is not None else None


@dataclass(frozen=True)
class VariantPrediction:
    """What a wheel-variant installer does on a planned machine: the label it takes (None: the
    CPU/null variant), why, the variant install itself, and the warnings where that is not the plan."""

    label: Optional[str]
    reason: str
    command: str  # "": no variant install of this release (the reason says why)
    advice: Tuple[str, ...] = ()
    caveat: Optional[str] = None  # where uv's own preview does otherwise (variant_labels.UV_*)

    def to_json(self) -> Dict[str, object]:
        return {"label": self.label, "reason": self.reason, "command": self.command,
                "advice": list(self.advice), "caveat": self.caveat}


def variant_command(kb: KnowledgeBase, version: Optional[str]) -> str:
    """The variant install: uv's preview wheel-variants against PyTorch's variant index."""
    base = str(kb.manifest["torch_index_base"]).rstrip("/")
    pin = f"torch=={version}" if version else "torch"
    return f"uv pip install --preview-features wheel-variants --index-url {base}/variant {pin}"


def predict_variants(plan: Plan, machine: Machine, kb: KnowledgeBase) -> Optional[VariantPrediction]:
    """The one prediction `plan --variants` and `fleet --variants` give; None without a plan.

    Its advice and caveat are cautions (shown without ``-v``): they say whether the variant install
    takes a build that runs here (a silent CPU fallback, a GPU left without code, a file uv refuses)."""
    import dataclasses

    from torchsmith.output import Caution

    prediction = _predict(plan, machine, kb)
    if prediction is None:
        return None
    return dataclasses.replace(prediction, advice=tuple(Caution(a) for a in prediction.advice),
                               caveat=Caution(prediction.caveat) if prediction.caveat else None)


def _predict(plan: Plan, machine: Machine, kb: KnowledgeBase) -> Optional[VariantPrediction]:
    torch = next((p for p in plan.packages if p.name == "torch"), None)
    if not plan.ok or torch is None:
        return None
    command = variant_command(kb, torch.version)
    if plan.accelerator == "jetson" and machine.jetson is not None:
        return _jetson_prediction(kb, machine, torch, command)
    release = kb.release(torch.version) if torch.version else None
    first = first_variant_release(kb)
    if release is not None and first and version_tuple(release.version) < version_tuple(first):
        return VariantPrediction(None, f"PyTorch's variant index has no torch {release.version}: its "
                                       f"variant wheels begin with torch {first}", "")
    labels = labels_of(kb, release, plan.platform) if release is not None else {}
    from torchsmith.plan.variant_vendors import planned_kind, vendor_prediction

    if planned_kind(plan) in ("rocm", "xpu"):  # TheRock's unpinned nightly too: the provider is Linux-only
        vendor = vendor_prediction(plan, machine, kb, labels)
        caveat = mainline_uv_caveat(kb, torch.version or "", vendor=True)
        return VariantPrediction(*vendor[:2], command, vendor[2], caveat) if vendor is not None else None
    if release is None:
        return None
    from torchsmith.plan.hostview import host_view

    view = host_view(machine, kb)  # the driver's CUDA as the resolver reads it (nvidia-smi or the table)
    nvidia = machine.nvidia
    ccs = [g.compute_capability for g in (nvidia.gpus if nvidia else ()) if g.compute_capability]
    pick = installer_pick(labels, ccs, view.driver_cuda)
    advice: Tuple[str, ...] = ()
    if torch.index_url and torch.variant:
        advice = variant_advice(labels, ccs, view.driver_cuda, torch.variant, torch.index_url)
    if pick.label is None and plan.accelerator == "cpu":
        other = vendor_prediction(plan, machine, kb, labels)  # an AMD/Intel GPU the plan left out
        if other is not None and other[0] is not None:
            caveat = mainline_uv_caveat(kb, release.version, vendor=True)
            return VariantPrediction(*other[:2], command, other[2], caveat)
    return VariantPrediction(pick.label, pick.reason, command, advice,
                             mainline_uv_caveat(kb, release.version, vendor=False))


def _jetson_prediction(kb: KnowledgeBase, machine: Machine, torch: PackagePin,
                       command: str) -> Optional[VariantPrediction]:
    """On a Jetson the NVIDIA provider sees a CUDA driver and an sm_87 GPU like any server: a variant
    installer takes the server-ARM (SBSA) build, built for the desktop driver stack, not L4T's."""
    jetson = machine.jetson
    assert jetson is not None
    newest = next((r for r in kb.releases if any(v.kind == "cuda" and "linux-aarch64" in v.platforms
                                                 for v in r.variants)), None)
    jetpack = kb.jetpack_for_l4t(jetson.l4t) if jetson.l4t else None
    cuda = jetson.cuda or (jetpack.cuda if jetpack is not None else None)
    cc = jetson.compute_capability
    if newest is None or not cuda:
        return None
    label: Optional[str] = None
    if cc:
        label = installer_pick(labels_of(kb, newest, "linux-aarch64"), [cc], cuda).label
        taken = (f"the server-ARM (SBSA) build {newest.version} {label}, made for the desktop "
                 f"driver stack, not L4T's" if label else "the CPU build")
    else:
        taken = "a server-ARM (SBSA) build made for the desktop driver stack, or the CPU build"
    right = (f"install NVIDIA's wheel ({torch.wheel_url or torch.index_url})" if torch.wheel_url
             or torch.index_url else "install NVIDIA's wheel for this JetPack")
    advice = (f"a wheel-variant installer on this Jetson takes {taken}: its provider reports only the "
              f"driver's CUDA ({cuda}) and the GPU's compute capability, not the JetPack; {right} instead",)
    return VariantPrediction(label, "its provider sees a CUDA driver and a GPU, not the JetPack",
                             variant_command(kb, newest.version), advice)
