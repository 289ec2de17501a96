"""The doctor's checks: pure functions of an environment report, the host profile and the data.

Each ``check_*(report, machine, kb) -> Optional[Finding]`` reads the JSON of the inspection
snippets (``report``; its ``dynamic`` key holds what importing torch showed, or None with
``--quick``) and returns at most one finding. Codes are documented in docs/findings.md.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from torchsmith.compat import NO_JIT, RUNS, Variant, driver_support, gpu_verdict, kernel_for, parse_cc
from torchsmith.doctor.build import (
    companion_built_for,
    public_version,
    satisfies,
    torch_build,
    version_tuple,
)
from torchsmith.doctor.fixes import install_fix, kb_of, plan_for, python_of, quoted
from torchsmith.doctor.model import Fact, Finding
from torchsmith.machine import Machine

__all__ = ["CHECKS", "UNDERUSED_BELOW", "Check", "check_gpu_underused", "run_checks"]

Report = Dict[str, Any]
Check = Callable[[Report, Machine, Any], Optional[Finding]]

# --- what the host has ---------------------------------------------------------------------
def _nvidia_gpus(machine: Machine) -> List[Tuple[str, Optional[str], str]]:
    """(name, compute capability, source) of every NVIDIA GPU a job here can use."""
    gpus = []
    if machine.nvidia:
        source = machine.nvidia.gpus_source or "probe"
        gpus = [(g.name, g.compute_capability, f"machine.nvidia.gpus ({g.source or source})")
                for g in machine.nvidia.visible_gpus]
    if not gpus and machine.jetson is not None:
        j = machine.jetson
        gpus = [(f"Jetson {j.module or ''}".strip(), j.compute_capability,
                 f"machine.jetson ({j.source or 'probe'})")]
    return gpus


def _amd_gpus(machine: Machine) -> List[Tuple[str, Optional[str], str]]:
    if not machine.rocm:
        return []
    return [(g.name, g.gfx, f"machine.rocm.gpus ({g.source or machine.rocm.source or 'probe'})")
            for g in machine.rocm.gpus]


def _gpu_facts(gpus: List[Tuple[str, Optional[str], str]]) -> List[Fact]:
    facts = []
    for name, cc, source in gpus:
        label = name if name.startswith("GPU") else f"GPU {name}"
        if cc:
            label += f" (compute capability {cc})" if "." in cc else f" ({cc})"
        facts.append(Fact(label, source))
    return facts


def _torch_fact(build: Dict[str, Any]) -> Fact:
    what = f"torch {build['version']}"
    if build["accelerator"] == "cuda":
        what += f", a CUDA {build['cuda']} build"
    elif build["accelerator"] == "rocm":
        what += f", a ROCm (HIP {build['hip']}) build"
    else:
        what += f", a {build['accelerator'].upper()} build (torch.version.cuda is None)"
    return Fact(what, build["source"])


def _dynamic(report: Report) -> Dict[str, Any]:
    dynamic = report.get("dynamic") or {}
    return dynamic if dynamic.get("status") == "ok" else {}


# --- torch present and importable ------------------------------------------------------------
def check_no_torch(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    if report.get("torch"):
        return None
    # Records of an install whose files are gone: a half-finished uninstall or a deleted directory.
    conda = [r for r in report.get("conda") or () if r.get("name") == "pytorch"]
    facts = [Fact(f"no importable torch on sys.path of {python_of(report)}", "inspect_env.py")]
    facts.extend(Fact(f"conda lists pytorch {r['version']} ({r['build']}) but its files are gone",
                      str(r.get("file"))) for r in conda)
    facts.extend(Fact(f"metadata of torch {i['version']} remains, but no torch package beside it",
                      str(i.get("metadata"))) for i in report.get("torch_installs") or ())
    broken = len(facts) > 1
    return Finding("no-torch", "error" if broken else "warning",
                   "torch's files are missing from this environment" if broken
                   else "torch is not installed in this environment",
                   tuple(facts), install_fix(report, machine, kb))


def _explained(text: str, machine: Machine, kb: Any) -> Optional[Any]:
    """The known failure ``text`` shows (``torchsmith explain``'s first explanation), or None."""
    try:
        from torchsmith.explain import catalog_of, explain

        data = kb_of(kb)
        found = explain(text, catalog_of(data), machine, kb=data)
    except Exception:  # the catalog is optional here: without it the finding stands on its own
        return None
    return found[0] if found else None


def check_torch_import_fails(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    dynamic = report.get("dynamic") or {}
    if dynamic.get("status") != "failed":
        return None
    error = str(dynamic.get("error") or "").strip()
    last = error.splitlines()[-1] if error else f"exit code {dynamic.get('returncode')}"
    code = dynamic.get("returncode")
    facts = [Fact(line.strip(), "import torch (child process)") for line in error.splitlines()[-3:]]
    if isinstance(code, int) and code < 0:
        facts.append(Fact(f"the process was killed by signal {-code}", "import torch (child process)"))
    known = _explained(error, machine, kb) if error else None
    if known is not None:
        note = f"{known.signature.title} ({known.signature.id}): {known.cause}"
        fix = install_fix(report, machine, kb)
    else:
        note = ("reinstalling the plan's build replaces mismatched or missing libraries; "
                "`torchsmith explain` names the cause of a known message")
        fix = (*install_fix(report, machine, kb), f"torchsmith explain {quoted(last[:200])}")
    return Finding("torch-import-fails", "error", f"`import torch` fails: {last[:160]}", tuple(facts),
                   fix, note=note)


def check_torch_import_hangs(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    dynamic = report.get("dynamic") or {}
    if dynamic.get("status") != "timeout":
        return None
    python = quoted(python_of(report))
    return Finding(
        "torch-import-hangs", "error",
        f"`import torch` did not finish within {dynamic.get('timeout'):.0f} s (killed)",
        (Fact(f"{python} -c 'import torch' was still running after {dynamic.get('timeout')} s",
              "import torch (child process)"),),
        (f"timeout 300 {python} -X importtime -c 'import torch' 2>&1 | sort -t'|' -k2 -n | tail -5",
         "nvidia-smi", f"torchsmith doctor --python {python} --timeout 300"),
        note="a hung driver (nvidia-smi hangs too), a stale lock on a network filesystem or a very "
             "slow disk are the usual causes; -X importtime shows which module is slow",
    )


# --- the build against the host ---------------------------------------------------------------
def check_cpu_build_on_gpu_host(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    build = torch_build(report)
    if build is None or build["accelerator"] != "cpu":
        return None
    gpus = _nvidia_gpus(machine) or _amd_gpus(machine)
    if not gpus:
        return None
    kind = "NVIDIA" if _nvidia_gpus(machine) else "AMD"
    return Finding(
        "cpu-build-on-gpu-host", "error",
        f"torch {build['version']} is a CPU-only build, but this host has {len(gpus)} {kind} GPU(s)",
        (_torch_fact(build), *_gpu_facts(gpus)),
        install_fix(report, machine, kb),
        note="torch.cuda.is_available() is False with this build; every tensor stays on the CPU",
    )


def check_wrong_gpu_build(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    build = torch_build(report)
    if build is None:
        return None
    nvidia, amd = _nvidia_gpus(machine), _amd_gpus(machine)
    if build["accelerator"] == "cuda" and amd and not nvidia:
        gpus, what = amd, "a CUDA build, but this host's GPUs are AMD (ROCm)"
    elif build["accelerator"] == "rocm" and nvidia and not amd:
        gpus, what = nvidia, "a ROCm build, but this host's GPUs are NVIDIA (CUDA)"
    else:
        return None
    return Finding("wrong-gpu-build", "error", f"torch {build['version']} is {what}",
                   (_torch_fact(build), *_gpu_facts(gpus)), install_fix(report, machine, kb))


def check_gpu_detection_failed(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    """nvidia-smi/NVML failed: "no GPU found" would be a guess, so say what failed."""
    from torchsmith.plan.detection import detection_failure

    why = detection_failure(machine)
    if why is None:
        return None
    return Finding(
        "gpu-detection-failed", "warning",
        "GPU detection failed: whether this machine has an NVIDIA GPU is unknown",
        (Fact(why, "probe"),),
        ("nvidia-smi  # run it yourself: a driver/library mismatch or a wedged GPU shows here",
         "torchsmith doctor --gpu CC --driver VERSION  # state the facts if you know them"),
        note="a failed detection is not 'no GPU': checks that need the GPU facts were judged without them",
    )


def check_gpu_build_on_cpu_host(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    build = torch_build(report)
    if build is None or build["accelerator"] not in ("cuda", "rocm") or build["jetson"]:
        return None
    if _nvidia_gpus(machine) or _amd_gpus(machine) or machine.os.system == "macos":
        return None
    from torchsmith.plan.detection import detection_failure

    if detection_failure(machine) is not None:
        return None  # not "no GPU": check_gpu_detection_failed says what failed
    wheels = report.get("nvidia_wheels") or ()
    facts = [_torch_fact(build), Fact("no NVIDIA or AMD GPU found", "machine (probe)")]
    if wheels:
        facts.append(Fact(f"{len(wheels)} nvidia-* CUDA runtime wheels installed beside it",
                          "inspect_env.py (site-packages)"))
    return Finding(
        "gpu-build-on-cpu-host", "info",
        f"torch {build['version']} is a {build['accelerator'].upper()} build on a host without a GPU",
        tuple(facts), install_fix(report, machine, kb),
        note="it runs on the CPU, but carries gigabytes of GPU libraries; a CPU build is smaller",
    )


def _driver_floor(machine: Machine, cuda_major: int, kb: Any) -> Optional[Tuple[str, str]]:
    """(the oldest driver running CUDA ``cuda_major`` builds, its source): cuda.json#minor_compat's."""
    windows = machine.os.system == "windows" or machine.os.wsl
    data = kb_of(kb)
    try:
        row = data.minor_compat(str(cuda_major)) if data is not None else None
    except (AttributeError, TypeError, ValueError):
        row = None
    if row is None:  # no data (or no row for that major): no floor is claimed
        return None
    floor = row.min_driver_windows if windows else row.min_driver_linux
    cited = data.sources.get(row.sources[0]) if row.sources else None
    return floor, str(getattr(cited, "url", "") or "compatibility data (minor-compat)")


def check_driver_too_old(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    build = torch_build(report)
    nv = machine.nvidia
    if build is None or build["accelerator"] != "cuda" or build["jetson"] or nv is None:
        return None
    torch_cuda = version_tuple(build["cuda"])
    if len(torch_cuda) < 2:
        return None
    facts = [_torch_fact(build)]
    floor = _driver_floor(machine, torch_cuda[0], kb)
    severity = ""
    if nv.driver_cuda:
        facts.append(Fact(f"the driver supports CUDA ≤ {nv.driver_cuda}",
                          f"machine.nvidia.driver_cuda ({nv.driver_cuda_source or 'probe'})"))
        driver_cuda = version_tuple(nv.driver_cuda)
        if driver_cuda[:1] < torch_cuda[:1]:
            severity = "error"
        elif driver_cuda[:2] < torch_cuda[:2]:
            severity = "warning"
    if nv.driver_version:
        facts.append(Fact(f"NVIDIA driver {nv.driver_version}",
                          f"machine.nvidia.driver_version ({nv.driver_version_source or 'probe'})"))
        if floor and version_tuple(nv.driver_version) < version_tuple(floor[0]):
            severity = "error"
    if not severity:
        return None
    if floor:
        facts.append(Fact(f"CUDA {torch_cuda[0]}.x builds need driver ≥ {floor[0]}", floor[1]))
    warnings = (_dynamic(report).get("cuda") or {}).get("warnings") or ()
    facts.extend(Fact(w.splitlines()[0][:200], "import torch (warning)") for w in warnings if "driver" in w)
    if severity == "error":
        title = (f"the NVIDIA driver is too old for torch {build['version']} "
                 f"(CUDA {build['cuda']})")
        note = "upgrade the driver, or install the build the plan picks for this driver"
        fix = install_fix(report, machine, kb)
    else:
        title = (f"the driver supports CUDA {nv.driver_cuda}, older than torch's CUDA {build['cuda']}: "
                 "it runs through minor-version compatibility only")
        note = ("kernels needing a newer driver fail with cudaErrorCallRequiresNewerDriver and PTX "
                "cannot be JIT-compiled")
        # Reinstalling helps only when the plan's build is one this driver supports fully.
        plan = plan_for(report, machine, kb)
        variant = str(getattr(plan, "variant", "") or "")
        parsed = Variant.parse(variant)
        plan_cuda = parsed.cuda_tuple if parsed else None
        if plan_cuda is not None and plan_cuda <= version_tuple(nv.driver_cuda)[:2]:
            note += f"; the plan's {variant} build avoids both"
            fix = install_fix(report, machine, kb)
        elif plan is not None:
            note += (f"; a driver with full CUDA {build['cuda']} support avoids both (the plan for this "
                     f"driver, {variant or 'its build'}, relies on minor-version compatibility too)")
            fix = ()
        else:
            note += f"; a newer driver, or a build for CUDA ≤ {nv.driver_cuda}, avoids both"
            fix = ()
    return Finding("driver-too-old", severity, title, tuple(facts), fix, note=note)


def _driver_mode(build: Dict[str, Any], machine: Machine, kb: Any) -> str:
    """How the machine's driver runs the build's CUDA (full | minor-compat | too-old | unknown)."""
    nv, data, cuda = machine.nvidia, kb_of(kb), str(build.get("cuda") or "")
    if nv is None or not cuda:
        return "unknown"
    system = "windows" if machine.os.system == "windows" or machine.os.wsl else "linux"
    try:
        toolkit = data.cuda_release(cuda) if data is not None else None
    except (AttributeError, TypeError, ValueError):
        toolkit = None
    return driver_support(toolkit, cuda, system, nv.driver_version, nv.driver_cuda).mode


def _verdict(capability: str, arch_list: List[str], integrated: bool, driver_mode: str) -> str:
    """runs | no-kernel | no-jit for one GPU and ``torch.cuda.get_arch_list()`` (the rule: compat)."""
    cc = parse_cc(capability)
    if cc is None:
        return RUNS  # an unreadable capability proves nothing
    return gpu_verdict(kernel_for(cc, arch_list, integrated=integrated), driver_mode)


def _compiled_for(report: Report) -> Tuple[List[str], str]:
    """torch's arch list and where it was read: from the import, else the library's fatbin."""
    cuda = _dynamic(report).get("cuda") or {}
    if cuda.get("arch_list"):
        return [str(a) for a in cuda["arch_list"]], "torch.cuda.get_arch_list()"
    kernels = report.get("kernels") or {}
    if kernels.get("sass") or kernels.get("ptx"):
        return ([str(a) for a in (*kernels.get("sass", ()), *kernels.get("ptx", ()))],
                f"fatbin headers of {kernels.get('file')}")
    return [], ""


def check_arch_not_compiled(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    build = torch_build(report)
    cuda = _dynamic(report).get("cuda") or {}
    arch_list, read_from = _compiled_for(report)
    if build is None or not arch_list or build["accelerator"] not in ("cuda", "rocm"):
        return None
    devices = [d for d in cuda.get("devices") or () if d.get("capability")]
    note = "CUDA errors with 'no kernel image is available for execution on the device'"
    if build["accelerator"] == "rocm":
        gpus = ([(str(d.get("name")), str(d.get("gcn_arch") or "").split(":")[0], "torch.cuda device")
                 for d in devices if d.get("gcn_arch")] or _amd_gpus(machine))
        missing = [g for g in gpus if g[1] and g[1] not in arch_list]
        if missing and machine.rocm and machine.rocm.hsa_override_gfx_version:
            return None  # HSA_OVERRIDE_GFX_VERSION makes the GPU load another gfx's kernels
    else:
        gpus = ([(str(d.get("name")), str(d["capability"]), "torch.cuda.get_device_properties")
                 for d in devices] or _nvidia_gpus(machine))
        integrated, mode = machine.jetson is not None, _driver_mode(build, machine, kb)
        verdicts = [(g, _verdict(g[1], arch_list, integrated, mode)) for g in gpus if g[1]]
        missing = [g for g, verdict in verdicts if verdict != RUNS]
        if missing and all(verdict in (RUNS, NO_JIT) for _, verdict in verdicts):
            note = ("only PTX serves these GPUs, and the driver runs this CUDA through minor-version "
                    "compatibility, which cannot JIT-compile PTX")
    if not missing:
        return None
    names = ", ".join(f"{name} ({cc})" for name, cc, _ in missing)
    return Finding(
        "arch-not-compiled", "error",
        f"torch {build['version']} has no kernels for {names}",
        (_torch_fact(build), Fact(f"compiled for: {' '.join(arch_list)}", read_from),
         *_gpu_facts(missing)),
        install_fix(report, machine, kb),
        note=note,
    )


def check_cuda_unavailable(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    build = torch_build(report)
    cuda = _dynamic(report).get("cuda") or {}
    if build is None or not cuda or build["accelerator"] not in ("cuda", "rocm"):
        return None
    gpus = _nvidia_gpus(machine) if build["accelerator"] == "cuda" else _amd_gpus(machine)
    if not gpus or cuda.get("available"):
        return None
    facts = [_torch_fact(build), Fact("torch.cuda.is_available() is False", "import torch"),
             *_gpu_facts(gpus)]
    facts.extend(Fact(w.splitlines()[0][:200], "import torch (warning)") for w in cuda.get("warnings") or ())
    visible = (report.get("environ") or {}).get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        facts.append(Fact(f"CUDA_VISIBLE_DEVICES={visible}", "environment"))
    return Finding("gpu-unavailable", "error",
                   "torch cannot use the GPU: torch.cuda.is_available() is False",
                   tuple(facts), ("nvidia-smi", *install_fix(report, machine, kb)),
                   note="the warning above names the cause; nvidia-smi shows whether the driver answers")


def check_device_ops_fail(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    cuda = _dynamic(report).get("cuda") or {}
    failed = []
    for device in cuda.get("devices") or ():
        for what, key in (("matmul", "matmul_error"), ("cuDNN convolution", "conv_error"),
                          ("device query", "error")):
            if device.get(key):
                failed.append(Fact(f"GPU {device.get('index')} {device.get('name') or ''}: {what} failed: "
                                   f"{str(device[key]).splitlines()[-1][:200]}",
                                   "torch_check.py on the device"))
    if not failed:
        return None
    return Finding("gpu-op-fails", "error", f"{len(failed)} operation(s) failed on the GPU",
                   tuple(failed), install_fix(report, machine, kb),
                   note="a matmul or a convolution on the device raised; see the message for the cause")


def check_mps(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    apple = machine.apple
    mps = _dynamic(report).get("mps")
    if not apple or not apple.mps_capable or mps is None:
        return None
    if mps.get("available") and mps.get("op_ok", True):
        return None
    if not mps.get("built"):
        why = "this torch was built without MPS"
    elif not mps.get("available"):
        why = "torch.backends.mps.is_available() is False"
    else:
        why = f"an operation on MPS failed: {mps.get('op_error')}"
    facts = [Fact(why, "import torch"), Fact(f"{apple.chip or 'Apple silicon'}, macOS {apple.macos_version}",
                                            f"machine.apple ({apple.source or 'probe'})")]
    if apple.rosetta:
        facts.append(Fact("this Python is x86_64 under Rosetta: MPS needs an arm64 Python",
                          "machine.apple.rosetta"))
    return Finding("mps-unavailable", "warning", f"MPS cannot be used: {why}", tuple(facts),
                   install_fix(report, machine, kb))


def check_nccl(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    build = torch_build(report)
    cuda = _dynamic(report).get("cuda") or {}
    if build is None or build["accelerator"] != "cuda" or machine.os.system != "linux" or not cuda:
        return None
    if len(_nvidia_gpus(machine)) < 2 or cuda.get("nccl_available"):
        return None
    return Finding("nccl-unavailable", "warning",
                   "NCCL is not available: multi-GPU training (DistributedDataParallel) cannot use it",
                   (_torch_fact(build),
                    Fact("torch.distributed.is_nccl_available() is False", "import torch"),
                    Fact(f"{len(_nvidia_gpus(machine))} GPUs", "machine.nvidia.gpus")),
                   install_fix(report, machine, kb))


def check_tf32(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    dynamic = _dynamic(report)
    tf32 = dynamic.get("tf32") or {}
    build = torch_build(report)
    if not tf32 or "error" in tf32 or build is None or build["accelerator"] != "cuda":
        return None
    devices = (dynamic.get("cuda") or {}).get("devices") or ()
    ccs = [str(d["capability"]) for d in devices if d.get("capability")] or [
        cc for _, cc, _ in _nvidia_gpus(machine) if cc]
    if not any(version_tuple(cc)[:1] >= (8,) for cc in ccs):
        return None  # TF32 exists from Ampere (compute capability 8.0) on
    precision = str(tf32.get("float32_matmul_precision"))
    facts = (Fact(f"torch.backends.cuda.matmul.allow_tf32 = {tf32.get('matmul_allow_tf32')}", "import torch"),
             Fact(f"torch.backends.cudnn.allow_tf32 = {tf32.get('cudnn_allow_tf32')}", "import torch"),
             Fact(f"torch.get_float32_matmul_precision() = {precision!r}", "import torch"))
    if tf32.get("matmul_allow_tf32") or precision in ("high", "medium"):
        return Finding(
            "tf32-matmul-on", "info",
            "float32 matmuls run in TF32: faster, with about 3 significant digits",
            facts,
            note="TF32 keeps float32's range but a 10-bit mantissa (relative error ~1e-3): fine for "
                 "training; for full float32 accuracy put torch.set_float32_matmul_precision('highest') "
                 "at the start of your program",
        )
    return Finding(
        "tf32-matmul-off", "info",
        "float32 matmuls run in full float32 on a GPU with TF32 tensor cores (slower than it could be)",
        facts,
        note="PyTorch's default; convolutions already use TF32 (cudnn.allow_tf32). "
             "torch.set_float32_matmul_precision('high') at the start of your program allows TF32 "
             "for matmuls too: often several times faster float32 training, at ~1e-3 relative error",
    )


# A training step whose GPU is busy less than this is bound by Python and kernel launches.
UNDERUSED_BELOW = 0.30
# Data-center parts: shared cluster GPUs, where an idle one is wasted for other users.
_DATA_CENTER = re.compile(r"\b(Tesla|[ABHL]\d{1,3}[A-Z]?|GB\d{3}|GH\d{3}|T4|V100|P100|P40|K80|"
                          r"Instinct|MI\d{2,3}[A-Z]?)\b")


def _measure(value: Any) -> Optional[float]:
    """A timing field of the snippet's report; anything but a finite non-negative number is absent."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value < float("inf") else None


def _shared_gpu(machine: Machine, names: List[str]) -> List[Fact]:
    """Why the GPU is likely shared with other users: a batch job, or a data-center part."""
    facts = []
    if machine.scheduler is not None:
        job = f" {machine.scheduler.job_id}" if machine.scheduler.job_id else ""
        facts.append(Fact(f"running inside a {machine.scheduler.kind} job{job}", "machine.scheduler"))
    named = sorted({name for name in names if _DATA_CENTER.search(name)})
    if named:
        facts.append(Fact(f"{', '.join(named)}: a data-center GPU", "torch.cuda.get_device_properties"))
    elif machine.nvidia and any(g.mig_mode in ("Enabled", "Disabled") for g in machine.nvidia.gpus):
        facts.append(Fact("the GPUs support MIG: data-center GPUs", "machine.nvidia.gpus (mig_mode)"))
    return facts


def check_gpu_underused(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    """A small model's training step leaves the GPU idle most of the time (launch-bound)."""
    build = torch_build(report)
    cuda = _dynamic(report).get("cuda") or {}
    if build is None or build["accelerator"] not in ("cuda", "rocm") or not isinstance(cuda, dict):
        return None
    devices = cuda.get("devices")
    low = []
    for device in devices if isinstance(devices, list) else ():
        timing = device.get("small_model") if isinstance(device, dict) else None
        if not isinstance(timing, dict):
            continue
        fraction, step, busy = (_measure(timing.get(k)) for k in ("busy_fraction", "step_ms", "gpu_busy_ms"))
        if fraction is not None and step and busy is not None and fraction < UNDERUSED_BELOW:
            low.append((device, timing, fraction, step, busy))
    if not low:
        return None
    names = [str(device.get("name") or "GPU") for device, *_ in low]
    device, timing, fraction, step, busy = min(low, key=lambda row: row[2])
    where = (f"GPU {device.get('index')} ({names[0]})" if len(low) == 1
             else f"{len(low)} GPUs ({', '.join(sorted(set(names)))})")
    percents = sorted(round(row[2] * 100) for row in low)
    busy_text = f"{percents[0]}%" if percents[0] == percents[-1] else f"{percents[0]}-{percents[-1]}%"
    params = _measure(timing.get("params"))
    model = f"a {params / 1e6:.1f}M-parameter MLP" if params else "a small MLP"
    source = f"torch_check.py: CUDA events around the steps on GPU {device.get('index')}"
    batch = timing.get("batch")
    batch = batch if isinstance(batch, int) and not isinstance(batch, bool) and batch > 0 else None
    facts = [Fact(f"{model}, batch {batch or 'size unknown'}, one SGD training step: {step:.2f} ms, "
                  f"the GPU busy {busy:.3f} ms of it ({fraction:.0%})", source)]
    if timing.get("method") == "events":
        facts.append(Fact("that busy time includes the gaps between kernels (no torch.cuda._sleep to "
                          "queue the step): the GPU is idle at least this much", source))
    kernels = _measure(timing.get("kernels_per_step"))
    if kernels:
        facts.append(Fact(f"{kernels:.0f} GPU operations (kernel launches) per step, "
                          f"{busy / kernels * 1000:.0f} µs of GPU time each on average",
                          "torch_check.py: the ATen ops of one step (TorchDispatchMode)"))
    large, large_ms = timing.get("large_batch"), _measure(timing.get("large_batch_step_ms"))
    if large_ms and isinstance(large, int) and batch:
        facts.append(Fact(f"{large // batch}x the batch ({large}) took {large_ms / step:.1f}x the time "
                          f"({large_ms:.2f} ms a step)", source))
    shared = _shared_gpu(machine, names)
    facts.extend(shared)
    idle = f"idle {100 - percents[-1]}% of each step"
    advice = ("batch more work into each step (a larger batch, several models at once), cut launch "
              "overhead with CUDA graphs (torch.compile(model, mode='reduce-overhead')), or run a "
              "model this small on the CPU")
    fix: Tuple[str, ...] = ()
    if shared:
        if any("MIG" in name for name in names):
            smaller = "This is already a MIG slice: a smaller slice, or MPS, may do. "
        else:
            smaller = ("Ask for a MIG slice or a smaller GPU instead (Slurm: --gres=gpu:<mig-profile>:1, "
                       "e.g. 1g.10gb, as `sinfo` lists them), or share the GPU through MPS. ")
        note = (f"a small model leaves this GPU {idle}: a whole GPU held by a job like this is wasted, "
                f"idle while other users wait for one. {smaller}Or {advice}")
        if machine.scheduler is not None and machine.scheduler.kind == "slurm":
            fix = ("sinfo -h -o '%P %G'  # the partitions and GPU types (MIG slices) this cluster offers",)
    else:
        note = (f"a small model leaves this GPU {idle}, waiting for Python and kernel launches, not "
                f"for compute. If your model is this small, {advice}")
    return Finding(
        "gpu-underused", "warning" if shared else "info",
        f"a small model keeps {where} busy only {busy_text} of each training step",
        tuple(facts), fix, note=note,
    )


# --- the environment around torch ------------------------------------------------------------
def check_two_torch_installs(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    conda = [r for r in report.get("conda") or () if r.get("name") == "pytorch"]
    conda_versions = {public_version(str(r.get("version"))) for r in conda}
    # conda writes INSTALLER=conda into the dist-info of its own pytorch; older builds wrote none.
    pip = [i for i in report.get("torch_installs") or () if i.get("source") != "conda"
           and not (i.get("source") == "unknown" and public_version(str(i.get("version"))) in conda_versions)]
    if len(pip) + len(conda) < 2:
        return None
    python = quoted(python_of(report))
    facts = [Fact(f"torch {i['version']} installed by {i['source']} in {i['location']}", str(i["metadata"]))
             for i in pip]
    facts.extend(Fact(f"conda package pytorch {r['version']} ({r['build']})", str(r["file"])) for r in conda)
    torch = report.get("torch") or {}
    if torch.get("path"):
        facts.append(Fact(f"`import torch` loads {torch['path']}", "sys.path order"))
    fix: List[str] = [f"{python} -m pip uninstall -y torch" for _ in pip]
    prefix = (report.get("python") or {}).get("conda_prefix")
    if conda and prefix:
        fix.append(f"conda remove -p {quoted(str(prefix))} --force -y pytorch")
    fix.extend(install_fix(report, machine, kb))
    return Finding("two-torch-installs", "error",
                   f"{len(pip) + len(conda)} copies of torch are installed in this environment",
                   tuple(facts), tuple(fix),
                   note="files of one overwrite or shadow the other; uninstall all, then install one")


def check_conda_mutex_cpu(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    records = report.get("conda") or ()
    cpu = [r for r in records if (r.get("name") in ("pytorch-mutex", "_pytorch_select")
                                  and str(r.get("build", "")).startswith("cpu"))
           or r.get("name") == "cpuonly"
           or (r.get("name") == "pytorch" and (str(r.get("build", "")).startswith("cpu")
                                               or "_cpu_" in str(r.get("build", ""))))]
    if not cpu or not (_nvidia_gpus(machine) or _amd_gpus(machine)):
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
        + tuple(_gpu_facts(_nvidia_gpus(machine) or _amd_gpus(machine))),
        tuple(fix),
        note="pytorch-mutex=*=cpu (or cpuonly) makes every later conda install choose CPU builds",
    )


def check_companion_abi_mismatch(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    build = torch_build(report)
    if build is None or not build["version"]:
        return None
    facts: List[Fact] = []
    for companion in report.get("companions") or ():
        wants, variant, source = companion_built_for(companion)
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
        (_torch_fact(build), *facts), install_fix(report, machine, kb),
        note="compiled extensions fail to load ('undefined symbol', 'operator torchvision::nms does "
             "not exist'); install the companions built for the same torch",
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


def check_cuda_wheels_mismatch(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
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
    python = quoted(python_of(report))
    pins = " ".join(quoted(f"{req.name}{req.specifier}") for req, _ in missing + other)
    return Finding(
        "cuda-wheels-mismatch", "error" if missing else "warning",
        f"{len(missing) + len(other)} of torch's CUDA runtime wheels are missing or of another version",
        (_torch_fact(build), *(fact for _, fact in missing + other)),
        (f"{python} -m pip install --no-deps {pins}",),
        note="torch loads cuDNN, cuBLAS, NCCL... from these wheels; another version gives 'cuDNN "
             "version incompatibility' or undefined symbols, a missing one 'cannot open shared object file'",
    )


def check_library_shadowed(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    build = torch_build(report)
    if build is None or build["accelerator"] != "cuda":
        return None
    provided = set(report.get("cuda_libraries_provided") or ())
    facts = []
    variables = set()
    for entry in report.get("library_dirs") or ():
        clash = sorted(provided.intersection(entry.get("libraries") or ()))
        if clash:
            variables.add(str(entry["variable"]))
            facts.append(Fact(f"{entry['dir']} has {', '.join(clash)}, which torch's own CUDA wheels "
                              f"also provide", f"${entry['variable']}"))
    if not facts:
        return None
    fix = []
    if "LD_LIBRARY_PATH" in variables:
        kept = [d for d in str((report.get("environ") or {}).get("LD_LIBRARY_PATH", "")).split(os.pathsep)
                if d and d not in {e["dir"] for e in report.get("library_dirs") or ()
                                   if provided.intersection(e.get("libraries") or ())}]
        fix.append(f"export LD_LIBRARY_PATH={quoted(os.pathsep.join(kept))}" if kept
                   else "unset LD_LIBRARY_PATH")
    if variables & {"CUDA_HOME", "CUDA_PATH"}:
        fix.append("unset CUDA_HOME CUDA_PATH  # only builds of CUDA extensions need them")
    return Finding(
        "library-shadowed", "warning",
        "CUDA libraries on the library path can be loaded instead of the ones torch was built with",
        (_torch_fact(build), *facts), tuple(fix),
        note="a different cuDNN/NCCL/cuBLAS of the same soname gives 'cuDNN version incompatibility' "
             "or undefined-symbol errors at import or first use",
    )


def check_libstdcxx_too_old(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
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


def check_gpus_hidden(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    visible = (report.get("environ") or {}).get("CUDA_VISIBLE_DEVICES")
    if visible is None or visible.strip() not in ("", "-1") or not _nvidia_gpus(machine):
        return None
    return Finding("gpus-hidden", "warning", f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU from torch",
                   (Fact(f"CUDA_VISIBLE_DEVICES={visible!r}", "environment"),
                    *_gpu_facts(_nvidia_gpus(machine))),
                   ("unset CUDA_VISIBLE_DEVICES",))


def check_guard(report: Report, machine: Machine, kb: Any) -> Optional[Finding]:
    """The guard (``torchsmith guard``): constraints in the prefix that pip must obey."""
    if not report.get("torch"):
        return None
    guard = report.get("guard") or {}
    if guard.get("pip_conf_uses_guard"):
        return _guard_bypassed(report, guard)
    python = quoted(python_of(report))
    prefix = str((report.get("python") or {}).get("prefix") or "")
    if guard.get("guard_file"):
        facts: Tuple[Fact, ...] = (
            Fact("the guard's pins exist", str(guard["guard_file"])),
            Fact("but the environment's pip.conf does not make them a constraint",
                 str(guard.get("pip_conf") or os.path.join(prefix, "pip.conf"))))
        fix: Tuple[str, ...] = (f"torchsmith guard on --python {python}",)
    else:
        facts = (Fact(f"no {os.path.join(prefix, 'torchsmith-guard.txt')}", "inspect_env.py"),)
        fix = (f"torchsmith install --python {python}  # writes the guard, then keeps it on",)
    return Finding("guard-off", "info", "nothing stops a later `pip install` from replacing this torch",
                   facts, fix,
                   note="packages that depend on torch can pull another build (often a CUDA one "
                        "from PyPI) over a working one")


def _guard_bypassed(report: Report, guard: Dict[str, Any]) -> Optional[Finding]:
    """The guard is on, but a setting of this environment switches its constraints off."""
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
             "PIP_CONSTRAINT": f'export PIP_CONSTRAINT="$PIP_CONSTRAINT {guard_file}"',
             "UV_CONSTRAINT": f'export UV_CONSTRAINT="{guard_file}"'}
    fix = tuple(dict.fromkeys(command for name, command in fixes.items()
                              if any(r.startswith(name) for r in reasons)))
    return Finding("guard-bypassed", "warning",
                   "the guard is on, but this environment switches its constraints off",
                   tuple(Fact(reason, "environment") for reason in reasons), fix,
                   note="the held packages (torch, its CUDA wheels) still cannot be uninstalled or "
                        "replaced by pip or uv, but a conflicting install fails late instead of "
                        "resolving around them")


# Worst problems first where severities tie: import failures explain most of what follows.
CHECKS: Tuple[Check, ...] = (
    check_no_torch,
    check_gpu_detection_failed,
    check_torch_import_hangs,
    check_torch_import_fails,
    check_two_torch_installs,
    check_cpu_build_on_gpu_host,
    check_wrong_gpu_build,
    check_driver_too_old,
    check_arch_not_compiled,
    check_gpus_hidden,
    check_cuda_unavailable,
    check_device_ops_fail,
    check_conda_mutex_cpu,
    check_companion_abi_mismatch,
    check_cuda_wheels_mismatch,
    check_libstdcxx_too_old,
    check_library_shadowed,
    check_nccl,
    check_mps,
    check_gpu_build_on_cpu_host,
    check_guard,
    check_tf32,
    check_gpu_underused,
)


def run_checks(report: Report, machine: Machine, kb: Any) -> List[Finding]:
    """Every finding, worst first (stable within a severity)."""
    findings = []
    for check in CHECKS:
        try:
            finding = check(report, machine, kb)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            # A report garbled by an odd environment must not end the whole diagnosis.
            finding = Finding("doctor-check-failed", "warning",
                              f"{check.__name__} could not read the environment report: {exc!r}",
                              (Fact(f"{type(exc).__name__}: {exc}", "torchsmith doctor"),))
        if finding is not None:
            findings.append(finding)
    return sorted(findings, key=lambda f: f.rank)
