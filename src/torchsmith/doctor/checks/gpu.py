"""The build against the host: the right accelerator, compiled for its GPUs, working."""

from __future__ import annotations

from typing import List, Optional, Tuple

from torchsmith.compat import NO_JIT, RUNS, gpu_verdict, kernel_for, parse_cc
from torchsmith.doctor.build import (
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
from torchsmith.doctor.checks.driver import driver_mode_of
from torchsmith.doctor.fixes import KbSource, install_fix
from torchsmith.doctor.model import Fact, Finding
from torchsmith.machine import Machine


def check_cpu_build_on_gpu_host(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    build = torch_build(report)
    if build is None or build["accelerator"] != "cpu":
        return None
    gpus = nvidia_gpus(machine) or amd_gpus(machine)
    if not gpus:
        return None
    kind = "NVIDIA" if nvidia_gpus(machine) else "AMD"
    return Finding(
        "cpu-build-on-gpu-host", "error",
        f"torch {build['version']} is a CPU-only build, but this host has {len(gpus)} {kind} GPU(s)",
        (torch_fact(build), *gpu_facts(gpus)),
        install_fix(report, machine, kb),
        note="torch.cuda.is_available() is False with this build; every tensor stays on the CPU",
    )


def check_wrong_gpu_build(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    build = torch_build(report)
    if build is None:
        return None
    nvidia, amd = nvidia_gpus(machine), amd_gpus(machine)
    if build["accelerator"] == "cuda" and amd and not nvidia:
        gpus, what = amd, "a CUDA build, but this host's GPUs are AMD (ROCm)"
    elif build["accelerator"] == "rocm" and nvidia and not amd:
        gpus, what = nvidia, "a ROCm build, but this host's GPUs are NVIDIA (CUDA)"
    else:
        return None
    return Finding("wrong-gpu-build", "error", f"torch {build['version']} is {what}",
                   (torch_fact(build), *gpu_facts(gpus)), install_fix(report, machine, kb))


def check_gpu_detection_failed(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    """nvidia-smi/NVML failed: "no GPU found" would be a guess, so say what failed."""
    if (machine.nvidia is not None and machine.nvidia.gpus) or (machine.nvidia is None and not machine.notes):
        return None  # GPUs found, or nothing failed: not worth importing the planner (~40 ms)
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


def check_gpu_build_on_cpu_host(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    build = torch_build(report)
    if build is None or build["accelerator"] not in ("cuda", "rocm") or build["jetson"]:
        return None
    if nvidia_gpus(machine) or amd_gpus(machine) or machine.os.system == "macos":
        return None
    if machine.nvidia and machine.nvidia.gpus:
        return None  # GPUs CUDA_VISIBLE_DEVICES hides: check_gpus_hidden says so
    from torchsmith.plan.detection import detection_failure

    if detection_failure(machine) is not None:
        return None  # not "no GPU": check_gpu_detection_failed says what failed
    wheels = report.get("nvidia_wheels") or ()
    facts = [torch_fact(build), Fact("no NVIDIA or AMD GPU found", "machine (probe)")]
    if wheels:
        facts.append(Fact(f"{len(wheels)} nvidia-* CUDA runtime wheels installed beside it",
                          "inspect_env.py (site-packages)"))
    return Finding(
        "gpu-build-on-cpu-host", "info",
        f"torch {build['version']} is a {build['accelerator'].upper()} build on a host without a GPU",
        tuple(facts), install_fix(report, machine, kb),
        note="it runs on the CPU, but carries gigabytes of GPU libraries; a CPU build is smaller",
    )


def _verdict(capability: str, arch_list: List[str], integrated: bool, driver_mode: str) -> str:
    """runs | no-kernel | no-jit for one GPU and ``torch.cuda.get_arch_list()`` (the rule: compat)."""
    cc = parse_cc(capability)
    if cc is None:
        return RUNS  # an unreadable capability proves nothing
    return gpu_verdict(kernel_for(cc, arch_list, integrated=integrated), driver_mode)


def _compiled_for(report: Report) -> Tuple[List[str], str]:
    """torch's arch list and where it was read: from the import, else the library's fatbin."""
    cuda = dynamic_of(report).get("cuda") or {}
    if cuda.get("arch_list"):
        return [str(a) for a in cuda["arch_list"]], "torch.cuda.get_arch_list()"
    kernels = report.get("kernels") or {}
    if kernels.get("sass") or kernels.get("ptx"):
        return ([str(a) for a in (*kernels.get("sass", ()), *kernels.get("ptx", ()))],
                f"fatbin headers of {kernels.get('file')}")
    return [], ""


def check_arch_not_compiled(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    build = torch_build(report)
    cuda = dynamic_of(report).get("cuda") or {}
    arch_list, read_from = _compiled_for(report)
    if build is None or not arch_list or build["accelerator"] not in ("cuda", "rocm"):
        return None
    devices = [d for d in cuda.get("devices") or () if d.get("capability")]
    note = "CUDA errors with 'no kernel image is available for execution on the device'"
    if build["accelerator"] == "rocm":
        gpus = ([(str(d.get("name")), str(d.get("gcn_arch") or "").split(":")[0], "torch.cuda device")
                 for d in devices if d.get("gcn_arch")] or amd_gpus(machine))
        missing = [g for g in gpus if g[1] and g[1] not in arch_list]
        if missing and machine.rocm and machine.rocm.hsa_override_gfx_version:
            return None  # HSA_OVERRIDE_GFX_VERSION makes the GPU load another gfx's kernels
    else:
        gpus = ([(str(d.get("name")), str(d["capability"]), "torch.cuda.get_device_properties")
                 for d in devices] or nvidia_gpus(machine))
        integrated, mode = machine.jetson is not None, driver_mode_of(build, machine, kb)
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
        (torch_fact(build), Fact(f"compiled for: {' '.join(arch_list)}", read_from),
         *gpu_facts(missing)),
        install_fix(report, machine, kb),
        note=note,
    )


def check_cuda_unavailable(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    build = torch_build(report)
    cuda = dynamic_of(report).get("cuda") or {}
    if build is None or not cuda or build["accelerator"] not in ("cuda", "rocm"):
        return None
    gpus = nvidia_gpus(machine) if build["accelerator"] == "cuda" else amd_gpus(machine)
    if not gpus or cuda.get("available"):
        return None
    facts = [torch_fact(build), Fact("torch.cuda.is_available() is False", "import torch"),
             *gpu_facts(gpus)]
    facts.extend(Fact(w.splitlines()[0][:200], "import torch (warning)") for w in cuda.get("warnings") or ())
    visible = (report.get("environ") or {}).get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        facts.append(Fact(f"CUDA_VISIBLE_DEVICES={visible}", "environment"))
    return Finding("gpu-unavailable", "error",
                   "torch cannot use the GPU: torch.cuda.is_available() is False",
                   tuple(facts), ("nvidia-smi", *install_fix(report, machine, kb)),
                   note="the warning above names the cause; nvidia-smi shows whether the driver answers")


def check_device_ops_fail(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    cuda = dynamic_of(report).get("cuda") or {}
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


def check_mps(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    apple = machine.apple
    mps = dynamic_of(report).get("mps")
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


def check_nccl(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    build = torch_build(report)
    cuda = dynamic_of(report).get("cuda") or {}
    if build is None or build["accelerator"] != "cuda" or machine.os.system != "linux" or not cuda:
        return None
    if len(nvidia_gpus(machine)) < 2 or cuda.get("nccl_available"):
        return None
    return Finding("nccl-unavailable", "warning",
                   "NCCL is not available: multi-GPU training (DistributedDataParallel) cannot use it",
                   (torch_fact(build),
                    Fact("torch.distributed.is_nccl_available() is False", "import torch"),
                    Fact(f"{len(nvidia_gpus(machine))} GPUs", "machine.nvidia.gpus")),
                   install_fix(report, machine, kb))


def check_tf32(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    dynamic = dynamic_of(report)
    tf32 = dynamic.get("tf32") or {}
    build = torch_build(report)
    if not tf32 or "error" in tf32 or build is None or build["accelerator"] != "cuda":
        return None
    devices = (dynamic.get("cuda") or {}).get("devices") or ()
    ccs = [str(d["capability"]) for d in devices if d.get("capability")] or [
        cc for _, cc, _ in nvidia_gpus(machine) if cc]
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
