"""Everything in a request besides torch/torchvision/torchaudio, and what it asks of torch.

- xformers / flash-attn: each release is built against one torch (``xformers 0.0.28.post1``
  requires ``torch==2.4.1``): a hard constraint on the torch release.
- mmcv and the torch-geometric extensions (torch-scatter, torch-sparse, torch-cluster,
  torch-spline-conv, pyg-lib): prebuilt wheels exist per torch + CUDA on find-links pages. The
  resolver prefers a torch that has them; when none runs here, the plan keeps the best torch and
  says plainly that pip will build the package from source.
- tensorflow[and-cuda], jax[cuda12]/jax[cuda13]: planned on their own rows (Python, platform,
  driver, compute capability).
- Request.installed: keep the installed torch when the request is about companions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.plan import downstream, published
from torchsmith.plan.core import ARCH, CONFLICT, DRIVER, PLATFORM, PYTHON, Constraint, Job
from torchsmith.plan.extra import NOTHING, Addition, Extra, Finisher
from torchsmith.plan.hostview import HostView
from torchsmith.plan.index import Index
from torchsmith.plan.model import PackagePin, Rejection, Request
from torchsmith.plan.request import Wanted
from torchsmith.versions import driver_tuple, minor_version, sortable_version, version_tuple

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

    from torchsmith.kb import (
        FrameworkBuild,
        KnowledgeBase,
        PairedWheels,
        TorchRelease,
        TorchRequirement,
        VariantBuild,
    )

__all__ = ["Extra", "installed_torch", "prepare"]

FAMILY = ("torch", "torchvision", "torchaudio")
PYG_EXTENSIONS = ("torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib")
TORCH_BOUND = ("xformers", "flash-attn")
FRAMEWORKS = ("tensorflow", "jax")

Specs = List[Tuple["TorchRequirement", Optional["SpecifierSet"]]]


def _spec(text: str) -> Optional[SpecifierSet]:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


def _limits(kb: KnowledgeBase, package: str, extra: str = "") -> Optional[Dict[str, Any]]:
    """The package's documented limits (compute capability floor, platforms), or None."""
    table = kb.document("companion_limits")
    for row in table["rows"]:
        if row["package"] == package and row.get("extra", "") == extra:
            return dict(row, urls=[table["sources"][i] for i in row["source"]])
    return None


def installed_torch(request: Request, wanted: Dict[str, Wanted]) -> Optional[Tuple[str, str]]:
    """(public version, variant) of the installed torch to keep, when the request is not about torch."""
    if any(name in wanted for name in FAMILY):
        return None
    for name, version in request.installed:
        if name == "torch":
            public, _, local = version.partition("+")
            return public, local
    return None


def prepare(job: Job) -> Extra:
    """What every non-family requirement adds: constraints on torch, finishers, warnings."""
    wanted, request = job.wanted, job.request
    extra = Extra()
    records = {n: published.record_for(job, n) for n in wanted if n not in FAMILY and n not in FRAMEWORKS}
    torch_related = [n for n in wanted if n in FAMILY or n in TORCH_BOUND or n in PYG_EXTENSIONS
                     or n in ("mmcv", "mmcv-full") or downstream.known(job.idx.kb, n)
                     or published.relates_to_torch(records.get(n))]
    extra.wants_torch = bool(torch_related) or not wanted
    unread: List[str] = []
    for name, want in wanted.items():
        if name in FAMILY:
            continue
        record = records.get(name)
        if record is not None and (published.newer_than_table(record, _table_newest(job, name))
                                   or _unversioned_row(job, name) or published.from_wheel_pages(record)):
            published.plan_published(job, name, want, record, extra)  # the table stops short
        elif name in TORCH_BOUND:
            _torch_bound(job, name, want, extra)
        elif name in PYG_EXTENSIONS or name in ("mmcv", "mmcv-full"):
            _paired(job, name, want, extra)
        elif downstream.known(job.idx.kb, name):
            downstream.plan_downstream(job, name, want, extra)
        elif name in FRAMEWORKS:
            extra.finishers.append(_framework(job, name, want, extra))
        elif record is not None:
            published.plan_published(job, name, want, record, extra)
        else:
            unread.append(want.text)
    if unread:
        extra.unplanned.extend(unread)  # still installed: last, from the configured index
        extra.wants_torch = True  # unchecked, not torch-free: torch is planned, its pins kept
        why = dict(request.unread)
        reasons = sorted({why.get(parse_name(t), "its published metadata is not in the shipped snapshot "
                                  "and was not read from an index") for t in unread})
        extra.warnings.append(published.unread_warning(unread, "; ".join(reasons)))
    keep = installed_torch(request, wanted)
    if keep is not None and extra.wants_torch:
        extra.constraints.append(_keep_installed(*keep))
    return extra


def parse_name(text: str) -> str:
    from torchsmith.plan.request import parse_requirement

    return parse_requirement(text).name


def _unversioned_row(job: Job, name: str) -> bool:
    """The table names the package without a release (``bitsandbytes``: any): the index knows more."""
    return any(r["package"] == name and not r["version"] for r in job.idx.kb.document("downstream")["rows"])


def _table_newest(job: Job, name: str) -> str:
    """The newest release a hand-kept table has for ``name`` ("" when no table has it)."""
    kb = job.idx.kb
    versions = [r.version for r in kb.torch_requirements(name)] if name in TORCH_BOUND else []
    versions += [str(r["version"]) for r in kb.document("downstream")["rows"]
                 if r["package"] == name and r["version"]]
    return max(versions, key=version_tuple) if versions else ""


def _keep_installed(version: str, variant: str) -> Constraint:
    def keep_installed(release: TorchRelease, build: Optional[VariantBuild]) -> Optional[str]:
        if release.version != version:
            return f"the installed torch is {version}"
        if build is not None and variant and build.name != variant:
            return f"the installed torch is the {variant} build"
        return None

    return Constraint(f"torch=={version}{'+' + variant if variant else ''} (installed)", keep_installed,
                      user_pin=True)


def _too_old_gpu(job: Job, want: Wanted, limits: Optional[Dict[str, Any]], extra: Extra) -> bool:
    """A GPU older than the package's compute-capability floor: fatal, with the reason."""
    gpus = job.view.gpus
    if limits is None or not gpus:
        return False
    floor = version_tuple(limits["min_compute_capability"])
    old = [g for g in gpus if g.cc < (floor[0], floor[1])]
    if not old:
        return False
    extra.fatal = True
    extra.reasons.append(f"{want.text}: needs compute capability ≥ {limits['min_compute_capability']}; "
                         + ", ".join(g.label for g in old) + " is older. " + limits["note"]
                         + f" [source: {'; '.join(limits['urls'])}]")
    extra.rejected.append(Rejection(want.text, "GPU too old for it", ARCH))
    return True


def _torch_bound(job: Job, name: str, want: Wanted, extra: Extra) -> None:
    """xformers / flash-attn: each release is built against one torch, a hard constraint."""
    rows = list(job.idx.kb.torch_requirements(name))
    limits = _limits(job.idx.kb, name)
    if _too_old_gpu(job, want, limits, extra):
        return
    matching = [r for r in rows if want.allows(r.version, job.request.allow_prerelease)]
    if rows and not matching:
        matching = _post_releases(job, name, want, rows, extra)
    if not rows:
        extra.warnings.append(f"{name}: no rows in the data; planned torch without its constraint "
                              f"and left {name} out")
        return
    if not matching:
        extra.fatal = True
        known = ", ".join(r.version for r in rows[:6])
        extra.reasons.append(f"no {name} release in the data matches {want.text} (known: {known})")
        return
    specs: Specs = [(r, _spec(r.torch)) for r in matching]

    def torch_allowed(release: TorchRelease, build: Optional[VariantBuild]) -> Optional[str]:
        for row, spec in specs:
            fits = spec is not None and spec.contains(release.version, prereleases=True)
            if fits and (build is None or not row.variants or build.name in row.variants
                         or build.kind != "cuda"):
                return None
        # Shortest first; ties by text, so the message is the same on every run (set order is not).
        wants = sorted({f"torch{r.torch}" for r, _ in specs}, key=lambda t: (len(t), t))[:3]
        return f"{want.text} needs {' or '.join(wants)}"

    extra.constraints.append(Constraint(f"{want.text} ({want.origin})", torch_allowed))
    extra.finishers.append(_torch_bound_finisher(name, specs, limits))


def _post_releases(job: Job, name: str, want: Wanted, rows: Sequence[TorchRequirement], extra: Extra
                   ) -> List[TorchRequirement]:
    """A release the table lacks that its index publishes as a ``.post`` of a table release (same
    sources, rebuilt): planned with that release's torch pin, and said so."""
    from packaging.version import Version

    from torchsmith.records import replace

    record = published.record_for(job, name)
    found: List[TorchRequirement] = []
    for release in record.releases if record is not None else ():
        if not want.allows(release.version, job.request.allow_prerelease):
            continue
        base = Version(release.public).release
        same = [r for r in rows if Version(r.version).release == base]
        if same:
            found.append(replace(same[0], version=release.public))
            extra.warnings.append(f"{name} {release.public} is not in the table; its index publishes it as a "
                                  f"post-release of {same[0].version}, planned with that release's torch pin "
                                  f"(torch{same[0].torch}) [source: {record.source if record else ''}]")
            break
    return found


def _torch_bound_finisher(name: str, specs: Specs, limits: Optional[Dict[str, Any]]) -> Finisher:
    def finisher(torch: Optional[PackagePin], _variant: Optional[str], view: HostView, idx: Index
                 ) -> Addition:
        if torch is None:
            return NOTHING
        fitting = [r for r, spec in specs
                   if spec is not None and spec.contains(torch.version, prereleases=True)]
        fitting.sort(key=lambda r: sortable_version(r.version), reverse=True)
        if not fitting:
            return Addition(warnings=(f"{name}: no release in the data is built against torch "
                                      f"{torch.version}; build it from source against this torch",))
        row = fitting[0]
        on_index = torch.variant is not None and torch.variant in row.variants
        # flash-attn: PyPI has only its source distribution, so pip builds it either way.
        if not on_index and (not _plain_cuda_torch(torch) or name == "flash-attn"):
            # PyPI's wheel is built for PyPI's CUDA torch: on a Jetson, ROCm or CPU torch it would
            # not load, and installing it could replace torch.
            return Addition(packages=(PackagePin(name, row.version, "source"),),
                            warnings=(f"{name} {row.version}: no prebuilt wheel for torch {torch.version} "
                                      f"({torch.variant}); build it from source with --no-build-isolation "
                                      f"so it compiles against the planned torch",))
        warnings: List[str] = []
        if limits is not None:
            warnings.append(f"{name}: {limits['note']} [source: {'; '.join(limits['urls'])}]")
            if view.platform not in limits["platforms"]:
                warnings.append(f"{name}: no prebuilt wheels for {view.platform}: it builds from source")
        return Addition(packages=(PackagePin(name, row.version, torch.variant if on_index else None,
                                             torch.index_url if on_index else None),),
                        reasons=(f"{name} {row.version} is built against torch{row.torch}"
                                 + (f", published on the {torch.variant} index" if on_index else "")
                                 + idx.cite(row.sources, 1),),
                        warnings=tuple(warnings))

    return finisher


def _plain_cuda_torch(torch: PackagePin) -> bool:
    """A torch whose CUDA build a PyPI companion wheel can load against (not Jetson/ROCm/CPU)."""
    return torch.variant is None or torch.variant.startswith("cu")


class _Pages:
    """The find-links pages of one paired package (mmcv, a torch-geometric extension)."""

    def __init__(self, name: str, want: Wanted, rows: Sequence[PairedWheels]) -> None:
        self.name, self.want, self.rows = name, want, rows

    def versions_of(self, row: PairedWheels) -> List[str]:
        if not row.versions:
            return [""]  # the page's versions are not in the data: pin by name, pip picks from the page
        found: List[str] = []
        for text in row.versions:
            package, _, version = text.rpartition(" ")
            if package and package.replace("_", "-") != self.name:
                continue
            if self.want.allows(version or text):
                found.append(version or text)
        return found

    def page_for(self, release_version: str, variant: str) -> Optional[Tuple[PairedWheels, List[str]]]:
        for row in self.rows:
            series = row.torch if row.torch.count(".") == 1 else minor_version(row.torch)
            if series == minor_version(release_version) and row.variant == variant:
                versions = self.versions_of(row)
                if versions:
                    return row, versions
        return None

    def prebuilt(self, release: TorchRelease, build: Optional[VariantBuild]) -> Optional[str]:
        if build is None or self.page_for(release.version, build.name) is not None:
            return None
        return f"no prebuilt {self.name} for torch {minor_version(release.version)} + {build.name}"

    def finish(self, torch: Optional[PackagePin], _variant: Optional[str], view: HostView, idx: Index
               ) -> Addition:
        if torch is None:
            return NOTHING
        name = self.name
        found = self.page_for(torch.version, torch.variant or "cpu")
        if found is not None:
            row, versions = found
            best = max(versions, key=sortable_version)
            label = f"{name} {best}" if best else name
            series = minor_version(torch.version)
            return Addition(packages=(PackagePin(name, best, torch.variant, find_links=row.find_links),),
                            reasons=(f"{label}: prebuilt for torch {series} + {torch.variant} "
                                     f"on {row.find_links}{idx.cite(row.sources, 1)}",))
        every = [v for row in self.rows for v in self.versions_of(row) if v]
        source = (PackagePin(name, max(every, key=sortable_version), "source"),) if every else ()
        return Addition(packages=source, warnings=(
            f"{name}: no prebuilt wheel for torch {torch.version} + {torch.variant}: pip will build "
            f"it from source (needs a CUDA toolkit whose nvcc matches torch's CUDA, a C++ compiler, "
            f"and `--no-build-isolation` so it builds against the planned torch)",))


def _paired(job: Job, name: str, want: Wanted, extra: Extra) -> None:
    """mmcv / torch-geometric extensions: prefer a torch with a prebuilt find-links page."""
    kb = job.idx.kb
    group = "mmcv" if name.startswith("mmcv") else "pyg"
    rows = list(kb.paired_wheels(group))
    if group != name:
        rows = [r for r in rows if r.package == group] + list(kb.paired_wheels(name))
    if not rows:
        extra.warnings.append(f"{name}: no prebuilt-wheel pages in the data; pip will build it from source")
        return
    pages = _Pages(name, want, rows)
    extra.soft.append(Constraint(f"{want.text} (prebuilt wheels)", pages.prebuilt))
    extra.finishers.append(pages.finish)


def _framework(job: Job, name: str, want: Wanted, extra: Extra) -> Finisher:
    """tensorflow[and-cuda] / jax[cuda12|cuda13]: their rows, checked against this host."""
    machine, view, idx = job.machine, job.view, job.idx
    gpu_extra = next((e for e in sorted(want.extras) if "cuda" in e), "")
    every = idx.kb.framework_builds(name)
    rows = [r for r in every if r.extra == gpu_extra]
    if not gpu_extra and not any(view.platform in r.platforms for r in rows):
        rows = list(every)  # no plain rows for this platform: the GPU rows say what exists
    rows.sort(key=lambda r: sortable_version(r.version), reverse=True)
    limits = _limits(idx.kb, name, gpu_extra if name == "jax" else "")
    chosen: Optional[FrameworkBuild] = None
    rejected: List[Rejection] = []
    for row in rows:
        label = f"{name}{'[' + gpu_extra + ']' if gpu_extra else ''} {row.version}"
        why = _framework_problem(job, row, want, gpu_extra, limits)
        if why is None:
            chosen = row
            break
        rejected.append(Rejection(label, why[1] + idx.cite(row.sources, 1), why[0]))
    extra.rejected.extend(rejected[:6])
    if chosen is not None:
        return _framework_finisher(name, want, gpu_extra, chosen)
    extra.fatal = extra.fatal or not rows or bool(rejected)
    if not rows:
        extra.reasons.append(f"{want.text}: no rows for {name} in the data")
    else:
        extra.reasons.append(f"no {name} release runs here: see rejected")
        if machine.os.system == "windows" and limits is not None:
            extra.reasons.append(limits["note"])
    return _nothing


def _nothing(torch: Optional[PackagePin], variant: Optional[str], view: HostView, idx: Index) -> Addition:
    return NOTHING


def _framework_finisher(name: str, want: Wanted, gpu_extra: str, row: FrameworkBuild) -> Finisher:
    def finisher(torch: Optional[PackagePin], variant: Optional[str], view: HostView, idx: Index
                 ) -> Addition:
        extras = (gpu_extra,) if gpu_extra else ()
        reason = (f"{name} {row.version}{' [' + gpu_extra + ']' if gpu_extra else ''}: the newest release "
                  f"for Python {view.python.rstrip('t')} on {view.platform}"
                  + (f", CUDA {row.cuda}" if row.cuda else "")
                  + (f", cuDNN {row.cudnn}" if row.cudnn else "")
                  + (f", driver ≥ {row.min_driver_linux}" if row.min_driver_linux and gpu_extra else "")
                  + idx.cite(row.sources, 1))
        unused = (f"{want.text}: no NVIDIA GPU here, the CUDA libraries are unused",)
        return Addition(packages=(PackagePin(name, row.version, None, None, extras=extras),),
                        reasons=(reason,), warnings=unused if gpu_extra and not view.gpus else (),
                        accelerator="cuda" if gpu_extra and not variant else None)

    return finisher


def _framework_problem(job: Job, row: FrameworkBuild, want: Wanted, gpu_extra: str,
                       limits: Optional[Dict[str, Any]]) -> Optional[Tuple[str, str]]:
    view = job.view
    py = view.python.rstrip("t")
    if not want.allows(row.version):
        return CONFLICT, f"{want.text} excludes it"
    if view.platform not in tuple(row.platforms):
        note = f" ({limits['note']})" if limits and gpu_extra else ""
        return PLATFORM, f"no {'GPU ' if gpu_extra else ''}wheel for {view.shown_platform}{note}"
    if py not in tuple(row.python):
        return PYTHON, f"no wheel for Python {py} (has {', '.join(row.python)})"
    if gpu_extra and view.gpus:
        floor_driver = row.min_driver_linux
        if floor_driver and view.driver and driver_tuple(view.driver) < driver_tuple(floor_driver):
            return DRIVER, f"needs NVIDIA driver ≥ {row.min_driver_linux}; found {view.driver}"
        if limits is not None:
            floor = version_tuple(limits["min_compute_capability"])
            old = [g for g in view.gpus if g.cc < (floor[0], floor[1])]
            if old:
                return ARCH, (f"needs compute capability ≥ {limits['min_compute_capability']}; "
                              + ", ".join(g.label for g in old) + " is older")
    return None
