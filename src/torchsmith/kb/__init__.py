"""The compatibility knowledge base: sourced, versioned data about torch builds and the hardware
and software around them, loaded offline from JSON files shipped in the package.

>>> kb = load_kb()
>>> kb.release("2.8.0").variant("cu126").sass("linux-x86_64")
('sm_50', 'sm_60', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_90')

``load_kb(path)`` reads the packaged data (``torchsmith/kb/data``) and an *overlay*: the
directory ``path`` (``--kb DIR`` / ``TORCHSMITH_KB``), or by default the one `torchsmith kb
refresh` writes in the user's cache directory. Overlay rows replace packaged rows with the same
key, so a new torch release, CUDA variant or GPU is a data change only. Every row names its
sources (ids into :attr:`KnowledgeBase.sources`) and says whether it is ``uncertain``.
Tables, fields and the overlay format: ``docs/kb.md``.
"""

from __future__ import annotations

from torchsmith.kb.documents import DATA_DIR
from torchsmith.kb.knowledge import KnowledgeBase
from torchsmith.kb.load import REFRESH_FILE, clear_cache, default_overlay_dir, load_kb
from torchsmith.kb.model import (
    TABLE_FILES,
    WHEEL_PLATFORMS,
    ArchSupport,
    CondaBuild,
    CondaChannel,
    CudaRelease,
    DriverBranch,
    FrameworkBuild,
    GfxTarget,
    GpuModel,
    HsaOverride,
    JetPack,
    JetsonWheel,
    MinorCompat,
    PairedWheels,
    Source,
    TorchRelease,
    TorchRequirement,
    VariantBuild,
    wheel_platform,
)
from torchsmith.versions import driver_tuple

__all__ = [
    "DATA_DIR",
    "REFRESH_FILE",
    "TABLE_FILES",
    "WHEEL_PLATFORMS",
    "ArchSupport",
    "CondaBuild",
    "CondaChannel",
    "CudaRelease",
    "DriverBranch",
    "FrameworkBuild",
    "GfxTarget",
    "GpuModel",
    "HsaOverride",
    "JetPack",
    "JetsonWheel",
    "KnowledgeBase",
    "MinorCompat",
    "PairedWheels",
    "Source",
    "TorchRelease",
    "TorchRequirement",
    "VariantBuild",
    "clear_cache",
    "default_overlay_dir",
    "driver_tuple",
    "load_kb",
    "wheel_platform",
]

