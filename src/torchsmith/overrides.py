"""Facts the user states instead of letting the probe read them.

The same overrides come from flags (``--driver 535.104.05``) or the environment
(``TORCHSMITH_DRIVER=535.104.05``); flags win. As with conda's ``CONDA_OVERRIDE_CUDA``, an
empty variable means "absent" (``TORCHSMITH_DRIVER=`` describes a machine with no driver).
"""

from __future__ import annotations

import re

from torchsmith import TYPE_CHECKING
from torchsmith.described_machine import Overrides, forget_local_facts, state_local_facts
from torchsmith.errors import UsageError
from torchsmith.machine import (
    MAX_GPUS,
    PLATFORMS,
    AmdGpu,
    IntelGpu,
    JetsonInfo,
    Machine,
    NvidiaGpu,
    NvidiaInfo,
    RocmInfo,
)
from torchsmith.records import replace

if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Tuple, Union

    DescribedGpu = Union[NvidiaGpu, AmdGpu, IntelGpu]

__all__ = ["ENV_VARS", "Overrides", "apply_overrides", "overrides_from_env", "parse_described_gpu",
           "parse_gpu_spec"]

# flag destination -> environment variable
ENV_VARS: Dict[str, str] = {
    "platform": "TORCHSMITH_PLATFORM",
    "driver": "TORCHSMITH_DRIVER",
    "driver_cuda": "TORCHSMITH_DRIVER_CUDA",
    "gpus": "TORCHSMITH_GPUS",
    "no_gpu": "TORCHSMITH_NO_GPU",
    "python_version": "TORCHSMITH_PYTHON_VERSION",
    "jetson": "TORCHSMITH_JETSON",
    "rocm_gfx": "TORCHSMITH_ROCM_GFX",
    "rocm_version": "TORCHSMITH_ROCM_VERSION",
    "glibc": "TORCHSMITH_GLIBC",
}
# --gpu nvidia: an NVIDIA GPU whose model (compute capability) is not known.
UNKNOWN_MODEL = "NVIDIA GPU (model not given)"
UNKNOWN_AMD = "AMD GPU (model not given)"
UNKNOWN_INTEL = "Intel GPU (model not given)"

# Patterns as text: re compiles (and caches) one when it is first used; most commands give no
# --gpu or version flag, so they compile none.
_CC = r"^(?:sm_?)?(\d{1,2})\.?(\d)$"
_VERSION = r"^\d{1,9}(\.\d{1,9}){0,3}$"  # 9 digits: no int-string limit to hit


# A product name has letters and a model number ("RTX 3090", "H100", "T4"), unlike "sm_" or a typo.
_PRODUCT = r"(?i)^(?!sm_|compute_)(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9][A-Za-z0-9 ._()/-]{1,60}$"
_OTHER_VENDOR = r"(?i)\b(intel|arc|amd|radeon|instinct|gfx\d+)\b"
# Words that say which vendor a described GPU is from; the product itself is matched at plan
# time against the GPU tables (an AMD product -> its gfx target, an Intel one -> its xpu family).
_AMD = (r"(?i)^(amd|ati)$|\b(amd|radeon|instinct|firepro)\b|\bmi\d{2,3}[a-z]?\b|\brx ?\d{3,4}\b"
        r"|^gfx[0-9a-f]{3,4}$")
_INTEL = r"(?i)\b(intel|arc|iris|uhd|xe|ponte vecchio|battlemage|alchemist|data center gpu max)\b"


def parse_described_gpu(spec: str, index: int = 0) -> DescribedGpu:
    """A ``--gpu`` value of any vendor: an NVIDIA one as :func:`parse_gpu_spec`; ``amd``,
    ``Radeon RX 7900 XTX``, ``MI300X`` or ``gfx1100`` an AMD GPU; ``intel``, ``Arc A770`` or
    ``Data Center GPU Max`` an Intel GPU (model resolved through the data when planning)."""
    text = spec.strip()
    if len(text) <= 80 and re.search(_AMD, text) and not re.search(_INTEL, text):
        gfx = text.lower() if re.match(r"^gfx[0-9a-f]{3,4}$", text, re.IGNORECASE) else None
        bare = text.lower() in ("amd", "ati")
        return AmdGpu(name=UNKNOWN_AMD if bare else text, gfx=gfx,
                      source="override (model not given)" if bare else "override (by name)")
    if len(text) <= 80 and re.search(_INTEL, text):
        bare = text.lower() == "intel"
        return IntelGpu(name=UNKNOWN_INTEL if bare else text,
                        source="override (model not given)" if bare else "override (by name)")
    return parse_gpu_spec(spec, index)


def parse_gpu_spec(spec: str, index: int = 0) -> NvidiaGpu:
    """``8.6``, ``sm_86``, ``86``, ``8.6:RTX 3090``, a product name (``RTX 3090``) or ``nvidia``
    (model unknown) -> an NvidiaGpu."""
    cc_text, _, name = spec.partition(":")
    if cc_text.strip().lower() == "nvidia":
        return NvidiaGpu(index=index, name=name.strip() or UNKNOWN_MODEL, compute_capability=None,
                         source="override (model not given)")
    match = re.match(_CC, cc_text.strip().lower())
    if not match and re.match(_PRODUCT, spec.strip()) and not re.search(_OTHER_VENDOR, spec):
        # A product name ("RTX 3090", "H100"): the GPU table gives its compute capability; a
        # family or unknown name plans for every architecture of the driver's era, and says so.
        return NvidiaGpu(index=index, name=spec.strip(), compute_capability=None,
                         source="override (by name)")
    # Majors run 1..12 today; leave room for the future but refuse nonsense like 99.9.
    if not match or not 1 <= int(match.group(1)) <= 20:
        raise UsageError(
            f"not a compute capability: {cc_text.strip()!r}",
            hint="write it as 8.6, sm_86, 8.6:NAME, a product name (RTX 3090, Radeon RX 7900 XTX, "
                 "Arc A770), or nvidia / amd / intel for a GPU of unknown model",
        )
    cc = f"{int(match.group(1))}.{match.group(2)}"
    from torchsmith.compat import sm_arch  # (here: only a --gpu override needs it)

    return NvidiaGpu(index=index, name=name.strip() or f"GPU {sm_arch(cc)}",
                     compute_capability=cc, source="override")


def _check_version(value: str, what: str) -> str:
    if value and not re.match(_VERSION, value):
        raise UsageError(f"not a {what}: {value[:40]!r}", hint="write it as digits and dots")
    return value


def overrides_from_env(environ: Mapping[str, str]) -> Overrides:
    values: Dict[str, object] = {}
    for key, var in ENV_VARS.items():
        if var not in environ:
            continue
        raw = environ[var].strip()
        if key == "gpus":
            values[key] = tuple(
                parse_described_gpu(s, i) for i, s in enumerate(p for p in raw.split(",") if p.strip())
            )
        elif key == "no_gpu":
            values[key] = raw.lower() not in ("", "0", "false", "no")
        elif key == "rocm_gfx":
            values[key] = tuple(p.strip() for p in raw.split(",") if p.strip())
        else:
            values[key] = raw
    return build_overrides(**values)


def build_overrides(**values: object) -> Overrides:
    """Validate raw override values (from flags or env) into :class:`Overrides`."""
    values = {**values, **_split_vendors(values.get("gpus"))}
    platform = values.get("platform")
    if platform and platform not in PLATFORMS:
        raise UsageError(f"unknown platform {platform!r}", hint="one of: " + ", ".join(PLATFORMS))
    for key, what in (("driver", "driver version"), ("driver_cuda", "CUDA version"),
                      ("python_version", "Python version"), ("jetson", "L4T release"),
                      ("rocm_version", "ROCm version"), ("glibc", "glibc version")):
        value = values.get(key)
        if isinstance(value, str):
            free_threaded = key == "python_version" and value.endswith("t")  # 3.13t
            _check_version(value[:-1] if free_threaded else value, what)
    for key, what in (("gpus", "GPUs"), ("rocm_gfx", "gfx targets")):
        described = values.get(key)
        if isinstance(described, tuple) and len(described) > MAX_GPUS:  # as many as a probe keeps
            raise UsageError(f"{len(described)} {what} described: at most {MAX_GPUS} are planned for",
                             hint="describe one node's GPUs; `torchsmith fleet` plans for many nodes")
    gpu_facts = [key for key in ("gpus", "amd_gpus", "intel_gpus", "driver", "driver_cuda", "jetson",
                                 "rocm_gfx") if values.get(key)]
    if values.get("no_gpu") and gpu_facts:  # which one is meant cannot be guessed
        raise UsageError("--no-gpu contradicts the GPU facts given with it (--gpu, --driver, --jetson, "
                         "--rocm-gfx or their TORCHSMITH_* variables)", hint="give one of them")
    for gfx in values.get("rocm_gfx") or ():  # type: ignore[attr-defined]
        if not re.match(r"^gfx[0-9a-f]{3,4}$", str(gfx)):
            raise UsageError(f"not a gfx target: {str(gfx)[:40]!r}", hint="e.g. gfx1100 or gfx90a")
    return Overrides(**values)  # type: ignore[arg-type]


def _split_vendors(gpus: object) -> Dict[str, object]:
    """``gpus`` of every vendor -> NVIDIA ``gpus``, ``amd_gpus``, ``intel_gpus``."""
    if not isinstance(gpus, tuple):
        return {}
    amd = tuple(g for g in gpus if isinstance(g, AmdGpu))
    intel = tuple(g for g in gpus if isinstance(g, IntelGpu))
    nvidia: Tuple[NvidiaGpu, ...] = tuple(g for g in gpus if isinstance(g, NvidiaGpu))
    if not amd and not intel:
        return {}
    return {"gpus": nvidia or None, "amd_gpus": amd or None, "intel_gpus": intel or None}


def _describes_hardware(overrides: Overrides) -> bool:
    """GPU facts given by hand: perhaps of another machine of this platform, perhaps of this one."""
    return bool(overrides.gpus is not None or overrides.driver or overrides.driver_cuda
                or overrides.rocm_gfx is not None or overrides.jetson or overrides.amd_gpus
                or overrides.intel_gpus)


def apply_overrides(machine: Machine, overrides: Overrides) -> Machine:
    """The machine as the user describes it. Each overridden fact is named in ``overridden``."""
    changed: List[str] = []
    m = machine
    if overrides.platform and overrides.platform != m.platform:
        m = forget_local_facts(m, overrides)
    elif _describes_hardware(overrides):
        m = state_local_facts(m, overrides)
    if overrides.platform:
        system, _, arch = overrides.platform.partition("-")
        wsl = system == "wsl"
        m = replace(m, os=replace(
            m.os, system="linux" if wsl else system, arch=arch, wsl=wsl, source="override"))
        if system != "linux" and not wsl:
            m = replace(m, jetson=None)
        changed.append("platform")
    if overrides.python_version:
        version = overrides.python_version
        free_threaded = version.endswith("t")
        m = replace(m, python=replace(
            m.python, version=version.rstrip("t"), free_threaded=free_threaded, source="override"))
        changed.append("python")
    if overrides.no_gpu:
        m = replace(m, nvidia=None, jetson=None, rocm=None, intel_gpus=())
        changed.append("no-gpu")
    m = _other_vendors(m, overrides, changed)
    nvidia = _nvidia_overridden(m, overrides, changed)
    if nvidia is not m.nvidia:
        m = replace(m, nvidia=nvidia)
    if overrides.glibc is not None:
        m = replace(m, os=replace(m.os, glibc=overrides.glibc or None))
        changed.append("glibc")
    if overrides.jetson:
        os_info = replace(m.os, system="linux", arch="aarch64", wsl=False)
        if not (machine.jetson is not None and machine.jetson.l4t == overrides.jetson):
            # Another machine: its Ubuntu (and glibc) come with its L4T, never from this one.
            os_info = replace(os_info, glibc=overrides.glibc or None, distro=None,
                                          distro_version=None, distro_name=None, kernel=None, container=None)
        m = replace(m, jetson=JetsonInfo(l4t=overrides.jetson, source="override"), os=os_info)
        changed.append("jetson")
    if overrides.rocm_gfx is not None or overrides.rocm_version:
        m = replace(m, rocm=_rocm_overridden(m.rocm, overrides))
        changed.append("rocm")
    if not changed:
        return m
    return replace(m, overridden=tuple(dict.fromkeys((*m.overridden, *changed))))


def _other_vendors(m: Machine, overrides: Overrides, changed: List[str]) -> Machine:
    """``--gpu amd`` / ``--gpu 'Arc A770'``: the machine's GPUs are the ones described, so a
    probed GPU of another vendor is not kept unless described too."""
    if not overrides.amd_gpus and not overrides.intel_gpus:
        return m
    nvidia = m.nvidia if overrides.gpus is not None or overrides.driver else None
    rocm = m.rocm if overrides.amd_gpus is None else replace(
        m.rocm or RocmInfo(source="override"), gpus=overrides.amd_gpus)
    intel = overrides.intel_gpus or ()
    changed.append("gpus")
    return replace(m, nvidia=nvidia, rocm=None if rocm is not None and not rocm.gpus else rocm,
                               intel_gpus=intel)


def _nvidia_overridden(m: Machine, overrides: Overrides, changed: List[str]) -> Optional[NvidiaInfo]:
    """The NVIDIA facts with --driver, --driver-cuda and --gpu applied (each named in ``changed``)."""
    nvidia = m.nvidia
    if overrides.driver is not None:
        if overrides.driver == "":
            nvidia = None
        else:
            nvidia = replace(nvidia or NvidiaInfo(), driver_version=overrides.driver,
                                         driver_version_source="override", driver_cuda=None,
                                         driver_cuda_source="")
        changed.append("driver")
    if overrides.driver_cuda:
        nvidia = replace(nvidia or NvidiaInfo(), driver_cuda=overrides.driver_cuda,
                                     driver_cuda_source="override")
        changed.append("driver-cuda")
    if overrides.gpus is not None:
        nvidia = replace(nvidia or NvidiaInfo(), gpus=overrides.gpus,
                                     gpus_source="override", visible=None)
        changed.append("gpus")
    if (overrides.driver or overrides.driver_cuda) and nvidia is not None and not nvidia.gpus \
            and not overrides.jetson and m.jetson is None:
        # A driver means an NVIDIA GPU is there; its model is simply not known.
        nvidia = replace(nvidia, gpus=(NvidiaGpu(
            index=0, name=UNKNOWN_MODEL, source="assumed: --driver implies an NVIDIA GPU"),),
            gpus_source="assumed from --driver")
        changed.append("gpus")
    return nvidia


def _rocm_overridden(rocm: Optional[RocmInfo], overrides: Overrides) -> RocmInfo:
    rocm = rocm or RocmInfo(source="override")
    if overrides.rocm_gfx is not None:
        rocm = replace(rocm, gpus=tuple(
            AmdGpu(name=f"AMD {g}", gfx=g, source="override") for g in overrides.rocm_gfx))
    if overrides.rocm_version:
        rocm = replace(rocm, version=overrides.rocm_version, version_source="override")
    return rocm

