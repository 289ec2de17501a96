"""Machines for resolver tests, described the way a user would with host overrides."""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence, Tuple

from torchsmith.machine import AppleInfo, IntelGpu, Machine, NvidiaGpu, OsInfo, PythonInfo
from torchsmith.overrides import apply_overrides, build_overrides, parse_described_gpu


def host(platform: str = "linux-x86_64", python: str = "3.11", gpus: Sequence[str] = (),
         driver: Optional[str] = None, driver_cuda: Optional[str] = None,
         jetson: Optional[str] = None, jetson_cc: Optional[str] = None,
         rocm_gfx: Sequence[str] = (), free_threaded: bool = False,
         rosetta: bool = False, visible: Optional[Tuple[int, ...]] = None,
         unknown_gpu: Optional[str] = None, intel: Sequence[str] = (),
         garbled_driver: Optional[str] = None) -> Machine:
    """A machine from overrides: ``host(gpus=["6.1:GTX 1080"], driver="580.65.06")``."""
    system, _, arch = platform.partition("-")
    base = Machine(
        os=OsInfo(system="linux" if system == "wsl" else system, arch=arch, wsl=system == "wsl"),
        python=PythonInfo(version=f"{python}.1", free_threaded=free_threaded),
        intel_gpus=tuple(IntelGpu(name=n) for n in intel),
    )
    if system == "macos":
        base = dataclasses.replace(base, apple=AppleInfo(
            apple_silicon=arch == "arm64" or rosetta, rosetta=rosetta, mps_capable=arch == "arm64"))
    overrides = build_overrides(
        gpus=tuple(parse_described_gpu(s, i) for i, s in enumerate(gpus)) if gpus else None,
        driver=driver, driver_cuda=driver_cuda, jetson=jetson,
        rocm_gfx=tuple(rocm_gfx) or None,
    )
    # The base machine's Python stands for one given with --python: nothing about it is assumed.
    machine = apply_overrides(base, dataclasses.replace(overrides, python_version=python))
    machine = dataclasses.replace(machine, python=base.python)
    if jetson and jetson_cc and machine.jetson is not None:
        machine = dataclasses.replace(machine, jetson=dataclasses.replace(
            machine.jetson, compute_capability=jetson_cc))
    if unknown_gpu is not None:
        assert machine.nvidia is not None, "an unknown GPU needs a driver too"
        extra = NvidiaGpu(index=len(machine.nvidia.gpus), name=unknown_gpu, compute_capability=None)
        machine = dataclasses.replace(machine, nvidia=dataclasses.replace(
            machine.nvidia, gpus=(*machine.nvidia.gpus, extra)))
    if garbled_driver is not None:  # as a broken probe or a hand-edited profile might say
        assert machine.nvidia is not None
        machine = dataclasses.replace(machine, nvidia=dataclasses.replace(
            machine.nvidia, driver_version=garbled_driver))
    if visible is not None:
        assert machine.nvidia is not None
        machine = dataclasses.replace(machine, nvidia=dataclasses.replace(machine.nvidia, visible=visible))
    return machine
