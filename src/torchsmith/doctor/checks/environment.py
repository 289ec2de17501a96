"""The environment around torch: other installs, companions, libraries, the guard."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from torchsmith.doctor.build import (
    CompanionBuild,
    companion_built_for,
    public_version,
    satisfies,
    torch_build,
    version_tuple,
)
from torchsmith.doctor.checks.common import (
    Report,
    amd_gpus,
    dynamic_of,
    gpu_facts,
    nvidia_gpus,
    torch_fact,
)
from torchsmith.doctor.fixes import KbSource, install_fix, kb_of, pip_command, python_of, quoted
from torchsmith.doctor.model import Fact, Finding
from torchsmith.kb.buildlabel import torch_releases
from torchsmith.machine import Machine


def check_two_torch_installs(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    conda = [r for r in report.get("conda") or () if r.get("name") == "pytorch"]
    conda_versions = {public_version(str(r.get("version"))) for r in conda}
    # conda writes INSTALLER=conda into the dist-info of its own pytorch; older builds wrote none.
    pip = [i for i in report.get("torch_installs") or () if i.get("source") != "conda"
           and not (i.get("source") == "unknown" and public_version(str(i.get("version"))) in conda_versions)]
    if len(pip) + len(conda) < 2:
        return None
    facts = [Fact(f"torch {i['version']} installed by {i['source']} in {i['location']}", str(i["metadata"]))
             for i in pip]
    facts.extend(Fact(f"conda package pytorch {r['version']} ({r['build']})", str(r["file"])) for r in conda)
    torch = report.get("torch") or {}
    if torch.get("path"):
        facts.append(Fact(f"`import torch` loads {torch['path']}", "sys.path order"))
    fix: List[str] = [pip_command(report, "uninstall", "-y", "torch") for _ in pip]
    prefix = (report.get("python") or {}).get("conda_prefix")
    if conda and prefix:
        fix.append(f"conda remove -p {quoted(str(prefix))} --force -y pytorch")
    fix.extend(install_fix(report, machine, kb))
    return Finding("two-torch-installs", "error",
                   f"{len(pip) + len(conda)} copies of torch are installed in this environment",
                   tuple(facts), tuple(fix),
                   note="files of one overwrite or shadow the other; uninstall all, then install one")


def check_conda_mutex_cpu(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    records = report.get("conda") or ()
    cpu = [r for r in records if (r.get("name") in ("pytorch-mutex", "_pytorch_select")
                                  and str(r.get("build", "")).startswith("cpu"))
           or r.get("name") == "cpuonly"
           or (r.get("name") == "pytorch" and (str(r.get("build", "")).startswith("cpu")
                                               or "_cpu_" in str(r.get("build", ""))))]
    if not cpu or not (nvidia_gpus(machine) or amd_gpus(machine)):
        return None
    prefix = quoted(str((report.get("python") or {}).get("conda_prefix") or ""))
    names = sorted({str(r["name"]) for r in cpu if r["name"] != "pytorch"})
    # Removing the mutex removes the pytorch that depends on it; the plan then installs a GPU build.
    fix = [f"conda remove -p {prefix} -y {' '.join(names)}"] if names else []
    fix.extend(install_fix(report, machine, kb))
    return Finding(
        "conda-mutex-cpu", "error",
        "conda pins this environment to CPU builds of pytorch, on a host with a GPU",
        tuple(Fact(f"conda package {r['name']} {r['version']} ({r['build']})", str(r["file"])) for r in cpu)
        + tuple(gpu_facts(nvidia_gpus(machine) or amd_gpus(machine))),
        tuple(fix),
        note="pytorch-mutex=*=cpu (or cpuonly) makes every later conda install choose CPU builds",
    )


def read_companion(companion: Dict[str, Any], kb: KbSource) -> CompanionBuild:
    """What ``companion`` was built for. Packed digits with two readings (``pt210``) are read again
    against the data's torch releases, loaded only then (``doctor --quick`` stays light)."""
    found = companion_built_for(companion)
    if found.unread:
        data = kb_of(kb)
        if data is not None:
            found = companion_built_for(companion, torch_releases(data))
    return found


def check_companion_abi_mismatch(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    build = torch_build(report)
    if build is None or not build["version"]:
        return None
    facts: List[Fact] = []
    for companion in report.get("companions") or ():
        wants, variant, source, _ = read_companion(companion, kb)
        name, version = companion.get("name"), companion.get("version")
        if wants and satisfies(build["version"], wants) is False:
            facts.append(Fact(f"{name} {version} is built for torch {wants}, "
                              f"but torch {build['version']} is installed", source))
        elif (variant and build["variant"] and variant != build["variant"]
              and variant.startswith(("cu", "rocm", "cpu"))):
            facts.append(Fact(f"{name} {version} is a {variant} build, torch is {build['variant']}",
                              str(companion.get("metadata"))))
    if not facts:
        return None
    return Finding(
        "companion-abi-mismatch", "error",
        f"{len(facts)} package(s) were built for another torch than {build['version']}",
        (torch_fact(build), *facts), install_fix(report, machine, kb),
        note="compiled extensions fail to load ('undefined symbol', 'operator torchvision::nms does "
             "not exist'); install the companions built for the same torch",
    )


def check_companion_build_unread(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    """A companion whose label's packed digits name two torch releases, or none: not guessed."""
    build = torch_build(report)
    if build is None or not build["version"]:
        return None
    facts = []
    for companion in report.get("companions") or ():
        found = read_companion(companion, kb)
        if found.unread:
            named = f"{companion.get('name')} {companion.get('version')}"
            said = f"could not read which torch {named} is built for ({found.unread})"
            facts.append(Fact(said, found.source))
    if not facts:
        return None
    return Finding(
        "companion-build-unread", "warning",
        f"{len(facts)} package(s) not checked against torch {build['version']}: "
        "their build could not be read",
        (torch_fact(build), *facts),
        note="its label's packed digits name two torch releases, or none the data knows, and are "
             "not guessed; `torchsmith plan NAME` names the build made for this torch",
    )


def _marker_environment(report: Report) -> Dict[str, str]:
    python = report.get("python") or {}
    platform = str(python.get("platform") or "linux")
    version = str(python.get("version") or "")
    system = {"linux": "Linux", "darwin": "Darwin", "win32": "Windows"}.get(platform, platform)
    return {"sys_platform": platform, "platform_system": system,
            "platform_machine": str(python.get("machine") or "x86_64"),
            "python_version": ".".join(version.split(".")[:2]), "python_full_version": version,
            "implementation_name": "cpython", "os_name": "nt" if platform == "win32" else "posix"}


def check_cuda_wheels_mismatch(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    """torch pins its nvidia-* runtime wheels exactly; another version (or none) breaks it."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    build = torch_build(report)
    installs = [i for i in report.get("torch_installs") or () if i.get("nvidia_requires")]
    if build is None or build["accelerator"] != "cuda" or not installs:
        return None
    have = {canonicalize_name(str(w["name"])): str(w["version"]) for w in report.get("nvidia_wheels") or ()}
    environment = _marker_environment(report)
    missing, other = [], []
    source = f"{installs[0]['metadata']}/METADATA Requires-Dist"
    for text in installs[0]["nvidia_requires"]:
        try:
            req = Requirement(str(text))
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate(environment):
            continue
        version = have.get(canonicalize_name(req.name))
        wanted = f"torch requires {req.name}{req.specifier}"
        if version is None:
            missing.append((req, Fact(f"{wanted}; it is not installed", source)))
        elif not req.specifier.contains(version, prereleases=True):
            other.append((req, Fact(f"{wanted}; {version} is installed", source)))
    if not missing and not other:
        return None
    pins = " ".join(quoted(f"{req.name}{req.specifier}") for req, _ in missing + other)
    return Finding(
        "cuda-wheels-mismatch", "error" if missing else "warning",
        f"{len(missing) + len(other)} of torch's CUDA runtime wheels are missing or of another version",
        (torch_fact(build), *(fact for _, fact in missing + other)),
        (pip_command(report, "install", "--no-deps", pins),),
        note="torch loads cuDNN, cuBLAS, NCCL... from these wheels; another version gives 'cuDNN "
             "version incompatibility' or undefined symbols, a missing one 'cannot open shared object file'",
    )


def check_library_shadowed(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    """A CUDA library the process loaded from outside torch's own wheels, of another version."""
    from torchsmith.doctor.loaded import shadowing

    build = torch_build(report)
    found = shadowing(report)
    if build is None or build["accelerator"] != "cuda" or not found:
        return None
    loaded = (report.get("dynamic") or {}).get("loaded") or {}
    observed = f"{loaded.get('source') or 'the loaded files'} after import torch (torch_check.py)"
    facts = [torch_fact(build)]
    for library, want, source in found:
        facts.append(Fact(f"loaded {library.path}: {library.stem} {_dotted(library.version)} "
                          f"({library.version_source})", observed))
        facts.append(Fact(f"torch was built with {library.stem} {_dotted(want)}", source))
    return Finding(
        "library-shadowed", "warning",
        f"{len(found)} CUDA librar{'y' if len(found) == 1 else 'ies'} loaded from outside torch's own "
        f"wheels, of another version than torch was built with",
        tuple(facts), _unshadow_fix(report, [library.path for library, _, _ in found]),
        note="a different cuDNN/NCCL/cuBLAS of the same soname gives 'cuDNN version incompatibility' "
             "or undefined-symbol errors at import or first use",
    )


def _dotted(version: Tuple[int, ...]) -> str:
    return ".".join(str(p) for p in version) or "(version unknown)"


def _unshadow_fix(report: Report, paths: List[str]) -> Tuple[str, ...]:
    """Take the directories of ``paths`` out of the variables that put them on the loader's path."""
    environ = report.get("environ") or {}
    dirs = {os.path.dirname(p) for p in paths}
    fix = []
    search = [d for d in str(environ.get("LD_LIBRARY_PATH") or "").split(os.pathsep) if d]
    if any(os.path.normpath(d) in dirs for d in search):
        kept = [d for d in search if os.path.normpath(d) not in dirs]
        fix.append(f"export LD_LIBRARY_PATH={quoted(os.pathsep.join(kept))}" if kept
                   else "unset LD_LIBRARY_PATH")
    if any(p in str(environ.get("LD_PRELOAD") or "") for p in paths):
        fix.append("unset LD_PRELOAD")
    if not fix:
        fix.append(f"grep -rs {quoted(sorted(dirs)[0])} /etc/ld.so.conf /etc/ld.so.conf.d  "
                   "# what else puts it on the loader's path")
    return tuple(fix)


def check_library_path_overlap(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    """Without importing torch (--quick): LD_LIBRARY_PATH holds CUDA libraries torch's wheels have.

    Only LD_LIBRARY_PATH steers the loader; whether it wins shows the full doctor's loaded list."""
    build = torch_build(report)
    dynamic = report.get("dynamic")
    if build is None or build["accelerator"] != "cuda" or isinstance(dynamic, dict):
        return None
    provided = set(report.get("cuda_libraries_provided") or ())
    facts = []
    for entry in report.get("library_dirs") or ():
        clash = sorted(provided.intersection(entry.get("libraries") or ()))
        if clash and entry.get("variable") == "LD_LIBRARY_PATH":
            facts.append(Fact(f"{entry['dir']} has {', '.join(clash)}, which torch's own CUDA wheels "
                              f"also provide", "$LD_LIBRARY_PATH"))
    if not facts:
        return None
    return Finding(
        "library-path-overlap", "info",
        "LD_LIBRARY_PATH holds CUDA libraries of the same names as torch's own",
        (torch_fact(build), *facts), (),
        note="the loader may take these instead of torch's; `torchsmith doctor` without --quick "
             "imports torch and reads which files were loaded",
    )


def check_libstdcxx_too_old(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    torch = report.get("torch") or {}
    lib = report.get("libstdcxx") or {}
    needed, have = torch.get("glibcxx_needed"), lib.get("glibcxx_max")
    if not needed or not have or version_tuple(have) >= version_tuple(needed):
        return None
    path = str(lib.get("path"))
    prefix = (report.get("python") or {}).get("conda_prefix")
    directory = os.path.dirname(path)
    ld_dirs = str((report.get("environ") or {}).get("LD_LIBRARY_PATH", "")).split(os.pathsep)
    if directory in ld_dirs:
        kept = os.pathsep.join(d for d in ld_dirs if d and d != directory)
        fix: Tuple[str, ...] = (
            f"export LD_LIBRARY_PATH={quoted(kept)}" if kept else "unset LD_LIBRARY_PATH",)
    elif prefix:
        fix = (f"conda install -p {quoted(str(prefix))} -c conda-forge -y 'libstdcxx-ng>=12'",)
    else:
        fix = ("sudo apt-get install --only-upgrade libstdc++6  # or your distribution's newer libstdc++",
               *install_fix(report, machine, kb))
    return Finding(
        "libstdcxx-too-old", "error",
        f"libstdc++ provides GLIBCXX up to {have}, torch needs GLIBCXX_{needed}",
        (Fact(f"torch needs GLIBCXX_{needed}", str(torch.get("glibcxx_file"))),
         Fact(f"{path} provides GLIBCXX up to {have}", path)),
        fix, note="import fails with \"version `GLIBCXX_...' not found\"",
    )


def check_gpus_hidden(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    """CUDA_VISIBLE_DEVICES, as the inspected environment has it, leaves CUDA none of the GPUs the
    driver lists (CUDA's rule: empty, -1, or a first entry that names no device)."""
    from torchsmith.probe.nvidia import parse_visible_devices

    visible = (report.get("environ") or {}).get("CUDA_VISIBLE_DEVICES")
    listed = machine.nvidia.gpus if machine.nvidia else ()
    if visible is None or not listed or parse_visible_devices(visible, listed):
        return None
    source = (machine.nvidia.gpus_source if machine.nvidia else "") or "probe"
    facts = [Fact(f"CUDA_VISIBLE_DEVICES={visible!r}", "environment"),
             *gpu_facts([(g.name, g.compute_capability, f"machine.nvidia.gpus ({g.source or source})")
                         for g in listed])]
    cuda = dynamic_of(report).get("cuda") or {}
    if cuda.get("device_count") == 0:
        facts.append(Fact("torch.cuda.device_count() = 0", "import torch"))
    return Finding("gpus-hidden", "warning", f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU from torch",
                   tuple(facts), ("unset CUDA_VISIBLE_DEVICES",))


def check_install_interrupted(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    """An install's journal beside the prefix: it was killed part-way, or it runs now."""
    found = (report.get("guard") or {}).get("install_journal")
    if not isinstance(found, dict):
        return None
    phase = found.get("phase") or "unknown"
    return Finding("install-interrupted", "error",
                   "an install into this environment was stopped part-way, or is running now",
                   (Fact(f"its journal is open (phase: {phase})", str(found.get("path"))),),
                   (f"torchsmith guard status --python {quoted(python_of(report))}  "
                    "# finishes it or rolls it back, once no install runs",),
                   note="until then torch and its lock and guard may describe different stacks")


def check_guard(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    """The guard (``torchsmith guard``): constraints in the prefix that pip must obey."""
    if not report.get("torch"):
        return None
    guard = report.get("guard") or {}
    python = quoted(python_of(report))
    interrupted = guard.get("guard_interrupted")
    if interrupted:
        switch = "on" if interrupted == "on" else "off"
        return Finding("guard-interrupted", "warning", f"`guard {switch}` was stopped part-way",
                       (Fact(f"its journal says {switch}", os.path.join(str(
                           (report.get("python") or {}).get("prefix") or ""), "torchsmith-guard-journal")),),
                       (f"torchsmith guard {switch} --python {python}",),
                       note="until it is finished, pip and uv may or may not honour the pins; the "
                            "next guard command or install finishes it")
    if guard.get("pip_conf_uses_guard"):
        return _guard_bypassed(report, guard)
    prefix = str((report.get("python") or {}).get("prefix") or "")
    if guard.get("guard_file"):
        facts: Tuple[Fact, ...] = (
            Fact("the guard's pins exist", str(guard["guard_file"])),
            Fact("but the environment's pip.conf does not make them a constraint",
                 str(guard.get("pip_conf") or os.path.join(prefix, "pip.conf"))))
        fix: Tuple[str, ...] = (f"torchsmith guard on --python {python}",)
    else:
        facts = (Fact(f"no {os.path.join(prefix, 'torchsmith-guard.txt')}", "inspect_env.py"),)
        # The installed torch pinned: the install keeps it and writes the guard (the default
        # request would plan the newest torch and replace a working one).
        version = str((report.get("torch") or {}).get("version") or "")
        keep = f"{quoted('torch==' + version)} " if version else ""
        fix = (f"torchsmith install {keep}--python {python}  # keeps this torch, writes and keeps the guard",)
    return Finding("guard-off", "info", "nothing stops a later `pip install` from replacing this torch",
                   facts, fix,
                   note="packages that depend on torch can pull another build (often a CUDA one "
                        "from PyPI) over a working one")


def _guard_bypassed(report: Report, guard: Dict[str, Any]) -> Optional[Finding]:
    """The guard is on, but a setting of this environment switches its constraints off."""
    from torchsmith.install.guard_files import constraint_reference
    from torchsmith.install.guard_hold import bypasses

    environ = {str(k): str(v) for k, v in (report.get("environ") or {}).items()}
    prefix = str((report.get("python") or {}).get("prefix") or "")
    guard_file = str(guard.get("guard_file") or os.path.join(prefix, "torchsmith-guard.txt"))

    def read(path: str) -> Optional[str]:
        text = guard.get("env_pip_conf_text")
        return str(text) if text is not None and path == environ.get("PIP_CONFIG_FILE") else None

    reasons = bypasses(prefix, guard_file, environ, read)
    if not reasons:
        return None
    fixes = {"PIP_CONFIG_FILE": "unset PIP_CONFIG_FILE",
             "PIP_CONSTRAINT": f'export PIP_CONSTRAINT="$PIP_CONSTRAINT {constraint_reference(guard_file)}"',
             "UV_CONSTRAINT": f'export UV_CONSTRAINT="{constraint_reference(guard_file)}"'}
    fix = tuple(dict.fromkeys(command for name, command in fixes.items()
                              if any(r.startswith(name) for r in reasons)))
    return Finding("guard-bypassed", "warning",
                   "the guard is on, but this environment switches its constraints off",
                   tuple(Fact(reason, "environment") for reason in reasons), fix,
                   note="the held packages (torch, its CUDA wheels) still cannot be uninstalled or "
                        "replaced by pip or uv, but a conflicting install fails late instead of "
                        "resolving around them")
