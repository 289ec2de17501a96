"""Reason about the facts a text states with the rules plan and doctor use. Pure: no I/O.

The extracted facts (:mod:`.extract`) describe a machine and a stack: its GPU's capability, the
driver, the torch build. :func:`conclusions` asks the compat core what follows ("this build
carries no sm_120; the release that does is 2.7.0 (cu128)"; "driver 470 supports CUDA 11.4, this
build needs 12.1"; "package A pins torch==X; the release of A for torch Y is ..."), and
:func:`contradiction` says when the text holds evidence against a signature's cause, so that
signature does not fire. Each check is named in the signature's ``contradicted_by``.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.compat import driver_support, kernel_for, parse_cc, sm_arch
from torchsmith.explain.archlists import ARCH_LIST_CONFIRMATIONS, every_cuda_variant
from torchsmith.explain.confirmations import TEXT_CONFIRMATIONS, Check
from torchsmith.explain.contradictions import TEXT_CONTRADICTIONS
from torchsmith.explain.extract.model import Environment, Extracted
from torchsmith.explain.loadedcopies import LOADED_COPY_CONFIRMATIONS
from torchsmith.explain.numpychecks import NUMPY_CONFIRMATIONS
from torchsmith.explain.pins import pin_conclusions
from torchsmith.explain.triggers import named_capabilities
from torchsmith.kb import KnowledgeBase
from torchsmith.versions import version_tuple

__all__ = ["CONFIRMATION_CHECKS", "CONTRADICTION_CHECKS", "blocked", "capability", "conclusions",
           "confirmation", "contradiction"]


# --- the machine the text describes ------------------------------------------------------------


def _stated_capability(env: Environment, facts: Mapping[str, Any]) -> bool:
    """The capability is printed (a message's sm_XY, collect_env's), not looked up from a name."""
    return bool(facts.get("capability") or facts.get("arch") or env.capability)


def capability(env: Environment, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The GPU's compute capability: stated, or known from the GPU's name."""
    stated = facts.get("capability") if isinstance(facts.get("capability"), str) else env.capability
    if stated and parse_cc(stated):
        return str(stated)
    arch = facts.get("arch")
    if isinstance(arch, str) and re.fullmatch(r"sm_\d{2,3}", arch):
        digits = arch[3:]
        return f"{digits[:-1]}.{digits[-1]}"
    named = named_capabilities(env, kb)
    return named[0][1] if named else None


def _build_cuda(env: Environment, facts: Mapping[str, Any]) -> Optional[str]:
    for key in ("runtime_cuda", "built_cuda", "torch_cuda"):
        value = facts.get(key)
        if isinstance(value, str) and parse_cc(value):
            return value
    return env.torch_cuda


def _system(env: Environment) -> str:
    return "windows" if env.platform in ("windows", "wsl") else "linux"


# --- what the rules say about it -----------------------------------------------------------------


def _arch_list(env: Environment, facts: Mapping[str, Any]) -> List[str]:
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


def _arch_conclusion(env: Environment, facts: Mapping[str, Any], kb: KnowledgeBase) -> Optional[str]:
    cc_text = capability(env, facts, kb)
    cc = parse_cc(cc_text)
    if cc is None or cc_text is None:
        return None
    platform = (
        "windows-x86_64"
        if env.platform == "windows"
        else ("linux-aarch64" if env.machine in ("aarch64", "arm64") else "linux-x86_64")
    )
    listed = _arch_list(env, facts)
    base, variant = _release_variant(env, kb)
    toolkit = kb.arch_support(env.torch_cuda) if env.torch_cuda else None
    every = [v for v in every_cuda_variant(env, kb) if v.sass(platform)]

    def carries(gpu: Tuple[int, int]) -> bool:
        """Whether the build has code for ``gpu`` (True where the data cannot say)."""
        if listed:
            return kernel_for(gpu, listed) is not None
        if variant is not None and variant.sass(platform):
            return kernel_for(gpu, variant.sass(platform), variant.ptx(platform)) is not None
        if every:  # the release named, its variant not: no variant of it may carry the GPU
            return any(kernel_for(gpu, v.sass(platform), v.ptx(platform)) is not None for v in every)
        return toolkit is None or kernel_for(gpu, toolkit.archs) is not None

    if carries(cc):
        return None
    if listed:
        build = f"this build (arch list {' '.join(listed)})"
    elif variant is not None and variant.sass(platform):
        build = f"torch {base} ({variant.name})"
    elif every:
        build = f"torch {base} (none of its CUDA variants, {', '.join(v.name for v in every)})"
    elif toolkit is not None:  # a CUDA X.Y build has no code for a GPU that toolkit cannot compile for
        build = (f"a torch build for CUDA {env.torch_cuda} ({env.torch or 'the build the text names'}; "
                 f"CUDA {env.torch_cuda} compiles for {toolkit.min_arch} to {toolkit.max_arch})")
    else:
        return None
    if not _stated_capability(env, facts) and any(
            carries(other) for other in (parse_cc(c) for _, c in named_capabilities(env, kb)) if other):
        return None  # the text names several GPUs, and the build runs on one: which one failed?
    where = _release_that_does(cc, kb, platform, base)
    return f"{build} carries no {sm_arch(cc_text)} code for this GPU; {where}"


def _driver_conclusion(env: Environment, facts: Mapping[str, Any], kb: KnowledgeBase) -> Optional[str]:
    cuda = _build_cuda(env, facts)
    driver = env.driver or (facts.get("driver") if isinstance(facts.get("driver"), str) else None)
    if not cuda or not (driver or env.driver_cuda):
        return None
    support = driver_support(kb.cuda_release(cuda), cuda, _system(env), driver, env.driver_cuda)
    if support.mode != "too-old":
        return None
    have = (kb.driver_max_cuda(driver, _system(env)) if driver else env.driver_cuda) or "an older CUDA"
    need = f"; CUDA {cuda} needs driver {support.full} or newer" if support.full else ""
    who = f"driver {driver}" if driver else "the driver"
    return f"{who} supports CUDA up to {have}, and this build is for CUDA {cuda}{need}"


def _library_conclusions(extracted: Extracted) -> List[str]:
    out = []
    env = extracted.environment
    for library in extracted.libraries:
        if (library.kind == "cuda" and library.major and env.torch_cuda
                and library.major.split(".")[0] != env.torch_cuda.split(".")[0]):
            out.append(
                f"{library.soname} belongs to CUDA {library.major}, but the torch build is for CUDA "
                f"{env.torch_cuda}: two CUDA majors are mixed in one process"
            )
    for symbol in extracted.symbols:
        if (
            symbol.owner_kind == "torch"
            and symbol.library
            and not symbol.library.startswith(("libtorch", "libc10"))
        ):
            out.append(
                f"{symbol.library} asks for {symbol.demangled or symbol.symbol}, a symbol of {symbol.owner}: "
                f"it was built against another torch than the one installed"
            )
    return out


def _builds_for_named_gpu(extracted: Extracted, kb: KnowledgeBase) -> Optional[str]:
    """A kernel-image error, a discrete GPU named in prose and no torch build named: which releases
    carry compiled code for that GPU (what the candidates' check should find in the build)."""
    env = extracted.environment
    named = next((gpu for gpu in env.gpu_models if gpu.capability and not gpu.jetson), None)
    cc = parse_cc(named.capability) if named is not None and named.capability else None
    if cc is None or named is None or env.torch or not any(
            e.kind == "arch" and e.api == "cuda" for e in extracted.gpu_errors):
        return None
    platform = "windows-x86_64" if env.platform == "windows" else (
        "linux-aarch64" if env.machine in ("aarch64", "arm64") else "linux-x86_64")
    carrying, arch = _releases_with(cc, kb, platform), sm_arch(named.capability or "")
    if not carrying:
        return f"the text names no torch build; {named.name} is {arch}, which no release in the data carries"
    first, last = carrying[0], carrying[-1]
    return (f"the text names no torch build; {named.name} is {arch}, which torch {first[0]} ({first[1]}) to "
            f"{last[0]} ({last[1]}) carry ({platform})")


def conclusions(extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]) -> List[str]:
    """What the rules conclude from the text's facts (and a signature's own facts)."""
    if kb is None:
        return _library_conclusions(extracted)
    env = extracted.environment
    out = [text for text in (_arch_conclusion(env, facts, kb), _driver_conclusion(env, facts, kb)) if text]
    out = out or [text for text in (_builds_for_named_gpu(extracted, kb),) if text]
    listed = [e.meaning for e in extracted.installer_errors
              if e.kind == "python-from-listing" or e.kind.startswith("listing-")]
    return out + pin_conclusions(extracted, kb) + _library_conclusions(extracted) + listed


# --- evidence against a cause ------------------------------------------------------------------


def _arch_present(
    extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]
) -> Optional[str]:
    """The build's own arch list (as the text prints it) has code for the GPU."""
    env = extracted.environment
    cc_text = capability(env, facts, kb)
    cc = parse_cc(cc_text)
    listed = _arch_list(env, facts)
    if cc is None or cc_text is None or not listed:
        return None
    kernel = kernel_for(cc, [a for a in listed if a.startswith("sm_")])
    if kernel is None or kernel.how != "sass":  # PTX the driver may JIT proves nothing here
        return None
    return (
        f"the build's arch list ({' '.join(listed)}) has {kernel.name} code for this {sm_arch(cc_text)} GPU"
    )


def _driver_enough(
    extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]
) -> Optional[str]:
    """The driver the text shows fully supports the CUDA the build needs."""
    env = extracted.environment
    cuda = _build_cuda(env, facts)
    if not cuda or kb is None or not (env.driver or env.driver_cuda):
        return None
    support = driver_support(kb.cuda_release(cuda), cuda, _system(env), env.driver, env.driver_cuda)
    if support.mode != "full":
        return None
    shown = f"driver {env.driver}" if env.driver else f"a driver for CUDA {env.driver_cuda}"
    return f"the text shows {shown}, which supports CUDA {cuda}"


def _virtual_cuda_enough(
    extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]
) -> Optional[str]:
    """conda's __cuda (from the driver) is at least what the package needs."""
    have, need = facts.get("cuda_have"), facts.get("cuda_needed")
    if (isinstance(have, str) and isinstance(need, str) and parse_cc(have) and parse_cc(need)
            and version_tuple(have) >= version_tuple(need)):
        return f"__cuda {have} meets the required {need}"
    return None


_AMD = re.compile(r"Radeon|Instinct|\bMI\d{2,3}|^gfx", re.IGNORECASE)


def _vendors(extracted: Extracted) -> Tuple[List[str], List[str]]:
    """(NVIDIA GPUs, AMD GPUs) the text names: by the GPU data's vendor where it knows the name."""
    env = extracted.environment
    vendor = {gpu.name: gpu.vendor for gpu in env.gpu_models}
    amd = [g for g in env.gpus if vendor.get(g) == "amd" or (g not in vendor and _AMD.search(g))]
    return [g for g in env.gpus if g not in amd and vendor.get(g, "nvidia") == "nvidia"], amd


def _nvidia_gpu_only(extracted: Extracted, facts: Mapping[str, Any],
                     kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text names NVIDIA GPUs and no AMD one: a ROCm (HIP) cause does not hold there."""
    nvidia, amd = _vendors(extracted)
    if not nvidia or amd or extracted.environment.gfx:
        return None
    return f"the text names an NVIDIA GPU ({nvidia[0]}) and no AMD one: a ROCm build on an NVIDIA machine"


def _amd_gpu_only(extracted: Extracted, facts: Mapping[str, Any],
                  kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text names AMD GPUs and no NVIDIA one: an NVIDIA-driver cause does not hold there."""
    nvidia, amd = _vendors(extracted)
    if not amd or nvidia:
        return None
    return f"the text names an AMD GPU ({amd[0]}) and no NVIDIA one: a CUDA build on an AMD machine"


def _gpu_without_tf32(extracted: Extracted, facts: Mapping[str, Any],
                      kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The GPU shown is older than Ampere: TF32 tensor cores need compute capability 8.0."""
    cc = capability(extracted.environment, facts, kb)
    parsed = parse_cc(cc) if cc else None
    return f"the GPU shown (compute capability {cc}) has no TF32" if parsed and parsed < (8, 0) else None


def _gpu_with_bf16(extracted: Extracted, facts: Mapping[str, Any],
                   kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The GPU shown is Ampere or newer (compute capability 8.0 on), which has bfloat16: a refusal
    there comes from elsewhere (torch's is_bf16_supported() is also False for a build of CUDA
    before 11, torch/cuda/__init__.py)."""
    cc = capability(extracted.environment, facts, kb)
    parsed = parse_cc(cc) if cc else None
    return f"the GPU shown (compute capability {cc}) has bfloat16" if parsed and parsed >= (8, 0) else None


def _driver_beyond_found(extracted: Extracted, facts: Mapping[str, Any],
                         kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch's "driver ... too old (found version 11040)" reports the libcuda it loaded; the text
    shows a driver that supports a newer CUDA (nvidia-smi's CUDA Version, or the driver's number):
    another, older libcuda (a stub or compat copy on LD_LIBRARY_PATH) is loaded, not this driver."""
    found = facts.get("driver_cuda")
    env = extracted.environment
    if not isinstance(found, str) or not parse_cc(found):
        return None
    shown = env.driver_cuda or (kb.driver_max_cuda(env.driver, _system(env)) if kb and env.driver else None)
    if not shown or not parse_cc(shown) or version_tuple(shown) <= version_tuple(found):
        return None
    return f"the text shows a driver for CUDA {shown}, newer than the CUDA {found} of the libcuda torch found"


def _arch_number(arch: Any) -> Optional[int]:
    match = re.match(r"(?:compute|sm)_(\d+)", str(arch or ""))
    return int(match.group(1)) if match else None


def _toolkits_reach(extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase],
                    bound: str) -> Optional[str]:
    """nvcc's own version output and every CUDA toolkit the text names reach the architecture nvcc
    refused from ``bound``'s side (cuda.json arch_support: "max_arch" not below it, "min_arch" not
    above it). The nvcc shown was asked for an architecture it compiles; then it did not refuse it
    for that reason: another nvcc ran, or the toolkit renamed it (CUDA 13 calls Thor's sm_101 sm_110)."""
    wanted = _arch_number(facts.get("arch"))
    env = extracted.environment
    nvcc = env.toolchain.get("nvcc")
    if wanted is None or kb is None or not nvcc:
        return None
    for toolkit in filter(None, (nvcc, env.cuda)):
        support = kb.arch_support(toolkit)
        edge = _arch_number(getattr(support, bound)) if support else None
        if edge is None or (edge < wanted if bound == "max_arch" else edge > wanted):
            return None
    side = "newer" if bound == "max_arch" else "older"
    return f"nvcc {nvcc} compiles for {facts.get('arch')} and {side} architectures"


def _nvcc_not_older_than_arch(extracted: Extracted, facts: Mapping[str, Any],
                              kb: Optional[KnowledgeBase]) -> Optional[str]:
    return _toolkits_reach(extracted, facts, kb, "max_arch")


def _nvcc_not_newer_than_arch(extracted: Extracted, facts: Mapping[str, Any],
                              kb: Optional[KnowledgeBase]) -> Optional[str]:
    return _toolkits_reach(extracted, facts, kb, "min_arch")


CONTRADICTION_CHECKS: Dict[str, Check] = {
    "arch_present": _arch_present,
    "driver_enough": _driver_enough,
    "virtual_cuda_enough": _virtual_cuda_enough,
    "nvidia_gpu_only": _nvidia_gpu_only,
    "amd_gpu_only": _amd_gpu_only,
    "gpu_without_tf32": _gpu_without_tf32,
    "gpu_with_bf16": _gpu_with_bf16,
    "driver_beyond_found": _driver_beyond_found,
    "nvcc_not_older_than_arch": _nvcc_not_older_than_arch,
    "nvcc_not_newer_than_arch": _nvcc_not_newer_than_arch,
    **TEXT_CONTRADICTIONS,
}


def contradiction(
    checks: Sequence[str], extracted: Extracted, facts: Mapping[str, Any], kb: Optional[KnowledgeBase]
) -> Optional[str]:
    """The first evidence in the text against a cause (its signature's ``contradicted_by``)."""
    for name in checks:
        evidence = CONTRADICTION_CHECKS[name](extracted, facts, kb)
        if evidence:
            return evidence
    return None


# --- evidence a cause needs: a weak trigger (a phrase several causes print) states its cause only
# when the text shows what sets that cause apart; otherwise the family signature speaks -----------


def _build_lacks_arch(extracted: Extracted, facts: Mapping[str, Any],
                      kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch's own capability warning names the arch it lacks, or the data shows that the build the
    text names carries no code for the GPU the text names (its release's arch list, or a CUDA
    toolkit that cannot compile for that GPU at all). "no kernel image" alone also comes from an
    extension built for other architectures."""
    if facts.get("arch") or facts.get("arch_list"):
        return "torch's own capability warning"
    return _arch_conclusion(extracted.environment, facts, kb) if kb is not None else None


def _gpu_below_named_build(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The GPU the text shows is older than the oldest architecture the data lists for the torch build
    the text names (``2.14.0+cu130``): no cubin runs on an older major and PTX JIT-compiles only upward
    (CUDA C Programming Guide, "Binary Compatibility"), so no kernel of that build runs there."""
    env = extracted.environment
    if kb is None or (not _stated_capability(env, facts) and len(named_capabilities(env, kb)) != 1):
        return None  # several GPUs named and none stated: which one failed?
    cc_text = capability(env, facts, kb)
    cc = parse_cc(cc_text)
    base, variant = _release_variant(env, kb)
    platform = "windows-x86_64" if env.platform == "windows" else (
        "linux-aarch64" if env.machine in ("aarch64", "arm64") else "linux-x86_64")
    every = [a for v in every_cuda_variant(env, kb) for a in v.sass(platform)]
    sass = variant.sass(platform) if variant else every
    built = [parsed for parsed in (parse_cc(a) for a in sass) if parsed]
    if cc is None or not built or cc >= min(built):
        return None
    oldest = min(built)
    return (f"compute capability {cc[0]}.{cc[1]} is below the oldest architecture torch {base} "
            f"({variant.name if variant else 'any CUDA variant'}) carries (sm_{oldest[0]}{oldest[1]})")


def _gpu_below_build(extracted: Extracted, facts: Mapping[str, Any],
                     kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch's own warning shows the GPU below the build, or the data does for the build the text names."""
    return (TEXT_CONFIRMATIONS["gpu_below_build"](extracted, facts, kb)
            or _gpu_below_named_build(extracted, facts, kb))


# Every check a signature's ``confirmed_by`` may name: the text-evidence ones, and the one that reads
# the build's arch list through this module's conclusions.
_INTEGRATED = re.compile(r"APU|iGPU|Radeon(?:\(TM\))? Graphics\b|Vega \d+ Graphics", re.IGNORECASE)


def _other_vendor_gpu_only(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The build's vendor (the pattern's ``rocm_build`` or ``cuda_build`` group) is not the GPU's: a
    ROCm build's failure where the text names only NVIDIA GPUs, a CUDA build's where it names only
    discrete AMD ones (an integrated Radeon often sits beside an NVIDIA GPU the text leaves out),
    and a line declares that GPU the machine's ("GPU: X", gpu="X", nvidia-smi's rows): a GPU named
    in a sentence may be another machine's ("works on my friend's RTX 4090")."""
    declared = extracted.environment.declared_vendors
    if facts.get("rocm_build"):
        return _nvidia_gpu_only(extracted, facts, kb) if "nvidia" in declared else None
    if facts.get("cuda_build") and "amd" in declared:
        models = {gpu.name: gpu.model or "" for gpu in extracted.environment.gpu_models}
        _, amd = _vendors(extracted)
        if any(_INTEGRATED.search(f"{gpu} {models.get(gpu, '')}") for gpu in amd):
            return None
        return _amd_gpu_only(extracted, facts, kb)
    return None


CONFIRMATION_CHECKS: Dict[str, Check] = {**TEXT_CONFIRMATIONS, **ARCH_LIST_CONFIRMATIONS,
                                         **LOADED_COPY_CONFIRMATIONS, **NUMPY_CONFIRMATIONS,
                                         "build_lacks_arch": _build_lacks_arch,
                                         "other_vendor_gpu_only": _other_vendor_gpu_only,
                                         "gpu_below_build": _gpu_below_build}
# the same check: a GPU below the build's oldest arch confirms one cause and contradicts others
CONTRADICTION_CHECKS["gpu_below_build"] = _gpu_below_build


def blocked(contradicted_by: Sequence[str], confirmed_by: Sequence[str], extracted: Extracted,
            facts: Mapping[str, Any], kb: Optional[KnowledgeBase]) -> Optional[str]:
    """Why a signature's cause is not stated: evidence against it, or none of the evidence it needs."""
    against = contradiction(contradicted_by, extracted, facts, kb)
    if against or not confirmed_by:
        return against
    if any(CONFIRMATION_CHECKS[name](extracted, facts, kb) for name in confirmed_by):
        return None
    return f"not shown in the text: {' or '.join(n.replace('_', ' ') for n in confirmed_by)}"


def confirmation(confirmed_by: Sequence[str], extracted: Extracted, facts: Mapping[str, Any],
                 kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The evidence in words that confirmed a signature's cause (the first check that holds), for
    its cause to cite: ``{confirmation}``."""
    return next((evidence for evidence in (CONFIRMATION_CHECKS[name](extracted, facts, kb)
                                           for name in confirmed_by) if evidence), None)
