"""Any package planned from its own published metadata (``kb.pkgmeta.PackageRecord``).

The record comes from a live read of the user's index (``Request.published``) or the shipped
snapshot (``package_meta.json``). What it says decides the plan, not a table of names:

- a release whose ``Requires-Dist`` pins torch (or torchvision/torchaudio) constrains torch;
- a release whose local label or page encodes a torch/CUDA build (``+pt28cu128``) pairs with
  that build only;
- a release installs here when a wheel's tags fit the platform, Python and glibc, or from its
  source distribution unless ``--only-binary :all:`` forbids building;
- a package that names none of these is pinned beside any torch, and said so.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from torchsmith.kb.buildlabel import torch_releases
from torchsmith.kb.pkgmeta import PackageRecord, ReleaseRecord, canonical
from torchsmith.output import Caution
from torchsmith.plan.constraints import cxx11_abi
from torchsmith.plan.core import CONFLICT, PLATFORM, Constraint, ConstraintCheck, Job
from torchsmith.plan.extra import Addition, Extra, Finisher
from torchsmith.plan.hostview import HostView
from torchsmith.plan.index import Index
from torchsmith.plan.model import PackagePin, Rejection, Request
from torchsmith.plan.request import Wanted
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase, TorchRelease, VariantBuild

__all__ = ["covered_names", "from_wheel_pages", "newer_than_table", "pairing_release", "plan_published",
           "record_for", "relates_to_torch", "spec_allows", "unread_warning"]

FAMILY_SPECS = ("torch", "torchvision", "torchaudio")
# Planned from their own tables (companions.py): never read live.
KNOWN_ELSEWHERE = ("torch", "torchvision", "torchaudio", "tensorflow", "jax", "xformers", "flash-attn",
                   "mmcv", "mmcv-full", "torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv",
                   "pyg-lib")


def snapshot_record(kb: KnowledgeBase, name: str) -> Optional[PackageRecord]:
    for package in kb.document("package_meta")["packages"]:
        if canonical(package["name"]) == name:
            return PackageRecord.from_json(package)
    return None


def dependency_record(kb: KnowledgeBase, name: str) -> Optional[PackageRecord]:
    """A package the snapshot's requirements lead to torch through (``package_deps.json``, read
    only here: when a chain is followed offline)."""
    for package in kb.document("package_deps")["packages"]:
        if canonical(package["name"]) == name:
            return PackageRecord.from_json(package)
    return None


def covered_names(kb: KnowledgeBase) -> List[str]:
    """Every package the shipped snapshot or a hand-kept table covers (never read live)."""
    snapshot = [canonical(str(p["name"])) for p in kb.document("package_meta")["packages"]]
    return [*KNOWN_ELSEWHERE, *snapshot, *(r["package"] for r in kb.document("downstream")["rows"])]


def names_to_read(request: Request, kb: KnowledgeBase) -> List[str]:
    """The requested packages that neither the snapshot nor a hand-kept table covers."""
    from torchsmith.plan.request import parse_requirements

    names = [w.name for w in parse_requirements(list(request.requirements)) if w.name not in KNOWN_ELSEWHERE]
    if not names:
        return []
    snapshot = {canonical(str(p["name"])) for p in kb.document("package_meta")["packages"]}
    tables = {r["package"] for r in kb.document("downstream")["rows"]}
    return [n for n in names if n not in snapshot and n not in tables]


def record_for(job: Job, name: str) -> Optional[PackageRecord]:
    """The live record when one was read, else the snapshot's (requirements as they apply
    here); None when neither has ``name``."""
    found = next((r for r in job.request.published if r.name == name), None)
    if found is None:
        found = snapshot_record(job.idx.kb, name)
    if found is None or not found.releases:
        return None
    found = found.read_against(torch_releases(job.idx.kb))
    want = job.wanted.get(name)
    record = applied(job.view, want, found) if want is not None else found
    return _through_dependencies(job, record) if any(r.depends for r in record.releases) else record


def _through_dependencies(job: Job, record: PackageRecord) -> PackageRecord:
    """``record`` with what its dependencies ask of torch (plan/transitive.py)."""
    from torchsmith.plan.transitive import with_inherited

    kb = job.idx.kb
    environment = marker_environment(job.view)

    def lookup(name: str) -> Optional[PackageRecord]:
        found = (next((r for r in job.request.published if r.name == name), None) or snapshot_record(kb, name)
                 or dependency_record(kb, name))
        return found.read_against(torch_releases(kb)) if found is not None else None

    def fits(release: ReleaseRecord, torch: str) -> bool:
        row = kb.release(torch)
        return _torch_fits(release, torch, None, (row.torchvision or "") if row else "",
                           (row.torchaudio or "") if row else "")

    return with_inherited(record, [r.version for r in kb.releases], lookup, fits,
                          lambda r: r.applied(environment, ()), python=job.view.python.rstrip("t"))


def newer_python_for(job: Job, name: str) -> Tuple[str, str]:
    """(Python "3.10", the chain) when the newest release of ``name`` within what is asked is held
    back by a dependency none of whose releases installs on the planned Python; else ("", "")."""
    record = record_for(job, name) if name in job.wanted else None
    want = job.wanted.get(name)
    for release in record.releases if record is not None else ():
        if want is not None and not spec_allows(want.spec, release.public):
            continue
        held = next((i for i in release.inherited if i.python and not i.allowed), None)
        return (held.python, f"{name} {release.version} needs {held.chain}") if held else ("", "")
    return "", ""


def relates_to_torch(record: Optional[PackageRecord]) -> bool:
    """Its releases pin part of the torch family, or encode the torch/CUDA build they need, or
    their requirements are unread (so torch is planned, and the plan says what was not checked)."""
    return record is not None and any(r.build is not None or r.metadata == "none" or r.inherited
                                      or any(r.requirement(n) for n in FAMILY_SPECS) for r in record.releases)


def from_wheel_pages(record: Optional[PackageRecord]) -> bool:
    """Some releases were read from the project's own wheel pages (``kb refresh --wheel-pages``):
    they are the prebuilt wheels, so the record, not a hand-kept table, plans the package."""
    return record is not None and any(r.url for r in record.releases)


def newer_than_table(record: Optional[PackageRecord], newest_in_table: str) -> bool:
    """The index has a final release newer than the table's newest row: the table is stale."""
    if record is None or not newest_in_table:
        return False
    finals = [r.public for r in record.releases if not _pre(r.public)]
    return bool(finals) and max(version_tuple(v) for v in finals) > version_tuple(newest_in_table)


def _pre(version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version).is_prerelease
    except InvalidVersion:
        return True


def _cite(record: PackageRecord) -> str:
    how = "read now" if record.live else f"snapshot of {record.retrieved}"
    return f" [source: {record.source}, {how}]"


def unread_builds(name: str, releases: List[ReleaseRecord], record: PackageRecord, *, left: bool) -> str:
    shown = "; ".join(f"{r.version} ({r.build.unread})" for r in releases[:3] if r.build is not None)
    more = f" and {len(releases) - 3} more" if len(releases) > 3 else ""
    then = ("; nothing else matches, so it is installed last from your configured index, with the "
            "torch pins kept, and not checked" if left else "")
    return (f"could not read which torch {name} {shown}{more} is built for: the packed digits name "
            f"no torch release in the data, or two; left out of the pairing rather than guessed"
            f"{then}{_cite(record)}")


def unread_warning(names: List[str], reason: str) -> str:
    # Unchecked, the package may pull another torch over the planned one: part of the answer.
    return Caution(f"could not check {', '.join(names)}: {reason}; torch was planned without what "
                   f"{'they ask' if len(names) > 1 else 'it asks'} of torch; installed last from your "
                   f"configured index, with the torch pins kept")


class _Fit:
    """Which releases of one package install on this host, and why the others do not."""

    def __init__(self, job: Job, want: Wanted, record: PackageRecord) -> None:
        self.job, self.want, self.record = job, want, record
        view = job.view
        glibc_text = job.machine.os.glibc if view.platform.startswith("linux-") else ""
        self.glibc: Optional[Tuple[int, int]] = None
        if glibc_text:
            parts = version_tuple(glibc_text)
            self.glibc = (parts[0], parts[1] if len(parts) > 1 else 0)
        self.only_binary = job.request.only_binary

    def asked(self) -> List[ReleaseRecord]:
        allow_pre = self.job.request.allow_prerelease
        return [r for r in self.record.releases
                if (allow_pre or not _pre(r.public)) and self.want.allows(r.version, allow_pre)]

    def has_wheel(self, release: ReleaseRecord) -> bool:
        view = self.job.view
        return release.installs_on(view.platform, view.python, self.glibc)

    def python_ok(self, release: ReleaseRecord) -> bool:
        if not release.requires_python:
            return True
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            return SpecifierSet(release.requires_python).contains(self.job.view.python.rstrip("t"), True)
        except InvalidSpecifier:
            return True

    def installable(self, release: ReleaseRecord) -> bool:
        if not self.python_ok(release):
            return False
        return self.has_wheel(release) or (release.sdist and not self.only_binary)

    def why_not(self, release: ReleaseRecord) -> str:
        view = self.job.view
        if not self.python_ok(release):
            return f"Requires-Python {release.requires_python} excludes Python {view.python}"
        if release.sdist and self.only_binary:
            return (f"source only for {view.shown_platform} / Python {view.python}, and --only-binary "
                    f"forbids building")
        return f"no wheel for {view.shown_platform} / Python {view.python} and no source distribution"


def marker_environment(view: HostView) -> Dict[str, str]:
    """PEP 508 marker variables of the planned machine (never this one's, when described)."""
    system, _, arch = view.platform.partition("-")
    python = view.python.rstrip("t").split(" ")[-1]
    return {"python_version": python, "python_full_version": f"{python}.0",
            "sys_platform": {"linux": "linux", "windows": "win32", "macos": "darwin"}.get(system, system),
            "platform_system": {"linux": "Linux", "windows": "Windows", "macos": "Darwin"}.get(system,
                                                                                              system),
            "platform_machine": {"windows-x86_64": "AMD64"}.get(view.platform, arch),
            "os_name": "nt" if system == "windows" else "posix", "implementation_name": "cpython",
            "platform_python_implementation": "CPython"}


def applied(view: HostView, want: Wanted, record: PackageRecord) -> PackageRecord:
    """``record`` with each release's requirements as they apply here, with the extras asked."""
    from torchsmith.records import replace

    environment = marker_environment(view)
    extras = tuple(sorted(want.extras))
    releases = tuple(r.applied(environment, extras) for r in record.releases)
    return replace(record, releases=releases)


def plan_published(job: Job, name: str, want: Wanted, record: PackageRecord, extra: Extra) -> None:
    """Constraints on torch from ``record`` and a finisher that pins the package."""
    fit = _Fit(job, want, record)
    asked = fit.asked()
    if not asked:
        extra.fatal = True
        shown = ", ".join(r.version for r in record.releases[:5]) or "none"
        extra.reasons.append(f"no {name} release on its index matches {want.text} (newest: {shown})"
                             + _cite(record))
        extra.rejected.append(Rejection(want.text, "no such release", CONFLICT))
        return
    unread = [r for r in asked if r.build is not None and r.build.unread]
    if unread:  # which torch these wheels need is not known: said, never paired by a guess
        asked = [r for r in asked if r not in unread]
        extra.warnings.append(unread_builds(name, unread, record, left=not asked))
        if not asked:
            extra.unplanned.append(want.text)
            return
    usable = [r for r in asked if fit.installable(r)]
    if not usable:
        _none_installs(fit, name, asked, extra)
        return
    constraining = [r for r in usable if r.build is not None or r.inherited
                    or any(r.requirement(n) for n in FAMILY_SPECS)]
    if constraining and len(constraining) == len(usable):
        extra.constraints.append(Constraint(f"{want.text} ({want.origin})", _torch_check(want, usable)))
    elif constraining:  # some releases leave torch free: a preference, not a rule
        extra.soft.append(Constraint(f"{want.text} (published pins)", _torch_check(want, constraining)))
    extra.preferred.append(_tiers(want, constraining))
    wheels = [r for r in usable if fit.has_wheel(r)]
    if wheels and len(wheels) < len(usable):
        extra.soft.append(Constraint(f"{want.text} (a prebuilt wheel)", _torch_check(want, wheels)))
    extra.finishers.append(_finisher(fit, name, usable))


def _tiers(want: Wanted, releases: List[ReleaseRecord], most: int = 8) -> List[Constraint]:
    """One constraint per distinct torch need, newest release first (consecutive equal needs merge)."""
    groups: List[List[ReleaseRecord]] = []
    for release in releases:
        if groups and _needs(groups[-1][0]).split(" (")[0] == _needs(release).split(" (")[0]:
            groups[-1].append(release)
        else:
            groups.append([release])
    return [Constraint(f"{want.text} {group[0].version} (newest that fits)", _torch_check(want, group))
            for group in groups[:most]]


def _none_installs(fit: _Fit, name: str, asked: List[ReleaseRecord], extra: Extra) -> None:
    """Nothing asked for installs here: say why, and the nearest release that would."""
    view = fit.job.view
    extra.fatal = True
    first = asked[0]
    nearest = next((r for r in fit.record.releases if fit.python_ok(r) and fit.has_wheel(r)), None)
    door = (f"; the nearest release with a wheel for {view.shown_platform} / Python {view.python} is "
            f"{name}=={nearest.version}" if nearest is not None else
            f"; no release on its index has a wheel for {view.shown_platform} / Python {view.python}")
    extra.reasons.append(f"{fit.want.text}: {fit.why_not(first)}{door}{_cite(fit.record)}")
    extra.rejected.append(Rejection(f"{name} {first.version}", fit.why_not(first), PLATFORM))


def _torch_fits(release: ReleaseRecord, torch: str, build: Optional[VariantBuild], tv: str, ta: str) -> bool:
    """Whether ``release`` installs beside this torch. A pin on torch decides; without one, a pin
    on torchvision/torchaudio is compared with the series paired with this torch (its data row)."""

    if any(torch.split("+", 1)[0] not in through.allowed for through in release.inherited):
        return False  # a dependency's pin on torch (whisperx -> pyannote-audio -> torch)
    if release.requirement("torch") not in ("", "*"):
        if not _meets(release.requirement("torch"), torch, series=False):
            return False
    elif not all(_meets(release.requirement(n), paired, series=True)
                 for n, paired in (("torchvision", tv), ("torchaudio", ta)) if paired):
        return False
    encoded = release.build
    if encoded is not None and build is not None:
        return encoded.fits(torch, build.kind, build.cuda, build.rocm)
    if encoded is not None and encoded.torch:
        return encoded.fits(torch, "cuda" if encoded.cuda else "rocm" if encoded.rocm else "cpu",
                            encoded.cuda or None, encoded.rocm or None)
    return True


@lru_cache(maxsize=8192)
def _meets(spec: str, version: str, series: bool) -> bool:
    """``version`` meets ``spec``; with ``series``, an exact pin only needs the same major.minor
    (torchvision 0.29.0 and 0.29.1 pair with the same torch)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not spec or spec == "*":
        return True
    try:
        specifier = SpecifierSet(spec)
    except InvalidSpecifier:
        return True
    exact = [s.version for s in specifier if s.operator in ("==", "===")]
    if series and exact:
        return all(pin.split(".")[:2] == version.split(".")[:2] for pin in exact)
    return specifier.contains(version, prereleases=True)


def spec_allows(spec: str, version: str) -> bool:
    """``version`` (``2.6.0+cu126``) meets a requirement's specifier (``>=2.4``, ``==2.6.0``)."""
    return _meets(spec, version, series=False) or _meets(spec, version.split("+", 1)[0], series=False)


def pairing_release(record: PackageRecord, torch: str, kb: KnowledgeBase,
                    allowed: str = "") -> Optional[ReleaseRecord]:
    """The newest final release of ``record`` (within ``allowed``, a specifier) that installs
    beside torch ``torch`` by its published pins; None when none does."""
    row = kb.release(torch)
    tv = (row.torchvision or "") if row is not None else ""
    ta = (row.torchaudio or "") if row is not None else ""
    for release in record.read_against(torch_releases(kb)).releases:
        if _pre(release.public) or (allowed and not spec_allows(allowed, release.version)):
            continue
        read = release.metadata != "none" or release.build is not None
        if read and _torch_fits(release, torch, None, tv, ta):
            return release
    return None


def _torch_check(want: Wanted, releases: List[ReleaseRecord]) -> ConstraintCheck:
    def allowed(release: TorchRelease, build: Optional[VariantBuild]) -> Optional[str]:
        tv, ta = release.torchvision or "", release.torchaudio or ""
        if any(_torch_fits(r, release.version, build, tv, ta) for r in releases):
            return None
        return f"{want.text} needs " + " or ".join(_needs(r) for r in releases[:3])

    return allowed


def _needs(release: ReleaseRecord) -> str:
    parts = [f"{n}{release.requirement(n)}" for n in FAMILY_SPECS if release.requirement(n) not in ("", "*")]
    if release.build is not None:
        parts.append(f"a {release.build.label} build")
    said = " ".join(parts)
    through = "; ".join(f"{chain.chain}" for chain in release.inherited)
    if through:
        said = f"{said}, and {through}" if said else through
    return f"{said or 'any torch'} ({release.version})"


def _finisher(fit: _Fit, name: str, usable: List[ReleaseRecord]) -> Finisher:
    record = fit.record

    def finisher(torch: Optional[PackagePin], _variant: Optional[str], view: HostView, idx: Index
                 ) -> Addition:
        if torch is None:  # nothing asks for torch: the package alone
            return _addition(fit, name, usable[0], None)
        release_row = idx.kb.release(torch.version)
        build = release_row.variant(torch.variant) if release_row is not None and torch.variant else None
        tv = (release_row.torchvision or "") if release_row is not None else ""
        ta = (release_row.torchaudio or "") if release_row is not None else ""
        fitting = [r for r in usable if _torch_fits(r, torch.version, build, tv, ta)]
        abi = cxx11_abi(idx.kb, view.platform, torch.version, torch.variant)
        same_abi = [r for r in fitting if r.build is None or r.build.cxx11abi in (None, abi) or abi is None]
        fitting = same_abi or fitting  # a wheel of the other C++ ABI fails to load: never preferred
        fitting.sort(key=lambda r: (fit.has_wheel(r),), reverse=True)  # stable: newest wheel first
        if not fitting:
            return Addition(warnings=(f"{name}: no release on its index fits torch {torch.version}"
                                      f"{'+' + torch.variant if torch.variant else ''} (its releases need "
                                      + "; ".join(_needs(r) for r in usable[:3]) + ")" + _cite(record),))
        chosen = fitting[0]
        return _addition(fit, name, chosen, torch)

    return finisher


def _addition(fit: _Fit, name: str, chosen: ReleaseRecord, torch: Optional[PackagePin]) -> Addition:
    record = fit.record
    local = chosen.version.partition("+")[2]
    source = not fit.has_wheel(chosen)
    pin = PackagePin(name, chosen.public, "source" if source else None, find_links=chosen.url or None,
                     local_version=f"+{local}" if local else None)
    said = [f"{n}{chosen.requirement(n)}" for n in FAMILY_SPECS if chosen.requirement(n) not in ("", "*")]
    if chosen.build is not None:
        what = f"its wheel is built for {chosen.build.label}"
    elif said or chosen.inherited:
        what = "; ".join([*(["Requires-Dist " + ", ".join(said)] if said else []),
                          *(f"needs {through.chain}" for through in chosen.inherited)])
    elif chosen.metadata == "none":
        what = "its Requires-Dist was not published as a metadata file: not checked against torch"
    else:
        what = "Requires-Dist names no torch: any torch"
    unchecked = chosen.build is None and not said and chosen.metadata == "none"
    fits = f", fits torch {torch.version}" if torch is not None and not unchecked else ""
    reasons = (f"{name} {chosen.version}: {what}{fits}{_cite(record)}",)
    warnings: Tuple[str, ...] = ()
    if unchecked:
        warnings = (f"could not check {name} {chosen.version} against torch: its index publishes no "
                    f"core-metadata file (PEP 658) for it; pip resolves its requirements when it installs",)
    if source:
        warnings += (f"{name} {chosen.version}: no wheel for {fit.job.view.shown_platform} / Python "
                    f"{fit.job.view.python}; pip builds it from source (with --no-build-isolation so it "
                    f"builds against the planned torch; --only-binary :all: forbids this)",)
    return Addition(packages=(pin,), reasons=reasons, warnings=warnings)
