"""Say what was read in a text, and what to check next, when no known failure explains it.

No cause is guessed: each line states a fact the text holds, and each check is the command that
tells the next fact apart (where the library is, which torch is installed, what the URL answers).
Pure: no I/O.
"""

from __future__ import annotations

from typing import List, Sequence

from torchsmith.explain.extract.model import Conflict, Extracted

__all__ = ["for_the_vendor", "next_checks", "read_lines"]


def _environment_line(extracted: Extracted) -> str:
    env = extracted.environment
    parts = []
    if env.gpus:
        parts.append("GPU " + ", ".join(env.gpus))
    for label, value in (
        ("compute capability", env.capability),
        ("driver", env.driver),
        ("driver's CUDA", env.driver_cuda),
        ("torch", env.torch),
        ("torch's CUDA", env.torch_cuda),
        ("CUDA", env.cuda),
        ("ROCm", env.rocm),
        ("gfx", env.gfx),
        ("Python", env.python),
        ("platform", env.platform),
        ("CPU", env.machine),
        ("Jetson", env.jetson),
    ):
        if value:
            parts.append(f"{label} {value}")
    if env.torch_cpu_only:
        parts.append("a CPU-only torch build")
    if env.visible_devices is not None:
        parts.append(f"CUDA_VISIBLE_DEVICES={env.visible_devices!r}")
    if env.gpu_count is not None:
        parts.append(f"{env.gpu_count} GPU{'s' if env.gpu_count != 1 else ''} in the machine")
    parts.extend(f"{tool} {version}" for tool, version in env.toolchain.items())
    return "The text names: " + "; ".join(parts) if parts else ""


def _conflict_line(conflict: Conflict) -> str:
    """One requirement a resolver named, from the structure it was read into."""
    if conflict.who == "installed":
        return f"{conflict.installer}: installed: {conflict.wants}"
    markers = f" (where {conflict.markers})" if conflict.markers else ""
    who = "the request" if conflict.who == "user" else conflict.who
    return f"{conflict.installer}: {who} needs {conflict.wants.split(';')[0].strip()}{markers}"


def _nccl_lines(extracted: Extracted) -> List[str]:
    """NCCL's warnings, whether it found an InfiniBand device, and the NCCL_* settings shown."""
    nccl, lines = extracted.nccl, []
    if nccl.get("warnings"):
        lines.append("NCCL warns: " + "; ".join(nccl["warnings"][:3]))
    if nccl.get("ib"):
        lines.append("NCCL found no InfiniBand device it can use (NET/IB : No device found)")
    if nccl.get("settings"):
        lines.append("NCCL settings shown: " + ", ".join(
            f"{name}={value}" for name, value in list(nccl["settings"].items())[:6]))
    return lines


def _spawned_worker_cut(extracted: Extracted) -> bool:
    """A traceback through a process being started (a spawned child, a DataLoader starting its
    workers) that stops before any exception: the worker's own error is not shown."""
    return "worker-start" in extracted.symptoms and not extracted.exceptions


def _symptom_lines(symptoms: List[str]) -> List[str]:
    """What the text reports happened: behaviour without an error, no GPU for torch or the driver."""
    said = {"discrepancy": "results that differ from another device or the expected value",
            "nan": "NaN or inf values", "fp16": "float16 in use"}
    reported = [said[s] for s in symptoms if s in said]
    lines = ["The text reports, without an error: " + "; ".join(reported)] if reported else []
    if {"cuda-unavailable", "no-gpu-visible"} & set(symptoms):
        lines.append("The text says CUDA is not available to torch: it sees no GPU")
    if "smi-no-devices" in symptoms:
        lines.append("nvidia-smi lists no GPU (No devices were found): the NVIDIA kernel driver has none "
                     "bound")
    if "nvrm-init-failed" in symptoms:
        lines.append("The NVIDIA kernel driver failed to initialise a GPU (NVRM: RmInitAdapter failed)")
    return lines


def read_lines(extracted: Extracted) -> List[str]:
    """One line per fact the text states, most telling first."""
    lines: List[str] = []
    for error in extracted.gpu_errors:
        name = error.name or error.message or "?"
        code = f" ({error.code})" if error.code is not None else ""
        described = error.summary or error.message  # the header's description, else the library's string
        meaning = f": {described}" if described else ""
        lines.append(f"{error.api.upper()} error {name}{code}{meaning}")
    for library in extracted.libraries:
        who = f" ({library.library}, from {library.provider})" if library.library else ""
        if library.problem == "link":
            lines.append(f"The build's link step could not find {library.soname}{who}")
        elif library.problem == "incompatible":
            lines.append(f"The loader found {library.soname}{who}, but not a procedure in it: "
                         f"another release")
        elif library.problem == "unreadable":
            lines.append(f"The loader found {library.soname}{who}, but could not read it as a library")
        else:
            lines.append(f"The loader could not open {library.soname}{who}")
    for symbol in extracted.symbols:
        owner = f", a symbol of {symbol.owner}" if symbol.owner else ""
        where = f" (asked for by {symbol.library})" if symbol.library else ""
        version = f", version {symbol.version}" if symbol.version else ""
        lines.append(f"Undefined symbol {symbol.demangled or symbol.symbol}{version}{owner}{where}")
    lines.extend(f"{m.tool}: {m.text}" for m in extracted.compiler[:5])
    lines.extend(_conflict_line(c) for c in extracted.conflicts[:8])
    lines.extend(f"{o.installer}: {o.said}" for o in extracted.offers[:4])
    lines.extend(f"No index or channel has {req}" for req in extracted.not_found[:5])
    search = extracted.conda_search
    if search is not None and search.channels:
        platform = f" for {', '.join(search.subdirs)}" if search.subdirs else ""
        lines.append(f"conda searched the channels {', '.join(search.channels)}{platform}")
    for missing in extracted.conda_missing:
        published = f" (published: {', '.join(missing.versions)})" if missing.versions else ""
        asked = f" {missing.version}" if missing.version else ""
        never = " was never published" if missing.kind == "version" else ""
        lines.append(f"{missing.package}{asked}{never}{published}: {missing.why}")
    lines.extend(
        f"A host name did not resolve (DNS): {h.host or 'the host'} ({h.text})" if h.status == "dns" else
        f"Request failed: {h.status or ''} {h.url or h.text}".replace("  ", " ") for h in extracted.http[:5]
    )
    lines.extend(f"pip builds {package} from source (no wheel it could use)"
                 for package in extracted.source_builds[:3])
    lines.extend(_symptom_lines(extracted.symptoms))
    if _spawned_worker_cut(extracted):
        lines.append("A worker process was being started (multiprocessing's spawn, a DataLoader's "
                     "workers); the text stops before its error")
    lines.extend(_nccl_lines(extracted))
    if extracted.exceptions:
        last = extracted.exceptions[-1]
        lines.append(f"The program ended with {last.type}: {last.message[:200]}".rstrip(": "))
    packages = sorted({f.package for f in extracted.frames if f.package})
    if packages:
        lines.append("Packages in the traceback: " + ", ".join(packages[:10]))
    environment = _environment_line(extracted)
    if environment:
        lines.append(environment)
    return lines


def _no_gpu_check(extracted: Extracted) -> str:
    """What tells apart why torch sees no GPU, for the GPU vendor the text shows (ROCm's device nodes
    and groups; a Mac's MPS; else NVIDIA's driver and the visible devices)."""
    env = extracted.environment
    if env.rocm or env.gfx or any(e.api == "hip" for e in extracted.gpu_errors):
        return ("rocminfo | grep gfx; python -c \"import torch; print(torch.__version__, "
                "torch.version.hip)\"; ls -l /dev/kfd /dev/dri/renderD*; id  (the GPUs ROCm lists; "
                "torch.version.hip None is no ROCm build; this user needs the groups that own the device "
                "nodes, render and video)")
    if env.platform == "macos":
        return ("python -c \"import torch; print(torch.backends.mps.is_available())\"  (a Mac's GPU is "
                "torch's 'mps' device: CUDA needs an NVIDIA GPU)")
    return ("nvidia-smi -L; echo $CUDA_VISIBLE_DEVICES  (the GPUs the driver lists, and the ones this "
            "process may see; torch.version.cuda None is a CPU-only build)")


def next_checks(extracted: Extracted) -> List[str]:
    """The commands that tell the next fact apart, from what the text states."""
    checks: List[str] = []
    for library in extracted.libraries[:3]:
        if library.soname.lower().endswith(".dll"):  # Windows looks for DLLs on PATH
            checks.append(f"where {library.soname}  (which copy of {library.soname} Windows finds first)")
        else:
            checks.append(
                f"ldconfig -p | grep {library.soname.split('.so')[0]}  (is {library.soname} on the "
                f"loader's path?)"
            )
        if library.pip:
            checks.append(f"pip show {library.pip}  (the pip package that ships it)")
    for symbol in extracted.symbols[:2]:
        if symbol.library:
            checks.append(
                f"ldd -r <path of {symbol.library}> | grep undefined  (which library should define "
                f"{symbol.symbol})"
            )
    if {"smi-no-devices", "nvrm-init-failed"} & set(extracted.symptoms):
        checks.append("sudo dmesg | grep -iE 'nvrm|nvidia'; lspci -nnk | grep -iA3 nvidia  (why the kernel "
                      "driver bound no GPU: the first NVRM error, and the module the GPU is bound to)")
    if _spawned_worker_cut(extracted):
        checks.append("python -c \"import multiprocessing; print(multiprocessing.get_start_method())\"  "
                      "(spawn, the default on Windows and macOS, re-imports the script in every worker: its "
                      "top level must sit under if __name__ == '__main__'; DataLoader(num_workers=0) raises "
                      "the worker's own error in the main process)")
    if any(m.tool == "cmake" for m in extracted.compiler):
        checks.append("CMakeFiles/CMakeConfigureLog.yaml (CMakeError.log before CMake 3.26) in the build "
                      "directory: the compiler output of the check that failed")
    if extracted.symbols or extracted.compiler:
        checks.append(
            'python -c "import torch; print(torch.__version__, torch.version.cuda)"; '
            "nvcc --version; gcc --version"
        )
    for failure in extracted.http:
        if failure.status == "dns" and failure.host:
            checks.append(f"nslookup {failure.host}  (does it resolve here, and from another network or DNS "
                          f"server? a name that resolves nowhere is the server's side)")
    for failure in extracted.http[:2]:
        if failure.url:
            checks.append(f"curl -sSI {failure.url}  (what the server answers now)")
    if extracted.conda_search is not None:
        checks.extend(extracted.conda_search.checks)
    for requirement in extracted.not_found[:2] if extracted.conda_search is None else ():
        checks.append(
            f"pip index versions {requirement.split('=')[0].split('<')[0].split('>')[0]}  "
            f"(which versions the configured index has)"
        )
    if extracted.nccl:
        checks.append(
            "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET: rerun and read which interface and "
            "transport NCCL picks on each node"
        )
    if {"cuda-unavailable", "no-gpu-visible"} & set(extracted.symptoms):
        checks.append(_no_gpu_check(extracted))
    if any(e.kind == "kernel" for e in extracted.gpu_errors):
        checks.append("CUDA_LAUNCH_BLOCKING=1: rerun so the error points at the kernel that failed")
    return list(dict.fromkeys(checks))


# torch's view of its GPU for each vendor a text may show, and the vendor's own listing tool
_VENDOR_CHECKS = {
    "rocm": ("python -c \"import torch; print(torch.__version__, torch.version.hip, "
             "torch.cuda.is_available())\"", "rocm-smi"),
    "xpu": ("python -c \"import torch; print(torch.__version__, torch.xpu.is_available())\"", "sycl-ls"),
    "macos": ("python -c \"import torch; print(torch.__version__, torch.backends.mps.is_available())\"",
              None),
}


def for_the_vendor(extracted: Extracted, checks: Sequence[str]) -> List[str]:
    """The generic checks (torch's CUDA view, nvidia-smi) for the GPU vendor the text shows: ROCm
    (its version, a gfx target, a HIP error), Intel (a Level Zero / Unified Runtime status, a +xpu
    torch) or a Mac; unchanged where the text shows none of them."""
    env = extracted.environment
    if env.rocm or env.gfx or any(e.api == "hip" for e in extracted.gpu_errors):
        vendor = "rocm"
    elif any(e.api in ("ze", "ur") for e in extracted.gpu_errors) or (env.torch or "").endswith("+xpu"):
        vendor = "xpu"
    elif env.platform == "macos":
        vendor = "macos"
    else:
        return list(checks)
    torch_line, listing = _VENDOR_CHECKS[vendor]
    out = [torch_line if "torch.version.cuda" in c else listing if c == "nvidia-smi" else c for c in checks]
    return [c for c in out if c]

