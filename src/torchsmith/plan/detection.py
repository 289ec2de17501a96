"""A failed GPU detection is not "no GPU": tell them apart.

When nvidia-smi errors, hangs or prints garbage, the probe finds no GPU but leaves notes saying
why. Planning a CPU build then would silently throw the GPU away, so ``plan`` stops with the
reason and the flags that state the facts instead, and ``doctor`` reports the same.
"""

from __future__ import annotations

from typing import Optional

from torchsmith.machine import Machine

__all__ = ["GPU_DETECTION_FAILED", "detection_failure"]

GPU_DETECTION_FAILED = "gpu-detection-failed"
# Probe sources whose trouble means "there may be an NVIDIA GPU we could not read".
_NVIDIA_SOURCES = ("nvml", "nvidia-smi", "nvidia", "cuDriverGetVersion",
                   "/proc/driver/nvidia/version", "/sys/module/nvidia/version")
_NOT_A_FAILURE = ("not found on PATH",)
# Facts the user stated: then detection does not matter.
_STATED = ("gpus", "no-gpu", "driver", "driver-cuda", "jetson", "rocm")


def detection_failure(machine: Machine) -> Optional[str]:
    """Why GPU detection failed on this machine, or None (found, absent, or stated by the user)."""
    if any(fact in machine.overridden for fact in _STATED):
        return None
    if machine.jetson is not None or machine.os.system == "macos":
        return None
    nvidia = machine.nvidia
    if nvidia is not None and nvidia.gpus:
        return None
    problems = [f"{n.source}: {n.problem}" for n in machine.notes
                if n.source in _NVIDIA_SOURCES and not n.problem.endswith(_NOT_A_FAILURE)]
    if nvidia is not None and nvidia.driver_version and not problems:
        problems.append(f"NVIDIA driver {nvidia.driver_version} is loaded but no GPU could be listed")
    if not problems:
        return None
    return "; ".join(dict.fromkeys(problems))
