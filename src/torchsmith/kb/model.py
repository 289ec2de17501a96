"""The rows of the knowledge base: frozen records, one class per table.

Every row carries ``sources`` (ids into the manifest) and ``uncertain`` (True where the fact was
not checked against a primary source). Platform keys are the tokens of
:data:`torchsmith.machine.PLATFORMS` without ``wsl-x86_64``: WSL installs the Linux wheels.
"""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Tuple, Union

from torchsmith.compat import sm_arch
from torchsmith.records import dataclass, field

__all__ = [
    "SECTION_OF",
    "WHEEL_PLATFORMS",
    "ArchSupport",
    "CondaBuild",
    "CondaChannel",
    "CudaRelease",
    "DriverBranch",
    "FrameworkBuild",
    "GfxTarget",
    "GpuModel",
    "HsaOverride",
    "JetPack",
    "JetsonWheel",
    "MinorCompat",
    "PairedWheels",
    "Row",
    "Source",
    "TheRockIndex",
    "TorchRelease",
    "TorchRequirement",
    "VariantBuild",
    "wheel_platform",
]

# The platforms wheels are published for; data keys use exactly these.
WHEEL_PLATFORMS = ("linux-x86_64", "linux-aarch64", "windows-x86_64", "macos-arm64", "macos-x86_64")


def wheel_platform(platform: str) -> str:
    """The wheel platform a machine platform installs: WSL uses the Linux wheels."""
    return "linux-x86_64" if platform == "wsl-x86_64" else platform


@dataclass(frozen=True)
class Source:
    id: str
    url: str
    title: str
    retrieved: str  # ISO date the fact was read
    note: str = ""


@dataclass(frozen=True)
class VariantBuild:
    """One published build of a torch release: ``cu126``, ``rocm6.2``, ``cpu``, ``xpu``."""

    name: str
    kind: str  # "cuda" | "rocm" | "cpu" | "xpu"
    cuda: Optional[str]  # "12.6"
    rocm: Optional[str]  # "6.2"
    platforms: Tuple[str, ...]
    index_url: str
    sass_by_platform: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    ptx_by_platform: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    gfx: Tuple[str, ...] = ()
    sources: Tuple[str, ...] = ()
    uncertain: bool = False
    note: str = ""
    # Where a ROCm build's user-space libraries come from when the wheel does not bundle them
    # (a multi-arch build: AMD's TheRock packages, one rocm-sdk-device-<gfx> per target).
    rocm_sdk: str = ""
    # Platforms whose arch list no primary source read for that platform confirms (a Windows list
    # not read from the release branch's own build script).
    unverified: Tuple[str, ...] = ()

    def sass(self, platform: str) -> Tuple[str, ...]:
        """The SASS architectures compiled for ``platform`` (``sm_50`` ...); () if none/unknown."""
        return self.sass_by_platform.get(wheel_platform(platform), ())

    def ptx(self, platform: str) -> Tuple[str, ...]:
        """PTX targets (``compute_90``) in the wheel; () when the data records none."""
        return self.ptx_by_platform.get(wheel_platform(platform), ())


@dataclass(frozen=True)
class TorchRelease:
    version: str
    released: Optional[str]
    python: Mapping[str, Tuple[str, ...]]  # platform -> ("3.9", ..., "3.13t")
    variants: Tuple[VariantBuild, ...]
    pypi_default: Mapping[str, str]  # platform -> variant name PyPI serves
    torchvision: Optional[str]
    torchaudio: Optional[str]
    sources: Tuple[str, ...]
    uncertain: bool = False
    notes: Tuple[str, ...] = ()

    def variant(self, name: str) -> Optional[VariantBuild]:
        for build in self.variants:
            if build.name == name:
                return build
        return None

    def pythons(self, platform: str) -> Tuple[str, ...]:
        return self.python.get(wheel_platform(platform), ())


@dataclass(frozen=True)
class CudaRelease:
    """A CUDA toolkit (the newest update of a minor release) and the drivers it needs."""

    version: str  # "12.6"
    min_driver_linux: Optional[str]  # full support (the toolkit's own driver)
    min_driver_windows: Optional[str]
    minor_compat_min_driver_linux: Optional[str]  # floor with minor-version compatibility
    minor_compat_min_driver_windows: Optional[str]
    sources: Tuple[str, ...]
    uncertain: bool = False
    updates: Tuple[Tuple[str, str, str], ...] = ()  # (label, linux, windows) per update release
    note: str = ""


@dataclass(frozen=True)
class MinorCompat:
    """Minor-version compatibility of one CUDA major: its driver floor and where it ends."""

    cuda_major: str  # "12"
    min_driver_linux: str
    min_driver_windows: str
    below_driver_branch: Optional[str]  # drivers from this branch on run it by plain backward compat
    limits: str
    sources: Tuple[str, ...]
    uncertain: bool = False


@dataclass(frozen=True)
class DriverBranch:
    """Driver branch (major, e.g. "570") -> the highest CUDA it fully supports."""

    branch: str
    min_version_linux: str
    max_cuda: str
    sources: Tuple[str, ...]
    uncertain: bool = False


@dataclass(frozen=True)
class ArchSupport:
    """Which GPU architectures one CUDA toolkit line can compile for."""

    cuda: str  # "12.8" or "13.0" (applies from this version until the next row)
    min_arch: str
    max_arch: str
    archs: Tuple[str, ...]
    deprecated: Tuple[str, ...]
    sources: Tuple[str, ...]
    uncertain: bool = False
    note: str = ""


@dataclass(frozen=True)
class GpuModel:
    name: str
    compute_capability: str  # "8.9"
    family: str  # "Ada"
    pci_ids: Tuple[str, ...]  # "10de:2684"
    sources: Tuple[str, ...]
    uncertain: bool = False
    jetson: bool = False  # an integrated Jetson GPU: only Jetson (L4T) wheels run on it

    @property
    def arch(self) -> str:
        return sm_arch(self.compute_capability)


@dataclass(frozen=True)
class JetsonWheel:
    torch: str  # "2.0.0a0+8aa34602.nv23.03"
    python: str  # "3.8"
    url: str
    torchvision: Optional[str]
    sources: Tuple[str, ...]
    uncertain: bool = False
    # The wheel's real file name when the URL's last segment is not one (NVIDIA's box.com links):
    # pip takes the version and tags from the file name, so the file is saved under it first.
    filename: Optional[str] = None
    # The L4T releases the wheel is built for (a PEP 440 specifier, "==32.*"); "" = only the
    # JetPack it is listed under. Every JetPack in the range gets it (kb.invariants).
    l4t: str = ""
    listed_for: str = ""  # the JetPack whose row lists it, when it reached this one by its range


@dataclass(frozen=True)
class JetPack:
    jetpack: str  # "5.1"
    l4t: str  # "35.2.1"
    cuda: str
    cudnn: Optional[str]
    python: str  # the Ubuntu's system Python
    ubuntu: str
    wheels: Tuple[JetsonWheel, ...]
    index_url: Optional[str]  # a pip index with torch for this JetPack (JetPack 6+)
    prerequisites: Tuple[str, ...]  # apt packages the NVIDIA wheels need
    sources: Tuple[str, ...]
    uncertain: bool = False
    note: str = ""
    no_wheels: str = ""  # why this point release has no wheel its family's others have (sourced)


@dataclass(frozen=True)
class GfxTarget:
    """An AMD GPU -> its gfx target (the override route is :class:`HsaOverride`, hsa_override.json)."""

    name: str
    gfx: str
    family: str
    in_wheels: bool  # some PyTorch ROCm wheel carries code for it (derived from the releases' lists)
    sources: Tuple[str, ...]
    uncertain: bool = False
    # AMD TheRock's status per platform: "release-ready" | "sanity-tested" | "build-passing"
    therock: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TheRockIndex:
    """One of AMD TheRock's Python package indexes: which gfx targets, platforms and torch series."""

    index_url: str
    kind: str  # "multi-arch" (one index, a device-<gfx> extra per target) | "per-family"
    family: str  # "" for multi-arch; "gfx110X-all" for a per-family index
    channel: str  # "nightly" | "stable"
    gfx: Tuple[str, ...]
    platforms: Tuple[str, ...]
    torch: Tuple[str, ...]  # torch series built there ("2.14", "2.13")
    sources: Tuple[str, ...]
    extra: str = ""  # "device-{gfx}": the install extra that selects a target's kernels
    uncertain: bool = False
    note: str = ""


@dataclass(frozen=True)
class HsaOverride:
    """HSA_OVERRIDE_GFX_VERSION=``value`` runs a card outside the wheels' gfx list as ``runs_as``."""

    gfx: str
    value: str  # "10.3.0" (Linux only)
    runs_as: str  # "gfx1030"
    urls: Tuple[str, ...]
    uncertain: bool = True


@dataclass(frozen=True)
class PairedWheels:
    """A companion package whose prebuilt wheels are per torch + CUDA (mmcv, torch-scatter & co.)."""

    package: str  # "mmcv" | "pyg"
    torch: str  # "2.1" (minor series) or "2.1.0"
    variant: str  # "cu121" | "cpu"
    find_links: str  # the page to pass to pip -f
    versions: Tuple[str, ...]  # versions of ``package`` with wheels there (() = all on the page)
    sources: Tuple[str, ...]
    uncertain: bool = False
    packages: Tuple[str, ...] = ()  # the distributions on the page when not just ``package``
    confirmed_from: Tuple[str, ...] = ()  # wheel files read on the find-links page


@dataclass(frozen=True)
class TorchRequirement:
    """A companion release and the torch it was built against (xformers, flash-attn, torchvision)."""

    package: str
    version: str
    torch: str  # the requirement, e.g. "==2.5.1" or ">=2.4"
    variants: Tuple[str, ...]  # the torch variants it ships wheels for, () = source/unknown
    sources: Tuple[str, ...]
    uncertain: bool = False
    note: str = ""
    confirmed_from: Tuple[str, ...] = ()  # the index's wheel whose Requires-Dist states the pin


@dataclass(frozen=True)
class CondaChannel:
    channel: str
    package: str
    last_version: Optional[str]  # None = still published
    note: str
    sources: Tuple[str, ...]
    uncertain: bool = False


@dataclass(frozen=True)
class CondaBuild:
    """conda-forge pytorch builds: a pytorch series and the cuda-version builds it has."""

    package: str  # "pytorch" | "pytorch-gpu"
    version: str  # "2.5" (series)
    cuda_versions: Tuple[str, ...]  # linux-x86_64's; the note names other platforms' differences
    platforms: Tuple[str, ...]
    sources: Tuple[str, ...]
    uncertain: bool = False
    note: str = ""
    releases: Tuple[str, ...] = ()  # the exact releases conda-forge built: "2.7.0", "2.7.1"
    platform_cuda: Tuple[str, ...] = ()  # "windows-x86_64=12.8,13.0": each platform's CUDA builds

    def cudas_for(self, platform: str) -> Tuple[str, ...]:
        """The CUDA versions built for ``platform`` (``cuda_versions`` when not recorded per platform)."""
        for entry in self.platform_cuda:
            name, _, cudas = entry.partition("=")
            if name == platform:
                return tuple(c for c in cudas.split(",") if c)
        return self.cuda_versions


@dataclass(frozen=True)
class FrameworkBuild:
    """TensorFlow / JAX releases and the CUDA stack they need."""

    framework: str  # "tensorflow" | "jax"
    version: str
    extra: str  # "and-cuda" | "cuda12" | "cuda13" | ""
    cuda: Optional[str]
    cudnn: Optional[str]
    python: Tuple[str, ...]
    min_driver_linux: Optional[str]
    platforms: Tuple[str, ...]
    sources: Tuple[str, ...]
    uncertain: bool = False
    note: str = ""
    # The package index's files this row was read from (tools/confirm_frameworks.py): wheel names.
    confirmed_from: Tuple[str, ...] = ()


@dataclass(frozen=True)
class WheelLibrary:
    """What one CUDA library inside a wheel carries (``kb archs``'s reading of its fatbin)."""

    member: str  # torch/lib/libtorch_cuda.so
    containers: int
    sass: Tuple[str, ...]  # of the most common container set: torch's own arch list
    ptx: Tuple[str, ...]  # compute_XY, the same way
    sass_few: Tuple[str, ...] = ()  # in other containers: special kernels, static NVIDIA libraries
    ptx_few: Tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)  # target -> containers carrying it


@dataclass(frozen=True)
class WheelAudit:
    """A real wheel read by tools/verify_wheels.py. Each row is also a source, cited by ``id``."""

    id: str
    file: str
    sha256: str
    retrieved: str
    torch: str
    platform: str
    variant: str  # from torch/version.py inside the wheel
    python_tags: Tuple[str, ...]
    platform_tags: Tuple[str, ...]
    libraries: Tuple[WheelLibrary, ...]
    sources: Tuple[str, ...]
    uncertain: bool = False
    note: str = ""
    package: str = "torch"  # or a companion read the same way (torchvision, torchaudio)
    version: str = ""  # the companion's own version; torch is then the torch its metadata pins

    def title(self) -> str:
        main = max(self.libraries, key=lambda lib: lib.containers, default=None)
        carried = (f"{main.member}: SASS {' '.join(main.sass) or 'none'}, PTX {' '.join(main.ptx) or 'none'}"
                   if main else "no CUDA library")
        return f"{self.file} (sha256 {self.sha256}) read by tools/verify_wheels.py: {carried}"


# Tables listed by `kb show`: name -> (file, section).
TABLE_FILES: Dict[str, Tuple[str, str]] = {
    "releases": ("torch_releases.json", "releases"),
    "cuda": ("cuda.json", "toolkits"),
    "minor-compat": ("cuda.json", "minor_compat"),
    "driver-branches": ("cuda.json", "driver_branches"),
    "arch-support": ("cuda.json", "arch_support"),
    "gpus": ("gpus.json", "gpus"),
    "jetson": ("jetson.json", "jetpacks"),
    "rocm": ("rocm.json", "gfx_targets"),
    "therock": ("rocm.json", "therock_indexes"),
    "paired-wheels": ("companions.json", "paired_wheels"),
    "torch-requirements": ("companions.json", "torch_requirements"),
    "conda-channels": ("conda.json", "channels"),
    "conda-builds": ("conda.json", "builds"),
    "frameworks": ("frameworks.json", "builds"),
    "wheel-audits": ("wheel_audits.json", "wheels"),
}


# A row of any table.
Row = Union[TorchRelease, CudaRelease, MinorCompat, DriverBranch, ArchSupport, GpuModel, JetPack, GfxTarget,
            TheRockIndex, PairedWheels, TorchRequirement, CondaChannel, CondaBuild, FrameworkBuild,
            WheelAudit]

# The (file, section) holding each row type.
SECTION_OF: Mapping[type, Tuple[str, str]] = {
    TorchRelease: TABLE_FILES["releases"],
    CudaRelease: TABLE_FILES["cuda"],
    MinorCompat: TABLE_FILES["minor-compat"],
    DriverBranch: TABLE_FILES["driver-branches"],
    ArchSupport: TABLE_FILES["arch-support"],
    GpuModel: TABLE_FILES["gpus"],
    JetPack: TABLE_FILES["jetson"],
    GfxTarget: TABLE_FILES["rocm"],
    TheRockIndex: TABLE_FILES["therock"],
    PairedWheels: TABLE_FILES["paired-wheels"],
    TorchRequirement: TABLE_FILES["torch-requirements"],
    CondaChannel: TABLE_FILES["conda-channels"],
    CondaBuild: TABLE_FILES["conda-builds"],
    FrameworkBuild: TABLE_FILES["frameworks"],
    WheelAudit: TABLE_FILES["wheel-audits"],
}
