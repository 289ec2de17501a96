"""The conda-forge side of a plan: which conda packages, which CUDA, what pip still installs.

conda-forge only (``nodefaults``): the ``pytorch`` channel published nothing after 2.5. A CUDA
plan asks for ``pytorch-gpu`` with ``cuda-version`` pinned to the variant's CUDA. Decided here
once (:func:`conda_stack`), printed by the conda and pixi renderers.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from torchsmith.compat import variant_cuda
from torchsmith.errors import TorchsmithError
from torchsmith.plan.conda_forge import (
    ForgeRelease,
    compiled_on_conda_forge,
    forge_release,
    legacy_specs,
    tensorflow_windows_gpu,
)
from torchsmith.plan.conda_tegra import tegra_stack
from torchsmith.plan.model import CondaStack, PackagePin, Plan

if TYPE_CHECKING:
    from torchsmith.kb.model import CondaBuild
from torchsmith.versions import minor_version, version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["conda_stack", "kb_build_notes"]

_NOT_CONDA = {
    "jetson": "conda-forge's pytorch-gpu is built for desktop/server CUDA and, from 2.11, for Jetson "
              "JetPack 6 (arm-variant tegra), not for this Jetson's JetPack (its own NVIDIA wheel runs here)",
    "rocm": "torchsmith's data has no conda-forge ROCm build of pytorch",
    "xpu": "torchsmith's data has no conda-forge Intel XPU build of pytorch",
}


def _not_applicable(message: str, hint: str = "use --format pip or --format uv") -> TorchsmithError:
    return TorchsmithError(message, code="format-not-applicable", hint=hint)


def _kind(plan: Plan, fmt: str) -> str:
    kind = "rocm" if (plan.variant or "").startswith("rocm") else plan.accelerator
    if kind in _NOT_CONDA:
        raise _not_applicable(f"no {fmt} environment for this plan: {_NOT_CONDA[kind]}",
                              "use --format pip" + (" or --format jetson" if kind == "jetson"
                                                    else " or --format uv"))
    return kind


def conda_stack(plan: Plan, kb: KnowledgeBase, fmt: str = "conda") -> CondaStack:
    """What to take from conda-forge, from ``plan.conda`` (the resolver's data) or derived.

    Raises ``format-not-applicable`` when conda-forge cannot express the plan.
    """
    if plan.accelerator == "jetson":
        tegra = tegra_stack(plan, kb, kb.document("formats")["conda"]["gpu_package"])
        if tegra is not None:
            return tegra
    kind = _kind(plan, fmt)
    formats = kb.document("formats")
    data = formats["conda"]
    specs = plan.conda or {}
    torch = plan.package("torch")
    wanted = str(specs.get(data["gpu_package"]) or specs.get("pytorch") or (torch.version if torch else ""))
    forge = forge_release(wanted, plan.platform, kb) if torch is not None else None
    if torch is not None and (forge is None or specs.get("available") is False):
        try:
            return _legacy_stack(plan, kind, torch, formats)
        except TorchsmithError:
            if specs.get("available") is not False:
                raise
    if specs.get("available") is False:
        raise _not_applicable(f"no {fmt} environment for this plan: "
                              f"{specs.get('reason') or 'conda-forge has no matching build'}")
    version = forge.version if forge is not None else str(specs.get("pytorch") or "")
    notes: List[str] = [forge.note] if forge is not None and forge.note else []
    cuda, packages = _torch_packages(plan, kind, fmt, forge, version, data=data, notes=notes)
    cuda = _family_cuda(plan, kb, forge, cuda, data=data, notes=notes, fmt=fmt)
    pip = _family_packages(plan, forge, data, packages)
    compiled, pip, compiled_notes = compiled_on_conda_forge(pip, formats)
    packages.extend((name, "") for name in compiled)
    tf_packages, tf_notes = tensorflow_windows_gpu(plan.platform, pip, formats)
    packages.extend(tf_packages)
    compiled_notes.extend(tf_notes)
    keep = (f"torch=={version}",) if version else ()  # pip steps (companions, unplanned) hold it
    raw_notes = specs.get("notes") or ()
    notes.extend((raw_notes,) if isinstance(raw_notes, str) else (str(n) for n in raw_notes))
    stack = CondaStack(tuple(packages), cuda, tuple(pip), keep, not specs, (*notes, *compiled_notes),
                       platform=plan.platform)
    return _with_data_notes(stack, kb)


def _torch_packages(plan: Plan, kind: str, fmt: str, forge: Optional[ForgeRelease], version: str, *,
                    data: Dict[str, Any], notes: List[str]) -> Tuple[Optional[str], List[Tuple[str, str]]]:
    """(cuda-version, [pytorch's own conda package]) for the plan's torch build."""
    if plan.package("torch") is None:
        return None, []  # no torch in the plan (a TensorFlow environment): nothing of pytorch's
    if kind == "cuda":
        cuda = str((plan.conda or {}).get("cuda-version") or variant_cuda(plan.variant) or "") or None
        if cuda is None:
            raise _not_applicable(f"no {fmt} environment: the plan's variant {plan.variant!r} names no "
                                  "CUDA version", "use --format pip")
        if forge is not None:
            cuda, why = forge.cuda_for(cuda)
            notes.extend([why] if why else [])
        if plan.platform == "linux-aarch64":  # servers and JetPack 7's Thor: the SBSA builds, never tegra
            return cuda, [(data["gpu_package"], version), ("arm-variant", "*=sbsa")]
        return cuda, [(data["gpu_package"], version)]
    if plan.platform.startswith("macos"):
        return None, [("pytorch", version)]
    # A bare "pytorch" on a machine with a GPU would pull the CUDA build: ask for the CPU one.
    return None, [("pytorch", f"{version or '*'}={data['cpu_build']}")]


def _family_packages(plan: Plan, forge: Optional[ForgeRelease], data: Dict[str, Any],
                     packages: List[Tuple[str, str]]) -> List[PackagePin]:
    """Add torch's family to ``packages`` (conda-forge names); the rest is left for pip."""
    torch = plan.package("torch")
    family: Dict[str, str] = data["family"]
    moved = torch is not None and forge is not None and forge.version != torch.version.split("+")[0]
    pip: List[PackagePin] = []
    for pin in plan.packages:
        if pin.name == "torch":
            continue
        if pin.name in family:  # another pytorch than planned: the solver pairs the rest with it
            packages.append((family[pin.name], "" if moved else pin.version))
        else:
            pip.append(pin)
    return pip


def _family_rows(kb: KnowledgeBase, conda_name: str, version: str) -> Optional[CondaBuild]:
    """The feedstock row of ``conda_name`` (torchvision, torchaudio) for ``version``'s series."""
    try:
        rows = kb.conda_builds
    except TorchsmithError:
        return None
    return next((b for b in rows if b.package == conda_name and b.version == minor_version(version)), None)


def _family_cuda(plan: Plan, kb: KnowledgeBase, forge: Optional[ForgeRelease], cuda: Optional[str], *,
                 data: Dict[str, Any], notes: List[str], fmt: str) -> Optional[str]:
    """The cuda-version every family package has a build for on this platform (torchvision's CUDA
    must equal pytorch's); refuses when conda-forge has no build of one of them here."""
    release = kb.release(forge.version) if forge is not None else None
    family: Dict[str, str] = data["family"]
    for pin in plan.packages:
        if pin.name not in family or pin.name == "torch":
            continue
        paired = getattr(release, pin.name, None) if release is not None else None
        moved = forge is not None and forge.version != (plan.package("torch") or pin).version.split("+")[0]
        if moved and not paired:
            continue  # another pytorch than planned, its pair unknown: left to the solver
        row = _family_rows(kb, family[pin.name], paired or pin.version)
        if row is None:
            continue  # not in the data: left to the solver
        cite = ", ".join(kb.sources[s].url for s in row.sources if s in kb.sources)
        built = row.cudas_for(plan.platform)
        if plan.platform not in row.platforms or (cuda and not built):
            what = "CUDA " if cuda else ""
            raise _not_applicable(
                f"no {fmt} environment for this plan: conda-forge builds no {what}{family[pin.name]} "
                f"{row.version} for {plan.platform} (source: {cite})",
                f"use --format pip, or plan without {pin.name}")
        if cuda and cuda not in built:
            shared = [c for c in built if forge is not None and c in forge.cudas
                      and c.split(".")[0] == cuda.split(".")[0]]
            if not shared:
                raise _not_applicable(
                    f"no {fmt} environment for this plan: conda-forge's {family[pin.name]} {row.version} "
                    f"CUDA builds for {plan.platform} are for CUDA {', '.join(built)}, none of which "
                    f"pytorch {forge.version if forge else ''} shares in CUDA {cuda.split('.')[0]}.x "
                    f"(source: {cite})", f"use --format pip, or plan without {pin.name}")
            chosen = max(shared, key=version_tuple)
            notes.append(f"{family[pin.name]} {row.version} is built for CUDA {', '.join(built)} on "
                         f"{plan.platform} and must match pytorch's: cuda-version={chosen} (source: {cite})")
            cuda = chosen
    return cuda


def _split_spec(spec: str) -> Tuple[str, str]:
    """``("pytorch", "2.1.2")`` from ``pytorch=2.1.2``; ``("mkl", "<2024.1")`` from ``mkl<2024.1``."""
    match = re.match(r"^([A-Za-z0-9_.-]+)(.*)$", spec)
    name, rest = (match.group(1), match.group(2)) if match else (spec, "")
    return name, rest[1:] if rest.startswith("=") and not rest.startswith("==") else rest


def _legacy_stack(plan: Plan, kind: str, torch: PackagePin, formats: Dict[str, Any]) -> CondaStack:
    """A release conda-forge never built here: the pytorch channel's build, with its CUDA package."""
    cuda = variant_cuda(plan.variant) if kind == "cuda" else None
    channels, specs, comments = legacy_specs(torch.version, cuda, formats, plan.platform)
    packages: List[Tuple[str, str]] = [_split_spec(s) for s in specs]
    family: Dict[str, str] = formats["conda"]["family"]
    pip = [p for p in plan.packages if p.name not in family]
    packages.extend((family[p.name], p.version) for p in plan.packages
                    if p.name in family and p.name != "torch")
    keep = (f"torch=={torch.version.split('+')[0]}",)
    return CondaStack(tuple(packages), None, tuple(pip), keep, False, tuple(comments),
                      channels=tuple(channels), legacy=True)


def _with_data_notes(stack: CondaStack, kb: KnowledgeBase) -> CondaStack:
    from torchsmith.records import replace

    return replace(stack, data_notes=tuple(kb_build_notes(stack, kb)))


def kb_build_notes(stack: CondaStack, kb: KnowledgeBase) -> List[str]:
    """What torchsmith's data says about conda-forge's builds of this pytorch series, as comments.

    The conda-forge rows are sparse and partly unverified, so they only inform, never refuse.
    """
    try:
        rows = kb.conda_builds
    except TorchsmithError:
        return []  # a broken KB is reported by the commands that need it
    if stack.legacy or not stack.packages or stack.packages[0][0] not in ("pytorch", "pytorch-gpu"):
        return []
    version = stack.packages[0][1].split("=")[0]
    series = minor_version(version)
    row = next((b for b in rows if b.version == series and b.package in ("pytorch", "pytorch-gpu")), None)
    if row is None:
        return [f"torchsmith's data lists no conda-forge pytorch {series} build: check conda-forge has one."]
    urls = [kb.sources[s].url for s in row.sources if s in kb.sources]
    cite = f" (source: {', '.join(urls)}{'; unverified' if row.uncertain else ''})"
    if stack.cuda is None:
        return []
    major = stack.cuda.split(".")[0]
    built = row.cudas_for(stack.platform)
    fits = [c for c in built
            if c.split(".")[0] == major and version_tuple(c) <= version_tuple(stack.cuda)]
    listed = ", ".join(built) or "none"
    if not fits:
        return [f"conda-forge's pytorch {series} CUDA builds are for CUDA {listed}: none of them fits "
                f"cuda-version={stack.cuda}{cite}."]
    return [f"conda-forge's pytorch {series} CUDA builds: CUDA {listed}; cuda-version={stack.cuda} "
            f"admits {', '.join(fits)}{cite}."]
