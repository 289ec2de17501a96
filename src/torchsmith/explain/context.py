"""What the knowledge base and the kind of machine change in an explanation. Pure: no I/O.

- Facts computed from the knowledge base (``kb_facts`` of a signature): the last torch release whose
  binaries carry an architecture, the last version of the legacy ``pytorch`` conda channel.
- A Jetson, known from the machine (``--jetson``, the probe) or from the text (an ``nvXX.YY`` torch,
  a cp36/cp38 ``linux_aarch64`` wheel): desktop steps (the PyTorch index, nvidia-smi, a driver
  upgrade) do not apply there, so they are replaced by NVIDIA's wheels for that JetPack.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.compat import sm_arch
from torchsmith.kb import JetPack, KnowledgeBase
from torchsmith.machine import Machine
from torchsmith.records import dataclass
from torchsmith.versions import version_tuple

__all__ = ["JetsonContext", "adapt_fix_for_jetson", "jetson_context", "kb_facts"]


# --- facts from the knowledge base ---------------------------------------------------------

def _arch(facts: Mapping[str, Any]) -> Optional[str]:
    capability = facts.get("capability")
    if isinstance(capability, str) and re.fullmatch(r"\d+\.\d+", capability):
        return sm_arch(capability)
    arch = facts.get("arch")
    return arch if isinstance(arch, str) and arch.startswith("sm_") else None


def _arch_last_release(facts: Mapping[str, Any], kb: KnowledgeBase) -> Optional[str]:
    arch = _arch(facts)
    if arch is None:
        return None
    best = None
    oldest_listed = None
    for release in kb.table("releases"):
        for variant in release.variants:
            arches = {a for listed in variant.sass_by_platform.values() for a in listed}
            if not arches:
                continue
            if oldest_listed is None or version_tuple(release.version) < version_tuple(oldest_listed):
                oldest_listed = release.version
            if arch in arches and (best is None or version_tuple(release.version) > version_tuple(best[0])):
                best = (release.version, variant.name)
    if best is not None:
        return f"the last torch release whose binaries carry {arch} is {best[0]} ({best[1]})"
    if oldest_listed is None:
        return None
    return (f"no torch release in torchsmith's data (arch lists back to {oldest_listed}) ships {arch} "
            f"kernels, so no binary of any current release runs on it")


def _arch_never_released(facts: Mapping[str, Any], kb: KnowledgeBase) -> Optional[str]:
    """Set only when no release in the data carries the arch: another binary cannot help then."""
    text = _arch_last_release(facts, kb)
    return text if text and text.startswith("no torch release") else None


def _arch_toolkit(facts: Mapping[str, Any], kb: KnowledgeBase) -> Optional[str]:
    arch = _arch(facts)
    rows = [row for row in kb.table("arch-support") if arch and arch in row.archs]
    if not rows:
        return None
    newest = max(rows, key=lambda row: version_tuple(row.cuda))
    return f"CUDA {newest.cuda} is the newest toolkit in torchsmith's data that compiles for {arch}"


def _unknown_torch_release(facts: Mapping[str, Any], kb: KnowledgeBase) -> Optional[str]:
    """A pinned torch version that is not a release at all (torch==1.15.0), when the data covers it."""
    requirement = facts.get("requirement")
    pinned = re.fullmatch(r"torch==(\d+\.\d+\.\d+)(?:\+\w+)?", requirement or "") if isinstance(
        requirement, str) else None
    if pinned is None:
        return None
    versions = [release.version for release in kb.table("releases")]
    if not versions:
        return None
    oldest = min(versions, key=version_tuple)
    newest = max(versions, key=version_tuple)
    wanted = pinned.group(1)
    if wanted in versions or version_tuple(wanted) < version_tuple(oldest):
        return None
    return (f"torch {wanted} is not among the torch releases in torchsmith's data ({oldest} to {newest}): "
            f"check the pinned version for a typo")


def _conda_channel_last(facts: Mapping[str, Any], kb: KnowledgeBase) -> Optional[str]:
    for channel in kb.conda_channels:
        if channel.channel == "pytorch" and channel.package == "pytorch" and channel.last_version:
            cited = "; ".join(kb.cite(channel.sources))
            return f"{channel.last_version} ({channel.note}; source: {cited})"
    return None


def _torch_stable_html_last(facts: Mapping[str, Any], kb: KnowledgeBase) -> Optional[str]:
    page = kb.document("formats").get("torch_stable_html") or {}
    return str(page["last"]) if page.get("last") else None


_KB_FACTS = {
    "arch_last_release": _arch_last_release,
    "arch_never_released": _arch_never_released,
    "arch_toolkit": _arch_toolkit,
    "unknown_torch_release": _unknown_torch_release,
    "conda_channel_last": _conda_channel_last,
    "torch_stable_html_last": _torch_stable_html_last,
}


def kb_facts(names: Sequence[str], facts: Mapping[str, Any], kb: Optional[KnowledgeBase]) -> Dict[str, str]:
    """The knowledge-base facts a signature asks for that the data can give."""
    out: Dict[str, str] = {}
    if kb is None:
        return out
    for name in names:
        if name not in _KB_FACTS:
            continue  # computed by explain from the text or the machine (gpu_capability)
        value = _KB_FACTS[name](facts, kb)
        if value:
            out[name] = value
    return out


# --- Jetson ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class JetsonContext:
    evidence: str  # how it is known
    jetpack: Optional[JetPack] = None
    wheel_python: Optional[str] = None  # "3.6" when the text shows a cp36 wheel
    images: Tuple[str, ...] = ()  # NVIDIA's L4T container images for this L4T release (containers.json)


_NV_BUILD = re.compile(r"[.+]nv(\d{2}\.\d{2})\b")
_AARCH64_WHEEL = re.compile(r"-cp3(6|8)-cp3\d+m?-linux_aarch64\b")


def _jetpack_of_build(build: str, kb: KnowledgeBase) -> Optional[JetPack]:
    for jetpack in kb.jetpacks:
        # the JetPack that lists the build, not one that inherits it by its L4T range
        if any(f"nv{build}" in wheel.torch and not wheel.listed_for for wheel in jetpack.wheels):
            return jetpack
    return None


def _l4t_images(jetpack: Optional[JetPack], kb: Optional[KnowledgeBase]) -> Tuple[str, ...]:
    """NVIDIA's l4t-pytorch / l4t-jetpack images of the JetPack's L4T release line (r35.x ...)."""
    if jetpack is None or kb is None:
        return ()
    line = ".".join(jetpack.l4t.split(".")[:1])
    document = kb.document("containers")
    rows = [*document.get("l4t_pytorch", []), *document.get("l4t_jetpack", [])]
    same_line = [r for r in rows if str(r.get("l4t", "")).split(".")[:1] == [line]]
    same_line.sort(key=lambda r: r.get("l4t") != jetpack.l4t)  # this exact release first
    return tuple(str(r["image"]) for r in same_line)


def jetson_context(text: str, machine: Optional[Machine],
                   kb: Optional[KnowledgeBase]) -> Optional[JetsonContext]:
    """A Jetson, when the machine or the text shows one; its JetPack when that is known."""
    import dataclasses

    found = _jetson_context(text, machine, kb)
    if found is None:
        return None
    return dataclasses.replace(found, images=_l4t_images(found.jetpack, kb))


def _jetson_context(text: str, machine: Optional[Machine],
                    kb: Optional[KnowledgeBase]) -> Optional[JetsonContext]:
    wheel = _AARCH64_WHEEL.search(text)
    wheel_python = f"3.{wheel.group(1)}" if wheel else None
    if machine is not None and machine.jetson is not None:
        info = machine.jetson
        jetpack = None
        if kb is not None:
            jetpack = (kb.jetpack_for_l4t(info.l4t) if info.l4t else None) or (
                kb.jetpack(info.jetpack) if info.jetpack else None)
        where = f"L4T {info.l4t}" if info.l4t else "this machine"
        return JetsonContext(f"a Jetson ({where})", jetpack, wheel_python)
    build = _NV_BUILD.search(text) if ".nv" in text or "+nv" in text else None  # a scan of a long log
    if build:
        jetpack = _jetpack_of_build(build.group(1), kb) if kb is not None else None
        return JetsonContext(f"a Jetson (NVIDIA's nv{build.group(1)} torch build in the text)", jetpack,
                             wheel_python)
    if wheel:
        return JetsonContext(f"a Jetson, probably (a cp3{wheel.group(1)} linux_aarch64 wheel in the text)",
                             None, wheel_python)
    return None


# Steps that only hold on a desktop or server GPU.
_DESKTOP_STEP = re.compile(
    r"download\.pytorch\.org|--index-url|nvidia-smi|[Uu]pgrade the (?:host |NVIDIA )?driver|driver upgrade"
    r"|python3?\.6 -m venv|run on the CPU|NVIDIA_DISABLE_REQUIRE", re.IGNORECASE)
_CONTAINER_STEP = re.compile(r"\bimage\b|container|docker", re.IGNORECASE)


def _upstream_wheels(jetpack: Optional[JetPack]) -> bool:
    """JetPack 7 runs the upstream aarch64 CUDA wheels: desktop steps hold there."""
    return jetpack is not None and version_tuple(jetpack.jetpack.split(" ")[0]) >= (7,)


def _jetson_steps(ctx: JetsonContext) -> List[str]:
    jp = ctx.jetpack
    if jp is None:
        return ["On a Jetson only NVIDIA's torch builds for its JetPack run (no pytorch.org wheels, "
                "no desktop driver): read the L4T release (cat /etc/nv_tegra_release), then "
                "`torchsmith plan --jetson <L4T>` names NVIDIA's wheel for that JetPack"]
    label = f"JetPack {jp.jetpack} (L4T {jp.l4t}, Python {jp.python})"
    if jp.index_url:
        steps = [f"{label}: install NVIDIA's torch for this JetPack: "
                 f"pip install torch --index-url {jp.index_url}"]
    elif jp.wheels:
        own = [wheel for wheel in jp.wheels if not wheel.listed_for] or list(jp.wheels)
        steps = [f"{label}: install NVIDIA's torch wheel for this JetPack with its Python {jp.python}: "
                 f"pip install {own[0].url}"]
    else:
        steps = [f"{label}: NVIDIA lists no torch wheel for this exact release in torchsmith's data: "
                 f"`torchsmith plan --jetson {jp.l4t}` names the nearest one"]
    if ctx.wheel_python and ctx.wheel_python != jp.python:
        steps.append(f"The wheel in the text is for Python {ctx.wheel_python}, "
                     f"but {label} ships Python {jp.python}: "
                     f"use this JetPack's wheel, not a Python {ctx.wheel_python} environment")
    if jp.prerequisites:
        steps.append(f"Its prerequisites: sudo apt-get install {' '.join(jp.prerequisites)}")
    return steps


def adapt_fix_for_jetson(steps: Sequence[str], ctx: Optional[JetsonContext]) -> List[str]:
    """The steps without desktop-only advice, plus NVIDIA's wheels for the JetPack, on a Jetson."""
    if ctx is None or _upstream_wheels(ctx.jetpack):
        return list(steps)
    kept = [step for step in steps if not _DESKTOP_STEP.search(step)]
    if len(kept) == len(steps):
        return kept
    extra = _jetson_steps(ctx)
    if any(_CONTAINER_STEP.search(step) for step in steps):
        extra.insert(0, "On a Jetson, run NVIDIA's L4T images for its L4T release: "
                     + (", ".join(ctx.images[:4]) if ctx.images
                        else "nvcr.io/nvidia/l4t-pytorch or l4t-jetpack with the tag of the L4T release "
                             "(cat /etc/nv_tegra_release), e.g. r35.2.1")
                     + "; data-centre CUDA images and their CUDA requirement do not apply")
    return kept + extra
