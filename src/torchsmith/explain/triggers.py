"""Signatures that fire on an extracted fact, not on a line of text. Pure: no I/O.

A signature's ``extracted`` list names facts of :mod:`.extract` that state its failure however the
text words it: ``gpu:cudaErrorNoKernelImageForDevice`` (an error of the vendor's enum, by name,
code or message), ``gpu:hip:arch`` (any HIP error of that kind), ``library:cudnn`` (a missing
library of that kind), ``symbol:mkl`` (an undefined symbol of that owner), ``compiler:nvcc``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from torchsmith.compat import driver_support
from torchsmith.explain.companionpins import companion_other_torch
from torchsmith.explain.extract.bare import BARE_EVIDENCE
from torchsmith.explain.extract.devices import hides_every_gpu
from torchsmith.explain.extract.gpu import LIBRARY_NAMES
from torchsmith.explain.extract.model import Environment, Extracted
from torchsmith.explain.extract.resolver import host_not_resolved
from torchsmith.explain.optional import optional_dependency
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["TRIGGER", "failing_package", "fired"]

TRIGGER = re.compile(r"^(?:gpu|library|symbol|compiler|env|conda|installer):[\w.-]+(?::[\w-]+)?$")


def _gpu(arguments: List[str], extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """``gpu:NAME`` an error of that name; ``gpu:API:KIND`` one of that kind from that library (``any``:
    every library, every kind but success); ``gpu:any`` any status of an enum (looked up: name, code)."""
    for error in extracted.gpu_errors:
        if len(arguments) == 2:
            api, kind = arguments
            wanted = bool(error.code) if kind == "any" else error.kind == kind
            if not (api == "any" or error.api.startswith(api)) or not wanted:
                continue
        elif arguments[0] == "any":
            if not error.name or not error.code:  # read from the enum, and not its success value
                continue
        elif arguments[0] != error.name:
            continue
        needles = [n for n in (error.name, error.message, error.call) if n]
        facts = {"error": error.name or error.message or "",
                 "vendor_library": LIBRARY_NAMES.get(error.api, error.api)}
        # its code, the vendor's own description, the call an extension's own check named
        for key, value in (("code", error.code), ("meaning", error.summary), ("extension_call", error.call)):
            if value is not None and str(value):
                facts[key] = str(value).rstrip(".")
        return needles, facts
    return None


# Packages whose own loader fails for its own reasons (their signatures say so).
_NOT_EXTENSIONS = frozenset({"torch", "nvidia", "tensorflow", "jax", "jaxlib", "importlib", "ctypes"})

_TORCH_LIBRARY = re.compile(r"^(?:lib)?(?:torch|c10|caffe2|shm)(?:_\w+)?\.(?:so|dll|dylib)")


def failing_package(extracted: Extracted) -> Optional[str]:
    """Whose load failed: the library that asked for a missing one ("libonnxruntime_providers_cuda.so"),
    else the package of the traceback's innermost frame in site-packages."""
    asked = [lib.needed_by for lib in extracted.libraries if lib.needed_by]
    if asked:
        return "torch" if _TORCH_LIBRARY.match(asked[0]) else asked[0]
    packages = [f.package for f in extracted.frames if f.package]
    return packages[-1] if packages else None


def _other_cuda(major: Optional[str], extracted: Extracted) -> Optional[str]:
    """A CUDA the text names (the toolkit, nvcc's release, torch's build) of another major than ``major``."""
    env = extracted.environment
    for cuda in (env.cuda, env.toolchain.get("nvcc"), env.torch_cuda):
        if major and cuda and cuda.split(".")[0] != major.split(".")[0]:
            return cuda
    return None


def _library(arguments: List[str], extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """``library:KIND`` a missing library of that kind; ``:extension`` asked for by a compiled
    extension, ``:torch`` by torch, ``:framework`` by a framework's own loader (torch's, or one that
    names no importer, as TensorFlow's dso_loader logs do); ``:mixed`` of another CUDA major than
    the one the text names;
    ``:incompatible`` found, but of another release than the one asked for; ``:dll`` a Windows DLL."""
    kind, qualifier = arguments[0], (arguments[1:] or [""])[0]
    package = failing_package(extracted)
    extension = package is not None and package not in _NOT_EXTENSIONS
    if qualifier == "extension" and not extension:
        return None  # "extension": loaded by a compiled extension, not by torch
    if qualifier == "torch" and (extension or not extracted.mentions_torch):
        return None  # a cause about torch's own libraries: torch must be in the text
    if qualifier == "framework" and extension:
        return None  # an extension's library: extension-cuda-library-missing's
    wanted = "incompatible" if qualifier == "incompatible" else None
    for library in extracted.libraries:
        if library.kind != kind or library.problem != wanted:
            continue
        if qualifier == "dll" and not library.soname.lower().endswith(".dll"):
            continue
        if qualifier == "mixed":
            other = _other_cuda(library.major, extracted)
            torch_cuda = extracted.environment.torch_cuda
            if other is None or (torch_cuda and library.major
                                 and torch_cuda.split(".")[0] == library.major.split(".")[0]):
                continue  # torch's own CUDA is the library's major: the installed torch provides it
            return [library.soname], {"lib": library.soname, "toolkit_cuda": other}
        return [library.soname], {"lib": library.soname}
    return None


def _symbol(owner: str, extracted: Extracted,
            loaded: bool = False) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """``symbol:OWNER``: an undefined symbol of that owner; ``symbol:OWNER:loaded``: one the loader
    reported for a library it loaded (not a linker's "undefined reference" while building)."""
    for symbol in extracted.symbols:
        if symbol.owner_kind == owner and (symbol.library or not loaded):
            facts = {"symbol": symbol.symbol}
            if symbol.version:
                facts["version"] = symbol.version
            return [symbol.symbol], facts
    return None


def _compiler(tool: str, extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    for message in extracted.compiler:
        if message.tool == tool:
            return [message.text], {}
    return None


# torch's compiled core missing, as Python says it ("No module named 'torch._C'", "name '_C' is
# not defined" from torch/__init__.py before 0.4, "cannot import name '_C'")
_NO_TORCH_C = re.compile(r"No module named '?torch\._C'?|name '_C' is not defined|cannot import name '_C'")
# An installed package lives under site-/dist-packages, an egg or a frozen app's bundle.
_INSTALLED = re.compile(r"(?:site|dist)-packages|\.egg\b|[\\/]_MEI\w+[\\/]|\.zip[\\/]", re.IGNORECASE)


def _source_tree(extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """torch imported from a directory that is not an installation (its torch/__init__.py is in
    no site-packages) and its compiled core not there: a source checkout shadows the install."""
    if not any(_NO_TORCH_C.search(e.message) for e in extracted.exceptions):
        return None
    for frame in extracted.frames:
        path = frame.path.replace("\\", "/")
        # the checkout's own directory (pytorch, pytorch-master, build/pytorch): an install outside
        # site-packages (an AWS Lambda bundle's /var/task, pip --target) is no source tree
        checkout = path[:-len("/torch/__init__.py")].rsplit("/", 1)[-1]
        if (path.endswith("/torch/__init__.py") and not _INSTALLED.search(path)
                and re.search(r"pytorch", checkout, re.IGNORECASE)):
            return [frame.path], {"path": frame.path}
    return None


_TORCH_PACKAGE = re.compile(r"^(?:py)?torch(?:vision|audio|text)?(?:-cpu|-gpu)?(?![\w.-])", re.IGNORECASE)


def _no_wheel_for_python(extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """pip on a 32-bit Python, asked for torch: no wheel exists (it finds none, or builds the
    placeholder sdist)."""
    if extracted.environment.machine not in ("x86", "armv7l"):
        return None
    wanted = extracted.not_found + extracted.source_builds
    torch = next((w for w in wanted if _TORCH_PACKAGE.match(w)), None)
    if torch is None:
        return None
    return [torch], {"requirement": torch}


def named_capabilities(env: Environment, kb: Optional[KnowledgeBase]) -> List[Tuple[str, str]]:
    """(GPU as written, compute capability) of every NVIDIA GPU the text names whose capability the
    data knows: read through the GPU data (extract.gpunames), or a name the pattern found that the
    data's lookup knows. A spelling several rows share with other capabilities gives none."""
    found = [(gpu.name, gpu.capability) for gpu in env.gpu_models if gpu.capability]
    read = {gpu.name for gpu in env.gpu_models}
    if kb is not None:
        for name in env.gpus:
            if name in read:
                continue
            # "A4000" is NVIDIA's "RTX A4000" (the workstation cards carry RTX in their full name)
            model = kb.gpu_by_name(name) or kb.gpu_by_name(f"RTX {name}")
            if model is not None:
                found.append((name, model.compute_capability))
    return found


def _capabilities(extracted: Extracted, kb: Optional[KnowledgeBase]) -> List[Tuple[str, Tuple[int, int]]]:
    """(GPU, compute capability) of the GPUs the text states or names (names through the data)."""
    env = extracted.environment
    found = [("GPU", env.capability)] if env.capability else []
    found.extend(named_capabilities(env, kb))
    out = []
    for name, cc in found:
        parts = cc.split(".")
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            out.append((name, (int(parts[0]), int(parts[1]))))
    return out


def _bf16_unsupported(extracted: Extracted, kb: Optional[KnowledgeBase],
                      gpu_shown: bool) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """cuBLAS / cuDNN refuse a call on bfloat16 data as unsupported (or absent from the
    architecture): bf16 math needs compute capability 8.0. ``gpu_shown``: a GPU older than that is
    shown (the cause); otherwise no GPU's capability is shown (the refusal, whose causes differ).
    Neither when the GPU shown has 8.0."""
    if "bf16" not in extracted.dtypes:
        return None
    refused = next((e for e in extracted.gpu_errors
                    if e.api in ("cublas", "cudnn") and e.kind in ("unsupported", "arch")), None)
    shown = _capabilities(extracted, kb)
    if refused is None or any(cc >= (8, 0) for _, cc in shown) or bool(shown) != gpu_shown:
        return None
    facts = {"error": refused.name or ""}
    if shown:
        name, (major, minor) = shown[0]
        facts["gpu_name"], facts["capability"] = name, f"{major}.{minor}"
    return [refused.name or ""], facts


# transformers' own refusals (training_args.py __post_init__), raised when is_torch_bf16_gpu_available()
# or is_torch_tf32_available() (utils/import_utils.py) is False: a GPU below 8.0, no CUDA device, a
# torch older than 1.10/1.7 or built for CUDA before 11. Which one, only a GPU the text shows can tell.
_SETUP_REFUSED = {"bf16": "Your setup doesn't support bf16/gpu",
                  "tf32": "--tf32 requires Ampere or a newer GPU"}


def _setup_refused_on_older_gpu(extracted: Extracted, kb: Optional[KnowledgeBase], dtype: str
                                ) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """transformers refused bf16 or TF32 for this setup, and every GPU the text shows is older than
    Ampere (compute capability below 8.0): that GPU is the cause."""
    words = _SETUP_REFUSED[dtype]
    if not any(words in e.message for e in extracted.exceptions):
        return None
    shown = _capabilities(extracted, kb)
    if not shown or any(cc >= (8, 0) for _, cc in shown):
        return None
    name, (major, minor) = shown[0]
    facts = {"gpu_name": name, "capability": f"{major}.{minor}"}
    if dtype == "bf16":  # transformers asks torch.cuda.is_bf16_supported() (contradictions: bf16_emulated)
        facts["bf16_check"] = words
    return [words], facts


def _no_error(extracted: Extracted) -> bool:
    """The text reports a behaviour, not a failure: no exception ended it, no GPU error."""
    return not extracted.gpu_errors and not any(
        e.type.endswith(("Error", "Exception", "Failure")) for e in extracted.exceptions)


def _tf32(extracted: Extracted, kb: Optional[KnowledgeBase]) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """float32 results that differ from another device or the expected value, on a GPU of compute
    capability 8.0 or newer (Ampere on), where cuBLAS/cuDNN may compute float32 in TF32: not when
    the numbers vary for another reason (the same run repeated, a compiler's kernels) or the text
    is about float16/bfloat16."""
    said = extracted.symptoms
    if "discrepancy" not in said or "other-variation" in said or "fp16" in said or extracted.dtypes:
        return None
    if not _no_error(extracted) or _matmul_without_tf32(extracted):
        return None
    newer = tf32_gpu(extracted, kb)
    return ([newer], {"gpu": newer}) if newer else None


def _matmul_without_tf32(extracted: Extracted) -> bool:
    """Only float32 matrix products, on a torch (1.12 on) that runs them in full float32 unless told
    otherwise, and nothing in the text tells it otherwise (torch.backends.cuda.matmul.allow_tf32)."""
    said, torch = extracted.symptoms, extracted.environment.torch
    if "matmul-only" not in said or "tf32-enabled" in said or not torch:
        return False
    return version_tuple(torch.split("+")[0]) >= (1, 12)


def tf32_gpu(extracted: Extracted, kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The first GPU the text shows that has TF32 (compute capability 8.0 or newer)."""
    return next((name for name, cc in _capabilities(extracted, kb) if cc >= (8, 0)), None)


def _fp16_overflow(extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """NaN or inf values in a run that uses float16, without an error: float16's range."""
    if {"nan", "fp16"} <= set(extracted.symptoms) and _no_error(extracted):
        return ["NaN"], {}
    return None


def _x86_python_on_apple_chip(extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """pip's listing shows an x86_64 macOS Python (extract.indexes) on a Mac whose chip the text
    names as Apple silicon: the Python runs under Rosetta."""
    chip = extracted.environment.chip
    listing = next((e for e in extracted.installer_errors if e.kind == "listing-macos-x86_64"), None)
    if chip is None or listing is None:
        return None
    return ["(from versions:", chip], {"why": f"{listing.meaning}; the Mac's chip is Apple {chip} (arm64)"}


# The runtime's and the driver API's status for a driver older than the runtime (error_vocab.json)
_INSUFFICIENT_DRIVER = frozenset({"cudaErrorInsufficientDriver", "CUDA_ERROR_INSUFFICIENT_DRIVER"})


def _driver_below_torch(extracted: Extracted,
                        kb: Optional[KnowledgeBase]) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """The CUDA runtime says the driver is insufficient, and the text shows both the driver (its
    version, or nvidia-smi's CUDA Version) and torch's CUDA build: by the data's driver floors
    (compat.driver_support) that driver is too old for that CUDA even with minor-version
    compatibility. Without both, the family's candidates (no driver reachable) stand."""
    error = next((e for e in extracted.gpu_errors if e.name in _INSUFFICIENT_DRIVER), None)
    env = extracted.environment
    if error is None or kb is None or not env.torch_cuda or not (env.driver or env.driver_cuda):
        return None
    system = "windows" if env.platform in ("windows", "wsl") else "linux"
    cuda = env.torch_cuda
    support = driver_support(kb.cuda_release(cuda), cuda, system, env.driver, env.driver_cuda)
    if support.mode != "too-old":
        return None
    have = (kb.driver_max_cuda(env.driver, system) if env.driver else None) or env.driver_cuda
    return [error.message or error.name or "insufficient"], {"driver_cuda": have or "an older CUDA"}


def _visible_devices_hide(extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """CUDA is unavailable (torch says so, or the runtime finds no device) and the text sets
    CUDA_VISIBLE_DEVICES to a value that leaves no GPU of this machine visible."""
    env = extracted.environment
    unavailable = {"cuda-unavailable", "no-gpu-visible"} & set(extracted.symptoms) or any(
        e.name in ("cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE") for e in extracted.gpu_errors)
    if env.visible_devices is None or not unavailable:
        return None
    why = hides_every_gpu(env.visible_devices, env.gpu_count)
    if why is None:
        return None
    return ["CUDA_VISIBLE_DEVICES"], {"visible": env.visible_devices, "why": why}


def _jetson_cuda_unavailable(extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """torch says CUDA is unavailable (not that a CUDA build found no device), or the text shows a
    CPU-only torch build (+cpu), on a machine the text shows to be a Jetson: its JetPack / L4T release
    or L4T kernel, or a Jetson module by name."""
    env = extracted.environment
    unavailable = "cuda-unavailable" in extracted.symptoms or env.torch_cpu_only is True
    if not unavailable or "no-gpu-visible" in extracted.symptoms:
        return None
    board = env.jetson or next((gpu for gpu in env.gpus if "jetson" in gpu.lower()), None)
    return ([board], {}) if board else None


_NO_DEVICE = frozenset({"cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE", "NVML_ERROR_DRIVER_NOT_LOADED"})


def _scheduler_no_gpu(extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """The text runs under a batch scheduler (a Slurm launch) and the job sees no GPU: torch says
    CUDA is unavailable, CUDA finds no device, or nvidia-smi reaches no driver."""
    scheduler = extracted.environment.scheduler
    unavailable = {"cuda-unavailable", "no-gpu-visible"} & set(extracted.symptoms) or any(
        e.name in _NO_DEVICE for e in extracted.gpu_errors)
    if scheduler is None or not unavailable:
        return None
    return ["srun", "sbatch", "#SBATCH", "salloc", "SLURM_JOB_ID"], {}


# The unit NVIDIA's Fabric Manager runs as (the nvidia-fabricmanager package; Fabric Manager user guide).
_FABRIC_MANAGER = "nvidia-fabricmanager.service"

# GPUs no NVSwitch baseboard carries: consumer and workstation cards, PCIe-only data-centre parts
# (Fabric Manager user guide: NVSwitch systems are DGX/HGX A100, H100, H200, B200 and later)
_NO_NVSWITCH = re.compile(
    r"GeForce|\bRTX\b|Quadro|TITAN|PCIe|\b(?:A2|A10G?|A16|A30|A40|L4|L20|L40S?|T4|P4|P40)\b", re.IGNORECASE)


_NOT_READY = ("cudaErrorSystemNotReady", "CUDA_ERROR_SYSTEM_NOT_READY")


def _cuda_said_otherwise(extracted: Extracted) -> bool:
    """CUDA reported another status than "system not ready" (with Fabric Manager down, an NVSwitch
    system fails CUDA's initialisation with that one), or ran work: torch's allocator out of memory."""
    other = any(e.api.startswith("cuda") and e.name and e.name not in _NOT_READY
                for e in extracted.gpu_errors)
    return other or any("CUDA out of memory. Tried to allocate" in e.message for e in extracted.exceptions)


def _fabric_manager_down(extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """systemctl shows the Fabric Manager's unit on this machine, and not running: the package is
    installed (an NVSwitch system) and its service failed or was stopped. Not where the GPUs the
    text names are parts no NVSwitch system carries (the package installed on another machine, whose
    Fabric Manager fails for want of NVSwitches), nor where CUDA said something else."""
    state = extracted.environment.services.get(_FABRIC_MANAGER)
    if state is None or state.startswith(("active", "activating", "reloading")):
        return None
    gpus = extracted.environment.gpus
    if (gpus and all(_NO_NVSWITCH.search(gpu) for gpu in gpus)) or _cuda_said_otherwise(extracted):
        return None
    why = f"systemctl shows {_FABRIC_MANAGER} {state}: it is installed here and not running"
    what = "the installed Fabric Manager unit shows that this machine is one"
    return [_FABRIC_MANAGER], {"why": why, "what": what}


# What a report says that proves a cause by itself (extract.said), or a bare symptom whose family
# lists its causes (extract.bare), and the words that locate it
_SAID = {"mig-one-device": ("device_count", "MIG"), "uvm-reload-fixed": ("nvidia_uvm", "nvidia-uvm"),
         "interpreters-disagree": (" -c ",), **BARE_EVIDENCE}


def _env(name: str, extracted: Extracted,
         kb: Optional[KnowledgeBase] = None) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """``env:cpu-build``: the text shows a CPU-only torch where CUDA was expected (not on macOS,
    whose builds are CPU/MPS by design). ``env:source-tree``: see :func:`_source_tree`;
    ``env:optional-dependency``: see :func:`.optional.optional_dependency`."""
    env = extracted.environment
    if name == "cpu-build" and env.torch_cpu_only and env.platform != "macos":
        return [env.torch or "cpu"], {}
    if name == "source-tree":
        return _source_tree(extracted)
    if name == "no-wheel-for-python":
        return _no_wheel_for_python(extracted)
    if name in ("bf16-setup-older-gpu", "tf32-setup-older-gpu"):
        return _setup_refused_on_older_gpu(extracted, kb, name[:4])
    if name in ("bf16-unsupported", "bf16-refused"):
        return _bf16_unsupported(extracted, kb, gpu_shown=name == "bf16-unsupported")
    if name == "tf32":
        return _tf32(extracted, kb)
    if name == "fp16-overflow":
        return _fp16_overflow(extracted)
    if name == "x86-python-on-apple-chip":
        return _x86_python_on_apple_chip(extracted)
    if name == "driver-below-torch":
        return _driver_below_torch(extracted, kb)
    if name == "visible-devices-hide":
        return _visible_devices_hide(extracted)
    if name == "jetson-cuda-unavailable":
        return _jetson_cuda_unavailable(extracted)
    if name == "scheduler-no-gpu":
        return _scheduler_no_gpu(extracted)
    if name == "fabric-manager-down":
        return _fabric_manager_down(extracted)
    if name == "host-not-resolved":
        return host_not_resolved(extracted.http)
    if name == "ib-asked-none-found" and extracted.nccl.get("ib_asked"):  # extract.gpu.nccl_facts
        return ["NET/IB : No device found"], {"why": str(extracted.nccl["ib_asked"])}
    if name == "distributed-hang" and "distributed-hang" in extracted.symptoms:
        return ["hang", "deadlock", "stuck", "freez"], {}
    if name == "optional-dependency":
        return optional_dependency(extracted, kb)
    if name == "companion-other-torch":
        return companion_other_torch(extracted, kb)
    if name in _SAID and name in extracted.symptoms:
        return list(_SAID[name]), {}
    return None


def _conda(arguments: List[str], extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """``conda:platform|version|ended[:PACKAGE]``: a package no channel had, for a cause the data proves."""
    for missing in extracted.conda_missing:
        if missing.kind != arguments[0] or arguments[1:] not in ([], [missing.package]):
            continue
        search = extracted.conda_search
        facts = {"package": missing.package + (f" {missing.version}" if missing.version else ""),
                 "why": missing.why, "channels": ", ".join(search.channels) if search else ""}
        if missing.subdir:
            facts["subdir"] = missing.subdir
        if missing.versions:
            facts["versions"] = ", ".join(missing.versions)
        if missing.version:
            facts["what"], facts["requested"] = missing.package, missing.version
        return [missing.package], facts
    return None


def _installer(kind: str, extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """``installer:KIND``: a wheel-variant installer's own message of that kind."""
    for error in extracted.installer_errors:
        if error.kind == kind:
            facts = {"message": error.text, "meaning": error.meaning}
            if error.package:
                facts["package"] = error.package
            return [error.text], facts
    return None


def fired(triggers: Sequence[str], extracted: Extracted,
          kb: Optional[KnowledgeBase] = None) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """(texts to locate the evidence by, facts it carries) of the first trigger that holds."""
    for trigger in triggers:
        kind, _, rest = trigger.partition(":")
        arguments = rest.split(":")
        if kind == "gpu":
            hit = _gpu(arguments, extracted)
        elif kind == "library":
            hit = _library(arguments, extracted)
        elif kind == "env":
            hit = _env(arguments[0], extracted, kb)
        elif kind == "symbol":
            hit = _symbol(arguments[0], extracted, loaded=arguments[1:] == ["loaded"])
        elif kind == "conda":
            hit = _conda(arguments, extracted)
        elif kind == "installer":
            hit = _installer(arguments[0], extracted)
        else:
            hit = _compiler(arguments[0], extracted)
        if hit is not None:
            return hit
    return None
