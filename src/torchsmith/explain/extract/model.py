"""What a text states, as values: the shapes the extractors fill. Pure: no I/O."""

from __future__ import annotations

import re
from dataclasses import asdict, field, fields
from typing import Any, Dict, List, Optional, Tuple

from torchsmith.records import dataclass
from torchsmith.refusal.model import Offer

__all__ = [
    "CompilerMessage",
    "CondaSearch",
    "Conflict",
    "Environment",
    "Extracted",
    "Frame",
    "GpuError",
    "HttpFailure",
    "InstallerError",
    "MissingLibrary",
    "MissingPackage",
    "NamedGpu",
    "PyException",
    "UndefinedSymbol",
]


def _compact(value: Any) -> Any:
    """JSON without the empty fields."""
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items()
                if v is not False and v not in (None, "", [], {}, ())}
    if isinstance(value, (list, tuple)):
        return [_compact(v) for v in value]
    return value


@dataclass(frozen=True)
class Frame:
    """A traceback frame's file: which installed package it is in, under which Python."""

    path: str
    package: Optional[str] = None  # the top-level directory under site-packages / dist-packages
    python: Optional[str] = None  # "3.10" from ".../python3.10/site-packages/..."
    code: Optional[str] = None  # the source line Python prints under the frame ("import onnxscript")


@dataclass(frozen=True)
class PyException:
    type: str  # "RuntimeError", "torch.OutOfMemoryError"
    message: str
    packages: Tuple[str, ...] = ()  # the packages of the traceback's frames, outermost first


@dataclass(frozen=True)
class MissingLibrary:
    """A shared library the loader could not open, and who provides it."""

    soname: str
    library: Optional[str] = None  # "CUDA runtime", "cuDNN"
    major: Optional[str] = None  # the soname's version: the CUDA / cuDNN / ROCm major it belongs to
    kind: Optional[str] = (
        None  # cuda | cudnn | nccl | driver | torch | rocm | mkl | openmp | compiler | python
    )
    provider: Optional[str] = None
    pip: Optional[str] = None
    conda: Optional[str] = None
    needed_by: Optional[str] = None  # the library that asked for it (libonnxruntime_providers_cuda.so)
    # None: not found when loading; "incompatible": found, but not a procedure in it (Windows error
    # 127): another release than the one asked for; "link": not found when linking a build;
    # "unreadable": found, but the loader could not read it (a directory, another ELF class, cut short)
    problem: Optional[str] = None


@dataclass(frozen=True)
class UndefinedSymbol:
    symbol: str
    demangled: Optional[str] = None
    owner: Optional[str] = None  # whose symbol: "PyTorch (c10)", "CUDA runtime", "NCCL"
    owner_kind: Optional[str] = None
    library: Optional[str] = None  # the library that asked for it
    version: Optional[str] = None  # the symbol version it needs: "GLIBC_2.35", "GLIBCXX_3.4.29"


@dataclass(frozen=True)
class GpuError:
    api: str  # cuda | cuda-driver | hip | nccl | cublas | cudnn
    name: Optional[str] = None
    code: Optional[int] = None
    message: Optional[str] = None
    kind: Optional[str] = None  # arch | driver | memory | device | kernel | system | network | ...
    meaning: Optional[str] = None
    stage: Optional[str] = None  # "init": reported by CUDA's initialisation (cudaGetDeviceCount)
    call: Optional[str] = None  # the call a compiled extension's own check names ("cudaLaunchKernel")

    @property
    def summary(self) -> Optional[str]:
        """The meaning's first sentence: a vendor header's description often runs on for several."""
        return re.split(r"(?<=[a-z)])\. ", self.meaning)[0] if self.meaning else None


@dataclass(frozen=True)
class CompilerMessage:
    tool: str  # nvcc | ptxas | gcc | g++ | clang | hipcc | cl | cicc | ld
    text: str
    target: Optional[str] = None  # "compute_120", "sm_90", "gfx1100"
    missing_header: Optional[str] = None


@dataclass(frozen=True)
class Conflict:
    """One requirement a resolver reported: ``who`` needs ``wants`` (``who`` "user": you asked;
    "installed": what the environment has), as said, and read (torchsmith.refusal.Requirement)."""

    installer: str  # pip | uv | conda | rattler
    who: str
    wants: str
    who_name: str = ""  # canonical name of who needs it, "" for the request
    who_version: str = ""
    what: str = ""  # canonical name of what is needed
    spec: str = ""  # "==1.12.0", ">=1.8,<2.0"; the installed version for "installed"
    markers: str = ""


@dataclass(frozen=True)
class CondaSearch:
    """What a conda PackagesNotFoundError says was searched."""

    channels: Tuple[str, ...]  # "pytorch", "nvidia", "pkgs/main"
    subdirs: Tuple[str, ...]  # the platforms solved for: "win-32", "osx-arm64" (noarch left out)
    listed: bool  # the text holds conda's "Current channels:" list
    checks: Tuple[str, ...] = ()  # commands that tell which channel and platform has each package
    # the channels searched on anaconda.org itself (its URL, or a bare name): not a mirror's copy
    hosted: Tuple[str, ...] = ()


@dataclass(frozen=True)
class MissingPackage:
    """A package no searched channel had, and the cause the data proves (see extract.channels)."""

    package: str
    version: Optional[str]
    kind: str  # platform | version | ended (newer than the channel's last: it stopped publishing)
    why: str
    subdir: Optional[str] = None  # platform: the subdir its publisher never builds for
    versions: Tuple[str, ...] = ()  # version: the versions that exist
    sources: Tuple[str, ...] = ()


@dataclass(frozen=True)
class InstallerError:
    """A wheel-variant installer's own message (uv, variantlib), from the vocabulary; or what the
    data proves of a torch build an installer did not find (extract.indexes)."""

    installer: str  # uv | variantlib | index
    # no-variant | preview-off | lock | pylock | provider | metadata | build-unpublished | index-not-given
    kind: str
    text: str
    meaning: str
    package: Optional[str] = None
    sources: Tuple[str, ...] = ()


@dataclass(frozen=True)
class HttpFailure:
    url: Optional[str]
    status: Optional[str]  # "404", "403", "000" (conda: no connection), "ssl", "dns"
    text: str
    host: Optional[str] = None  # "dns": the host name that did not resolve, where the text shows it


@dataclass(frozen=True)
class NamedGpu:
    """A GPU the text names, read through the GPU rows of the data (extract.gpunames)."""

    name: str  # as the text writes it: "RTX 5070", "Jetson Thor"
    vendor: str  # nvidia | amd | unknown
    model: Optional[str] = None  # the data's row; None when the spelling fits several rows
    capability: Optional[str] = None  # NVIDIA: the compute capability ("12.0"); None where rows differ
    gfx: Optional[str] = None  # AMD: the gfx target ("gfx942")
    jetson: bool = False  # an integrated Jetson GPU


@dataclass
class Environment:
    """The machine and the stack the text itself names."""

    gpus: List[str] = field(default_factory=list)  # every GPU name, as written
    gpu_models: List[NamedGpu] = field(default_factory=list)  # the names the GPU data knows
    capability: Optional[str] = None  # "8.6"
    arch_list: List[str] = field(default_factory=list)  # the build's sm_ list as the text prints it
    driver: Optional[str] = None
    driver_cuda: Optional[str] = None  # the highest CUDA the driver supports (nvidia-smi)
    cuda: Optional[str] = None  # the CUDA a build or toolkit names
    torch: Optional[str] = None
    torch_cuda: Optional[str] = None  # "12.1" from a +cu121 / torch.version.cuda
    torch_cpu_only: Optional[bool] = None  # the text shows a CPU-only build (+cpu, torch.version.cuda None)
    python: Optional[str] = None
    platform: Optional[str] = None  # linux | windows | macos | wsl
    machine: Optional[str] = None  # x86_64 | aarch64 | arm64 | x86 (32-bit) | armv7l
    chip: Optional[str] = None  # an Apple silicon chip the text names ("M3 Max"), whatever Python's machine
    jetson: Optional[str] = None  # the L4T / JetPack / nv build the text names
    jetson_torch_image: Optional[str] = None  # NVIDIA's torch image for the board the text runs (l4t-pytorch)
    rocm: Optional[str] = None
    gfx: Optional[str] = None
    macos: Optional[str] = None  # the macOS release the text shows ("12.7.6")
    ffmpeg: Optional[str] = None  # the FFmpeg release ffmpeg's own banner shows ("7.1.1")
    glibc: Optional[str] = None  # the glibc collect_env or ldd --version reports ("2.35")
    docker_shm: Optional[str] = None  # "default" (docker run at Docker's 64 MB), "small" (df shows it), "set"
    image_build_kill: Optional[str] = None  # how the text shows a SIGKILL inside an image build step
    ran_after_build: Optional[str] = None  # the image build shown ended, or a container ran after it
    compute_mode: Optional[str] = None  # a GPU's non-default compute mode nvidia-smi shows ("E. Process")
    visible_devices: Optional[str] = None  # the one value CUDA_VISIBLE_DEVICES is set to ("1", "", "-1")
    gpu_count: Optional[int] = None  # how many GPUs the machine has: nvidia-smi's list, or said in words
    one_node: bool = False  # a job launched on one node (torchrun --standalone, --nnodes=1, localhost)
    # vendors of the GPUs a line declares the machine's ("GPU: X", gpu="X", nvidia-smi's rows), not prose
    declared_vendors: List[str] = field(default_factory=list)
    scheduler: Optional[str] = None  # the batch scheduler the text runs under ("slurm": srun, #SBATCH)
    hsa_override: Optional[str] = None  # HSA_OVERRIDE_GFX_VERSION as the text sets it ("10.3.0")
    conda_override_cuda: Optional[str] = None  # CONDA_OVERRIDE_CUDA as the text sets it ("" = no CUDA)
    secure_boot: Optional[str] = None  # "enabled" / "disabled", as mokutil --sb-state prints it
    toolchain: Dict[str, str] = field(default_factory=dict)  # nvcc / gcc / clang / cmake -> version
    services: Dict[str, str] = field(default_factory=dict)  # systemd unit -> state, as systemctl shows it


@dataclass
class Extracted:
    exceptions: List[PyException] = field(default_factory=list)
    warnings: List[PyException] = field(default_factory=list)  # "FILE:LINE: CATEGORY: MESSAGE" lines
    frames: List[Frame] = field(default_factory=list)
    libraries: List[MissingLibrary] = field(default_factory=list)
    symbols: List[UndefinedSymbol] = field(default_factory=list)
    gpu_errors: List[GpuError] = field(default_factory=list)
    nccl: Dict[str, Any] = field(default_factory=dict)  # version, interfaces, warnings
    dtypes: List[str] = field(default_factory=list)  # reduced-precision types the calls name: bf16, fp16
    symptoms: List[str] = field(default_factory=list)  # what happened without an error: discrepancy, nan
    compiler: List[CompilerMessage] = field(default_factory=list)
    conflicts: List[Conflict] = field(default_factory=list)
    not_found: List[str] = field(default_factory=list)  # requirements no index or channel had
    source_builds: List[str] = field(default_factory=list)  # packages pip builds from source
    installed: List[str] = field(default_factory=list)  # distributions pip's output shows installed
    versions: Dict[str, str] = field(default_factory=dict)  # the version each one is shown at
    http: List[HttpFailure] = field(default_factory=list)
    environment: Environment = field(default_factory=Environment)
    conda_search: Optional[CondaSearch] = None
    conda_missing: List[MissingPackage] = field(default_factory=list)  # causes the data proves
    installer_errors: List[InstallerError] = field(default_factory=list)
    offers: List[Offer] = field(default_factory=list)  # what an index or channel had, as the resolver said
    transfers: List[str] = field(default_factory=list)  # the failed file's download (extract.downloads)
    mentions_torch: bool = False  # the text names torch / PyTorch at all
    build_shown: bool = False  # a package or extension is being built (setup.py, pip's build, CMake, make)

    def empty(self) -> bool:
        return not any(getattr(self, f.name) for f in fields(self) if f.name != "environment") and not any(
            v for v in asdict(self.environment).values()
        )

    def to_json(self) -> Dict[str, Any]:
        data = _compact(asdict(self))
        frames = data.pop("frames", [])
        if frames:  # the packages and Pythons seen, not every frame
            data["frame_packages"] = sorted({f["package"] for f in frames if f.get("package")})
            pythons = sorted({f["python"] for f in frames if f.get("python")})
            if pythons:
                data["frame_pythons"] = pythons
        return dict(data)
