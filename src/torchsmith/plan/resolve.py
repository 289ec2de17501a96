"""The resolver: which torch stack runs on this host, and why the better-looking ones do not.

``resolve(machine, request, kb) -> Plan`` is a pure function of its inputs: no I/O, no probing,
no clock. It walks torch releases newest first and, for each, the variants built for the host's
accelerator, checking in order: the platform has the variant, the Python has a wheel, every GPU
the job uses has SASS (or usable PTX) in the build, and the driver runs the variant's CUDA (fully,
or through NVIDIA's minor-version compatibility). The first release with a working variant wins;
within it, full driver support beats minor-version compatibility, then the newest CUDA.
Everything newer that was turned down is listed in ``Plan.rejected`` with a stable code.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from torchsmith.compat import (
    NO_JIT,
    DriverVersion,
    Kernel,
    driver_support,
    full_support_floor,
    gpu_verdict,
    kernel_for,
)
from torchsmith.machine import Machine
from torchsmith.plan.hostview import GpuView, HostView, host_view
from torchsmith.plan.model import Blocker, Door, PackagePin, Plan, Rejection, Request
from torchsmith.plan.request import Wanted, parse_requirements
from torchsmith.versions import minor_version, version_tuple

__all__ = [
    "DEFAULT_REQUIREMENTS",
    "MatrixRow",
    "matrix",
    "recommend",
    "resolve",
    "torch_index_url",
]

DEFAULT_REQUIREMENTS = Request().requirements
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
PYTORCH_INDEX_MARK = "/whl/"

# Stable rejection codes (documented in docs/plan.md).
ARCH = "arch-not-compiled"
DRIVER = "driver-too-old"
PYTHON = "no-wheel-for-python"
PLATFORM = "no-wheel-for-platform"
CONFLICT = "conflicts-with-requirement"
NO_GPU_BUILD = "no-gpu-support"


def torch_index_url(url: Optional[str], base: Optional[str]) -> Optional[str]:
    """A PyTorch index URL from the data, moved onto a mirror: ``<base>/cu126``."""
    if not url or not base or PYTORCH_INDEX_MARK not in url:
        return url
    return base.rstrip("/") + "/" + url.split(PYTORCH_INDEX_MARK, 1)[1].lstrip("/")


# --------------------------------------------------------------------------------------------
# Facts from the data, indexed once per knowledge base
# --------------------------------------------------------------------------------------------


# Records here are NamedTuples and plain classes: dataclass creation costs start-up time that
# `plan --json` (250 ms budget, shared with probing and loading the data) cannot spare.
class _Release(NamedTuple):
    data: Any
    version: Version
    text: str


class _Index:
    """Parsed versions and sources of one knowledge base, built once."""

    def __init__(self, kb: Any) -> None:
        self.kb = kb
        releases: List[_Release] = []
        for release in kb.releases:
            try:
                releases.append(_Release(release, Version(release.version), release.version))
            except InvalidVersion:
                continue  # the KB loader validates; a bad row is skipped, not fatal
        self.releases = tuple(releases)
        # Integrated Jetson GPUs run only code built for exactly their arch (and only on L4T):
        # desktop SASS for the same major (sm_80 for Orin's sm_87) is no use to them.
        self.tegra: Dict[Tuple[int, ...], str] = {}
        for gpu in getattr(kb, "gpus", ()):
            if getattr(gpu, "jetson", False):
                self.tegra.setdefault(version_tuple(gpu.compute_capability)[:2], gpu.name)
        self._cites: Dict[Tuple[Tuple[str, ...], int], str] = {}
        self.urls: Dict[str, str] = {}
        for key, source in dict(kb.sources).items():
            self.urls[key] = str(getattr(source, "url", "") or getattr(source, "title", "") or key)

    def cite(self, ids: Iterable[str], limit: int = 2) -> str:
        key = (tuple(ids), limit)
        text = self._cites.get(key)
        if text is None:
            picked = [self.urls.get(i, i) for i in list(dict.fromkeys(key[0]))[:limit] if i]
            text = self._cites[key] = f" [source: {'; '.join(picked)}]" if picked else ""
        return text


_INDEXES: Dict[int, _Index] = {}


def _index(kb: Any) -> _Index:
    cached = _INDEXES.get(id(kb))
    if cached is None or cached.kb is not kb:
        cached = _Index(kb)
        if len(_INDEXES) > 8:
            _INDEXES.clear()
        _INDEXES[id(kb)] = cached
    return cached


class Job(NamedTuple):
    """One resolution: the machine, its reduced view, the indexed data and the request."""

    machine: Machine
    view: HostView
    idx: _Index
    wanted: Dict[str, Wanted]
    request: Request


# --------------------------------------------------------------------------------------------
# Checking one (release, variant) on one host
# --------------------------------------------------------------------------------------------


class Check(NamedTuple):
    """The verdict on one torch release + variant for this host."""

    release: _Release
    variant: Any
    code: str = ""  # "" = runs here
    reason: str = ""
    driver_mode: str = ""  # "full" | "minor-compat" | "unknown" | "" (no CUDA)
    gpu_lines: Tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.code

    @property
    def label(self) -> str:
        return f"torch {self.release.text} {self.variant.name}"


def _sass(variant: Any, platform: str) -> Tuple[str, ...]:
    return tuple(variant.sass(platform) or ())


def _ptx(variant: Any, platform: str) -> Tuple[str, ...]:
    return tuple(variant.ptx(platform) or ())


def _driver_mode(kb: Any, view: HostView, cuda: str) -> Tuple[str, str, str]:
    """(mode, needed-full, floor): mode is full | minor-compat | too-old | unknown."""
    support = driver_support(kb.cuda_release(cuda), cuda, view.driver_system, view.driver, view.driver_cuda)
    return support.mode, support.full, support.floor


def check_variant(idx: _Index, view: HostView, rel: _Release, variant: Any,
                  gpus: Optional[Sequence[GpuView]] = None) -> Check:
    """Does this build run here? Platform, then Python, then GPU arch, then driver."""
    platform = view.platform
    name = f"torch {rel.text} {variant.name}"
    cite = idx.cite(getattr(variant, "sources", ()))
    platforms = tuple(getattr(variant, "platforms", ()) or ())
    if platform not in platforms:
        where = ", ".join(platforms) or "no platform"
        return Check(rel, variant, PLATFORM, f"{name} is built for {where}, not {view.shown_platform}{cite}")
    pythons = tuple(rel.data.python.get(platform, ()) or ())
    if view.python not in pythons:
        have = ", ".join(pythons) or "none"
        return Check(rel, variant, PYTHON,
                     f"{name} has no wheel for Python {view.python} on {platform} (wheels: {have})"
                     f"{idx.cite(rel.data.sources)}")
    if variant.kind != "cuda":
        return Check(rel, variant)
    targets = view.gpus if gpus is None else gpus
    sass = _sass(variant, platform)
    ptx = _ptx(variant, platform)
    lines: List[str] = []
    jit: Optional[Kernel] = None  # a GPU served only by PTX
    for gpu in targets:
        kernel = kernel_for(gpu.cc, sass, ptx, integrated=gpu.cc in idx.tegra)
        if kernel is None:
            if not sass and not ptx:
                return Check(rel, variant, ARCH, f"{name}: the data has no arch list for "
                                                 f"{view.platform}, so {gpu.label} cannot be confirmed{cite}")
            built = " ".join(sass) + (f", PTX {' '.join(ptx)}" if ptx else ", no PTX")
            exact = " (an integrated Jetson GPU needs its exact arch or PTX)" if gpu.cc in idx.tegra else ""
            return Check(rel, variant, ARCH,
                         f"{name} has no kernels for {gpu.label}: compiled for {built}{exact}{cite}")
        jit = kernel if kernel.how == "ptx" else jit
        lines.append(f"{gpu.label}: {name} carries {kernel.how.upper()} {kernel.name}"
                     + (" (same major, lower or equal minor: binary compatible)"
                        if kernel.how == "sass" and kernel.name != gpu.arch else "") + cite)
    mode, full, floor = _driver_mode(idx.kb, view, variant.cuda or "")
    driver = _driver_name(view)
    if mode == "too-old":
        need = " or ".join(part for part in (
            f"≥ {floor} (minor-version compatibility)" if floor else "",
            f"≥ {full} (full support)" if full else "") if part)
        return Check(rel, variant, DRIVER,
                     f"{name} (CUDA {variant.cuda}) needs NVIDIA driver {need}; found {driver}"
                     f"{_driver_cite(idx, variant.cuda)}")
    if jit is not None and gpu_verdict(jit, mode) == NO_JIT:
        return Check(rel, variant, DRIVER,
                     f"{name} would JIT-compile its PTX for this GPU, which minor-version "
                     f"compatibility does not allow: needs driver ≥ {full}; found {driver}")
    return Check(rel, variant, driver_mode=mode, gpu_lines=tuple(lines))


def _driver_cite(idx: _Index, cuda: Optional[str]) -> str:
    release = idx.kb.cuda_release(cuda or "")
    return idx.cite(getattr(release, "sources", ()) or ())


# --------------------------------------------------------------------------------------------
# Constraints: the user's pins and what companions require of torch
# --------------------------------------------------------------------------------------------


class Constraint(NamedTuple):
    """Something that narrows the torch releases/variants; ``check`` returns why not, or None."""

    label: str
    check: Callable[[Any, Any], Optional[str]]
    # The user's own pin on the torch family: releases it excludes are not "better-looking".
    user_pin: bool = False
    code: str = "conflicts-with-requirement"  # the blocker code when this constraint blocks


def _family_constraints(wanted: Dict[str, Wanted], request: Request) -> List[Constraint]:
    out: List[Constraint] = []
    pre = request.allow_prerelease
    from torchsmith.plan.constraints import split_local_label

    torch = wanted.get("torch")
    if torch is not None and torch.spec:
        spec, label = split_local_label(torch)

        def torch_ok(release: Any, variant: Any) -> Optional[str]:
            if not spec.allows(release.version, pre):
                return f"{torch.text} excludes torch {release.version}"
            if label and variant is not None and variant.name != label:
                built = ", ".join(v.name for v in release.variants)
                return (f"{torch.text} names the {label} build, not {variant.name}" if
                        release.variant(label) is not None else
                        f"{torch.text} names a {label} build, which torch {release.version} does "
                        f"not have (builds: {built})")
            return None

        out.append(Constraint(f"{torch.text} ({torch.origin})", torch_ok, user_pin=True))
    for name in ("torchvision", "torchaudio"):
        want = wanted.get(name)
        if want is None or (not want.spec and name == "torchaudio" and _is_default(request)):
            continue
        out.append(_companion_version_constraint(name, want, pre))
    return out


def _companion_version_constraint(name: str, asked: Wanted, pre: bool) -> Constraint:
    from torchsmith.plan.constraints import split_local_label

    want, label = split_local_label(asked)

    def ok(release: Any, variant: Any) -> Optional[str]:
        paired = getattr(release, name, None)
        if not paired:
            return f"no {name} release pairs with torch {release.version}"
        if not want.allows(paired, pre):
            return f"{asked.text} excludes {name} {paired}, the one that pairs with torch {release.version}"
        if label and variant is not None and variant.name != label:
            return f"{asked.text} names the {label} build, not {variant.name}"
        return None

    return Constraint(f"{asked.text} ({asked.origin})", ok, user_pin=True)


def _is_default(request: Request) -> bool:
    return tuple(request.requirements) == DEFAULT_REQUIREMENTS and not request.explicit


def _first_conflict(constraints: Sequence[Constraint], release: Any, variant: Any
                    ) -> Optional[Tuple[Constraint, str]]:
    for constraint in constraints:
        why = constraint.check(release, variant)
        if why:
            return constraint, why
    return None


# --------------------------------------------------------------------------------------------
# The walk over releases
# --------------------------------------------------------------------------------------------


class _Walk:
    def __init__(self) -> None:
        self.chosen: Optional[Check] = None
        self.rejected: List[Rejection] = []
        self.blocked: Optional[Tuple[Check, Constraint, str]] = None  # newest build the hardware runs
        self.failures: Dict[str, int] = {}
        # Within the user's own pins: builds that fail here, and builds another constraint refuses.
        self.pinned_failures: List[Check] = []
        self.pinned_conflicts: List[Tuple[Check, Constraint, str]] = []


def _rank(check: Check) -> Tuple[int, Tuple[int, ...]]:
    variant = check.variant
    return (1 if check.driver_mode in ("full", "unknown", "") else 0,
            version_tuple(variant.cuda or variant.rocm or ""))


_MAX_NEWER_REJECTIONS = 12  # enough to show the pattern, short enough to read


def _walk(job: Job, kinds: Tuple[str, ...], constraints: Sequence[Constraint], *,
          gpus: Optional[Sequence[GpuView]] = None,
          accept: Optional[Callable[[Check], Optional[Tuple[str, str]]]] = None) -> _Walk:
    """Newest release first; the first release with a working variant (of ``kinds``) wins."""
    idx, view = job.idx, job.view
    walk = _Walk()
    newer_rejections = 0
    for rel in idx.releases:
        variants = [v for v in rel.data.variants if v.kind in kinds]
        if not variants:
            continue
        checks = [check_variant(idx, view, rel, v, gpus) for v in variants]
        if accept is not None:
            checks = [_accepted(c, accept) for c in checks]
        working: List[Check] = []
        pinned = _allowed_by_user(constraints, rel.data)
        for check in checks:
            if not check.ok:
                walk.failures[check.code] = walk.failures.get(check.code, 0) + 1
                if pinned:
                    walk.pinned_failures.append(check)
                continue
            conflict = _first_conflict(constraints, rel.data, check.variant)
            if conflict is None:
                working.append(check)
                continue
            if walk.blocked is None:
                walk.blocked = (check, conflict[0], conflict[1])
            if pinned:
                walk.pinned_conflicts.append((check, conflict[0], conflict[1]))
        if working:
            from torchsmith.plan.described import prefer_wide_driver_range

            working.sort(key=prefer_wide_driver_range, reverse=True)
            walk.chosen = working[0]
            better = [c for c in checks if not c.ok and _rank(c)[1] > _rank(working[0])[1]]
            walk.rejected.extend(Rejection(c.label, c.reason, c.code) for c in better)
            return walk
        if pinned:
            failing = sorted((c for c in checks if not c.ok), key=_rank, reverse=True)
            for check in failing[:max(0, _MAX_NEWER_REJECTIONS - newer_rejections)]:
                walk.rejected.append(Rejection(check.label, check.reason, check.code))
                newer_rejections += 1
    return walk


def _accepted(check: Check, accept: Callable[[Check], Optional[Tuple[str, str]]]) -> Check:
    if not check.ok:
        return check
    refusal = accept(check)
    return check if refusal is None else check._replace(code=refusal[0], reason=refusal[1])


def _allowed_by_user(constraints: Sequence[Constraint], release: Any) -> bool:
    return all(c.check(release, None) is None for c in constraints if c.user_pin)


# --------------------------------------------------------------------------------------------
# Building the plan
# --------------------------------------------------------------------------------------------


class _Draft:
    """A plan being assembled."""

    def __init__(self, status: str = "ok") -> None:
        self.status = status
        self.accelerator = "cpu"
        self.packages: List[PackagePin] = []
        self.reasons: List[str] = []
        self.rejected: List[Rejection] = []
        self.warnings: List[str] = []
        self.prerequisites: List[str] = []
        self.environment: List[Tuple[str, str]] = []
        self.conda: Dict[str, Any] = {}
        self.variant: Optional[str] = None
        self.python = ""
        self.blocker: Optional[Blocker] = None
        self.alternatives: List[Door] = []
        self.assumptions: List[str] = []

    def reject(self, rejection: Rejection) -> None:
        if all(r.candidate != rejection.candidate for r in self.rejected):
            self.rejected.append(rejection)

    def finish(self, view: HostView, kb: Any) -> Plan:
        return Plan(
            status=self.status,
            packages=tuple(self.packages) if self.status == "ok" else (),
            platform=view.shown_platform,
            python=self.python or view.python,
            accelerator=self.accelerator,
            variant=self.variant if self.status == "ok" else None,
            reasons=tuple(dict.fromkeys(self.reasons)),
            rejected=_compact(self.rejected),
            warnings=tuple(dict.fromkeys(self.warnings)),
            system_prerequisites=tuple(dict.fromkeys(self.prerequisites)),
            environment=tuple(self.environment),
            conda=dict(self.conda),
            kb_version=str(getattr(kb, "kb_version", "")),
            uncertain=_uncertain_rows(kb, self) if self.status == "ok" else (),
            blocker=self.blocker,
            alternatives=tuple(dict.fromkeys(self.alternatives)),
            assumptions=tuple(dict.fromkeys(self.assumptions)),
        )


def _uncertain_rows(kb: Any, draft: _Draft) -> Tuple[str, ...]:
    """The rows of the data the chosen stack relies on that are marked ``uncertain``."""
    torch = next((p for p in draft.packages if p.name == "torch"), None)
    release = kb.release(torch.version) if torch is not None and not torch.wheel_url else None
    if release is None:
        return ()
    lines: List[str] = []
    if release.uncertain:
        lines.append(f"torch {release.version}: its release row (Python wheels, companion versions)")
    build = release.variant(draft.variant) if draft.variant else None
    if build is not None and build.uncertain:
        lines.append(f"torch {release.version} {build.name}: its build row (platforms, compiled archs)")
    toolkit = kb.cuda_release(build.cuda) if build is not None and build.cuda else None
    if toolkit is not None and toolkit.uncertain:
        lines.append(f"CUDA {toolkit.version}: its driver minimums")
    return tuple(lines)


def _compact(rejections: Sequence[Rejection]) -> Tuple[Rejection, ...]:
    """Fold the same failure across patch releases into one line: ``torch 2.12.0 … 2.15.0 cpu``."""
    groups: Dict[Tuple[str, str, str], List[Tuple[str, Rejection]]] = {}
    order: List[Tuple[str, str, str]] = []
    for rejection in rejections:
        parts = rejection.candidate.split(" ")
        if len(parts) == 3 and parts[0] == "torch":
            key = (rejection.code, parts[2], rejection.reason.replace(parts[1], "{v}"))
        else:
            key = (rejection.code, rejection.candidate, rejection.reason)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((parts[1] if len(parts) == 3 else "", rejection))
    out: List[Rejection] = []
    for key in order:
        members = groups[key]
        first = members[0][1]
        if len(members) == 1:
            out.append(first)
            continue
        versions = [v for v, _ in members]
        span = f"torch {versions[-1]} … {versions[0]} {key[1]}"
        out.append(Rejection(span, first.reason, first.code))
    return tuple(out)


def _adopt(job: Job, draft: _Draft, chosen: Check, rejected: Sequence[Rejection], accelerator: str, *,
           plain_pypi: bool = False) -> None:
    """Plan the chosen build: the builds passed over on the way, its accelerator and its pins."""
    for rejection in rejected:
        draft.reject(rejection)
    draft.accelerator = accelerator
    draft.variant = chosen.variant.name
    _family_pins(job, draft, chosen, plain_pypi=plain_pypi)


def _family_pins(job: Job, draft: _Draft, check: Check, *, plain_pypi: bool) -> None:
    """torch and its pairing torchvision/torchaudio from the chosen build."""
    request, wanted = job.request, job.wanted
    release = check.release.data
    variant = check.variant
    index = None if plain_pypi else torch_index_url(variant.index_url, request.torch_index_base)
    local = None if plain_pypi else f"+{variant.name}"
    token = None if plain_pypi else variant.name
    draft.packages.append(PackagePin("torch", release.version, token, index, local_version=local))
    for name in ("torchvision", "torchaudio"):
        if name not in wanted:
            continue
        paired = getattr(release, name, None)
        if paired:
            draft.packages.append(PackagePin(name, paired, token, index, local_version=local))
        else:
            draft.warnings.append(f"no {name} release pairs with torch {release.version}; "
                                  f"{name} left out of the plan")


def _wanted_map(request: Request) -> Dict[str, Wanted]:
    return {w.name: w for w in parse_requirements(list(request.requirements))}


def resolve(machine: Machine, request: Request, kb: Any) -> Plan:
    """The best working stack for ``machine`` given ``request``, with reasons and rejections.

    Pure. Raises :class:`~torchsmith.errors.RequirementError` only for unparsable requirements;
    "nothing works" is a plan with ``status == "no-solution"``.
    """
    from torchsmith.plan import companions

    idx = _index(kb)
    view = host_view(machine, kb)
    wanted = _wanted_map(request)
    assumed = tuple(n.problem for n in machine.notes if n.source == "assumed")
    if assumed:
        request = dataclasses.replace(request, assumptions=(*request.assumptions, *assumed))
    job = Job(machine, view, idx, wanted, request)
    from torchsmith.plan.described import detection_dead_end, unknown_model_gpus

    stopped = detection_dead_end(job)
    if stopped is not None:
        return stopped.finish(view, kb)
    job = unknown_model_gpus(job)
    from torchsmith.plan import downstream

    job, clash = downstream.with_implied(job)
    blocker = clash or downstream.cuda_only_blocker(job)
    if blocker is not None:
        return _requirement_dead_end(job, blocker).finish(view, kb)
    extra = companions.prepare(job)
    if extra.fatal:
        draft = _Draft(status="no-solution")
        draft.blocker = Blocker(extra.rejected[0].code if extra.rejected else "no-such-release",
                                extra.rejected[0].candidate if extra.rejected else
                                ", ".join(w.text for n, w in job.wanted.items() if n not in TORCH_FAMILY),
                                "; ".join(extra.reasons) or "a requirement cannot be met here")
        draft.reasons.extend(extra.reasons)
        draft.rejected.extend(extra.rejected)
        draft.warnings.extend(extra.warnings)
        draft.assumptions.extend(job.request.assumptions)
        return draft.finish(view, kb)
    if not extra.wants_torch:
        draft = _Draft()
        companions.finish(extra, None, draft, view, idx)
        draft.rejected.extend(extra.rejected)
        draft.warnings.extend(extra.warnings)
        draft.assumptions.extend(job.request.assumptions)
        return draft.finish(view, kb)
    from torchsmith.plan.constraints import glibc_constraint

    glibc = glibc_constraint(machine, job.view, job.idx.kb)
    hard = _family_constraints(wanted, request) + list(extra.constraints) + ([glibc] if glibc else [])
    draft = _solve_with_preferences(job, hard, extra.soft)
    keep = companions.installed_torch(request, wanted)
    if draft.status != "ok" and keep is not None:
        loose = [c for c in hard if not c.label.endswith("(installed)")]
        retry = _solve_with_preferences(job, loose, extra.soft)
        if retry.status == "ok":
            new = next(p for p in retry.packages if p.name == "torch")
            why = _installed_problem(job, keep) or "; ".join(draft.reasons) or "it does not fit the request"
            retry.warnings.insert(0, f"the installed torch {keep[0]}{'+' + keep[1] if keep[1] else ''} "
                                     f"must change to {new.version}{new.local_version or ''}: {why}")
            draft = retry
    if draft.status == "ok":
        chosen_torch = next((p for p in draft.packages if p.name == "torch"), None)
        companions.finish(extra, chosen_torch, draft, view, idx)
        unverified = _unverified_build(kb, chosen_torch, draft.variant)
        if unverified:
            draft.warnings.append(unverified)
    for rejection in extra.rejected:
        draft.reject(rejection)
    draft.warnings.extend(extra.warnings)
    draft.assumptions.extend(job.request.assumptions)
    if draft.status == "no-solution" and draft.blocker is None:  # a safety net: always name one
        draft.blocker = Blocker("unplannable", "this request on this machine",
                                draft.reasons[0] if draft.reasons else "no build meets every requirement")
    return draft.finish(view, kb)


def _requirement_dead_end(job: Job, blocker: Blocker) -> _Draft:
    from torchsmith.plan.doors import plan_command

    draft = _Draft(status="no-solution")
    draft.blocker = blocker
    draft.reasons.append(f"blocked by {blocker.constraint}: {blocker.detail}")
    reqs = job.request.requirements
    if blocker.code == CONFLICT:  # two requirements exclude each other: drop the one named
        name = blocker.constraint.split(" ", 1)[0]
        kept = [r for r in reqs if r.replace(" ", "") != name.replace(" ", "")]
        draft.alternatives.append(Door("requirement", f"drop {name}: the other requirements pick a "
                                                      f"version that fits them all", f"remove {name}",
                                       plan_command(kept)))
    else:
        draft.alternatives.append(Door("flag", "plan for the NVIDIA machine it will run on",
                                       "--gpu CC --driver VERSION",
                                       plan_command(reqs, "--gpu CC --driver VERSION")))
    draft.assumptions.extend(job.request.assumptions)
    return draft


def _unverified_build(kb: Any, torch: Optional[PackagePin], variant: Optional[str]) -> str:
    """A warning when the data marks the chosen build as not checked against a primary source."""
    if torch is None or not variant or torch.wheel_url:
        return ""
    release = kb.release(torch.version)
    build = release.variant(variant) if release is not None else None
    if build is None or not build.uncertain:
        return ""
    return (f"the data marks torch {torch.version} {variant} as not yet verified against the "
            f"index itself; if the index lacks it, pin the previous release "
            f"(torchsmith plan 'torch<{torch.version}') or run `torchsmith kb refresh`")


def _installed_problem(job: Job, keep: Tuple[str, str]) -> str:
    """Why the installed torch itself cannot stay (no wheel, no kernels, driver), or ""."""
    version, variant_name = keep
    rel = next((r for r in job.idx.releases if r.text == version), None)
    variant = rel.data.variant(variant_name) if rel is not None and variant_name else None
    if rel is None or variant is None or job.machine.jetson is not None:
        return ""
    check = check_variant(job.idx, job.view, rel, variant)
    return "" if check.ok else check.reason


def _solve_with_preferences(job: Job, hard: Sequence[Constraint], soft: Sequence[Constraint]) -> _Draft:
    """Solve with the preferences (prebuilt companion wheels); without them if nothing fits."""
    draft = _solve(job, list(hard) + list(soft))
    if draft.status != "ok" and soft:
        relaxed = _solve(job, hard)
        if relaxed.status == "ok":
            return relaxed
    return draft


def _solve(job: Job, constraints: Sequence[Constraint]) -> _Draft:
    draft = _Draft()
    machine = job.machine
    if machine.jetson is not None:
        from torchsmith.plan.jetson import plan_jetson

        plan_jetson(job, constraints, draft)
    elif machine.os.system == "macos":
        _plan_macos(job, constraints, draft)
    elif job.view.has_cuda_gpu:
        from torchsmith.plan.described import wsl_gaps

        gaps = wsl_gaps(job)
        draft.prerequisites.extend(gaps)
        draft.warnings.extend(gaps)
        _plan_cuda(job, constraints, draft)
    elif machine.rocm is not None and machine.rocm.gpus:
        from torchsmith.plan.rocm import plan_rocm

        plan_rocm(job, constraints, draft)
    elif machine.intel_gpus and _plan_intel(job, constraints, draft):
        pass
    else:
        _plan_cpu(job, constraints, draft, _no_gpu_reason(machine))
    return draft


def _plan_intel(job: Job, constraints: Sequence[Constraint], draft: _Draft) -> bool:
    from torchsmith.plan.xpu import plan_xpu

    return plan_xpu(job, constraints, draft)


def recommend(machine: Machine, kb: Any) -> Plan:
    """The default stack (torch, torchvision, torchaudio) for this machine."""
    return resolve(machine, Request(), kb)


def _no_gpu_reason(machine: Machine) -> str:
    if machine.intel_gpus:
        names = ", ".join(g.name for g in machine.intel_gpus)
        return (f"no NVIDIA or AMD GPU found, and no xpu build of torch lists Intel GPU {names} "
                f"(supported: Arc A/B-Series, Core Ultra with Arc Graphics, Data Center GPU Max)")
    return "no NVIDIA or AMD GPU found"


def _python_hint(idx: _Index, view: HostView, constraints: Sequence[Constraint]) -> str:
    """The newest Python with a torch wheel on this platform (within the user's pins)."""
    best: Optional[Tuple[Tuple[int, ...], str]] = None
    for rel in idx.releases:
        if not _allowed_by_user(constraints, rel.data):
            continue
        for tag in rel.data.python.get(view.platform, ()) or ():
            free = tag.endswith("t")
            if free != view.python.endswith("t"):
                continue
            key = version_tuple(tag.rstrip("t"))
            if best is None or key > best[0]:
                best = (key, tag)
    return best[1] if best else ""


def _no_solution(job: Job, draft: _Draft, walk: _Walk, constraints: Sequence[Constraint],
                 what: str) -> None:
    from torchsmith.plan import doors

    draft.status = "no-solution"
    draft.rejected.extend(r for r in walk.rejected if r not in draft.rejected)
    blocker = doors.blocker_of(job, walk, constraints)
    if walk.blocked is not None:  # the newest build that runs here, and the requirement refusing it
        check, _, why = walk.blocked
        draft.reject(Rejection(check.label, f"runs here, but {why}", CONFLICT))
    if blocker is not None:
        draft.blocker = blocker
        draft.alternatives.extend(doors.doors_for(job, walk, constraints, blocker))
        draft.reasons.append(f"blocked by {blocker.constraint}: {blocker.detail}")
        if blocker.code in (PYTHON, PLATFORM):
            _no_solution_reasons(job, draft, walk, constraints, what, blocked=False)
        return
    _no_solution_reasons(job, draft, walk, constraints, what)


def _no_solution_reasons(job: Job, draft: _Draft, walk: _Walk, constraints: Sequence[Constraint],
                         what: str, *, blocked: bool = True) -> None:
    idx, view = job.idx, job.view
    if walk.blocked is not None and blocked:
        check, constraint, why = walk.blocked
        draft.reasons.append(f"{check.label} would run here, but {why}: the requirement "
                             f"{constraint.label} rules out every build that runs here")
        draft.reject(Rejection(check.label, f"runs here, but {why}", CONFLICT))
        return
    if walk.failures and set(walk.failures) <= {PYTHON, PLATFORM}:
        if not view.python[:1].isdigit():
            draft.reasons.append(f"torch publishes wheels for CPython only; this interpreter is "
                                 f"{view.python}: use CPython")
            return
        newest = _python_hint(idx, view, constraints)
        if newest and PYTHON in walk.failures:
            draft.reasons.append(f"no torch release has a wheel for Python {view.python} on "
                                 f"{view.platform}; the newest Python that works is {newest}")
            return
        draft.reasons.append(f"no torch wheel exists for {view.shown_platform}")
        return
    if blocked:  # with a named blocker, this catch-all would only blur it
        draft.reasons.append(f"no torch build {what}")


def _first_cuda_with_arch(kb: Any, arch: str) -> Optional[str]:
    """The oldest CUDA toolkit that knows ``arch`` (from the arch-support rows), or None."""
    rows = sorted(kb.table("arch-support"), key=lambda r: version_tuple(r.cuda))
    return next((r.cuda for r in rows if arch in r.archs), None)


def _driver_predates_gpu(idx: _Index, view: HostView, gpu: GpuView) -> Optional[Tuple[str, str]]:
    """(cuda, needed driver) when the driver is older than the first CUDA that knows this GPU.

    Such a driver cannot drive the GPU at all, so no torch build helps (minor-version
    compatibility is about newer toolkits on older drivers, never about newer hardware).
    """
    if not view.driver:
        return None
    cuda = _first_cuda_with_arch(idx.kb, gpu.arch)
    release = idx.kb.cuda_release(cuda) if cuda else None
    need = full_support_floor(release, view.driver_system) if release else ""
    have = DriverVersion.parse(view.driver)
    if cuda and need and have is not None and not have.at_least(need):
        return cuda, need
    return None


def _drop_gpus_the_driver_cannot_drive(job: Job, draft: _Draft) -> Job:
    idx, view = job.idx, job.view
    usable: List[GpuView] = []
    for gpu in view.gpus:
        hit = _driver_predates_gpu(idx, view, gpu)
        if hit is None:
            usable.append(gpu)
            continue
        cuda, need = hit
        why = (f"{_driver_name(view)} is older than {gpu.arch}: this architecture arrived with "
               f"CUDA {cuda}, whose driver is ≥ {need}; upgrade the NVIDIA driver to ≥ {need} "
               f"to use {gpu.name}{_driver_cite(idx, cuda)}")
        draft.reject(Rejection(f"every CUDA build on {gpu.label}", why, DRIVER))
        draft.warnings.append(why)
    if len(usable) == len(view.gpus):
        return job
    if usable:
        indexes = ",".join(str(g.index) for g in usable)
        draft.environment.append(("CUDA_VISIBLE_DEVICES", indexes))
    return job._replace(view=dataclasses.replace(view, gpus=tuple(usable)))


def _plan_cuda(job: Job, constraints: Sequence[Constraint], draft: _Draft) -> None:
    if not job.request.gpus_on_separate_nodes:
        job = _drop_gpus_the_driver_cannot_drive(job, draft)
    if not job.view.gpus and not job.view.unknown_gpus:
        draft.warnings.append(f"no CUDA build of torch can use these GPUs with "
                              f"{_driver_name(job.view)}; planned the CPU build until the driver "
                              f"is upgraded")
        _plan_cpu(job, constraints, draft, "the NVIDIA driver is too old for every GPU here")
        return
    idx, view = job.idx, job.view
    walk = _walk(job, ("cuda",), constraints)
    gpus_used: Sequence[GpuView] = view.gpus
    if walk.chosen is None and walk.blocked is None and len({g.cc for g in view.gpus}) > 1:
        split = _split_gpus(job, constraints)
        if split is not None:
            walk, gpus_used, left_out = split
            indexes = ",".join(str(g.index) for g in gpus_used)
            draft.environment.append(("CUDA_VISIBLE_DEVICES", indexes))
            draft.warnings.append(
                "no torch build covers every GPU here; this plan uses "
                + ", ".join(g.label for g in gpus_used)
                + f" (CUDA_VISIBLE_DEVICES={indexes}); left out: "
                + ", ".join(g.label for g in left_out)
                + " (plan for them separately with CUDA_VISIBLE_DEVICES set to their indexes)")
    draft.warnings.extend(view.notes)
    if walk.chosen is None:
        if walk.blocked is not None or (walk.failures and set(walk.failures) <= {PYTHON, PLATFORM}):
            _no_solution(job, draft, walk, constraints, "runs on these GPUs")
            return
        # No CUDA build runs on this GPU/driver at all: a CPU build still runs, say so loudly.
        for rejection in walk.rejected:
            draft.reject(rejection)
        gpu_names = ", ".join(g.label for g in view.gpus) or ", ".join(view.unknown_gpus)
        for gpu in view.gpus:
            if gpu.cc in idx.tegra:
                draft.warnings.append(
                    f"{gpu.label} is an integrated Jetson GPU ({idx.tegra[gpu.cc]}): desktop and server "
                    f"wheels do not run on it; describe the machine with --jetson L4T_RELEASE "
                    f"(from /etc/nv_tegra_release) to get the JetPack's wheel")
        draft.warnings.append(f"no CUDA build of torch in the data runs on {gpu_names} with this "
                              f"driver; planned the CPU build instead (see `rejected` for what "
                              f"each CUDA build lacks, and `alternatives` for the ways to the GPU)")
        from torchsmith.plan import doors

        draft.alternatives.extend(doors.arch_doors(job, cpu=False) if ARCH in walk.failures else [])
        _plan_cpu(job, constraints, draft, "no CUDA build runs on this GPU and driver")
        return
    chosen = walk.chosen
    _adopt(job, draft, chosen, walk.rejected, "cuda")
    rel = chosen.release.data
    draft.reasons.append(_headline(walk, f"torch {rel.version} {chosen.variant.name}",
                                   "with a build that runs on every GPU used here and on this driver")
                         + idx.cite(rel.sources, 1))
    assumed = [g for g in gpus_used if g.source == "assumed"]
    if assumed:  # one line for the architectures assumed for a GPU of unknown model
        draft.reasons.append(f"{chosen.label} carries kernels (SASS) for every assumed architecture: "
                             + ", ".join(g.arch for g in assumed))
    else:
        draft.reasons.extend(chosen.gpu_lines)
    draft.reasons.append(_driver_line(idx, view, chosen))
    draft.reasons.append(f"Python {view.python} on {view.platform}: torch {rel.version} publishes "
                         f"wheels for it{idx.cite(rel.sources, 1)}")
    if chosen.driver_mode == "minor-compat":
        _, full, floor = _driver_mode(idx.kb, view, chosen.variant.cuda)
        draft.warnings.append(
            f"{chosen.label} runs on {_driver_name(view)} through NVIDIA "
            f"minor-version compatibility (CUDA {chosen.variant.cuda.split('.')[0]}.x needs ≥ "
            f"{floor or 'the major release driver'}): no PTX JIT, and APIs that need a newer "
            f"driver return cudaErrorCallRequiresNewerDriver; driver ≥ {full or '?'} gives full "
            f"support{_driver_cite(idx, chosen.variant.cuda)}")
    if chosen.driver_mode == "unknown":
        _, full, floor = _driver_mode(idx.kb, view, chosen.variant.cuda)
        from torchsmith.plan.described import driver_needs

        draft.warnings.append(f"NVIDIA driver version unknown: {chosen.label} needs driver ≥ "
                              f"{floor or full or '?'} (≥ {full or '?'} for full support); planned the "
                              f"build that runs on the widest range of drivers. Each build of torch "
                              f"{rel.version} that runs here: {driver_needs(job, chosen)}")
    for name in view.unknown_gpus:
        draft.warnings.append(f"GPU {name!r}: compute capability unknown (not reported and not in "
                              f"the data); planned for the other facts only. Check "
                              f"torch.cuda.get_arch_list() after installing.")
    _reject_pypi_default(draft, idx, view, chosen)
    draft.conda.update(_conda_specs(idx, view, chosen))


def _headline(walk: _Walk, build: str, what: str) -> str:
    """Why this release: the newest that works, or the constraint that caps it (named)."""
    from torchsmith.plan import doors

    cap = doors.capped_by(walk)
    if cap:
        return f"{build}: {cap}; it is the newest release within that limit {what}"
    return f"{build} is the newest release {what}"


def _split_gpus(job: Job, constraints: Sequence[Constraint]
                ) -> Optional[Tuple[_Walk, Tuple[GpuView, ...], Tuple[GpuView, ...]]]:
    """Mixed GPUs no single build covers: the largest group one build covers (newest wins ties)."""
    view = job.view
    options: List[Tuple[int, Version, Tuple[int, int], _Walk, Tuple[GpuView, ...]]] = []
    for cc in sorted({g.cc for g in view.gpus}, reverse=True):
        for group in (tuple(g for g in view.gpus if g.cc >= cc), tuple(g for g in view.gpus if g.cc <= cc)):
            walk = _walk(job, ("cuda",), constraints, gpus=group)
            if walk.chosen is not None:
                options.append((len(group), walk.chosen.release.version, cc, walk, group))
    if not options:
        return None
    options.sort(key=lambda o: (o[0], o[1], o[2]), reverse=True)
    _, _, _, walk, group = options[0]
    left = tuple(g for g in view.gpus if g not in group)
    return walk, group, left


def _driver_name(view: HostView) -> str:
    if view.driver:
        return f"driver {view.driver}"
    if view.driver_cuda:
        return f"a driver supporting CUDA {view.driver_cuda}"
    return "an unknown driver"


def _driver_line(idx: _Index, view: HostView, chosen: Check) -> str:
    cuda = chosen.variant.cuda
    _, full, floor = _driver_mode(idx.kb, view, cuda)
    have = view.driver or ("unknown" if not view.driver_cuda else "version not known")
    source = f" (from {view.driver_source})" if view.driver_source and view.driver else ""
    max_cuda = f", which supports CUDA up to {view.driver_cuda}" if view.driver_cuda else ""
    how = {"full": "full support", "minor-compat": "minor-version compatibility",
           "unknown": "driver not known"}.get(chosen.driver_mode, chosen.driver_mode)
    return (f"driver {have}{source}{max_cuda}: CUDA {cuda} needs ≥ {full or '?'} for full support, "
            f"≥ {floor or '?'} with minor-version compatibility → {how}{_driver_cite(idx, cuda)}")


def _reject_pypi_default(draft: _Draft, idx: _Index, view: HostView, chosen: Check) -> None:
    """Say why plain `pip install torch` (PyPI's build) is not the answer here."""
    rel = chosen.release
    default_name = (getattr(rel.data, "pypi_default", {}) or {}).get(view.platform)
    label = f"torch {rel.text} from PyPI ({default_name or 'none'})"
    if not default_name or default_name == chosen.variant.name:
        return
    default = rel.data.variant(default_name)
    if default is None or default.kind == "cpu":
        if draft.accelerator in ("cuda", "rocm"):
            draft.reject(Rejection(label, f"PyPI's torch {rel.text} for {view.platform} is a CPU-only "
                                          f"build: `pip install torch` without the PyTorch index gets no "
                                          f"{draft.accelerator.upper()}", NO_GPU_BUILD))
        return
    check = check_variant(idx, view, rel, default)
    if not check.ok:
        draft.reject(Rejection(label, check.reason, check.code))
    elif chosen.variant.kind == "cpu":
        draft.reject(Rejection(label, f"PyPI's default build is {default_name}: it runs, but pulls "
                                      f"gigabytes of CUDA libraries (nvidia-* wheels) a machine "
                                      f"without an NVIDIA GPU cannot use", "cuda-libraries-not-needed"))


def _conda_specs(idx: _Index, view: HostView, chosen: Check) -> Dict[str, Any]:
    """conda-forge's side of the plan: pytorch (and pytorch-gpu + cuda-version) for the renderers."""
    variant = chosen.variant
    version = chosen.release.text
    specs: Dict[str, Any] = {"channel": "conda-forge", "pytorch": version}
    series = minor_version(version)
    builds = [b for b in getattr(idx.kb, "conda_builds", ())
              if b.package == "pytorch" and b.version == series]
    notes: List[str] = []
    if builds and view.platform not in builds[0].platforms:
        return {"available": False,
                "reason": f"conda-forge builds pytorch {series} for {', '.join(builds[0].platforms)}, "
                          f"not {view.platform}"}
    if variant.kind == "cuda" and variant.cuda:
        cuda = minor_version(variant.cuda)
        if builds and cuda not in builds[0].cudas_for(view.platform):
            offered = builds[0].cudas_for(view.platform)
            same_major = [c for c in offered if c.split(".")[0] == cuda.split(".")[0]]
            built_for = f"conda-forge builds pytorch {series} for CUDA {', '.join(offered)}"
            if same_major:
                nearest = max(same_major, key=version_tuple)
                notes.append(f"{built_for}, not {cuda}: cuda-version={nearest} instead")
                cuda = nearest
            else:
                notes.append(f"{built_for} only; the pip plan's CUDA {cuda} is not one")
        specs["pytorch-gpu"] = version
        specs["cuda-version"] = cuda
    if not builds:
        notes.append(f"conda-forge pytorch {series} is not in torchsmith's data; the environment asks "
                     f"for it as planned")
    if notes:
        specs["notes"] = notes
    return specs


def _plan_cpu(job: Job, constraints: Sequence[Constraint], draft: _Draft, why: str) -> None:
    idx, view, machine = job.idx, job.view, job.machine
    walk = _walk(job, ("cpu",), constraints)
    if walk.chosen is None:
        _no_solution(job, draft, walk, constraints, "for this platform and Python")
        return
    chosen = walk.chosen
    _adopt(job, draft, chosen, walk.rejected, "cpu")
    rel = chosen.release.data
    draft.reasons.append(f"{why}: the CPU build from the PyTorch CPU index "
                         f"({chosen.variant.index_url}) carries no CUDA libraries"
                         f"{idx.cite(chosen.variant.sources, 1)}")
    draft.reasons.append(_headline(walk, f"torch {rel.version}",
                                   f"with a wheel for Python {view.python} on {view.platform}")
                         + idx.cite(rel.sources, 1))
    _reject_pypi_default(draft, idx, view, chosen)
    draft.conda.update(_conda_specs(idx, view, chosen))
    if machine.os.system == "windows" and machine.rocm and machine.rocm.gpus:
        draft.warnings.append(_WINDOWS_AMD)


_WINDOWS_AMD = ("AMD GPU on Windows: PyTorch publishes no ROCm wheels for Windows, so this plan is "
                "the CPU build. For the GPU: run Linux, or WSL2 with AMD's ROCm-on-WSL for the Radeon "
                "cards AMD lists (uncertain), or AMD's own preview Windows wheels (not upstream).")


def _plan_macos(job: Job, constraints: Sequence[Constraint], draft: _Draft) -> None:
    idx, view, machine = job.idx, job.view, job.machine
    apple = machine.apple
    walk = _walk(job, ("cpu",), constraints)
    if walk.chosen is None:
        _no_solution(job, draft, walk, constraints, "for this Mac and Python")
    else:
        chosen = walk.chosen
        arm = machine.os.arch == "arm64"
        _adopt(job, draft, chosen, walk.rejected, "mps" if arm else "cpu", plain_pypi=True)
        rel = chosen.release.data
        draft.reasons.append("macOS wheels come from PyPI (no CUDA on macOS); " + _headline(
            walk, f"torch {rel.version}", f"with a wheel for Python {view.python} on {view.platform}")
            + idx.cite(rel.sources, 1))
        if arm:
            draft.reasons.append("Apple silicon: the PyPI wheel includes the MPS (Metal) backend")
        draft.conda.update(_conda_specs(idx, view, chosen))
    if machine.os.arch == "x86_64":
        if apple is not None and (apple.rosetta or apple.apple_silicon):
            draft.warnings.append(
                "this Python is an x86_64 build running under Rosetta on Apple silicon: torch for "
                "macOS x86_64 stopped at 2.2.2 and has no MPS; install an arm64 Python (python.org "
                "universal2 installer, `uv python install`, or Homebrew in /opt/homebrew) for current "
                "torch with MPS")
        else:
            draft.warnings.append("torch publishes no macOS x86_64 (Intel Mac) wheels after 2.2.2")


# --------------------------------------------------------------------------------------------
# The matrix: recent releases × variants, for this host
# --------------------------------------------------------------------------------------------


class MatrixRow(NamedTuple):
    torch: str
    variant: str
    kind: str  # cuda | rocm | cpu | xpu
    works: bool
    code: str  # "" when it works
    reason: str  # one line: why not, or how it runs


def matrix(machine: Machine, kb: Any, releases: int = 8) -> Tuple[MatrixRow, ...]:
    """The newest ``releases`` torch releases × their variants: does each run on this host?"""
    idx = _index(kb)
    view = host_view(machine, kb)
    rows: List[MatrixRow] = []
    seen_minor: Dict[str, None] = {}
    for rel in idx.releases:
        minor = f"{rel.version.major}.{rel.version.minor}"
        if minor in seen_minor:
            continue  # the newest patch of each series tells the story
        seen_minor[minor] = None
        if len(seen_minor) > releases:
            break
        for variant in rel.data.variants:
            rows.append(_matrix_row(idx, view, machine, rel, variant))
    return tuple(rows)


def _jetson_uses_sbsa(idx: _Index, machine: Machine) -> bool:
    jetson = machine.jetson
    jp = idx.kb.jetpack_for_l4t(jetson.l4t) if jetson is not None and jetson.l4t else None
    return jp is not None and version_tuple(str(jp.jetpack))[:1] >= (7,)


def _matrix_row(idx: _Index, view: HostView, machine: Machine, rel: _Release, variant: Any) -> MatrixRow:
    check = check_variant(idx, view, rel, variant)
    base = {"torch": rel.text, "variant": variant.name, "kind": variant.kind}
    if not check.ok:
        return MatrixRow(works=False, code=check.code, reason=check.reason, **base)
    if variant.kind == "cuda" and machine.jetson is not None and not _jetson_uses_sbsa(idx, machine):
        return MatrixRow(works=False, code=NO_GPU_BUILD, reason="Jetson on JetPack ≤ 6: upstream aarch64 "
                         "CUDA wheels target SBSA servers, not the L4T driver; `torchsmith plan` gives the "
                         "JetPack's wheel", **base)
    if variant.kind == "cuda" and not view.has_cuda_gpu:
        from torchsmith.plan.detection import GPU_DETECTION_FAILED, detection_failure

        failed = detection_failure(machine)
        if failed:  # not "no GPU": say what failed
            return MatrixRow(works=False, code=GPU_DETECTION_FAILED, reason=f"GPU detection failed: "
                             f"{failed}; pass --gpu/--driver to judge the CUDA builds", **base)
        return MatrixRow(works=False, code=NO_GPU_BUILD, reason="no NVIDIA GPU here: the CUDA "
                         "build would run on the CPU only, with gigabytes of unused libraries", **base)
    if variant.kind == "rocm":
        gfxs = [g.gfx for g in (machine.rocm.gpus if machine.rocm else ()) if g.gfx]
        if not gfxs:
            return MatrixRow(works=False, code=NO_GPU_BUILD, reason="no AMD GPU here", **base)
        missing = [g for g in gfxs if g not in tuple(variant.gfx or ())]
        if missing:
            return MatrixRow(works=False, code=ARCH, reason=f"not compiled for {', '.join(missing)}", **base)
        return MatrixRow(works=True, code="", reason=f"compiled for {', '.join(gfxs)}", **base)
    if variant.kind == "xpu":
        if not machine.intel_gpus:
            return MatrixRow(works=False, code=NO_GPU_BUILD, reason="no Intel GPU here", **base)
        return MatrixRow(works=True, code="", reason="Intel GPU present (support depends on the GPU)", **base)
    if variant.kind == "cuda":
        how = {"full": "runs (full driver support)", "minor-compat": "runs via minor-version compatibility",
               "unknown": "arch fits; driver unknown"}.get(check.driver_mode, "runs")
        return MatrixRow(works=True, code="", reason=how, **base)
    return MatrixRow(works=True, code="", reason="CPU build", **base)
