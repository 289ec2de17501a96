"""Planning the chosen build: its pins (torch and the companions that pair with it), why it is
the one, why PyPI's default build is not, and conda-forge's side of the same stack."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.plan.check import check_variant
from torchsmith.plan.conda_forge import forge_release
from torchsmith.plan.core import NO_GPU_BUILD, Check, Job
from torchsmith.plan.doors import capped_by
from torchsmith.plan.draft import Draft
from torchsmith.plan.hostview import HostView
from torchsmith.plan.index import Index, torch_index_url
from torchsmith.plan.model import PackagePin, Rejection
from torchsmith.plan.walk import Walk
from torchsmith.versions import minor_version, version_tuple

__all__ = ["adopt", "conda_specs", "headline", "reject_pypi_default"]


def headline(walk: Walk, build: str, what: str) -> str:
    """Why this release: the newest that works, or the constraint that caps it (named)."""
    cap = capped_by(walk)
    if cap:
        return f"{build}: {cap}; it is the newest release within that limit {what}"
    return f"{build} is the newest release {what}"


def adopt(job: Job, draft: Draft, chosen: Check, rejected: Sequence[Rejection], accelerator: str, *,
          plain_pypi: bool = False) -> None:
    """Plan the chosen build: the builds passed over on the way, its accelerator and its pins."""
    for rejection in rejected:
        draft.reject(rejection)
    draft.accelerator = accelerator
    draft.variant = chosen.variant.name
    _family_pins(job, draft, chosen, plain_pypi=plain_pypi)


def _family_pins(job: Job, draft: Draft, check: Check, *, plain_pypi: bool) -> None:
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


def reject_pypi_default(draft: Draft, idx: Index, view: HostView, chosen: Check) -> None:
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


def _older_with_cuda_major(idx: Index, platform: str, version: str, cuda: str) -> Optional[Tuple[str, str]]:
    """(release, cuda) of the newest conda-forge pytorch up to ``version`` built for ``platform``
    with a CUDA of ``cuda``'s major (the nearest not above it): conda-forge's cuda-version X.Y
    constrains ``__cuda >= X``, so only that major installs on the driver the pip plan chose for."""
    major = cuda.split(".", maxsplit=1)[0]
    best: Optional[Tuple[str, str]] = None
    for row in getattr(idx.kb, "conda_builds", ()):
        if row.package != "pytorch" or not row.releases or platform not in row.platforms:
            continue
        same = [c for c in row.cudas_for(platform) if c.split(".")[0] == major]
        fitting = [c for c in same if version_tuple(c) <= version_tuple(cuda)] or same
        releases = [r for r in row.releases if version_tuple(r) <= version_tuple(version)]
        if not fitting or not releases:
            continue
        newest = max(releases, key=version_tuple)
        if best is None or version_tuple(newest) > version_tuple(best[0]):
            best = (newest, max(fitting, key=version_tuple))
    return best


def conda_specs(idx: Index, view: HostView, chosen: Check) -> Dict[str, Any]:
    """conda-forge's side of the plan: pytorch (and pytorch-gpu + cuda-version) for the renderers."""
    variant = chosen.variant
    version = chosen.release.text
    specs: Dict[str, Any] = {"channel": "conda-forge", "pytorch": version}
    series = minor_version(version)
    builds = [b for b in getattr(idx.kb, "conda_builds", ())
              if b.package == "pytorch" and b.version == series]
    notes: List[str] = []
    if not builds:  # newer than every series the data knows: the newest known, as the render takes it
        forge = forge_release(version, view.platform, idx.kb)
        if forge is not None and forge.note and forge.version != version:
            version, series = forge.version, minor_version(forge.version)
            specs["pytorch"] = version
            notes.append(forge.note)
            builds = [b for b in idx.kb.conda_builds if b.package == "pytorch" and b.version == series]
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
                older = _older_with_cuda_major(idx, view.platform, version, cuda)
                if older is None:
                    return {"available": False,
                            "reason": f"{built_for} only, and no earlier conda-forge release has a CUDA "
                                      f"{cuda.split('.')[0]}.x build for {view.platform}, the CUDA this "
                                      "driver runs (cuda-version X.Y needs __cuda >= X)"}
                version, cuda = older
                notes.append(f"{built_for} only, whose cuda-version needs a newer driver (__cuda >= "
                             f"major); pytorch {version} is the newest conda-forge release with a CUDA "
                             f"{cuda} build: pytorch-gpu={version}, cuda-version={cuda}")
                specs["pytorch"] = version
        specs["pytorch-gpu"] = version
        specs["cuda-version"] = cuda
    if not builds:
        notes.append(f"conda-forge pytorch {series} is not in torchsmith's data; the environment asks "
                     f"for it as planned")
    if notes:
        specs["notes"] = notes
    return specs
