"""The host profile: frozen facts about one machine, each with the source it came from.

``probe`` builds a :class:`Machine` from a Host; ``probe --json`` writes it; every other
command accepts it back with ``--host FILE``. The JSON form is versioned (``schema``) and
described by ``schema/host-profile.schema.json`` shipped in the package.
"""

from __future__ import annotations

import collections.abc

from torchsmith import TYPE_CHECKING
from torchsmith.errors import ProfileError
from torchsmith.records import dataclass, field, field_names, replace

if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Tuple, Type, TypeVar

    _T = TypeVar("_T")

__all__ = [
    "MAX_GPUS",
    "PROFILE_KIND",
    "PROFILE_SCHEMA",
    "AmdGpu",
    "AppleInfo",
    "CudaToolkit",
    "EnvInfo",
    "IntelGpu",
    "JetsonInfo",
    "Machine",
    "NvidiaGpu",
    "NvidiaInfo",
    "OsInfo",
    "ProbeNote",
    "PythonInfo",
    "RocmInfo",
    "SchedulerInfo",
    "to_plain",
]

PROFILE_KIND = "torchsmith.host-profile"
PROFILE_SCHEMA = 1
# More GPUs than any one node has (8 MI300X in CPX mode show as 64): rows past it are tool garbage.
MAX_GPUS = 256

# Platform tokens used across torchsmith (plan --platform, data files).
PLATFORMS = (
    "linux-x86_64",
    "linux-aarch64",
    "windows-x86_64",
    "macos-arm64",
    "macos-x86_64",
    "wsl-x86_64",
)


@dataclass(frozen=True)
class ProbeNote:
    """Why a source gave no answer, or something the user should know about a fact."""

    source: str
    problem: str


@dataclass(frozen=True)
class NvidiaGpu:
    index: int
    name: str
    compute_capability: Optional[str] = None  # "8.6"; None when the source cannot tell
    memory_mib: Optional[int] = None
    uuid: Optional[str] = None
    bus_id: Optional[str] = None
    mig_mode: Optional[str] = None  # "Enabled" / "Disabled" / None (not supported)
    source: str = ""

    @property
    def arch(self) -> Optional[str]:
        """``sm_86`` for compute capability 8.6."""
        from torchsmith.compat import sm_arch  # (here: a probe without GPUs needs no compat)

        return sm_arch(self.compute_capability) if self.compute_capability else None


@dataclass(frozen=True)
class NvidiaInfo:
    """The NVIDIA driver and the GPUs it drives.

    ``driver_cuda`` is the highest CUDA the *driver* supports (nvidia-smi's "CUDA Version"),
    not a toolkit version.
    """

    driver_version: Optional[str] = None  # "570.86.10"
    driver_version_source: str = ""
    driver_cuda: Optional[str] = None  # "12.8"
    driver_cuda_source: str = ""
    gpus: Tuple[NvidiaGpu, ...] = ()
    gpus_source: str = ""
    # CUDA_VISIBLE_DEVICES narrows which GPUs a job sees: indexes into ``gpus``, None = all.
    visible: Optional[Tuple[int, ...]] = None

    @property
    def visible_gpus(self) -> Tuple[NvidiaGpu, ...]:
        if self.visible is None:
            return self.gpus
        return tuple(g for g in self.gpus if g.index in self.visible)


@dataclass(frozen=True)
class JetsonInfo:
    l4t: Optional[str] = None  # "35.2.1"
    jetpack: Optional[str] = None  # "5.1"
    cuda: Optional[str] = None  # "11.4"
    model: Optional[str] = None  # device-tree model string
    module: Optional[str] = None  # "Nano", "TX2", "Xavier", "Orin", "Thor"
    compute_capability: Optional[str] = None  # "8.7"
    source: str = ""


@dataclass(frozen=True)
class AmdGpu:
    name: str
    gfx: Optional[str] = None  # "gfx1100"
    source: str = ""


@dataclass(frozen=True)
class RocmInfo:
    version: Optional[str] = None  # "6.2.4"
    version_source: str = ""
    gpus: Tuple[AmdGpu, ...] = ()
    kfd_access: Optional[bool] = None  # can this user open /dev/kfd
    hsa_override_gfx_version: Optional[str] = None
    source: str = ""


@dataclass(frozen=True)
class IntelGpu:
    name: str
    pci_id: Optional[str] = None  # "8086:56a0"
    source: str = ""


@dataclass(frozen=True)
class AppleInfo:
    chip: Optional[str] = None  # "Apple M2 Pro" / "Intel(R) Core(TM) i7"
    apple_silicon: bool = False
    rosetta: bool = False  # an x86_64 Python translated on Apple silicon
    macos_version: Optional[str] = None
    mps_capable: bool = False
    source: str = ""


@dataclass(frozen=True)
class OsInfo:
    system: str = "unknown"  # linux / windows / macos
    arch: str = "unknown"  # x86_64 / aarch64 / arm64 (normalised)
    distro: Optional[str] = None  # "ubuntu"
    distro_version: Optional[str] = None  # "22.04"
    distro_name: Optional[str] = None  # "Ubuntu 22.04.4 LTS"
    kernel: Optional[str] = None
    glibc: Optional[str] = None  # "2.35"
    wsl: bool = False
    wsl_libcuda: Optional[bool] = None  # /usr/lib/wsl/lib/libcuda.so present (WSL only)
    container: Optional[str] = None  # "docker", "podman", "apptainer", "kubernetes"
    cpu_count: int = 0
    source: str = ""


@dataclass(frozen=True)
class PythonInfo:
    version: str = ""  # "3.11.7"
    implementation: str = "CPython"
    free_threaded: bool = False
    executable: str = ""
    prefix: str = ""
    virtualenv: Optional[str] = None
    conda_prefix: Optional[str] = None
    source: str = ""

    @property
    def minor(self) -> str:
        """``3.11`` from ``3.11.7``."""
        return ".".join(self.version.split(".")[:2])


@dataclass(frozen=True)
class CudaToolkit:
    version: Optional[str]  # "12.4" (nvcc release)
    path: str  # /usr/local/cuda-12.4
    nvcc: Optional[str] = None
    source: str = ""


@dataclass(frozen=True)
class EnvInfo:
    """Environment variables that change what loads or where packages come from."""

    variables: Dict[str, str] = field(default_factory=dict)
    # Index settings from pip/uv/conda configuration files: "pip /etc/pip.conf [global] index-url".
    index_settings: Dict[str, str] = field(default_factory=dict)
    cudnn_libraries: Tuple[str, ...] = ()
    nccl_libraries: Tuple[str, ...] = ()


@dataclass(frozen=True)
class SchedulerInfo:
    kind: str  # "slurm", "pbs", "lsf", "sge", "kubernetes"
    job_id: Optional[str] = None
    variables: Dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Machine:
    os: OsInfo = field(default_factory=OsInfo)
    python: PythonInfo = field(default_factory=PythonInfo)
    nvidia: Optional[NvidiaInfo] = None
    jetson: Optional[JetsonInfo] = None
    rocm: Optional[RocmInfo] = None
    intel_gpus: Tuple[IntelGpu, ...] = ()
    apple: Optional[AppleInfo] = None
    cuda_toolkits: Tuple[CudaToolkit, ...] = ()
    env: EnvInfo = field(default_factory=EnvInfo)
    scheduler: Optional[SchedulerInfo] = None
    notes: Tuple[ProbeNote, ...] = ()
    overridden: Tuple[str, ...] = ()  # facts set by the user, not read from the machine

    @property
    def platform(self) -> str:
        """One of :data:`PLATFORMS` (or ``<system>-<arch>`` for the unknown)."""
        if self.os.system == "linux" and self.os.wsl:
            return f"wsl-{self.os.arch}"
        return f"{self.os.system}-{self.os.arch}"

    @property
    def has_nvidia_gpu(self) -> bool:
        return bool(self.nvidia and self.nvidia.gpus) or self.jetson is not None

    def with_note(self, source: str, problem: str) -> Machine:
        return replace(self, notes=(*self.notes, ProbeNote(source, problem)))

    def to_json(self) -> Dict[str, Any]:
        body = to_plain(self)
        assert isinstance(body, dict)
        return {"kind": PROFILE_KIND, "schema": PROFILE_SCHEMA, **body}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Machine:
        """Read a host profile back. Unknown keys are ignored so newer profiles still load."""
        if not isinstance(data, collections.abc.Mapping):
            raise ProfileError("a host profile must be a JSON object")
        if data.get("kind") != PROFILE_KIND:
            raise ProfileError(
                f"not a torchsmith host profile (kind {data.get('kind')!r}, "
                f"expected {PROFILE_KIND!r})",
                hint="create one with: torchsmith probe --json > host.json",
            )
        schema = data.get("schema")
        if not isinstance(schema, int) or schema > PROFILE_SCHEMA:
            raise ProfileError(
                f"host profile schema {schema!r} is newer than this torchsmith understands "
                f"({PROFILE_SCHEMA})",
                hint="upgrade torchsmith",
            )
        from torchsmith.schemacheck import first_problem, load_schema

        if schema < 1:
            raise ProfileError(f"host profile schema {schema!r} is not a schema torchsmith wrote")
        problem = first_problem(dict(data), load_schema("host-profile.schema.json"))
        if problem:
            raise ProfileError(f"host profile is malformed: {problem}",
                               hint="create one with: torchsmith probe --json > host.json")
        try:
            return _from_plain(cls, data)
        except (TypeError, ValueError, KeyError) as exc:
            raise ProfileError(f"host profile is malformed: {exc}") from exc


def to_plain(value: Any) -> Any:
    """Frozen dataclasses (profiles, kb rows) as JSON-able dicts, lists and scalars."""
    names = None if isinstance(value, type) else field_names(value)
    if names is not None:
        return {name: to_plain(getattr(value, name)) for name in names}
    if isinstance(value, (tuple, list)):
        return [to_plain(v) for v in value]
    if isinstance(value, collections.abc.Mapping):
        return {str(k): to_plain(v) for k, v in sorted(value.items())}
    return value


# Field types per class, resolved once: annotations are strings under postponed evaluation.
_NESTED: Dict[Tuple[type, str], Tuple[str, type]] = {}


def _nested_types() -> Dict[Tuple[type, str], Tuple[str, type]]:
    if not _NESTED:
        one = {
            (Machine, "os"): OsInfo,
            (Machine, "python"): PythonInfo,
            (Machine, "nvidia"): NvidiaInfo,
            (Machine, "jetson"): JetsonInfo,
            (Machine, "rocm"): RocmInfo,
            (Machine, "apple"): AppleInfo,
            (Machine, "env"): EnvInfo,
            (Machine, "scheduler"): SchedulerInfo,
        }
        many = {
            (Machine, "intel_gpus"): IntelGpu,
            (Machine, "cuda_toolkits"): CudaToolkit,
            (Machine, "notes"): ProbeNote,
            (NvidiaInfo, "gpus"): NvidiaGpu,
            (RocmInfo, "gpus"): AmdGpu,
        }
        _NESTED.update({k: ("one", v) for k, v in one.items()})
        _NESTED.update({k: ("many", v) for k, v in many.items()})
    return _NESTED


def _from_plain(cls: Type[_T], data: Mapping[str, Any]) -> _T:
    if not isinstance(data, collections.abc.Mapping):
        raise TypeError(f"{cls.__name__} must be an object, not {type(data).__name__}")
    nested = _nested_types()
    kwargs: Dict[str, Any] = {}
    for name in field_names(cls) or ():
        if name not in data:
            continue
        value = data[name]
        kind = nested.get((cls, name))
        if kind is not None and value is not None:
            how, inner = kind
            if how == "one":
                value = _from_plain(inner, value)
            else:
                value = tuple(_from_plain(inner, v) for v in value)
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[name] = value
    return cls(**kwargs)
