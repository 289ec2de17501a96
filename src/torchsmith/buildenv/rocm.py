"""ROCm source-build checks: hipcc, headers in the environment that shadow ROCm's (hip, thrust,
omp.h), and the GCC installation hipcc's clang takes its C++ library from.
"""

from __future__ import annotations

import os
import re
from typing import List, Tuple

from torchsmith.buildenv.model import Preflight
from torchsmith.host import Host
from torchsmith.machine import Machine
from torchsmith.versions import version_tuple

__all__ = ["check_rocm", "env_gcc_installs", "gcc_installs"]

# Directories (or files) in an environment's include/ that ROCm also ships: the environment's
# copy wins when it comes first (conda's CUDA thrust, LLVM/Intel OpenMP's omp.h).
_SHADOWED = ("hip", "rocm", "hipblas", "rocblas", "miopen", "hipcub", "rocprim", "thrust", "omp.h")
_GCC_ROOTS = ("/usr/lib/gcc/x86_64-linux-gnu", "/usr/lib/gcc/x86_64-redhat-linux",
              "/usr/lib/gcc/aarch64-linux-gnu")


def gcc_installs(host: Host) -> List[Tuple[str, bool]]:
    """(GCC install dir, has libstdc++) for every GCC under /usr/lib/gcc, newest first."""
    found = []
    for root in _GCC_ROOTS:
        for name in host.list_dir(root) or ():
            if re.match(r"^\d+(\.\d+)*$", name):
                folder = os.path.join(root, name)
                files = host.list_dir(folder) or []
                found.append((folder, any(f.startswith("libstdc++.so") for f in files)))
    return sorted(found, key=lambda item: version_tuple(os.path.basename(item[0])), reverse=True)


def env_gcc_installs(host: Host, prefix: str) -> List[str]:
    """A conda env's own GCC installs ($PREFIX/lib/gcc/<triple>/<version>, conda-forge's gcc), newest
    first: clang never looks there by itself."""
    found = []
    root = os.path.join(prefix, "lib", "gcc")
    for triple in host.list_dir(root) or ():
        for name in host.list_dir(os.path.join(root, triple)) or ():
            if re.match(r"^\d+(\.\d+)*$", name):
                found.append(os.path.join(root, triple, name))
    return sorted(found, key=lambda folder: version_tuple(os.path.basename(folder)), reverse=True)


def _gcc_install_flag(pre: Preflight, folder: str) -> None:
    flag = f"--gcc-install-dir={folder}"
    pre.exports.append(("HIPCC_COMPILE_FLAGS_APPEND", f"{flag}${{HIPCC_COMPILE_FLAGS_APPEND:+ "
                                                      "$HIPCC_COMPILE_FLAGS_APPEND}"))


def _check_env_gcc(host: Host, pre: Preflight) -> bool:
    """The build's C++ compiler is the env's conda GCC: hipcc's clang must use that GCC's C++
    library too, or host and device code see two libstdc++ versions (the report's fix)."""
    if not pre.prefix:
        return False
    env = host.environ()
    compiler = env.get("CXX") or env.get("CC") or ""
    installs = env_gcc_installs(host, pre.prefix)
    if not installs or not (compiler.startswith(pre.prefix) or "conda-linux-gnu" in compiler):
        return False
    _gcc_install_flag(pre, installs[0])
    pre.add("clang-gcc-toolchain", "warning",
            f"the build compiles with the environment's GCC ({compiler}), but hipcc's clang takes the "
            f"system's GCC install by default; point it at {installs[0]}",
            f"HIPCC_COMPILE_FLAGS_APPEND=--gcc-install-dir={installs[0]} (the script sets it)")
    return True


def _check_toolchain(host: Host, pre: Preflight) -> None:
    """clang (hipcc) takes the newest GCC install; without libstdc++ there it cannot find <cmath>."""
    if _check_env_gcc(host, pre):
        return
    installs = gcc_installs(host)
    if not installs or installs[0][1]:
        return
    usable = [folder for folder, ok in installs if ok]
    fix = (f"install the C++ library of GCC {os.path.basename(installs[0][0])} (libstdc++-"
           f"{os.path.basename(installs[0][0])}-dev), or point clang at a complete one")
    if usable:
        fix += f": HIPCC_COMPILE_FLAGS_APPEND=--gcc-install-dir={usable[0]} (the script sets it)"
        _gcc_install_flag(pre, usable[0])
    pre.add("clang-gcc-toolchain", "error",
            f"hipcc's clang uses the newest GCC install, {installs[0][0]}, which has no libstdc++: "
            "the build stops at 'cmath' file not found / cannot find -lstdc++", fix)


def _check_shadows(host: Host, pre: Preflight, rocm_path: str) -> None:
    if not pre.prefix:
        return
    include = os.path.join(pre.prefix, "include")
    shadows = [n for n in host.list_dir(include) or () if n in _SHADOWED]
    if not shadows:
        return
    ours = [n for n in shadows if host.list_dir(os.path.join(rocm_path, "include", n)) is not None
            or host.read_text(os.path.join(rocm_path, "include", n)) is not None]
    # hipcc always puts ROCm's own include directory last, even after -I (ROCm/HIP#3587): a copy
    # under another name, given with -I, comes first (the field report's working route).
    copy = os.path.join(pre.prefix, "rocm-include")
    pre.exports.append(("ROCM_INCLUDE", copy))
    pre.exports.append(("HIPCC_COMPILE_FLAGS_APPEND", f"-I{copy}${{HIPCC_COMPILE_FLAGS_APPEND:+ "
                                                      "$HIPCC_COMPILE_FLAGS_APPEND}"))
    pre.add("hip-include-order", "warning",
            f"{include} has {', '.join(shadows)}"
            + (f" (ROCm has its own: {', '.join(ours)})" if ours else "")
            + f"; hipcc puts {rocm_path}/include after the environment's, so those headers win "
            "(thrust from CUDA, or another OpenMP's omp.h, break the HIP build; "
            "https://github.com/ROCm/HIP/issues/3587)",
            f"once: cp -r {rocm_path}/include {copy}; the script puts it first "
            f"(ROCM_INCLUDE, HIPCC_COMPILE_FLAGS_APPEND=-I{copy}); or remove them from the environment")


def check_rocm(host: Host, machine: Machine, pre: Preflight) -> None:
    rocm_path = host.environ().get("ROCM_PATH") or "/opt/rocm"
    hipcc = host.which("hipcc") or os.path.join(rocm_path, "bin", "hipcc")
    result = host.run([hipcc, "--version"], 15.0)
    version = machine.rocm.version if machine.rocm else None
    if version is None and result.ok:
        match = re.search(r"(\d+\.\d+(?:\.\d+)?)", result.stdout)
        version = match.group(1) if match else None
    pre.facts.update({"rocm_path": rocm_path, "hipcc": hipcc if result.ok else None, "rocm": version})
    if not result.ok:
        pre.add("hipcc-missing", "error", f"no hipcc: {result.problem()}",
                "install ROCm (rocm-hip-sdk) and set ROCM_PATH")
    else:
        pre.add("hipcc", "ok", f"hipcc at {hipcc}" + (f" (ROCm {version})" if version else ""))
    pre.exports.append(("ROCM_PATH", rocm_path))
    pre.exports.append(("HIP_PLATFORM", "amd"))
    _check_shadows(host, pre, rocm_path)
    _check_toolchain(host, pre)
