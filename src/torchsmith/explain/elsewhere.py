"""Evidence that a widely firing assertion's cause lies elsewhere: what else the text shows (CUDA's
failed initialisation, a compiler's own error, the driver's CUDA, the GCC, a package not installed at
all) proves that the message followed from another cause. Part of
:data:`torchsmith.explain.misfires.MISFIRE_CONTRADICTIONS`. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Mapping, Optional, Tuple

from torchsmith.explain.confirmations import Check
from torchsmith.explain.extract.model import Extracted
from torchsmith.kb import KnowledgeBase
from torchsmith.versions import version_tuple

__all__ = ["ELSEWHERE_CONTRADICTIONS"]


def _cuda_init_failure_shown(extracted: Extracted, facts: Mapping[str, Any],
                             kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch's "CUDA initialization: ..." warning (c10/cuda/CUDAFunctions.cpp, where cudaGetDeviceCount
    fails) or an error CUDA's initialisation reported is shown: CUDA is unavailable for that reason
    (an old or mismatched driver, ...), so a checkpoint's CUDA tensors failing to load follow from it."""
    for warning in extracted.warnings:
        if warning.message.startswith("CUDA initialization:"):
            return f"CUDA failed to initialise: {warning.message[:160]}"
    init = next((e for e in extracted.gpu_errors if e.stage == "init"), None)
    return f"CUDA failed to initialise: {init.name or init.message}" if init is not None else None


def _compiler_error_shown(extracted: Extracted, facts: Mapping[str, Any],
                          kb: Optional[KnowledgeBase]) -> Optional[str]:
    """A compiler, linker or CMake error of its own is shown: torch's compiler-name warning
    (cpp_extension's compiler ABI check) only warns, so the build failed on that error."""
    own = extracted.compiler[0] if extracted.compiler else None
    return f"the build failed on {own.tool}'s own error ({own.text})" if own is not None else None


def _driver_meets_image_cuda(extracted: Extracted, facts: Mapping[str, Any],
                             kb: Optional[KnowledgeBase]) -> Optional[str]:
    """nvidia-container-cli checks the image's NVIDIA_REQUIRE_CUDA against the CUDA of the libcuda it
    finds; the text shows a driver (nvidia-smi's CUDA Version) that reaches the required CUDA: another,
    older libcuda was read (a compat or leftover copy in the loader cache), not this driver."""
    wanted, shown = facts.get("cuda"), extracted.environment.driver_cuda
    if not isinstance(wanted, str) or not shown or version_tuple(shown) < version_tuple(wanted):
        return None
    return f"the text shows a driver for CUDA {shown}, which reaches the image's CUDA {wanted}"


def _gcc_before_13_shown(extracted: Extracted, facts: Mapping[str, Any],
                         kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The GCC shown is older than 13, whose libstdc++ headers stopped including <cstdint> through
    others (gcc.gnu.org/gcc-13/porting_to.html): with this GCC the missing include is not a newer
    compiler's doing (the source was written against another compiler or platform)."""
    gcc = extracted.environment.toolchain.get("gcc")
    if not gcc or "clang" in extracted.environment.toolchain or version_tuple(gcc) >= (13,):
        return None
    return f"the text shows GCC {gcc}, older than GCC 13"


def _apex_not_installed(extracted: Extracted, facts: Mapping[str, Any],
                        kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The text shows "No module named 'apex'" too: apex is not installed at all, and the code importing
    apex's compiled module directly (Megatron-LM's `import amp_C`) needs it, not a rebuild with ext."""
    if any(e.message == "No module named 'apex'" for e in extracted.exceptions):
        return "the text shows that apex itself is not installed (No module named 'apex')"
    return None


def _aio_warning_beside_other_failure(extracted: Extracted, facts: Mapping[str, Any],
                                      kb: Optional[KnowledgeBase]) -> Optional[str]:
    """DeepSpeed's op check warns that async_io lacks libaio in every ds_report and at import, and only
    warns; where the text's failure is an exception that names neither async_io nor aio, the
    warning is a line of the report beside it, not the failure."""
    if not facts.get("aio_warning") or not extracted.exceptions:
        return None
    if any(re.search(r"async_io|\baio\b|libaio", e.message) for e in extracted.exceptions):
        return None
    if any("aio" in m.text for m in extracted.compiler):
        return None
    failure = extracted.exceptions[-1]
    return f"the failure shown is another ({failure.type}: {failure.message[:120]})"


def _bnb_binary_found_needs_library(extracted: Extracted, facts: Mapping[str, Any],
                                    kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The loader names bitsandbytes' own CUDA binary and a library it links that it could not open:
    the binary for this CUDA is there, and its CUDA library (the toolkit's or a pip nvidia-* wheel's)
    is missing from the loader's path."""
    needs = facts.get("bnb_needs")
    return f"bitsandbytes' binary is there and lacks {needs}" if isinstance(needs, str) else None


def _operand_not_a_pickle_opcode(extracted: Extracted, facts: Mapping[str, Any],
                                 kb: Optional[KnowledgeBase]) -> Optional[str]:
    """torch's weights-only unpickler names the byte it met where it read an opcode it does not
    implement ("Unsupported operand N", torch/_weights_only_unpickler.py). A byte that is no pickle
    opcode at all (the pickle module's own table, pickletools.opcodes) means the file is no pickle
    there: damaged, cut short or another file (a web page, a Git LFS pointer), which no weights_only
    setting loads. A real opcode it lacks is the default's doing."""
    operand = facts.get("operand")
    if not isinstance(operand, str) or not operand.isdigit():
        return None
    import pickletools

    if int(operand) in {ord(op.code) for op in pickletools.opcodes}:
        return None
    return f"byte {operand} is no pickle opcode (pickletools' table): the file is not a pickle at that point"


def _conda_cuda_overridden(extracted: Extracted, facts: Mapping[str, Any],
                           kb: Optional[KnowledgeBase]) -> Optional[str]:
    """conda derives __cuda from the driver unless CONDA_OVERRIDE_CUDA is set (docs.conda.io,
    manage-virtual, "Overriding detected packages"): "" means no CUDA. The solver's __cuda is the
    override's where the text sets it to the __cuda the message shows, or to "" where no __cuda was
    found; then the driver decided nothing. (A numeric override beside a missing __cuda is the usual
    workaround, not the cause.)"""
    override, have = extracted.environment.conda_override_cuda, facts.get("cuda_have")
    if override == "" and not isinstance(have, str):
        return 'the text sets CONDA_OVERRIDE_CUDA="", which tells conda there is no CUDA'
    if override and isinstance(have, str) and _release(override) == _release(have):
        return f"the text sets CONDA_OVERRIDE_CUDA={override}: conda's __cuda {have} is the override's"
    return None


def _pytorch_channel_not_searched(extracted: Extracted, facts: Mapping[str, Any],
                                  kb: Optional[KnowledgeBase]) -> Optional[str]:
    """conda's PackagesNotFoundError lists the channels it searched under "Current channels:"
    (conda/exceptions.py). Where that list is shown and holds no pytorch channel (or a mirror of
    it), the pytorch channel's end is not why the release was missing: the channels searched lacked
    it (conda-forge without that release or platform yet, a mirror's copy, defaults)."""
    search = extracted.conda_search
    if search is None or not search.listed or not search.channels:
        return None
    if any(c.rsplit("/", 1)[-1].startswith("pytorch") for c in search.channels):
        return None
    return f"the channels conda searched ({', '.join(search.channels[:4])}) hold no pytorch channel"


def _secure_boot_shown_disabled(extracted: Extracted, facts: Mapping[str, Any],
                                kb: Optional[KnowledgeBase]) -> Optional[str]:
    """mokutil --sb-state prints "SecureBoot disabled": the kernel refused the module's key for
    another reason its module-signing docs name (a kernel built with CONFIG_MODULE_SIG_FORCE or
    booted with module.sig_enforce=1, or a signature that does not match a key it has)."""
    if extracted.environment.secure_boot == "disabled":
        return "mokutil shows SecureBoot disabled"
    return None


def _release(version: str) -> Tuple[int, ...]:
    parts = list(version_tuple(version))
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


# The projects whose pages every variant index of download.pytorch.org/whl serves (its own builds).
_PYTORCH_INDEX_OWN = ("torch", "torchvision", "torchaudio")


def _project_on_that_pytorch_index(extracted: Extracted, facts: Mapping[str, Any],
                                   kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The 403 names a page of torch's own projects on a variant index the data knows PyTorch
    published (torch_releases.json, kb.releases), or on the root index: the index hosts that project there, so
    "a project it does not host" is false. download.pytorch.org is served by CloudFront, which answers
    403 for a request its WAF or geographic restriction blocks, and a proxy that blocks the host
    answers 403 too (AWS's CloudFront Developer Guide, "HTTP 403 status code (Permission Denied)")."""
    found = re.search(r"/whl/(?:([\w.-]+)/)?([\w.-]+)/$", str(facts.get("url") or ""))
    if found is None or found.group(2).lower() not in _PYTORCH_INDEX_OWN or kb is None:
        return None
    variant = found.group(1)
    if variant is not None and variant not in {v.name for r in kb.releases for v in r.variants}:
        return None
    where = f"the {variant} index" if variant else "the index"
    return (f"{where} of download.pytorch.org hosts {found.group(2)}: "
            "the 403 came from something that refused the request")


def _built_on_macos(extracted: Extracted, facts: Mapping[str, Any],
                    kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The build runs on macOS, where clang takes the C++ headers from the SDK's libc++ (Xcode or its
    Command Line Tools) and selects no GCC installation (clang's Darwin toolchain): the standard
    header missing there is a missing or broken SDK, or a build that asks for libstdc++, which Apple
    no longer ships (clang warns "include path for stdlibc++ headers not found", -Wstdlibcxx-not-found;
    a deployment target below 10.9 asks for it: pytorch/pytorch#16805, SeanNaren/warp-ctc#129)."""
    env = extracted.environment
    if env.platform != "macos" and (env.platform is not None or env.macos is None):
        return None
    return "the build runs on macOS, where clang uses the SDK's libc++ headers, not a GCC installation's"


# A wheel of torch's own projects on download.pytorch.org, its local label percent-encoded (a literal
# "+" reaches S3 as a space: another file's name, which it answers with 403, pytorch/pytorch#118732).
_PYTORCH_WHEEL = re.compile(r"^https?://download\.pytorch\.org/whl/(?:(?P<path_variant>[\w.-]+)/)?"
                            r"(?P<name>torch|torchvision|torchaudio)-(?P<version>\d+(?:\.\d+)+)"
                            r"(?:%2[Bb](?P<label>[\w.]+))?-cp(?P<major>\d)(?P<minor>\d+)t?-[\w.]+?-"
                            r"(?P<tag>[\w.]+)\.whl$")
_WHEEL_PLATFORMS = (("win_amd64", "windows-x86_64"), ("aarch64", "linux-aarch64"), ("x86_64", "linux-x86_64"))


def _wheel_platform(tag: str) -> Optional[str]:
    if tag.startswith("macosx"):
        return "macos-arm64" if tag.endswith("arm64") else "macos-x86_64"
    return next((platform for ending, platform in _WHEEL_PLATFORMS if tag.endswith(ending)), None)


def _published_wheel_refused(extracted: Extracted, facts: Mapping[str, Any],
                             kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The wheel answered 403 is one the data records PyTorch published (the release, its build for
    that variant and platform, that Python): the file is there, so the 403 came from something
    that refused the request (CloudFront's WAF or geographic restriction, a proxy), not a retired
    file. pytorch/pytorch#14468: a 403 for a published wheel that a browser then downloaded."""
    if kb is None:
        return None
    for failure in extracted.http:
        found = _PYTORCH_WHEEL.match(failure.url or "") if failure.status == "403" else None
        if found is None:
            continue
        variant = found.group("label") or found.group("path_variant")
        platform = _wheel_platform(found.group("tag"))
        python = f"{found.group('major')}.{found.group('minor')}"
        for release in kb.releases:
            if found.group("version") != {"torch": release.version, "torchvision": release.torchvision,
                                          "torchaudio": release.torchaudio}[found.group("name")]:
                continue
            build = release.variant(variant or "")
            if build is not None and platform in build.platforms and python in release.pythons(platform):
                return (f"PyTorch published {found.group('name')} {found.group('version')} for {variant} "
                        f"({platform}, Python {python}) at that URL: the 403 refused a file that is there")
    return None


ELSEWHERE_CONTRADICTIONS: Dict[str, Check] = {
    "cuda_init_failure_shown": _cuda_init_failure_shown,
    "compiler_error_shown": _compiler_error_shown,
    "driver_meets_image_cuda": _driver_meets_image_cuda,
    "gcc_before_13_shown": _gcc_before_13_shown,
    "apex_not_installed": _apex_not_installed,
    "aio_warning_beside_other_failure": _aio_warning_beside_other_failure,
    "bnb_binary_found_needs_library": _bnb_binary_found_needs_library,
    "operand_not_a_pickle_opcode": _operand_not_a_pickle_opcode,
    "conda_cuda_overridden": _conda_cuda_overridden,
    "pytorch_channel_not_searched": _pytorch_channel_not_searched,
    "secure_boot_shown_disabled": _secure_boot_shown_disabled,
    "project_on_that_pytorch_index": _project_on_that_pytorch_index,
    "built_on_macos": _built_on_macos,
    "published_wheel_refused": _published_wheel_refused,
}
