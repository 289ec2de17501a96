"""Preflight for building PyTorch from source, and the environment script for the build.

Everything is read through a Host (files, ``cmake --version``, ``nvcc --version``, ``gcc``,
``df``), so the checks run the same on this machine and on a recorded one. Each finding says
what was found, what is needed, and the fix; the script then sets what the build reads.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from torchsmith.buildenv.model import Finding, Preflight
from torchsmith.compat import driver_support
from torchsmith.host import Host
from torchsmith.machine import Machine
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["Finding", "Preflight", "build_script", "max_gcc_for", "preflight"]

_SYSTEM_DIRS = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/usr/include",
                "/usr/local/include", "/usr/local/cuda", "/opt/rocm")


def max_gcc_for(cuda: str, table: List[Dict[str, Any]]) -> Optional[Tuple[int, str]]:
    """(newest GCC major nvcc accepts, source) for a CUDA release, from the sourced table."""
    rows = [r for r in table if version_tuple(r["cuda"]) <= version_tuple(cuda)]
    if not rows:
        return None
    row = max(rows, key=lambda r: version_tuple(r["cuda"]))
    return int(row["gcc"]), str(row["source"])


def _first_version(text: str) -> Optional[str]:
    match = re.search(r"(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match else None


def _meminfo_gib(host: Host, key: str) -> Optional[float]:
    text = host.read_text("/proc/meminfo") or ""
    match = re.search(rf"^{key}:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(match.group(1)) / 1024 / 1024 if match else None


def _check_resources(host: Host, machine: Machine, pre: Preflight, data: Dict[str, Any],
                     workdir: str) -> None:
    mem = _meminfo_gib(host, "MemTotal")
    cores = machine.os.cpu_count or host.platform().cpu_count
    want_mem = data["memory_gib"]["recommended"]
    per_job = data["memory_gib"]["per_job"]
    jobs = cores or 1
    if mem is not None:
        pre.facts["memory_gib"] = round(mem, 1)
        jobs = max(1, min(jobs, int(mem // per_job)))
        if mem < want_mem:
            pre.add("memory-low", "warning",
                    f"{mem:.0f} GiB of memory; a full build peaks near {want_mem} GiB and the "
                    "compiler gets killed (OOM) with every core busy",
                    f"MAX_JOBS={jobs} (about {per_job} GiB per compile job; the script sets it)")
        else:
            pre.add("memory", "ok", f"{mem:.0f} GiB of memory")
    else:
        pre.add("memory-unknown", "warning", "cannot read /proc/meminfo; memory not checked")
    pre.facts["cores"] = cores
    if cores and cores < data["cores"]["recommended"]:
        pre.add("cores-few", "warning", f"{cores} CPU cores: expect a build of several hours",
                "build on a bigger machine, or trim the build (BUILD_TEST=0 is set by the script)")
    pre.exports.append(("MAX_JOBS", str(jobs)))
    df = host.run(["df", "-Pk", workdir], 10.0)
    lines = df.stdout.strip().splitlines() if df.ok else []
    parts = lines[-1].split() if len(lines) >= 2 else []
    if len(parts) >= 4 and parts[3].isdigit():
        free = int(parts[3]) / 1024 / 1024
        pre.facts["disk_free_gib"] = round(free, 1)
        want = data["disk_gib"]["recommended"]
        if free < want:
            pre.add("disk-low", "warning",
                    f"{free:.0f} GiB free in {workdir}; a build needs about {want} GiB",
                    "free space, or build elsewhere (the build directory is under the source tree)")
        else:
            pre.add("disk", "ok", f"{free:.0f} GiB free in {workdir}")
    else:
        pre.add("disk-unknown", "warning", f"cannot tell free disk space in {workdir}: "
                + (df.problem() if not df.ok else "df printed no usable line"))


def _check_cmake(host: Host, pre: Preflight, data: Dict[str, Any], source: str) -> None:
    from torchsmith.buildenv.cmake import check_cmake_range, cmake_floor

    default = (data["cmake_min"]["version"], data["sources"][data["cmake_min"]["source"]])
    need, need_source = cmake_floor(host, source, default)
    result = host.run(["cmake", "--version"], 10.0)
    found = _first_version(result.stdout) if result.ok else None
    pre.facts.update({"cmake": found, "cmake_min": need, "cmake_min_source": need_source})
    ninja = host.run(["ninja", "--version"], 10.0)
    fix = (f'python -m pip install "cmake>={need}{_cmake_cap(host, source, data, ninja.ok, need)}" ninja  '
           "(into the build environment)")
    if found is None:
        why = result.problem() if not result.ok else "no version"
        pre.add("cmake-missing", "error", f"no usable cmake ({why}); PyTorch needs cmake ≥ {need}", fix)
    elif version_tuple(found) < version_tuple(need):
        pre.add("cmake-too-old", "error", f"cmake {found} is older than the {need} this PyTorch "
                f"requires ({need_source})", fix)
    else:
        findings = check_cmake_range(host, found, source, data, ninja.ok)
        for code, severity, message, fixed in findings:
            if code == "export":
                pre.exports.append((severity, message))  # (variable, value)
            else:
                pre.add(code, severity, message, fixed)
        if not [f for f in findings if f[1] == "error"]:
            pre.add("cmake", "ok", f"cmake {found} (this checkout needs ≥ {need})")
    pre.facts["ninja"] = ninja.stdout.strip() if ninja.ok else None
    if not ninja.ok:
        pre.add("ninja-missing", "warning", "no ninja: the build falls back to make, much slower",
                "python -m pip install ninja")
    else:
        pre.add("ninja", "ok", f"ninja {ninja.stdout.strip()}")


def _cmake_cap(host: Host, source: str, data: Dict[str, Any], ninja: bool, need: str) -> str:
    """``,<X``: the lowest cmake release this checkout's own range checks would flag, so the fix
    never installs a cmake the next run warns about (4.x with old third_party, 3.30+ with Ninja)."""
    from torchsmith.buildenv.cmake import check_cmake_range

    flagged = [rule["from"] for rule in data["cmake_breakages"]
               if version_tuple(rule["from"]) > version_tuple(need)
               and any(code != "export" for code, *_ in check_cmake_range(host, rule["from"], source, data,
                                                                          ninja))]
    return f",<{min(flagged, key=version_tuple)}" if flagged else ""


def _toolkit_dir(host: Host, machine: Machine, prefix: Optional[str]) -> Optional[str]:
    """CUDA_HOME if set; else the environment's own toolkit (conda's cuda-nvcc puts nvcc in
    $CONDA_PREFIX/bin), then the nvcc first on PATH, as the build's shell finds them; then the
    newest toolkit the probe found."""
    env = host.environ()
    for name in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(name):
            return env[name]
    if prefix and "nvcc" in (host.list_dir(os.path.join(prefix, "bin")) or ()) and _has_headers(host, prefix):
        return prefix
    nvcc = host.which("nvcc")
    if nvcc:
        root = os.path.dirname(os.path.dirname(nvcc))
        if _has_headers(host, root):
            return root
    toolkits = sorted(machine.cuda_toolkits, key=lambda t: version_tuple(t.version))
    if toolkits:
        return toolkits[-1].path
    # nvcc on PATH may be a wrapper script: look where toolkits are installed.
    if _has_headers(host, "/usr/local/cuda"):
        return "/usr/local/cuda"
    versions = [n for n in host.list_dir("/usr/local") or () if re.match(r"^cuda-\d+\.\d+$", n)]
    if versions:
        return "/usr/local/" + max(versions, key=lambda n: version_tuple(n[5:]))
    return os.path.dirname(os.path.dirname(nvcc)) if nvcc else None


def _has_headers(host: Host, root: str) -> bool:
    if host.read_text(os.path.join(root, "include", "cuda_runtime.h")) is not None:
        return True
    return any(host.read_text(os.path.join(root, "targets", t, "include", "cuda_runtime.h")) is not None
               for t in host.list_dir(os.path.join(root, "targets")) or ())


def _host_config_max_gcc(host: Host, toolkit: str) -> Optional[int]:
    candidates = [os.path.join(toolkit, "include", "crt", "host_config.h")]
    targets = host.list_dir(os.path.join(toolkit, "targets")) or []
    candidates.extend(os.path.join(toolkit, "targets", t, "include", "crt", "host_config.h") for t in targets)
    for path in candidates:
        text = host.read_text(path)
        match = re.search(r"#if __GNUC__ > (\d+)", text or "")
        if match:
            return int(match.group(1))
    return None


def _check_cuda(host: Host, machine: Machine, pre: Preflight, data: Dict[str, Any],
                kb: KnowledgeBase) -> None:
    toolkit = _toolkit_dir(host, machine, pre.prefix)
    nvcc_path = host.which("nvcc")
    nvcc = os.path.join(toolkit, "bin", "nvcc") if toolkit else (nvcc_path or "nvcc")
    result = host.run([nvcc, "--version"], 15.0)
    match = re.search(r"release (\d+\.\d+)", result.stdout) if result.ok else None
    cuda = match.group(1) if match else None
    pre.facts.update({"cuda_home": toolkit, "nvcc": cuda, "nvcc_on_path": nvcc_path})
    if cuda is None or toolkit is None:
        pre.add("nvcc-missing", "error", "no CUDA toolkit (nvcc) found"
                + (f": {result.problem()}" if not result.ok else ""),
                "install the CUDA toolkit and set CUDA_HOME to it (e.g. /usr/local/cuda-12.6)")
        return
    inside = " (the environment's own, ahead of the system's)" if toolkit == pre.prefix else ""
    pre.add("nvcc", "ok", f"CUDA toolkit {cuda} at {toolkit}{inside}")
    pre.exports.append(("CUDA_HOME", toolkit))
    nvcc_root = os.path.dirname(os.path.dirname(nvcc_path)) if nvcc_path else ""
    if nvcc_path and not nvcc_path.startswith(toolkit) and not _has_headers(host, nvcc_root):
        pre.add("nvcc-outside-toolkit", "warning",
                f"nvcc on PATH ({nvcc_path}) is not inside a CUDA toolkit (no ../include/cuda_runtime.h "
                "next to it); a build that derives the toolkit from PATH finds no headers",
                f"CUDA_HOME={toolkit} and {toolkit}/bin first on PATH (the script sets both)")
    # nvcc refuses host compilers newer than the toolkit knows.
    max_gcc = _host_config_max_gcc(host, toolkit)
    source = f"{toolkit}/…/crt/host_config.h"
    if max_gcc is None:
        known = max_gcc_for(cuda, data["cuda_max_gcc"])
        if known:
            max_gcc, source = known[0], data["sources"][known[1]]
    cc = host.environ().get("CC") or "gcc"
    gcc = host.run([cc, "-dumpfullversion", "-dumpversion"], 10.0)
    gcc_version = gcc.stdout.strip().splitlines()[0] if gcc.ok and gcc.stdout.strip() else None
    pre.facts.update({"host_compiler": cc, "host_compiler_version": gcc_version, "max_gcc": max_gcc})
    if gcc_version is None:
        pre.add("compiler-missing", "error", f"no host C/C++ compiler ({cc}): {gcc.problem()}",
                "install gcc and g++ (the distribution's build-essential)")
    elif max_gcc is not None and version_tuple(gcc_version)[:1] > (max_gcc,):
        pre.add("gcc-too-new", "error",
                f"{cc} {gcc_version} is newer than CUDA {cuda}'s nvcc accepts (GCC ≤ {max_gcc}; {source})",
                f"install gcc-{max_gcc} g++-{max_gcc} and export CC=gcc-{max_gcc} CXX=g++-{max_gcc} "
                f"CUDAHOSTCXX=g++-{max_gcc}")
    else:
        limit = f" (nvcc accepts ≤ {max_gcc})" if max_gcc else ""
        pre.add("host-compiler", "ok", f"{cc} {gcc_version}{limit}")
    _check_driver(machine, pre, cuda, kb)
    _check_magma(host, pre, data, cuda, toolkit)


def _check_driver(machine: Machine, pre: Preflight, cuda: str, kb: KnowledgeBase) -> None:
    from torchsmith.plan.hostview import driver_max_cuda

    nvidia = machine.nvidia
    driver_cuda = driver_max_cuda(machine, kb)  # --driver alone is enough: plan's own table
    if nvidia is None or not (nvidia.driver_version or nvidia.driver_cuda):
        pre.add("no-driver", "warning", "no NVIDIA driver here: the build works, but the CUDA tests "
                "cannot run on this machine")
        return
    driver = nvidia.driver_version or "?"
    pre.facts["driver_cuda"] = driver_cuda
    # The rule is compat's: the highest CUDA the driver reports against the toolkit's.
    mode = driver_support(None, cuda, "linux", None, driver_cuda).mode
    if mode in ("full", "unknown"):
        return
    fix = f"use a CUDA {driver_cuda} toolkit (CUDA_HOME), or upgrade the driver"
    if mode == "too-old":
        pre.add("nvcc-newer-than-driver", "error",
                f"the toolkit (CUDA {cuda}) is a newer major release than the driver {driver} "
                f"supports (CUDA {driver_cuda}): minor-version compatibility stops at the major, so "
                "every CUDA call of the build fails at run time ('driver version is insufficient')", fix)
    else:
        pre.add("nvcc-newer-than-driver", "warning",
                f"the toolkit (CUDA {cuda}) is newer than the driver {driver} supports (CUDA "
                f"{driver_cuda}): it runs through minor-version compatibility (same major), but "
                "PTX JIT and features of the newer minor fail", fix)


def _libs(host: Host, folders: List[str], stem: str) -> Optional[str]:
    for folder in folders:
        for name in host.list_dir(folder) or ():
            if name.startswith(stem):
                return os.path.join(folder, name)
    return None


def _check_magma(host: Host, pre: Preflight, data: Dict[str, Any], cuda: str, toolkit: str) -> None:
    folders = [os.path.join(p, "lib") for p in (pre.prefix, "/usr/local/magma", "/opt/magma") if p]
    found = _libs(host, [*folders, os.path.join(toolkit, "lib64")], "libmagma")
    pre.facts["magma"] = found
    if found:
        pre.add("magma", "ok", f"MAGMA at {found}")
        return
    magma = data["magma"]
    if version_tuple(cuda) <= version_tuple(magma["conda_max_cuda"]):
        fix = magma["fix"].format(cuda_nodot=cuda.replace(".", "")) + " (conda)"
    else:  # no magma-cudaXYZ conda package this new: PyTorch's own script installs its tarball
        fix = (f"{magma['script'].format(cuda=cuda)} in the PyTorch checkout, inside the conda env "
               f"(the pytorch channel's magma-cudaXYZ stop at CUDA {magma['conda_max_cuda']})")
    pre.add("magma-missing", "warning",
            "no MAGMA: torch.linalg on the GPU loses its MAGMA paths (some solvers slow or missing)",
            fix + ", or build MAGMA for this toolkit")


def _check_mkl(host: Host, machine: Machine, pre: Preflight, data: Dict[str, Any]) -> None:
    if machine.os.arch != "x86_64":
        return
    folders = [os.path.join(pre.prefix, "lib")] if pre.prefix else []
    folders.append("/opt/intel/oneapi/mkl/latest/lib")
    found = _libs(host, folders, "libmkl_")
    pre.facts["mkl"] = found
    if found:
        pre.add("mkl", "ok", f"MKL at {found}")
    else:
        pre.add("mkl-missing", "warning", "no MKL in the environment: CPU BLAS falls back to OpenBLAS/Eigen "
                "(slower matmuls on x86)", data["mkl"]["fix"])


def _check_order(host: Host, pre: Preflight) -> None:
    """System directories ahead of the environment's: the wrong headers and libraries win."""
    if not pre.prefix:
        return
    env = host.environ()
    prefix = pre.prefix.rstrip("/")
    for var, sub in (("LD_LIBRARY_PATH", "lib"), ("LIBRARY_PATH", "lib"), ("CPATH", "include"),
                     ("CPLUS_INCLUDE_PATH", "include"), ("C_INCLUDE_PATH", "include")):
        entries = [e.rstrip("/") for e in env.get(var, "").split(":") if e]
        ours = [i for i, e in enumerate(entries) if e.startswith(prefix)]
        system = [i for i, e in enumerate(entries) if e.startswith(_SYSTEM_DIRS) and not e.startswith(prefix)]
        if system and (not ours or system[0] < ours[0]):
            pre.add("system-before-env", "warning",
                    f"{var} puts {entries[system[0]]} before {prefix}/{sub}: the build picks the "
                    "system's copies over the environment's",
                    f"{var}={prefix}/{sub}:… (the script puts the environment first)")
            if var != "LD_LIBRARY_PATH":  # the script sets that one anyway
                pre.exports.append((var, f"{prefix}/{sub}${{{var}:+:${var}}}"))
    cmake_path = [e for e in env.get("CMAKE_PREFIX_PATH", "").split(":") if e]
    if cmake_path and not any(e.rstrip("/").startswith(prefix) for e in cmake_path):
        pre.add("cmake-prefix-path", "warning",
                f"CMAKE_PREFIX_PATH ({':'.join(cmake_path)}) does not include {prefix}: "
                "CMake finds the system's libraries first",
                f"CMAKE_PREFIX_PATH={prefix}:… (the script sets it)")
    pre.exports.append(("CMAKE_PREFIX_PATH", f"{prefix}${{CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}}"))


def _arch_list(machine: Machine, kind: str) -> Optional[str]:
    if kind == "rocm":
        gfx = sorted({g.gfx for g in (machine.rocm.gpus if machine.rocm else ()) if g.gfx})
        return ";".join(gfx) or None
    gpus = machine.nvidia.gpus if machine.nvidia else ()
    ccs = {g.compute_capability for g in gpus if g.compute_capability}
    if machine.jetson is not None and machine.jetson.compute_capability:
        ccs.add(machine.jetson.compute_capability)
    return ";".join(sorted(ccs, key=version_tuple)) or None


def preflight(host: Host, machine: Machine, kind: str, prefix: Optional[str] = None,
              workdir: str = ".", *, kb: KnowledgeBase, source: Optional[str] = None) -> Preflight:
    """``source``: the PyTorch checkout (default ``workdir``), read for the cmake range;
    ``kb`` gives the build requirements (its ``buildreqs`` document)."""
    if kind not in ("cuda", "rocm"):
        raise ValueError(kind)
    data = kb.document("buildreqs")
    env = host.environ()
    prefix = prefix or env.get("CONDA_PREFIX") or env.get("VIRTUAL_ENV") or None
    if prefix and not os.path.isabs(prefix):  # the script is sourced from anywhere
        prefix = host.real_path(prefix)
    pre = Preflight(kind=kind, prefix=prefix, requirements=data)
    _check_resources(host, machine, pre, data, workdir)
    _check_cmake(host, pre, data, source or workdir)
    if kind == "cuda":
        _check_cuda(host, machine, pre, data, kb)
    else:
        from torchsmith.buildenv.rocm import check_rocm

        check_rocm(host, machine, pre)
    _check_mkl(host, machine, pre, data)
    _check_order(host, pre)
    archs = _arch_list(machine, kind)
    var = "PYTORCH_ROCM_ARCH" if kind == "rocm" else "TORCH_CUDA_ARCH_LIST"
    pre.facts["arch_list"] = archs
    if archs:
        pre.exports.append((var, archs))
    else:
        pre.add("no-gpu-archs", "warning", f"no GPU detected: {var} is not set, so the build compiles "
                "for every architecture the toolkit supports (hours longer)",
                f"export {var} for the GPUs you will run on, e.g. "
                + ("gfx1100" if kind == "rocm" else "8.6"))
    return pre


_REBUILD = (
    "# Rebuilding after a failure or after changing these variables: CMake keeps what it found",
    "# in build/CMakeCache.txt, so start clean first: python setup.py clean  (or rm -rf build)",
)
_REBUILD_ROCM = (
    "# ROCm: build_amd.py rewrote the sources (hipify), so a clean rebuild also restores",
    "# and re-hipifies them (this discards local edits): rm -rf build && python setup.py clean",
    "#   && git reset --hard && git clean -fd && git submodule foreach --recursive git reset --hard",
    "#   && python tools/amd_build/build_amd.py",
)


def build_script(pre: Preflight) -> str:
    """A bash script to source before ``pip install -e .`` in a PyTorch checkout."""
    cuda = pre.kind == "cuda"
    lines = [
        "#!/usr/bin/env bash",
        f"# Environment for building PyTorch from source ({'CUDA' if cuda else 'ROCm'}), written by "
        "torchsmith build-env.",
        "# Use: source this file in a PyTorch checkout, then run the build and test commands below.",
    ]
    lines.extend(f"# {f.severity}: {f.message}" + (f" -> {f.fix}" if f.fix else "") for f in pre.problems)
    for name, value in pre.exports:
        lines.append(f'export {name}="{value}"')
    switches = ([("USE_CUDA", "1"), ("USE_CUDNN", "1"), ("USE_ROCM", "0")] if cuda
                else [("USE_ROCM", "1"), ("USE_CUDA", "0")])
    switches += [("BUILD_TEST", "0"), ("USE_DISTRIBUTED", "1")]
    lines.extend(f"export {k}={v}" for k, v in switches)
    if not cuda:
        rocm = pre.requirements["rocm"]
        lines.append(f"# {rocm['why']}" + (" (field reports; uncertain)" if rocm.get("uncertain") else ""))
        lines.extend(f"export {k}={v}" for k, v in rocm["switches"])
    home = "CUDA_HOME" if cuda else "ROCM_PATH"
    has_home = any(name == home for name, _ in pre.exports)
    if has_home:
        lines.append(f'export PATH="${home}/bin:$PATH"')
    # ROCm's own libraries first (a conda env's libstdc++ or HIP copies must not win); for CUDA
    # the environment's first, then the toolkit's.
    libs = ["$ROCM_PATH/lib"] if has_home and not cuda else []
    libs += [f"{pre.prefix}/lib"] if pre.prefix else []
    if cuda and has_home:
        libs.append("$CUDA_HOME/lib64")
    if libs:
        # The environment's libraries before the system's (see system-before-env).
        lines.append(f'export LD_LIBRARY_PATH="{":".join(libs)}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"')
    lines.append("")
    lines.append("# Build (in the PyTorch checkout, inside the environment):")
    lines.append("#   git submodule sync && git submodule update --init --recursive")
    lines.append("#   python -m pip install -r requirements.txt")
    if not cuda:
        lines.append("#   python tools/amd_build/build_amd.py   # hipify the sources first")
    lines.append("#   python -m pip install --no-build-isolation -v -e .")
    lines.extend(_REBUILD if cuda else _REBUILD + _REBUILD_ROCM)
    lines.append("# Test:")
    check = "torch.cuda.is_available()"
    lines.append(f"#   python -c 'import torch; print(torch.__version__, {check})'")
    lines.append("#   python test/run_test.py -i test_torch" + (" test_cuda" if cuda else ""))
    return "\n".join(lines) + "\n"
