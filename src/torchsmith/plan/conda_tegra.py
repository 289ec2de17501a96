"""conda-forge's Jetson builds: pytorch for the L4T (``tegra``) driver stack of JetPack 6.

conda-forge builds pytorch for linux-aarch64 twice with CUDA: ``arm-variant * sbsa`` (servers,
and JetPack 7's Thor, which moved to the SBSA stack) and, from 2.11, ``arm-variant * tegra``
(sysroot glibc 2.34: JetPack 6's Ubuntu 22.04), read from the feedstock's ``.ci_support``
(``linux-aarch64-tegra`` in the data). JetPack 4-5 have no conda-forge build that sees the iGPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

from torchsmith.errors import TorchsmithError
from torchsmith.plan.model import CondaStack, Plan
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["TEGRA", "jetpack_major", "tegra_stack"]

TEGRA = "linux-aarch64-tegra"


def jetpack_major(plan: Plan) -> Optional[int]:
    """6 for a plan with variant ``jetson-jp62``; None when the plan names no JetPack."""
    variant = plan.variant or ""
    digits = variant[len("jetson-jp"):] if variant.startswith("jetson-jp") else ""
    return int(digits[0]) if digits[:1].isdigit() else None


def _newest_tegra(kb: KnowledgeBase) -> Optional[Tuple[str, str, str]]:
    """(release, cuda, source url) of the newest conda-forge pytorch with a tegra build."""
    try:
        rows = kb.conda_builds
    except TorchsmithError:
        return None
    best: Optional[Tuple[str, str, str]] = None
    for row in rows:
        cudas = row.cudas_for(TEGRA) if row.package == "pytorch" and row.releases else ()
        if not any(entry.startswith(TEGRA + "=") for entry in row.platform_cuda) or not cudas:
            continue
        newest = max(row.releases, key=version_tuple)
        if best is None or version_tuple(newest) > version_tuple(best[0]):
            url = next((kb.sources[s].url for s in row.sources if s in kb.sources), "")
            best = (newest, max(cudas, key=version_tuple), url)
    return best


def tegra_stack(plan: Plan, kb: KnowledgeBase, gpu_package: str) -> Optional[CondaStack]:
    """The JetPack 6 stack from conda-forge's tegra builds; None where there is none."""
    if jetpack_major(plan) != 6:
        return None
    found = _newest_tegra(kb)
    if found is None:
        return None
    version, cuda, url = found
    family = [("torchvision", "")] if plan.package("torchvision") else []
    wheel = (plan.package("torch") or plan.packages[0]).version
    note = (f"conda-forge's Jetson build: pytorch {version} for arm-variant tegra (CUDA {cuda}, sysroot "
            f"glibc 2.34, so JetPack 6), not NVIDIA's wheel {wheel} of the pip plan; torchvision is left "
            f"to the solver (source: {url}; not run on a device by torchsmith)")
    return CondaStack(((gpu_package, version), ("arm-variant", "*=tegra"), *family), cuda,
                      tuple(p for p in plan.packages if p.name not in ("torch", "torchvision", "torchaudio")
                            and not p.wheel_url),
                      (f"torch=={version}",), False, (note,), platform=plan.platform)
