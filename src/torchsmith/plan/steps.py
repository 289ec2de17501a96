"""A plan's install steps: which pins come from which source, in the order they install.

The one ``plan -> install steps`` function (:func:`install_steps`): the renderers print these
steps as commands (:func:`install_argvs`), ``torchsmith install`` runs them (its groups). Pure.

The PyTorch index is passed as ``--index-url`` to a step that installs the torch-family pins
only, never as ``--extra-index-url``: with an extra index, pip takes the highest version found on
any index, so a same-named package elsewhere can win (the torchtriton dependency confusion of
December 2022). Everything else is a later step against the user's configured index, which
repeats the torch pins exactly so a companion can never swap torch for another build.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from torchsmith.plan.model import PackagePin, Plan
from torchsmith.records import dataclass, replace

__all__ = [
    "InstallStep",
    "Sources",
    "download_argv",
    "exact_pin",
    "install_argvs",
    "install_steps",
    "is_source_build",
    "requirement",
    "sources",
]


def exact_pin(pin: PackagePin) -> str:
    """``name==version+local``: the pin that keeps an installed package exactly where it is.

    An empty version (an index that serves one build per JetPack) pins by name only.
    """
    if pin.wheel_url and pin.version:  # the wheel's own version, to hold it in later steps
        return f"{pin.name}=={pin.version}{pin.local_version or ''}"
    return replace(pin, wheel_url=None).requirement


def requirement(pin: PackagePin) -> str:
    """The requirement to install ``pin`` from its own source (a direct URL for wheel pins).

    A wheel whose URL has no wheel file name is installed from the file ``download_argv`` saved.
    """
    if pin.wheel_url and pin.wheel_filename:
        return "./" + pin.wheel_filename
    return pin.requirement


def download_argv(pin: PackagePin) -> List[str]:
    """Save a wheel under its real file name: pip reads the version and tags from the name, so a
    URL ending in ``<id>.whl`` (NVIDIA's box.com links) is refused as "not a valid wheel filename"."""
    assert pin.wheel_url and pin.wheel_filename
    return ["wget", "-O", pin.wheel_filename, pin.wheel_url]


def is_source_build(pin: PackagePin) -> bool:
    return pin.variant == "source" and not (pin.wheel_url or pin.index_url or pin.find_links)


@dataclass(frozen=True)
class Sources:
    """A plan's pins grouped by where they must come from, in the order they install."""

    # Each PyTorch-style index with the pins that must come from it alone (--index-url).
    indexes: Tuple[Tuple[str, Tuple[PackagePin, ...]], ...]
    wheels: Tuple[PackagePin, ...]  # direct wheel URLs (NVIDIA's Jetson wheels)
    find_links: Tuple[Tuple[str, Tuple[PackagePin, ...]], ...]  # per find-links page
    default: Tuple[PackagePin, ...]  # the user's configured index
    source_builds: Tuple[PackagePin, ...]  # no wheel anywhere: built from source (Jetson torchvision)
    # Requirements as the user wrote them, with no torch-specific build: the configured index too.
    unplanned: Tuple[str, ...] = ()

    @property
    def pinned_elsewhere(self) -> Tuple[PackagePin, ...]:
        """Pins installed before the default-index step, which must not move afterwards."""
        ordered = [p for _, pins in self.indexes for p in pins]
        ordered.extend(self.wheels)
        return tuple(ordered)


def sources(plan: Plan) -> Sources:
    indexes: Dict[str, List[PackagePin]] = {}
    links: Dict[str, List[PackagePin]] = {}
    wheels: List[PackagePin] = []
    default: List[PackagePin] = []
    builds: List[PackagePin] = []
    for pin in plan.packages:
        if is_source_build(pin):
            builds.append(pin)
        elif pin.wheel_url:
            wheels.append(pin)
        elif pin.index_url:
            indexes.setdefault(pin.index_url, []).append(pin)
        elif pin.find_links:
            links.setdefault(pin.find_links, []).append(pin)
        else:
            default.append(pin)
    return Sources(
        indexes=tuple((url, tuple(pins)) for url, pins in indexes.items()),
        wheels=tuple(wheels),
        find_links=tuple((url, tuple(pins)) for url, pins in links.items()),
        default=tuple(default),
        source_builds=tuple(builds),
        unplanned=plan.unplanned,
    )


@dataclass(frozen=True)
class InstallStep:
    """One installer run: pins from one source, each step after the previous one succeeded."""

    source: str  # "index" | "wheels" | "find-links" | "default" | "source-build"
    pins: Tuple[PackagePin, ...]
    url: Optional[str] = None  # the index or the find-links page
    unplanned: Tuple[str, ...] = ()  # the default step's requirements as the user wrote them

    @property
    def pinned(self) -> bool:
        """Only this source: the PyTorch index, with every other index switched off."""
        return self.source == "index"

    @property
    def no_build_isolation(self) -> bool:
        """Built against the torch installed by the steps before (no isolated build env)."""
        return self.source == "source-build"

    @property
    def requirements(self) -> Tuple[str, ...]:
        """Requirement lines: exact pins; wheel URLs (and git sources) as their own source."""
        pinned = tuple(requirement(p) if p.wheel_url else exact_pin(p) for p in self.pins)
        return pinned + self.unplanned

    @property
    def label(self) -> str:
        names = ", ".join([*(p.name for p in self.pins), *self.unplanned])
        if self.source == "source-build":
            return f"{names} built from source against the planned torch"
        where = {"wheels": "their wheel URLs", "default": "your configured index"}
        return f"{names} from {where.get(self.source, self.url or '')}"


def install_steps(plan: Plan) -> Tuple[InstallStep, ...]:
    """The plan's install steps in order: each PyTorch index, direct wheels, find-links pages,
    the configured index, then what is built from source against the torch installed before.
    """
    src = sources(plan)
    steps = [InstallStep("index", pins, url) for url, pins in src.indexes]
    wheels = tuple(p for p in src.wheels if p.variant != "source")  # git sources build last
    if wheels:
        steps.append(InstallStep("wheels", wheels))
    steps.extend(InstallStep("find-links", pins, url) for url, pins in src.find_links)
    if src.default or src.unplanned:
        steps.append(InstallStep("default", src.default, unplanned=src.unplanned))
    built = tuple(p for p in src.wheels if p.variant == "source") + src.source_builds
    if built:
        steps.append(InstallStep("source-build", built))
    return tuple(steps)


_PIP = ("python", "-m", "pip", "install")
_UV = ("uv", "pip", "install")


def install_argvs(
    plan: Plan,
    installer: str = "pip",
    prefix: Optional[Sequence[str]] = None,
    hold: Sequence[str] = (),
) -> List[List[str]]:
    """The install steps of ``plan`` as argv lists, in order (each must succeed before the next).

    ``prefix`` replaces ``python -m pip install`` / ``uv pip install`` (e.g. a venv's python).
    ``hold`` adds pins of packages installed by other means (conda's torch) to every step.
    Jetson's source builds are not commands here: see the jetson format.
    """
    base = list(prefix) if prefix is not None else list(_UV if installer == "uv" else _PIP)
    if prefix is None and installer != "uv" and plan.accelerator == "jetson":
        base[0] = "python3"  # JetPack's system Python has no `python` command
    steps = install_steps(plan)
    pinned = [p for s in steps if s.source in ("index", "wheels") for p in s.pins if p.variant != "source"]
    keep = [*(exact_pin(p) for p in pinned), *hold]
    # uv takes no installed package as a candidate, so the repeated torch pins need their index
    # there: `--index` (not pip's --extra-index-url) ranks it first, and uv's first-index
    # strategy then takes every name that index has from it alone.
    held = ([arg for s in steps if s.pinned and s.url for arg in ("--index", s.url)]
            if installer == "uv" else [])
    # uv: a configured UV_DEFAULT_INDEX beats --index-url; --default-index replaces it.
    only = "--default-index" if installer == "uv" else "--index-url"
    argvs: List[List[str]] = []
    for step in steps:
        if step.source == "index":
            argvs.append([*base, only, str(step.url), *step.requirements, *hold])
        elif step.source == "wheels":
            argvs.extend(download_argv(p) for p in step.pins if p.wheel_filename)
            argvs.append([*base, *step.requirements, *hold])
        elif step.source == "find-links":
            argvs.append([*base, *held, "--find-links", str(step.url), *step.requirements, *keep])
        elif step.source == "default":
            argvs.append([*base, *held, *step.requirements, *keep])
        elif plan.accelerator != "jetson":  # Jetson's source builds: their own steps (--format jetson)
            argvs.append([*base, *held, "--no-build-isolation", *step.requirements, *keep])
    return argvs
