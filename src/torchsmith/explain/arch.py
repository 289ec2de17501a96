"""What the compat data says about a GPU's architecture and the torch build a text names. Pure.

Shared by the rules (:mod:`.reason`: "this build carries no sm_120; the release that does is ...")
and the triggers (:mod:`.triggers`: a no-kernel-image error where the data proves torch itself
lacks the GPU's architecture states that cause).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from torchsmith.compat import kernel_for, parse_cc, sm_arch
from torchsmith.explain.extract.model import Environment
from torchsmith.kb import KnowledgeBase
from torchsmith.versions import version_tuple

__all__ = ["arch_conclusion", "arch_list", "capability"]


def capability(env: Environment, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The GPU's compute capability: stated, or known from the GPU's name."""
    stated = facts.get("capability") if isinstance(facts.get("capability"), str) else env.capability
    if stated and parse_cc(stated):
        return str(stated)
    arch = facts.get("arch")
    if isinstance(arch, str) and re.fullmatch(r"sm_\d{2,3}", arch):
        digits = arch[3:]
        return f"{digits[:-1]}.{digits[-1]}"
    if kb is not None:
        for name in env.gpus:
            model = kb.gpu_by_name(name)
            if model is not None:
                return model.compute_capability
    return None



def arch_list(env: Environment, facts: Mapping[str, Any]) -> List[str]:
    listed = facts.get("arch_list")
    if isinstance(listed, list) and listed:
        return [str(a) for a in listed]
    return list(env.arch_list)


def _release_variant(env: Environment, kb: KnowledgeBase) -> Tuple[Optional[str], Optional[Any]]:
    """The torch release and variant the text names (``2.1.0+cu118``), when the data has them."""
    if not env.torch:
        return None, None
    base = env.torch.split("+")[0]
    release = kb.release(base)
    if release is None:
        return base, None
    wanted = None
    if env.torch_cuda:
        digits = env.torch_cuda.replace(".", "")
        wanted = f"cu{digits}"
    variant = release.variant(wanted) if wanted else None
    return base, variant


def _releases_with(cc: Tuple[int, int], kb: KnowledgeBase, platform: str) -> List[Tuple[str, str]]:
    """(release, variant) of every build in the data with compiled (SASS) code for ``cc``, oldest
    first; PTX a driver may JIT is not counted: the text already shows it did not serve."""
    found: Dict[str, str] = {}
    for release in kb.table("releases"):
        for variant in release.variants:
            kernel = kernel_for(cc, variant.sass(platform))
            if kernel is not None:
                found.setdefault(release.version, variant.name)
    return sorted(found.items(), key=lambda item: version_tuple(item[0]))


def _release_that_does(cc: Tuple[int, int], kb: KnowledgeBase, platform: str, torch: Optional[str]) -> str:
    carrying = _releases_with(cc, kb, platform)
    if not carrying:
        return "no release in torchsmith's data carries it"
    first, newest = carrying[0], carrying[-1]
    if torch and version_tuple(torch) < version_tuple(first[0]):
        return f"the first release that does is {first[0]} ({first[1]})"
    return f"the newest release that does is {newest[0]} ({newest[1]})"


def arch_conclusion(env: Environment, facts: Mapping[str, Any], kb: KnowledgeBase) -> Optional[str]:
    cc_text = capability(env, facts, kb)
    cc = parse_cc(cc_text)
    if cc is None or cc_text is None:
        return None
    platform = (
        "windows-x86_64"
        if env.platform == "windows"
        else ("linux-aarch64" if env.machine in ("aarch64", "arm64") else "linux-x86_64")
    )
    listed = arch_list(env, facts)
    base, variant = _release_variant(env, kb)
    if listed:
        if kernel_for(cc, listed) is not None:
            return None
        build = f"this build (arch list {' '.join(listed)})"
    elif variant is not None and variant.sass(platform):
        if kernel_for(cc, variant.sass(platform), variant.ptx(platform)) is not None:
            return None
        build = f"torch {base} ({variant.name})"
    else:
        toolkit = _toolkit_too_old(env, cc, kb)
        if toolkit is None:
            return None
        build = f"torch {env.torch or ''} ({toolkit})".replace("torch  (", "this torch (")
    where = _release_that_does(cc, kb, platform, base)
    return f"{build} carries no {sm_arch(cc_text)} code for this GPU; {where}"


def _toolkit_too_old(env: Environment, cc: Tuple[int, int], kb: KnowledgeBase) -> Optional[str]:
    """The torch build's CUDA (``+cu124``) is a toolkit that predates the GPU's architecture (its
    newest is older than the GPU's): no build made with it has code for the GPU."""
    if not env.torch_cuda or env.torch_cpu_only:
        return None
    row = kb.arch_support(env.torch_cuda)
    digits = row.max_arch[3:] if row and row.max_arch.startswith("sm_") else ""
    newest = parse_cc(f"{digits[:-1]}.{digits[-1]}") if digits else None
    if row is None or newest is None or cc <= newest:
        return None
    return f"built with CUDA {env.torch_cuda}, whose toolkit compiles up to {row.max_arch}"
