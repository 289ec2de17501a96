"""The container base image for a plan: matching its torch, and accepted by the host's driver.

The images come from the ``containers`` document (each row sourced), never from code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from torchsmith.compat import variant_cuda
from torchsmith.errors import KnowledgeBaseError
from torchsmith.machine import Machine
from torchsmith.plan.hostview import driver_max_cuda
from torchsmith.plan.model import BaseImage, Plan
from torchsmith.records import replace
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["choose_base_image", "require_check_lines"]

_FAMILY = ("torch", "torchvision", "torchaudio")


def _older_or_equal(a: str, b: str) -> bool:
    return version_tuple(a) <= version_tuple(b)


def require_check_lines(image: str, image_cuda: str, driver_cuda: Optional[str],
                        driver: Optional[str], older: Optional[str], *, taken: bool = False) -> List[str]:
    """Why nvidia-container-runtime refuses an image, and the ways out. ``taken``: ``older`` is
    the image the Dockerfile already uses, so the lines say why not ``image`` and how to get it."""
    refused = (f"{image} sets NVIDIA_REQUIRE_CUDA=cuda>={image_cuda}; this host's driver "
               f"{driver or '?'} supports CUDA {driver_cuda}, so `docker run --gpus` stops with "
               f"'unsatisfied condition: cuda>={image_cuda}'.")
    others = [
        "NVIDIA_DISABLE_REQUIRE=1 (docker run -e NVIDIA_DISABLE_REQUIRE=1): skips the check; "
        "risk: CUDA code then fails at run time with 'CUDA driver version is insufficient' "
        "unless NVIDIA's minor-version compatibility covers it (same CUDA major, driver at or "
        "above that major's floor)",
        f"upgrade the host driver to one that supports CUDA {image_cuda}",
    ]
    if taken:
        return [f"Not the wheel's own CUDA image: {refused}", f"To use {image} instead:",
                *(f"  {number}. {line}" for number, line in enumerate(others, 1))]
    first = f"an older image: {older}" if older else \
        "an older image (none in torchsmith's data is old enough)"
    return [refused, "Remedies:", *(f"  {number}. {line}" for number, line in enumerate([first, *others], 1))]


def choose_base_image(plan: Plan, machine: Optional[Machine], kb: KnowledgeBase) -> BaseImage:
    """The base image for ``plan``: matching its torch, and accepted by the host's driver.

    Raises :class:`KnowledgeBaseError` for a Jetson whose L4T release has no known image.
    """
    rows = kb.document("containers")
    image = _choose(plan, machine, kb, rows)
    return replace(image, source_url=str(rows["sources"][image.source]),
                   uv_image=str(rows["uv_image"]["image"]))


def _choose(plan: Plan, machine: Optional[Machine], kb: KnowledgeBase, rows: Dict[str, Any]) -> BaseImage:
    if plan.accelerator == "jetson" or (machine is not None and machine.jetson is not None):
        return _jetson_image(plan, machine, rows)
    cuda = variant_cuda(plan.variant)
    if cuda is None:
        python = plan.python or (machine.python.minor if machine else "") or "3.12"
        pattern = rows["python_slim"]["pattern"]
        why = "no CUDA in this plan: torch's wheels carry what they need"
        if plan.accelerator == "rocm":
            why = ("ROCm torch wheels carry the ROCm runtime; the host needs the amdgpu driver and "
                   "docker run --device=/dev/kfd --device=/dev/dri --group-add video")
        return BaseImage(pattern.format(python=python.rstrip("t")), "python", why,
                         rows["python_slim"]["source"])
    driver, driver_cuda = _driver_and_cuda(machine, kb)
    torch = plan.package("torch")
    if torch is not None and {p.name for p in plan.packages} <= set(_FAMILY):
        for row in rows["pytorch"]:
            if row["torch"] == torch.version and row["cuda"] == cuda and _accepted(row["cuda"], driver_cuda):
                return BaseImage(row["image"], "pytorch",
                                 f"PyTorch's own image with torch {torch.version} for CUDA {cuda}",
                                 row["source"], requires_cuda=cuda, torch_preinstalled=True)
    return _cuda_runtime_image(plan, cuda, driver, driver_cuda, rows)


def _accepted(image_cuda: str, driver_cuda: Optional[str]) -> bool:
    return driver_cuda is None or _older_or_equal(image_cuda, driver_cuda)


def _cuda_runtime_image(plan: Plan, cuda: str, driver: Optional[str], driver_cuda: Optional[str],
                        rows: Dict[str, Any]) -> BaseImage:
    """A CUDA runtime image no newer than the wheel's CUDA (the wheel brings its own CUDA
    libraries) and no newer than the driver, or the container runtime refuses to start it."""
    cuda_rows = sorted(rows["cuda_runtime"], key=lambda r: version_tuple(r["cuda"]))
    fits = [r for r in cuda_rows if _older_or_equal(r["cuda"], cuda) and _accepted(r["cuda"], driver_cuda)]
    if fits:
        row = fits[-1]
        why = f"NVIDIA's CUDA {row['cuda']} runtime image for a {plan.variant} wheel"
        if driver_cuda is not None:
            why += f"; the driver (CUDA ≤ {driver_cuda}) accepts it"
        notes: Tuple[str, ...] = ()
        newest = [r for r in cuda_rows if _older_or_equal(r["cuda"], cuda)][-1]
        if newest is not row:
            notes = (f"The wheel's CUDA {cuda} runs on this driver through NVIDIA's minor-version "
                     f"compatibility; its libraries come with the wheel, not the image.",
                     *require_check_lines(newest["image"], newest["cuda"], driver_cuda, driver,
                                          row["image"], taken=True))
        return BaseImage(row["image"], "cuda", why, row["source"], requires_cuda=row["cuda"],
                         notes=notes)
    row = cuda_rows[0]
    problems = tuple(require_check_lines(row["image"], row["cuda"], driver_cuda, driver, None))
    return BaseImage(row["image"], "cuda", f"the oldest CUDA runtime image torchsmith knows "
                     f"(CUDA {row['cuda']})", row["source"], requires_cuda=row["cuda"],
                     problems=problems)


def _driver_and_cuda(machine: Optional[Machine], kb: KnowledgeBase) -> Tuple[Optional[str], Optional[str]]:
    """The driver and the newest CUDA it supports; from ``--driver`` alone by plan's own rule."""
    nvidia = machine.nvidia if machine is not None else None
    if nvidia is None or machine is None:
        return None, None
    return nvidia.driver_version, driver_max_cuda(machine, kb)


def _jetson_image(plan: Plan, machine: Optional[Machine], rows: Dict[str, Any]) -> BaseImage:
    l4t = machine.jetson.l4t if machine is not None and machine.jetson is not None else None
    if not l4t:
        raise KnowledgeBaseError("a Jetson plan needs the L4T release to pick an image",
                                 code="jetson-l4t-unknown", hint="pass --jetson L4T, e.g. 35.2.1")
    torch = plan.package("torch")
    names = {p.name for p in plan.packages}
    for row in rows["l4t_pytorch"]:
        inside = dict(row.get("packages") or {"torch": row["torch"]})
        if (row["l4t"] == l4t and torch is not None and names & set(_FAMILY) <= set(inside)
                and torch.version.startswith(row["torch"] + ".")):
            listed = ", ".join(f"{k} {v}" for k, v in inside.items())
            notes = (f"The image brings {listed}" + (" (versions as NGC lists them; not verified "
                     "by torchsmith)" if row.get("packages_uncertain") else "") + ".",)
            return BaseImage(row["image"], "l4t-pytorch",
                             f"NVIDIA's L4T PyTorch image for L4T {l4t} (torch {row['torch']})",
                             row["source"], torch_preinstalled=True, notes=notes,
                             preinstalled=tuple(inside))
    same_major = [r for r in rows["l4t_jetpack"]
                  if version_tuple(r["l4t"])[:1] == version_tuple(l4t)[:1]
                  and _older_or_equal(r["l4t"], l4t)]
    if not same_major:
        raise KnowledgeBaseError(f"torchsmith knows no L4T container image for L4T {l4t}",
                                 code="jetson-image-unknown",
                                 hint="use NVIDIA's NGC catalog (l4t-jetpack) for this release")
    row = max(same_major, key=lambda r: version_tuple(r["l4t"]))
    return BaseImage(row["image"], "l4t-jetpack",
                     f"NVIDIA's L4T JetPack image r{row['l4t']} for this L4T {l4t} "
                     "(containers must match the host's L4T major release)", row["source"])
