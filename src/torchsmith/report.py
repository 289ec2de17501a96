"""Plain-text views of a Machine, for people. Pure: text in, text out."""

from __future__ import annotations

from typing import List

from torchsmith.compat import sm_arch
from torchsmith.machine import Machine

__all__ = ["machine_lines"]


def _gib(mib: int) -> str:
    return f"{mib / 1024:.0f} GiB"


def machine_lines(m: Machine) -> List[str]:
    lines: List[str] = []
    os_line = f"{m.platform}"
    if m.os.distro_name:
        os_line += f" · {m.os.distro_name}"
    if m.os.glibc:
        os_line += f" · glibc {m.os.glibc}"
    if m.os.container:
        os_line += f" · in {m.os.container}"
    if m.os.cpu_count:
        os_line += f" · {m.os.cpu_count} CPUs"
    lines.append(f"System   {os_line}")
    py = m.python
    py_line = f"{py.implementation} {py.version}"
    if py.free_threaded:
        py_line += " (free-threaded)"
    env_kind = "conda env" if py.conda_prefix else "venv" if py.virtualenv else "no venv"
    py_line += f" · {env_kind} · {py.executable}"
    lines.append(f"Python   {py_line}")
    lines.extend(_accelerator_lines(m))
    for tk in m.cuda_toolkits:
        lines.append(f"Toolkit  CUDA {tk.version or '?'} at {tk.path}")
    for key, value in sorted(m.env.index_settings.items()):
        tool, path, setting = key.split(" ", 2)
        lines.append(f"Index    {tool} {setting} = {value}  ({path})")
    if m.scheduler:
        lines.append(f"Jobs     {m.scheduler.kind} job {m.scheduler.job_id or ''}".rstrip())
    if m.overridden:
        lines.append(f"Stated   {', '.join(m.overridden)} (given by you, not probed)")
    lines.extend(f"Note     [{n.source}] {n.problem}" for n in m.notes)
    return lines


def _accelerator_lines(m: Machine) -> List[str]:
    """The driver and GPUs: NVIDIA, Jetson, ROCm, Intel, Apple, or none."""
    lines: List[str] = []
    if m.nvidia:
        nv = m.nvidia
        driver = nv.driver_version or "unknown"
        cuda = f" (supports CUDA ≤ {nv.driver_cuda})" if nv.driver_cuda else ""
        src = f"  [{nv.driver_version_source}]" if nv.driver_version_source else ""
        lines.append(f"Driver   NVIDIA {driver}{cuda}{src}")
        for gpu in nv.gpus:
            hidden = nv.visible is not None and gpu.index not in nv.visible
            cc = gpu.arch or "sm_?"
            mem = f", {_gib(gpu.memory_mib)}" if gpu.memory_mib else ""
            mig = ", MIG on" if gpu.mig_mode == "Enabled" else ""
            tail = "  (hidden by CUDA_VISIBLE_DEVICES)" if hidden else ""
            lines.append(f"GPU {gpu.index}    {gpu.name} ({cc}{mem}{mig}){tail}")
    if m.jetson:
        j = m.jetson
        parts = [p for p in (
            f"L4T {j.l4t}" if j.l4t else None,
            f"JetPack {j.jetpack}" if j.jetpack else None,
            f"CUDA {j.cuda}" if j.cuda else None,
            sm_arch(j.compute_capability) if j.compute_capability else None,
        ) if p]
        lines.append(f"Jetson   {j.module or j.model or 'NVIDIA Jetson'} · {' · '.join(parts)}")
    if m.rocm:
        r = m.rocm
        lines.append(f"ROCm     {r.version or 'version unknown'}")
        lines.extend(f"GPU      {g.name} ({g.gfx or 'gfx?'})" for g in r.gpus)
    lines.extend(f"GPU      {g.name} (Intel, XPU)" for g in m.intel_gpus)
    if m.apple:
        a = m.apple
        chip = a.chip or ("Apple silicon" if a.apple_silicon else "Intel Mac")
        extra = " · MPS" if a.mps_capable else ""
        extra += " · Python under Rosetta (x86_64)" if a.rosetta else ""
        lines.append(f"Mac      {chip} · macOS {a.macos_version or '?'}{extra}")
    if not m.has_nvidia_gpu and not m.rocm and not m.intel_gpus and not (m.apple and m.apple.mps_capable):
        lines.append("GPU      none found")
    return lines
