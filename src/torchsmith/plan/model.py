"""The vocabulary of a plan, shared by the resolver, the renderers, install and doctor.

A :class:`Request` is what the user asked for; a :class:`Plan` is the decision: exact pins,
where each comes from, why, and what was turned down. Plans are values: "no solution" is a
Plan with ``status == "no-solution"`` and its rejections, not an exception.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from torchsmith.errors import KnowledgeBaseError, TorchsmithError
from torchsmith.records import dataclass, field
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb.pkgmeta import PackageRecord

__all__ = ["BaseImage", "Blocker", "CondaStack", "Door", "HostGpu", "HostSummary", "PackagePin", "Plan",
           "Refusal", "Rejection", "Request"]


@dataclass(frozen=True)
class Request:
    """What the user asked for."""

    requirements: Tuple[str, ...] = ("torch", "torchvision", "torchaudio")
    installer: str = "pip"  # pip | uv | conda | pixi
    # Keep what is installed in the target environment (``plan xformers`` next to a torch).
    installed: Tuple[Tuple[str, str], ...] = ()  # (name, version incl. local, e.g. "2.5.1+cu124")
    allow_prerelease: bool = False
    # A mirror of the PyTorch wheel index: replaces the base of every PyTorch index URL from the
    # data (https://download.pytorch.org/whl/cu126 -> <base>/cu126). From --torch-index or
    # TORCHSMITH_TORCH_INDEX; the tests point it at their local index.
    torch_index_base: Optional[str] = None
    # The GPUs sit on different nodes, each with its own driver (fleet's shared environment):
    # the driver given bounds the CUDA version only, not which GPUs it can drive.
    gpus_on_separate_nodes: bool = False
    # The user listed the requirements (``plan torch torchvision torchaudio``): nothing asked for is
    # ever dropped. Only the implied default stack leaves torchaudio out where none pairs.
    explicit: bool = False
    # Facts not given for a described machine, and what was assumed instead (said in the plan).
    assumptions: Tuple[str, ...] = ()
    # The user's pip/uv constraints on what is asked for: (requirement, where it is written,
    # "/etc/pip-constraints.txt:2 (constraint in /etc/pip.conf)"). They narrow, never add.
    constraints: Tuple[Tuple[str, str], ...] = ()
    # Every torch constraint of the user's pip/uv configuration, as ``constraints``: the release a
    # dead end's door names must meet them too, or pip/uv would refuse the door's plan.
    door_caps: Tuple[Tuple[str, str], ...] = ()
    # Where requirements read from files are written: (text, "reqs.txt:3"); the rest: command line.
    origins: Tuple[Tuple[str, str], ...] = ()
    # Packages' published metadata read live from the user's index (kb.metaread), used before
    # the shipped snapshot; and pip/uv's --only-binary :all: (no source builds).
    published: Tuple[PackageRecord, ...] = ()
    only_binary: bool = False
    # Names whose metadata could not be read (not in the snapshot, index unreachable): why.
    unread: Tuple[Tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PackagePin:
    """One package of the stack, pinned exactly, with where it must come from."""

    name: str  # canonical name: torch, torchvision, mmcv, torch-scatter, xformers
    version: str  # public version: "2.5.1"
    variant: Optional[str] = None  # "cu124", "cpu", "rocm6.2", "jetson-jp51"; None for plain PyPI
    # The index this package must come from; None = the user's configured default index.
    index_url: Optional[str] = None
    # A direct wheel URL, for packages published as files (NVIDIA's Jetson wheels).
    wheel_url: Optional[str] = None
    # The file name to save wheel_url under when the URL does not end in one (NVIDIA's box.com
    # links): installed as a download, then ``pip install ./FILE``.
    wheel_filename: Optional[str] = None
    # Find-links page (mmcv, torch-geometric extensions publish per-torch/CUDA pages).
    find_links: Optional[str] = None
    local_version: Optional[str] = None  # "+cu124" as it appears in the installed version
    extras: Tuple[str, ...] = ()  # ("and-cuda",) for tensorflow[and-cuda], ("cuda12",) for jax

    @property
    def requirement(self) -> str:
        """A pip requirement line pinning this package (``torch==2.5.1+cu124``)."""
        name = f"{self.name}[{','.join(self.extras)}]" if self.extras else self.name
        if self.wheel_url:
            return f"{name} @ {self.wheel_url}"
        if not self.version:  # an index or find-links page that serves one build: name only
            return name
        return f"{name}=={self.version}{self.local_version or ''}"


@dataclass(frozen=True)
class Rejection:
    """A better-looking alternative and why it does not work on this host."""

    candidate: str  # "torch 2.9.1 cu128"
    reason: str  # one plain line with found-vs-needed facts
    code: str = ""  # stable kebab-case reason: driver-too-old, arch-not-compiled, no-wheel-for-python


@dataclass(frozen=True)
class Blocker:
    """The one constraint that leaves no working stack (``Plan.blocker`` of a no-solution)."""

    code: str  # stable: no-wheel-for-python, arch-not-compiled, driver-too-old, glibc-too-old, ...
    constraint: str  # what the user can change: "Python 3.12", "torch==1.13.1", "mmcv<2.2"
    detail: str  # one plain line: found vs needed, with a source


@dataclass(frozen=True)
class Door:
    """A way out of a dead end: what to change, and the exact command or requirement for it."""

    kind: str  # release | python | variant | driver | build-from-source | cpu | requirement | flag
    summary: str  # "torch 2.0.1 is the nearest release with a wheel for Python 3.11"
    change: str  # "torch==1.13.1 -> torch==2.0.1", "Python 3.12 -> 3.10"
    command: str  # "torchsmith plan 'torch==2.0.1'"


@dataclass(frozen=True)
class HostGpu:
    """One GPU of the host, as the renderers and ``plan --json`` name it."""

    name: str
    vendor: str = "nvidia"  # "nvidia" | "amd"
    index: Optional[int] = None  # NVIDIA only
    compute_capability: Optional[str] = None  # NVIDIA: "8.6"
    memory_mib: Optional[int] = None  # NVIDIA
    gfx: Optional[str] = None  # AMD: "gfx1100"


@dataclass(frozen=True)
class HostSummary:
    """The facts about the host a plan was made for that renderers print: no renderer probes."""

    platform: str = ""
    python: str = ""  # the host's Python minor version ("3.11")
    python_executable: str = ""
    gpus: Tuple[HostGpu, ...] = ()  # the visible NVIDIA GPUs, then the AMD ones
    driver: Optional[str] = None  # the NVIDIA driver version
    jetson_l4t: Optional[str] = None
    jetson_cc: Optional[str] = None  # the Jetson's compute capability
    cpu_count: int = 0  # 0: unknown (flags describe another machine)

    @property
    def nvidia_gpus(self) -> Tuple[HostGpu, ...]:
        return tuple(g for g in self.gpus if g.vendor == "nvidia")

    @property
    def arch_list(self) -> List[str]:
        """``["8.0", "8.6"]``: the compute capabilities of the host's GPUs, oldest first."""
        ccs = {g.compute_capability for g in self.nvidia_gpus if g.compute_capability}
        if self.jetson_cc:
            ccs.add(self.jetson_cc)
        return sorted(ccs, key=version_tuple)


@dataclass(frozen=True)
class Refusal:
    """Why one artifact (base image, conda environment) cannot be made for an ok plan; raised as
    the error it was when that format is asked for. ``{fmt}`` in the message names the format."""

    code: str
    message: str
    hint: Optional[str] = None
    data_error: bool = False  # a KnowledgeBaseError: the data lacks what the artifact needs

    @classmethod
    def of(cls, exc: TorchsmithError) -> Refusal:
        return cls(exc.code, exc.message, exc.hint, isinstance(exc, KnowledgeBaseError))

    def error(self, fmt: str = "") -> TorchsmithError:
        kind = KnowledgeBaseError if self.data_error else TorchsmithError
        return kind(self.message.replace("{fmt}", fmt), code=self.code, hint=self.hint)


@dataclass(frozen=True)
class BaseImage:
    """The container image a Dockerfile for the plan starts from, and why."""

    image: str
    kind: str  # "pytorch" | "cuda" | "l4t-pytorch" | "l4t-jetpack" | "python"
    why: str
    source: str  # the source id in containers.json
    requires_cuda: Optional[str] = None  # the image's NVIDIA_REQUIRE_CUDA floor
    torch_preinstalled: bool = False
    problems: Tuple[str, ...] = ()  # the requirement check will fail: explanation and remedies
    notes: Tuple[str, ...] = ()  # a newer image would be refused here: why this one
    preinstalled: Tuple[str, ...] = ("torch",)  # packages the image already has
    source_url: str = ""  # where the image's facts come from
    uv_image: str = ""  # the image uv is copied from (CUDA images have no Python)


@dataclass(frozen=True)
class CondaStack:
    """The conda-forge side of a plan (conda environment.yml, pixi.toml)."""

    packages: Tuple[Tuple[str, str], ...]  # (conda-forge name, version or "version=build")
    cuda: Optional[str]  # "12.6" for cuda-version; None for CPU/MPS
    pip: Tuple[PackagePin, ...]  # everything not from conda-forge, installed by pip afterwards
    keep: Tuple[str, ...]  # pip pins that hold conda's torch in place during the pip step
    derived: bool  # True when the resolver gave no conda-forge facts and names were derived
    notes: Tuple[str, ...] = ()  # the resolver's remarks on the conda-forge build (plan.conda["notes"])
    channels: Tuple[str, ...] = ("conda-forge",)  # the legacy pytorch channel for releases before it
    platform: str = ""  # the plan's: conda-forge's CUDA builds differ per platform
    legacy: bool = False  # packages are complete specs ("cudatoolkit=11.3"), no cuda-version
    data_notes: Tuple[str, ...] = ()  # what torchsmith's data says about these builds (comments)


@dataclass(frozen=True)
class Plan:
    status: str  # "ok" | "no-solution"
    packages: Tuple[PackagePin, ...] = ()
    platform: str = ""  # "linux-x86_64"
    python: str = ""  # "3.11"
    accelerator: str = "cpu"  # "cuda", "rocm", "mps", "xpu", "cpu", "jetson"
    variant: Optional[str] = None  # the chosen torch variant: "cu126"
    reasons: Tuple[str, ...] = ()  # the chosen path, one plain line each, with sources
    rejected: Tuple[Rejection, ...] = ()
    warnings: Tuple[str, ...] = ()
    system_prerequisites: Tuple[str, ...] = ()  # "sudo apt-get install libopenblas-dev"
    environment: Tuple[Tuple[str, str], ...] = ()  # ("HSA_OVERRIDE_GFX_VERSION", "10.3.0")
    conda: Dict[str, Any] = field(default_factory=dict)  # conda-forge specs for conda/pixi
    kb_version: str = ""
    # Data rows the plan stands on that no primary source confirms: one line each, said to people.
    uncertain: Tuple[str, ...] = ()
    blocker: Optional[Blocker] = None  # set on every no-solution: the constraint that blocks
    alternatives: Tuple[Door, ...] = ()  # the nearest ways out, each with its command
    assumptions: Tuple[str, ...] = ()  # facts not given for a described machine, and what was assumed
    # An optional package of the default stack (torchaudio) that would hold torch back: the
    # answer without it is the plan; each line says what keeping it costs, and the command for it.
    choices: Tuple[str, ...] = ()
    # Filled by plan.artifacts.attach_artifacts: what the renderers print, decided with the machine.
    host: Optional[HostSummary] = None  # None: no artifacts attached yet
    base_image: Union[BaseImage, Refusal, None] = None  # for a Dockerfile
    conda_stack: Union[CondaStack, Refusal, None] = None  # for conda/pixi
    # Requirements asked for that have no torch- or GPU-specific build (``numpy``, ``ftfy>=6``),
    # as written: every render installs them last from the configured index, torch pins kept.
    unplanned: Tuple[str, ...] = ()
    # The reason saying the installer's own resolver accepted the whole request (plan --confirm):
    # shown first in the why, as the strongest proof the answer installs.
    confirmed: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def package(self, name: str) -> Optional[PackagePin]:
        return next((p for p in self.packages if p.name == name), None)

    def to_json(self, commands: Optional[Dict[str, List[str]]] = None) -> Dict[str, Any]:
        """The plan as ``plan --json`` shows it; ``commands``: the rendered commands per installer."""
        host = self.host or HostSummary(platform=self.platform)
        blocker = self.blocker
        return {
            "status": self.status,
            "accelerator": self.accelerator,
            "variant": self.variant,
            "packages": [_pin_json(p) for p in self.packages],
            "reasons": list(self.reasons),
            "rejected": [{"candidate": r.candidate, "reason": r.reason, "code": r.code}
                         for r in self.rejected],
            "warnings": list(self.warnings),
            "commands": dict(commands or {}),
            "system_prerequisites": list(self.system_prerequisites),
            "environment": dict(self.environment),
            "conda": dict(self.conda),
            "host": _host_json(host, self.python),
            "kb_version": self.kb_version,
            "uncertain": list(self.uncertain),
            "blocker": (None if blocker is None else
                        {"code": blocker.code, "constraint": blocker.constraint, "detail": blocker.detail}),
            "alternatives": [{"kind": d.kind, "summary": d.summary, "change": d.change,
                              "command": d.command} for d in self.alternatives],
            "assumptions": list(self.assumptions),
            "choices": list(self.choices),
            "unplanned": list(self.unplanned),
        }


def _pin_json(pin: PackagePin) -> Dict[str, Any]:
    return {"name": pin.name, "version": pin.version, "variant": pin.variant, "index_url": pin.index_url,
            "wheel_url": pin.wheel_url, "wheel_filename": pin.wheel_filename, "find_links": pin.find_links,
            "local_version": pin.local_version, "extras": list(pin.extras), "requirement": pin.requirement}


def _host_json(host: HostSummary, python: str) -> Dict[str, Any]:
    nvidia = [{"index": g.index, "name": g.name, "compute_capability": g.compute_capability}
              for g in host.nvidia_gpus]
    amd = [{"name": g.name, "gfx": g.gfx} for g in host.gpus if g.vendor == "amd"]
    return {"platform": host.platform, "python": python or host.python, "gpus": nvidia + amd,
            "driver": host.driver, "jetson": host.jetson_l4t}
