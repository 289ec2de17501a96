"""NVIDIA Jetson: the JetPack's own torch wheel, not PyPI's.

Jetson modules (Nano sm_53, TX2 sm_62, Xavier sm_72, Orin sm_87) run the L4T driver stack with
the CUDA of their JetPack. PyPI's aarch64 torch is CPU-only up to 2.10 and, from 2.11, a CUDA 13
build for SBSA servers; conda-forge's pytorch-gpu targets the same server stack. Neither runs on
the iGPU of JetPack 4-6, so the plan is NVIDIA's wheel for the JetPack (a file URL, or the
Jetson AI Lab index for JetPack 6), its system prerequisites, and the torchvision that pairs.
JetPack 7 (Thor, L4T 38) moved to the SBSA stack: there the upstream aarch64 CUDA wheels apply.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from torchsmith.compat import sm_arch
from torchsmith.output import Caution
from torchsmith.plan.core import CONFLICT, PYTHON, Constraint, Job, is_default
from torchsmith.plan.cuda import plan_cuda
from torchsmith.plan.doors import jetson_dead_end
from torchsmith.plan.draft import Draft
from torchsmith.plan.hostview import GpuView
from torchsmith.plan.model import PackagePin, Rejection
from torchsmith.versions import sortable_version, version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import JetPack, JetsonWheel

__all__ = ["jetson_variant", "plan_jetson"]

WHY_NOT_PYPI = (
    "PyPI's aarch64 torch is CPU-only up to 2.10 and from 2.11 a CUDA 13 build for SBSA servers "
    "(sm_80/90/100/110/120), which does not load on the JetPack {jp} driver stack (CUDA {cuda}, "
    "{arch}): it would install and then report torch.cuda.is_available() == False"
)
WHY_NOT_CONDA = (
    "conda-forge's pytorch-gpu is built for desktop/server CUDA 12+ drivers, not the L4T (Jetson) "
    "driver stack: it does not see the iGPU"
)


def jetson_variant(jetpack: str) -> str:
    """``5.1`` -> ``jetson-jp51``: the variant token of a JetPack's NVIDIA wheels."""
    return "jetson-jp" + "".join(ch for ch in jetpack.split(" ", 1)[0] if ch.isdigit())


def plan_jetson(job: Job, constraints: Sequence[Constraint]) -> Draft:
    """NVIDIA's wheel for the Jetson's JetPack (JetPack 7: the upstream SBSA CUDA wheels)."""
    machine, idx = job.machine, job.idx
    jetson = machine.jetson
    assert jetson is not None
    l4t = jetson.l4t or ""
    jp = idx.kb.jetpack_for_l4t(l4t) if l4t else None
    draft = Draft(accelerator="jetson")
    if jp is None:
        draft.status = "no-solution"
        named = idx.kb.jetpack(l4t) if l4t else None  # `--jetson 6.1`: a JetPack, not an L4T, release
        draft.reasons.append(
            f"Jetson with L4T {l4t}: {l4t} is a JetPack release, not an L4T one; JetPack {l4t} is "
            f"L4T {named.l4t} (--jetson {named.l4t}){idx.cite(getattr(named, 'sources', ()))}" if named else
            f"Jetson with L4T {l4t or 'unknown'}: this release is not in the data, so the matching "
            f"NVIDIA wheel is unknown (read /etc/nv_tegra_release; `torchsmith kb refresh` or a newer "
            f"torchsmith may know it)")
        jetson_dead_end(job, draft, None, (), draft.reasons[-1])
        return draft
    cc = jetson.compute_capability or ""
    arch = sm_arch(cc) if cc else "the Jetson iGPU"
    jp_cuda = str(getattr(jp, "cuda", "") or "")
    draft.reasons.append(f"Jetson on L4T {l4t} = JetPack {jp.jetpack} with CUDA {jp_cuda} and "
                         f"Python {jp.python}{idx.cite(getattr(jp, 'sources', ()))}")
    if version_tuple(str(jp.jetpack))[:1] >= (7,):
        return _jetpack_sbsa(job, constraints, draft, jp)
    why_not_pypi = WHY_NOT_PYPI.format(jp=jp.jetpack, cuda=jp_cuda, arch=arch)
    draft.reject(Rejection("torch from PyPI (linux-aarch64)", why_not_pypi, "no-gpu-support"))
    draft.reject(Rejection("conda-forge pytorch-gpu", WHY_NOT_CONDA, "no-gpu-support"))
    if _plan_wheel(job, draft, jp):
        draft.warnings.append(why_not_pypi + "; do not `pip install torch` afterwards")
    return draft


def _plan_wheel(job: Job, draft: Draft, jp: JetPack) -> bool:
    """Pin NVIDIA's wheel (or the JetPack's index) and its companions; False on a dead end."""
    wanted = job.wanted
    wheels = list(getattr(jp, "wheels", ()) or ())  # its own and those whose L4T range holds it
    user_python = job.machine.python.minor or str(jp.python)  # not stated: the JetPack's own
    usable = _usable_wheels(job, draft, jp, wheels, user_python)
    variant = jetson_variant(jp.jetpack)
    index = getattr(jp, "index_url", None)
    if not usable and not (index and user_python == jp.python and wanted.get("torch") is None):
        draft.python = user_python or str(jp.python)
        _no_jetpack_wheel(job, draft, jp, wheels, user_python=user_python, variant=variant)
        return False
    draft.variant = variant
    draft.python = user_python or jp.python
    paired, torch_version = _pin_torch(job, draft, jp, usable[0] if usable else None, variant)
    if "torchvision" in wanted:
        _pin_torchvision(draft, jp, paired, torch_version, variant)
    if "torchaudio" in wanted and not is_default(job.request):
        draft.warnings.append("torchaudio: NVIDIA publishes no Jetson wheel; build it from source")
    prerequisites = tuple(getattr(jp, "prerequisites", ()) or ())
    if prerequisites:
        draft.prerequisites.append("sudo apt-get install -y " + " ".join(prerequisites))
    return True


def _usable_wheels(job: Job, draft: Draft, jp: JetPack, wheels: Sequence[JetsonWheel],
                   user_python: str) -> List[JetsonWheel]:
    """The wheels for this Python that the torch pin allows: its own newest first, then inherited."""
    torch_spec = job.wanted.get("torch")
    usable: List[JetsonWheel] = []
    for wheel in wheels:
        if torch_spec is not None and not torch_spec.allows(wheel.torch, prereleases=True):
            draft.reject(Rejection(f"torch {wheel.torch} ({jetson_variant(jp.jetpack)})",
                                   f"{torch_spec.text} excludes it", CONFLICT))
            continue
        if wheel.python != user_python:
            continue
        usable.append(wheel)
    # NVIDIA's wheels for this very JetPack first; those it inherits by L4T range when it lists none
    usable.sort(key=lambda w: (not getattr(w, "listed_for", ""), sortable_version(w.torch)), reverse=True)
    return usable


def _no_jetpack_wheel(job: Job, draft: Draft, jp: JetPack, wheels: Sequence[JetsonWheel], *,
                      user_python: str, variant: str) -> None:
    draft.status = "no-solution"
    torch_spec = job.wanted.get("torch")
    pythons = sorted({w.python for w in wheels}) or [jp.python]
    if user_python and user_python not in pythons:
        draft.reasons.append(
            f"NVIDIA's torch wheels for JetPack {jp.jetpack} are built for Python "
            f"{', '.join(pythons)} only; this Python is {user_python}. Use the system "
            f"python{pythons[-1]} (`python{pythons[-1]} -m venv --system-site-packages env`), or "
            f"a jetson-containers l4t-pytorch image, or build torch from source for "
            f"Python {user_python}")
        for wheel in wheels:
            draft.reject(Rejection(f"torch {wheel.torch} ({variant})",
                                   f"wheel is cp{wheel.python.replace('.', '')} only; this Python "
                                   f"is {user_python}", PYTHON))
    else:
        offered = ", ".join(sorted({w.torch for w in wheels}, key=sortable_version)) or "none"
        asked = f" {torch_spec.text}" if torch_spec is not None else " the request"
        draft.reasons.append(f"no NVIDIA torch wheel for JetPack {jp.jetpack} meets{asked} "
                             f"(NVIDIA's wheels for it: torch {offered})")
    jetson_dead_end(job, draft, jp, pythons, draft.reasons[-1])


def _pin_torch(job: Job, draft: Draft, jp: JetPack, wheel: Optional[JetsonWheel], variant: str
               ) -> Tuple[Optional[str], str]:
    """Pin NVIDIA's wheel, or the JetPack's index; (the torchvision that pairs, torch version)."""
    idx = job.idx
    if wheel is None:
        index = getattr(jp, "index_url", None)
        draft.packages.append(PackagePin("torch", "", variant, index_url=index))
        draft.reasons.append(f"torch from the JetPack {jp.jetpack} index {index}")
        return None, ""
    filename = getattr(wheel, "filename", None)
    draft.packages.append(PackagePin("torch", wheel.torch, variant, wheel_url=wheel.url,
                                     wheel_filename=filename))
    saved = f", saved as {filename} before pip installs it" if filename else ""
    listed_for = getattr(wheel, "listed_for", "")
    built_for = (f"NVIDIA's wheel for JetPack {listed_for}, built for L4T {wheel.l4t}, which holds "
                 f"{jp.l4t} (JetPack {jp.jetpack})" if listed_for
                 else f"NVIDIA's wheel for JetPack {jp.jetpack}")
    draft.reasons.append(f"torch {wheel.torch}: {built_for} and Python {wheel.python} ({wheel.url}{saved})"
                         f"{idx.cite(getattr(wheel, 'sources', ()) or ())}")
    if getattr(wheel, "uncertain", False):
        draft.warnings.append(
            f"torch {wheel.torch} on JetPack {jp.jetpack} is uncertain: no NVIDIA list torchsmith "
            f"read names this JetPack for it; its sources only show it used on the same L4T "
            f"R{jp.l4t.split('.')[0]} line{idx.cite(getattr(wheel, 'sources', ()) or ())}")
    return getattr(wheel, "torchvision", None), wheel.torch


def _pin_torchvision(draft: Draft, jp: JetPack, paired: Optional[str], torch_version: str,
                     variant: str) -> None:
    index = getattr(jp, "index_url", None)
    if paired:
        vision_url = getattr(jp, "torchvision_url", None)
        draft.packages.append(PackagePin("torchvision", paired, "source" if not vision_url else variant,
                                         wheel_url=vision_url))
        if not vision_url:
            draft.warnings.append(Caution(
                f"torchvision {paired} pairs with torch {torch_version}; NVIDIA publishes no "
                f"torchvision wheel for JetPack {jp.jetpack}: build it from source (git clone "
                f"--branch v{paired} https://github.com/pytorch/vision; python setup.py install) "
                f"— `pip install torchvision` would pull a PyPI torch and replace NVIDIA's"))
    elif index:
        draft.packages.append(PackagePin("torchvision", "", variant, index_url=index))
    else:
        draft.warnings.append(f"no known torchvision pairing for torch {torch_version} on "
                              f"JetPack {jp.jetpack}; build torchvision from source at the "
                              f"version torch's release notes name")


def _jetpack_sbsa(job: Job, constraints: Sequence[Constraint], draft: Draft, jp: JetPack) -> Draft:
    """JetPack 7 (Thor): the SBSA CUDA stack, so upstream aarch64 CUDA wheels with sm_110."""
    jetson = job.machine.jetson
    assert jetson is not None
    cc = version_tuple(jetson.compute_capability or "11.0")
    gpu = GpuView(0, f"Jetson {jetson.module or 'Thor'}", (cc[0], cc[1] if len(cc) > 1 else 0),
                  jetson.source or "jetson")
    sbsa = dataclasses.replace(job.view, gpus=(gpu,), driver=None, driver_cuda=str(jp.cuda or "13.0"),
                               driver_cuda_source=f"JetPack {jp.jetpack}")
    draft.reasons.append(f"JetPack {jp.jetpack} uses the SBSA CUDA stack: upstream aarch64 CUDA "
                         f"wheels with {gpu.arch} apply")
    return draft.then(plan_cuda(job._replace(view=sbsa), constraints))
