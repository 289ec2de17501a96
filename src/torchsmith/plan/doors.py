"""Ways out of a dead end: the one constraint that blocks, and the nearest stacks that work.

A no-solution plan names its :class:`~torchsmith.plan.model.Blocker` (what stopped the build
that got furthest: its platform, Python, glibc, GPU arch or driver, or another requirement
refusing it) and :class:`~torchsmith.plan.model.Door` s: the nearest release with a wheel for
this Python, the Python that has the pinned release, the last binaries with this GPU's arch,
a source build, a driver upgrade. Each door carries the exact command. Pure, like the resolver.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from torchsmith.compat import kernel_for
from torchsmith.plan.caps import blocked_words, cap_words, forbidding, within_caps
from torchsmith.plan.check import check_variant, driver_mode, ptx, sass
from torchsmith.plan.constraints import allowed_by_user, first_conflict
from torchsmith.plan.core import CONFLICT, DRIVER, Check, Constraint, Job
from torchsmith.plan.draft import Draft
from torchsmith.plan.hostview import HostView
from torchsmith.plan.index import Release
from torchsmith.plan.model import Blocker, Door
from torchsmith.plan.request import parse_requirement
from torchsmith.plan.walk import Walk, prefer_wide_driver_range
from torchsmith.records import replace
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import JetPack, VariantBuild

__all__ = ["arch_doors", "blocker_of", "capped_by", "doors_for", "jetson_dead_end", "plan_command"]

# How far a build got through the checks: the one that got furthest names the blocker.
_STAGE = {"no-wheel-for-platform": 0, "no-wheel-for-python": 1, "glibc-too-old": 2,
          "arch-not-compiled": 3, "driver-too-old": 4}


def plan_command(requirements: Sequence[str], flags: str = "") -> str:
    """``torchsmith plan 'torch==2.0.1' torchvision`` (quoted for a POSIX shell)."""
    words = " ".join(shlex.quote(r) for r in requirements)
    return " ".join(part for part in ("torchsmith plan", words, flags) if part)


def _torch_text(job: Job) -> str:
    want = job.wanted.get("torch")
    return want.text if want is not None and want.spec else "torch"


def _with_torch(job: Job, new: str) -> List[str]:
    """The request's requirements with the torch one replaced by ``new``."""
    out: List[str] = []
    replaced = False
    for text in job.request.requirements:
        try:
            name = parse_requirement(text).name
        except Exception:
            name = ""
        if name == "torch":
            if not replaced:
                out.append(new)
            replaced = True
        else:
            out.append(text)
    return out if replaced else [new, *out]


def _without(job: Job, name: str) -> List[str]:
    return [t for t in job.request.requirements if parse_requirement(t).name != name] or ["torch"]


def _kinds(job: Job) -> Tuple[str, ...]:
    machine = job.machine
    if machine.os.system == "macos":
        return ("cpu",)
    if job.view.has_cuda_gpu:
        return ("cuda",)
    if machine.rocm is not None and machine.rocm.gpus:
        return ("rocm",)
    if machine.intel_gpus:
        return ("xpu", "cpu")
    return ("cpu",)


def _runnable(job: Job, constraints: Sequence[Constraint], view: Optional[HostView] = None
              ) -> List[Check]:
    """The best working build of every release (newest first), under ``constraints``."""
    kinds = _kinds(job)
    out: List[Check] = []
    for rel in job.idx.releases:
        working = [c for c in (check_variant(job.idx, view or job.view, rel, v)
                               for v in rel.data.variants if v.kind in kinds)
                   if c.ok and first_conflict(constraints, rel.data, c.variant) is None]
        if working:  # the build the planner would pick from this release
            out.append(max(working, key=prefer_wide_driver_range))
    return out


def _pinned_release(job: Job, constraints: Sequence[Constraint]) -> Optional[Release]:
    """The newest release the user's own pins allow, or None."""
    return next((r for r in job.idx.releases if allowed_by_user(constraints, r.data)), None)


def _nearest(checks: Sequence[Check], target: Optional[Release], releases: Sequence[Release]
             ) -> Optional[Check]:
    if not checks:
        return None
    if target is None:
        return checks[0]
    position = {r.text: i for i, r in enumerate(releases)}
    here = position.get(target.text, 0)
    return min(checks, key=lambda c: (abs(position.get(c.release.text, 0) - here),
                                      position.get(c.release.text, 0)))


# --------------------------------------------------------------------------------------------
# The blocker
# --------------------------------------------------------------------------------------------


def _fact_name(job: Job, code: str) -> str:
    view = job.view
    if code == "no-wheel-for-python":
        return f"Python {view.python}"
    if code == "no-wheel-for-platform":
        return f"platform {view.shown_platform}"
    if code == "glibc-too-old":
        return f"glibc {job.machine.os.glibc or 'unknown'}"
    if code == "arch-not-compiled":
        archs = sorted({g.arch for g in view.gpus}) or ["this GPU"]
        return "GPU architecture " + ", ".join(archs)
    if code == "driver-too-old":
        return f"NVIDIA driver {view.driver or view.driver_cuda or 'unknown'}"
    return code


def blocker_of(job: Job, walk: Walk, constraints: Sequence[Constraint]) -> Optional[Blocker]:
    """The one constraint that blocks: within the user's pins, what stopped the furthest build."""
    user = [c for c in constraints if c.user_pin]
    for check, constraint, why in walk.pinned_conflicts:
        if not constraint.user_pin:
            return Blocker(getattr(constraint, "code", CONFLICT) or CONFLICT,
                           constraint.label, f"{check.label} runs here, but {why}")
    failures = [c for c in walk.pinned_failures
                 if all(u.check(c.release.data, c.variant) is None for u in user)]
    if failures:
        best = max(failures, key=lambda c: _STAGE.get(c.code, 0))
        pins = [c.label for c in user if any(op in c.label for op in "=<>!~")]
        prefix = ", ".join(pins) + ": " if pins else ""
        return Blocker(best.code, _fact_name(job, best.code), prefix + best.reason)
    if walk.pinned_conflicts:  # a build of the pinned release runs, but not the one the pin names
        check, constraint, why = walk.pinned_conflicts[0]
        return Blocker(CONFLICT, constraint.label, f"{check.label} runs here, but {why}")
    if user and _pinned_release(job, constraints) is None:
        clash = _family_pins_clash(job, user)
        if clash is not None:
            return clash
        labels = ", ".join(c.label for c in user)
        return Blocker("no-such-release", labels, f"no torch release in the data matches {labels}")
    if walk.blocked is not None:
        check, constraint, why = walk.blocked
        return Blocker(CONFLICT, constraint.label, f"{check.label} runs here, but {why}")
    return None


def _pairs_with(job: Job, pin: Constraint) -> List[str]:
    """The torch releases in the data a pin allows (any build)."""
    return [r.text for r in job.idx.releases if pin.check(r.data, None) is None]


def _family_pins_clash(job: Job, user: Sequence[Constraint]) -> Optional[Blocker]:
    """Each pin alone is met, but a torchvision/torchaudio pin pairs only with torches the torch
    pin excludes: name the pin and the torch it pairs with."""
    torch_pins = [c for c in user if _is_torch_pin(c.label)]
    for pin in (c for c in user if c.label.startswith(("torchvision", "torchaudio"))):
        paired = _pairs_with(job, pin)
        if paired and torch_pins and _pairs_with(job, torch_pins[0]):
            allowed = set(_pairs_with(job, torch_pins[0]))
            if not allowed & set(paired):
                return Blocker(CONFLICT, pin.label, f"{pin.label.split(' ')[0]} pairs with torch "
                                                    f"{' or '.join(paired[:3])}, which {torch_pins[0].label} "
                                                    f"excludes")
    return None


def capped_by(walk: Walk) -> Optional[str]:
    """When a newer build runs here but a constraint refused it: that constraint, said plainly."""
    if walk.blocked is None or walk.chosen is None:
        return None
    check, constraint, why = walk.blocked
    if check.release.version <= walk.chosen.release.version:
        return None
    if constraint.user_pin:
        return f"{constraint.label} caps it ({why}; newer {check.label} runs here)"
    return f"{constraint.label} caps it ({why}; {check.label} runs here)"


# --------------------------------------------------------------------------------------------
# The doors
# --------------------------------------------------------------------------------------------


def doors_for(job: Job, walk: Walk, constraints: Sequence[Constraint], blocker: Optional[Blocker]
              ) -> List[Door]:
    """The nearest ways out of this dead end, each with its command."""
    code = blocker.code if blocker is not None else ""
    others = [c for c in constraints if not c.user_pin]
    doors: List[Door] = []
    if code in ("no-wheel-for-python", "no-wheel-for-platform", "glibc-too-old", "no-such-release",
                "driver-too-old", "arch-not-compiled") or (code and blocker is not None
                                                           and _is_torch_pin(blocker.constraint)):
        doors.extend(_release_door(job, constraints, others, code))
    if code == "no-wheel-for-python":
        doors.extend(_python_door(job, constraints))
    if code == "conflicts-with-requirement" and blocker is not None:
        doors.extend(_conflict_doors(job, constraints, blocker))
    if code == "driver-too-old":
        doors.extend(_driver_door(job, walk))
    if code == "arch-not-compiled":
        doors.extend(arch_doors(job, last_binaries=not doors))
    if code == "glibc-too-old":
        doors.append(Door("container", "run in a container with a newer Linux (glibc comes with the "
                                       "operating system, not the venv)", "a newer base OS image",
                          "docker run --gpus all -it ubuntu:22.04"))
    return doors


def _is_torch_pin(label: str) -> bool:
    return label.startswith("torch") and not label.startswith(("torchvision", "torchaudio"))


def _release_door(job: Job, constraints: Sequence[Constraint], others: Sequence[Constraint],
                  code: str) -> List[Door]:
    if not any(c.user_pin for c in constraints):
        return []  # nothing the user pinned: no release of any version works, a release door won't help
    target = _pinned_release(job, constraints)
    runnable, caps = within_caps(job, _runnable(job, others))
    found = _nearest(runnable, target, job.idx.releases)
    if found is None:
        return []
    version = found.release.text
    torch = job.wanted.get("torch")
    if torch is not None and "+" in torch.spec:  # the user named a build: name the one that runs
        version = f"{version}+{found.variant.name}"
    why = {"no-wheel-for-python": f"with a wheel for Python {job.view.python} that runs here",
           "glibc-too-old": f"whose wheels fit glibc {job.machine.os.glibc}",
           "driver-too-old": "that runs on this driver"}.get(code, "that runs here")
    return [Door("release", f"torch {found.release.text} ({found.variant.name}) is the nearest release {why}"
                            f"{cap_words(caps)}",
                 f"{_torch_text(job)} -> torch=={version}",
                 plan_command(_with_torch(job, f"torch=={version}")))]


def _python_door(job: Job, constraints: Sequence[Constraint]) -> List[Door]:
    """The Python nearest this one that has the pinned release, checked on this hardware; within
    the user's pip/uv caps: the newest release the pins and caps allow, or a door saying the cap
    blocks the pinned one."""
    target = _pinned_release(job, constraints)
    if target is None:
        return []
    blocked = forbidding(job, target)
    if blocked:
        for release in (r for r in job.idx.releases
                        if allowed_by_user(constraints, r.data) and not forbidding(job, r)):
            door = _python_door_for(job, release, f"torch=={release.text}", cap_words(", ".join(blocked)))
            if door:
                return door
    door = _python_door_for(job, target, _torch_text(job), "")
    if door and blocked:  # pip/uv would refuse this door's torch: say so, and where the cap is written
        only = door[0]
        return [replace(only, summary=only.summary + blocked_words(", ".join(blocked)))]
    return door


def _python_door_for(job: Job, target: Release, torch: str, caps: str) -> List[Door]:
    view = job.view
    have = version_tuple(view.python.rstrip("t"))
    tags = [t for t in (target.data.python.get(view.platform, ()) or ()) if not t.endswith("t")]
    tags.sort(key=lambda t: abs(version_tuple(t)[1] - have[1]) if len(have) > 1 else 0)
    for tag in tags:
        other = replace(view, python=tag)
        working = [check_variant(job.idx, other, target, v) for v in target.data.variants
                   if v.kind in _kinds(job)]
        if any(c.ok for c in working):
            reqs = _with_torch(job, torch)
            return [Door("python", f"torch {target.text} has wheels for Python {tag} and runs here "
                                   f"with it{caps} (create the environment with e.g. "
                                   f"`uv venv --python {tag}`)",
                         f"Python {view.python} -> {tag}", plan_command(reqs, f"--python {tag}"))]
    return []


def _conflict_doors(job: Job, constraints: Sequence[Constraint], blocker: Blocker) -> List[Door]:
    doors: List[Door] = []
    user = [c for c in constraints if c.user_pin]
    if user and not any(c.label == blocker.constraint for c in user):
        others = [c for c in constraints if not c.user_pin]
        found, caps = within_caps(job, _runnable(job, others))
        if found:
            version = found[0].release.text
            doors.append(Door("release", f"torch {version} is the newest that {blocker.constraint} allows "
                                         f"and that runs here{cap_words(caps)}",
                              f"{_torch_text(job)} -> torch=={version}",
                              plan_command(_with_torch(job, f"torch=={version}"))))
    name = blocker.constraint.split(" ", 1)[0]
    try:
        package = parse_requirement(name).name
    except Exception:
        return doors
    if package in ("torchvision", "torchaudio") and any(c.label == blocker.constraint for c in user):
        doors.extend(_companion_door(job, package, next(c for c in user if c.label == blocker.constraint)))
    if package in job.wanted and package != "torch":
        doors.extend(_dependency_python_door(job, package))
        doors.append(Door("requirement", f"drop or relax {blocker.constraint} (the torch that runs here "
                                         f"is newer than it allows)", f"remove {job.wanted[package].text}",
                          plan_command(_without(job, package))))
    return doors


def _companion_door(job: Job, package: str, pin: Constraint) -> List[Door]:
    """The newest torch that pairs with the user's torchvision/torchaudio pin and that the user's
    pip/uv caps allow; where they allow none, the door says which cap blocks it."""
    releases = [r for r in job.idx.releases if pin.check(r.data, None) is None]
    if not releases:
        return []
    blocked = forbidding(job, releases[0])
    allowed = next((r for r in releases if not forbidding(job, r)), None)
    found = allowed or releases[0]
    words = (cap_words(", ".join(blocked)) if allowed is not None
             else blocked_words(", ".join(blocked))) if blocked else ""
    return [Door("release", f"torch {found.text} pairs with {job.wanted[package].text}{words}",
                 f"{_torch_text(job)} -> torch=={found.text}",
                 plan_command(_with_torch(job, f"torch=={found.text}")))]


def _dependency_python_door(job: Job, package: str) -> List[Door]:
    """A dependency of ``package`` that needs a newer Python: plan for that Python."""
    from torchsmith.plan.published import newer_python_for

    python, chain = newer_python_for(job, package)
    if not python:
        return []
    return [Door("python", f"{chain}: plan for Python {python} (create the environment with e.g. "
                           f"`uv venv --python {python}`)", f"Python {job.view.python} -> {python}",
                 plan_command(job.request.requirements, f"--python {python}"))]


def _driver_door(job: Job, walk: Walk) -> List[Door]:
    need = ""
    for check in walk.pinned_failures:
        if check.code == DRIVER and check.variant.cuda:
            _, full, floor = driver_mode(job.idx.kb, job.view, check.variant.cuda)
            need = floor or full
            break
    if not need:
        return []
    return [Door("driver", f"an NVIDIA driver ≥ {need} runs the pinned build",
                 f"NVIDIA driver {job.view.driver or 'unknown'} -> ≥ {need}",
                 plan_command(job.request.requirements, f"--driver {need}"))]


def arch_doors(job: Job, *, last_binaries: bool = True, cpu: bool = True) -> List[Door]:
    """For GPUs no current binary supports: the last binaries with the arch, a source build, CPU."""
    view, idx = job.view, job.idx
    doors: List[Door] = []
    archs = sorted({g.arch for g in view.gpus})
    ccs = sorted({f"{g.cc[0]}.{g.cc[1]}" for g in view.gpus})
    last = _last_with_arch(job) if last_binaries else None
    if last is not None:
        newest, _variant = last
        blocked = forbidding(job, newest)
        rel, variant = (_last_with_arch(job, capped=True) or last) if blocked else last
        check = check_variant(idx, view, rel, variant)
        needs = "" if check.ok else f"; it also needs: {check.reason}"
        if blocked:  # within the caps, or the cap that forbids the newest and where it is written
            needs = (cap_words(", ".join(blocked)) if rel is not newest else
                     blocked_words(", ".join(blocked))) + needs
        doors.append(Door("release", f"torch {rel.text} {variant.name} is the newest build with kernels "
                                     f"for {', '.join(archs)}{needs}",
                          f"{_torch_text(job)} -> torch=={rel.text}+{variant.name}",
                          plan_command(_with_torch(job, f"torch=={rel.text}+{variant.name}"))))
    doors.append(Door("build-from-source", f"build torch from source for {', '.join(archs)} "
                                           f"(`torchsmith build-env --cuda` prepares the toolchain)",
                      f"TORCH_CUDA_ARCH_LIST={';'.join(ccs)}",
                      f"torchsmith build-env --cuda && TORCH_CUDA_ARCH_LIST='{';'.join(ccs)}' "
                      f"python -m pip install --no-build-isolation -v ."))
    if cpu:
        doors.append(Door("cpu", "the CPU build runs on any machine (no GPU acceleration)", "--no-gpu",
                          plan_command(job.request.requirements, "--no-gpu")))
    return doors


def _last_with_arch(job: Job, capped: bool = False) -> Optional[Tuple[Release, VariantBuild]]:
    """The newest CUDA build with kernels for every GPU here (``capped``: among the releases the
    user's pip/uv caps allow)."""
    view, idx = job.view, job.idx
    for rel in idx.releases:
        if capped and forbidding(job, rel):
            continue
        for variant in rel.data.variants:
            if variant.kind != "cuda" or view.platform not in tuple(variant.platforms or ()):
                continue
            built_sass, built_ptx = sass(variant, view.platform), ptx(variant, view.platform)
            if view.gpus and all(kernel_for(g.cc, built_sass, built_ptx, integrated=g.cc in idx.tegra)
                                 is not None for g in view.gpus):
                return rel, variant
    return None


def jetson_dead_end(job: Job, draft: Draft, jetpack: Optional[JetPack], pythons: Sequence[str],
                    why: str) -> None:
    """No NVIDIA wheel for this JetPack + Python (+ pin): blocker and the ways out."""
    python = job.machine.python.minor
    l4t = job.machine.jetson.l4t if job.machine.jetson else None
    release = f"JetPack {jetpack.jetpack}" if jetpack else f"L4T {l4t or '?'}"
    draft.blocker = Blocker("no-jetpack-wheel", release + (f", Python {python}" if python else ""), why)
    reqs = list(job.request.requirements)
    named = job.idx.kb.jetpack(l4t) if l4t and jetpack is None else None  # `--jetson 6.1`
    if named is not None:
        draft.alternatives.append(Door(
            "flag", f"--jetson takes the L4T release: JetPack {l4t} is L4T {named.l4t}",
            f"--jetson {l4t} -> --jetson {named.l4t}", plan_command(reqs, f"--jetson {named.l4t}")))
    if pythons and python and python not in pythons:  # not stated: the JetPack's own, already right
        target = pythons[-1]
        draft.alternatives.append(Door(
            "python", f"NVIDIA's wheels for this JetPack are built for Python {', '.join(pythons)}: "
                      f"use the system python{target} (`python{target} -m venv --system-site-packages env`)",
            f"Python {python} -> {target}", plan_command(reqs, f"--python {target}")))
    draft.alternatives.append(Door(
        "container", "a jetson-containers l4t-pytorch image matching this L4T release carries a "
                     "working torch", "run in a container", "jetson-containers run $(autotag l4t-pytorch)"))
    draft.alternatives.append(Door(
        "build-from-source", "build torch from source on the Jetson for its GPU arch "
                             "(`torchsmith build-env --cuda` prepares the toolchain)",
        "TORCH_CUDA_ARCH_LIST from the module (8.7 for Orin, 7.2 for Xavier)",
        "torchsmith build-env --cuda"))
