"""The knowledge base: every table typed, the data documents, and the lookups on them.

Build one with :func:`torchsmith.kb.load_kb`; the rows are the records of :mod:`.model`.
"""


from __future__ import annotations

import re
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    FrozenSet,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    cast,
    overload,
)

from torchsmith.compat import Variant, kernel_for, parse_cc
from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb.documents import DATA_DIR
from torchsmith.kb.model import (
    TABLE_FILES,
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
    MinorCompat,
    PairedWheels,
    Row,
    Source,
    TheRockIndex,
    TorchRelease,
    TorchRequirement,
    VariantBuild,
    WheelAudit,
)
from torchsmith.versions import driver_tuple, minor_version

if TYPE_CHECKING:
    pass

_RowT = TypeVar("_RowT", bound=Row)

__all__ = ["KnowledgeBase"]


class KnowledgeBase:
    """All tables, validated, with lookups. Build it with :func:`load_kb`."""

    def __init__(self, sections: Mapping[Tuple[str, str], Sequence[Row]], manifest: Mapping[str, Any],
                 sources: Mapping[str, Source], *, overlay: Optional[str] = None,
                 refresh: Optional[Mapping[str, Any]] = None, packaged_dir: str = DATA_DIR) -> None:
        self._tables: Dict[str, Tuple[Row, ...]] = {
            name: tuple(sections[where]) for name, where in TABLE_FILES.items()}
        self.manifest = dict(manifest)
        self.kb_version: str = str(manifest.get("kb_version", ""))
        self.schema: int = int(manifest.get("schema", 0))
        self.sources: Mapping[str, Source] = dict(sources)
        self.overlay = overlay  # the overlay directory in use, if any
        self.refresh: Mapping[str, Any] = dict(refresh or {})  # provenance of `kb refresh`
        self.releases: Tuple[TorchRelease, ...] = self._rows("releases", TorchRelease)
        self.warnings: List[str] = self._staleness()
        self._by_version: Dict[str, TorchRelease] = {r.version: r for r in self.releases}
        self._gpu_index: Optional[Dict[str, GpuModel]] = None
        self._packaged_dir = packaged_dir  # the documents sit beside the tables
        self._documents: Dict[str, Dict[str, Any]] = {}

    def _rows(self, table: str, kind: Type[_RowT]) -> Tuple[_RowT, ...]:
        # The loader builds each table from its own row type (kb.model.SECTION_OF).
        return cast(Tuple[_RowT, ...], self._tables[table])

    @overload
    def table(self, name: Literal["releases"]) -> Tuple[TorchRelease, ...]: ...
    @overload
    def table(self, name: Literal["cuda"]) -> Tuple[CudaRelease, ...]: ...
    @overload
    def table(self, name: Literal["minor-compat"]) -> Tuple[MinorCompat, ...]: ...
    @overload
    def table(self, name: Literal["driver-branches"]) -> Tuple[DriverBranch, ...]: ...
    @overload
    def table(self, name: Literal["arch-support"]) -> Tuple[ArchSupport, ...]: ...
    @overload
    def table(self, name: Literal["gpus"]) -> Tuple[GpuModel, ...]: ...
    @overload
    def table(self, name: Literal["jetson"]) -> Tuple[JetPack, ...]: ...
    @overload
    def table(self, name: Literal["rocm"]) -> Tuple[GfxTarget, ...]: ...
    @overload
    def table(self, name: Literal["therock"]) -> Tuple[TheRockIndex, ...]: ...
    @overload
    def table(self, name: Literal["paired-wheels"]) -> Tuple[PairedWheels, ...]: ...
    @overload
    def table(self, name: Literal["torch-requirements"]) -> Tuple[TorchRequirement, ...]: ...
    @overload
    def table(self, name: Literal["conda-channels"]) -> Tuple[CondaChannel, ...]: ...
    @overload
    def table(self, name: Literal["conda-builds"]) -> Tuple[CondaBuild, ...]: ...
    @overload
    def table(self, name: Literal["frameworks"]) -> Tuple[FrameworkBuild, ...]: ...
    @overload
    def table(self, name: Literal["wheel-audits"]) -> Tuple[WheelAudit, ...]: ...
    @overload
    def table(self, name: str) -> Tuple[Row, ...]: ...

    def table(self, name: str) -> Tuple[Row, ...]:
        """The rows of one table by its `kb show` name (see :data:`TABLE_FILES`)."""
        if name not in TABLE_FILES:
            raise KnowledgeBaseError(f"no table {name!r}", code="usage",
                                     hint=f"one of: {', '.join(TABLE_FILES)}")
        return self._tables[name]

    def document(self, name: str) -> Dict[str, Any]:
        """A data document (see :data:`torchsmith.kb.documents.DOCUMENTS`), from the overlay when
        it has that file; read and checked once per knowledge base."""
        cached = self._documents.get(name)
        if cached is None:
            from torchsmith.kb.documents import read_document

            cached = self._documents[name] = read_document(name, self._packaged_dir, self.overlay)
        return cached

    def document_path(self, name: str) -> str:
        """The file document ``name`` is read from: the overlay's when it has one."""
        from torchsmith.kb.documents import document_path

        return document_path(name, self._packaged_dir, self.overlay)

    def _staleness(self) -> List[str]:
        seen = self.refresh.get("newest_seen")
        packaged = self.manifest.get("packaged_newest")
        if not isinstance(seen, str) or not isinstance(packaged, str):
            return []
        from torchsmith.kb.rows import version_key

        try:
            newer = version_key(seen) > version_key(packaged)
        except ValueError:
            return []
        if not newer:
            return []
        when = self.refresh.get("refreshed", "?")
        return [f"data is older than torch {seen} seen by `kb refresh` on {when}: "
                f"its GPU architecture lists are inferred until torchsmith is upgraded "
                f"(upgrade torchsmith for verified data; `torchsmith kb refresh` re-reads the indexes)"]

    # --- torch releases ---------------------------------------------------------------
    def release(self, version: str) -> Optional[TorchRelease]:
        """A torch release by version; a local tag (``2.5.1+cu124``) is ignored."""
        return self._by_version.get(version.split("+", 1)[0].strip())

    @property
    def newest_release(self) -> TorchRelease:
        return self.releases[0]

    def rocm_variants(self, gfx: Optional[str] = None) -> Tuple[Tuple[TorchRelease, VariantBuild], ...]:
        """(release, variant) of every ROCm build, newest first; only those carrying ``gfx`` if given."""
        return tuple((release, variant) for release in self.releases for variant in release.variants
                     if variant.kind == "rocm" and (gfx is None or gfx in variant.gfx))

    def rocm_release(self, rocm: str) -> Tuple[Tuple[TorchRelease, VariantBuild], ...]:
        """(release, variant) of the builds for ROCm ``rocm`` ("6.2" also matches rocm6.2.4)."""
        wanted = rocm.strip().lower().replace("rocm", "")
        return tuple((r, v) for r, v in self.rocm_variants()
                     if v.rocm == wanted or (v.rocm or "").startswith(wanted + "."))

    # --- NVIDIA CUDA and drivers ------------------------------------------------------
    @property
    def cuda_releases(self) -> Tuple[CudaRelease, ...]:
        return self._rows("cuda", CudaRelease)

    def cuda_release(self, version: str) -> Optional[CudaRelease]:
        """The CUDA toolkit ``"12.6"`` (``"12.6.3"`` and ``"cu126"`` work too)."""
        variant = Variant.parse(version)
        wanted = minor_version(variant.cuda if variant is not None and variant.cuda else version.strip())
        return next((row for row in self.cuda_releases if row.version == wanted), None)

    def minor_compat(self, cuda: str) -> Optional[MinorCompat]:
        major = cuda.strip().split(".")[0]
        return next((row for row in self._rows("minor-compat", MinorCompat) if row.cuda_major == major), None)

    def driver_max_cuda(self, driver: str, system: str = "linux") -> Optional[str]:
        """The highest CUDA the driver fully supports (what ``nvidia-smi`` shows as CUDA Version).

        Compares with each toolkit's minimum driver for ``system`` ("linux"/"windows"; WSL
        uses the Windows driver). Where NVIDIA lists no Windows number (CUDA 13 unbundled the
        driver) the driver branch decides.
        """
        have = driver_tuple(driver)
        if not have:
            return None
        column = "windows" if system in ("windows", "wsl") else "linux"
        for row in self.cuda_releases:
            need = row.min_driver_windows if column == "windows" else row.min_driver_linux
            if need:
                if have >= driver_tuple(need):
                    return row.version
            elif row.min_driver_linux and have[:1] >= driver_tuple(row.min_driver_linux)[:1]:
                return row.version
        return None

    def arch_support_rows(self) -> Tuple[ArchSupport, ...]:
        """Every row of the arch-support data, newest CUDA release first."""
        return self._rows("arch-support", ArchSupport)

    def arch_support(self, cuda: str) -> Optional[ArchSupport]:
        """Which architectures the CUDA toolkit ``cuda`` compiles for (the newest row not newer)."""
        from torchsmith.kb.rows import version_key

        wanted = version_key(minor_version(cuda))
        rows = self._rows("arch-support", ArchSupport)
        return next((row for row in rows if version_key(row.cuda) <= wanted), None)

    # --- GPUs ---------------------------------------------------------------------------
    @property
    def gpus(self) -> Tuple[GpuModel, ...]:
        return self._rows("gpus", GpuModel)

    def gpu_by_name(self, name: str) -> Optional[GpuModel]:
        """A GPU model by its marketing or ``nvidia-smi`` name, tolerant of prefixes, case and
        suffixes such as ``-SXM4-80GB`` or ``Laptop GPU`` (the longest known name that the
        given name starts with, word by word)."""
        from torchsmith.kb.rows import normalize_gpu_name

        if self._gpu_index is None:
            index: Dict[str, GpuModel] = {}
            for gpu in self.gpus:
                key = normalize_gpu_name(gpu.name)
                index[key] = gpu
                # "NVIDIA GB10 (DGX Spark)" is also found as "NVIDIA GB10".
                index.setdefault(re.sub(r"\s*\(.*\)$", "", key), gpu)
            self._gpu_index = index
        words = re.split(r"[\s\-]+", normalize_gpu_name(name))
        while words:
            hit = self._gpu_index.get(" ".join(words))
            if hit is not None:
                return hit
            words = words[:-1]
        return None

    def gpu_by_pci_id(self, pci_id: str) -> Optional[GpuModel]:
        """``"10de:2684"`` (or ``"0x2684"``) -> the model."""
        text = pci_id.strip().lower()
        text = text[2:] if text.startswith("0x") else text
        key = text if ":" in text else f"10de:{text}"
        return next((gpu for gpu in self.gpus if key in gpu.pci_ids), None)

    def kernel_for(self, variant: VariantBuild, compute_capability: str,
                   platform: str) -> Optional[Tuple[str, str]]:
        """What in ``variant`` runs on a GPU of ``compute_capability``: ("sass", "sm_60") or
        ("ptx", "compute_90"), or None. The rule is :func:`torchsmith.compat.kernel_for`; an
        integrated Jetson GPU (a ``jetson`` row of gpus.json) needs its exact SASS or PTX."""
        cc = parse_cc(compute_capability)
        if cc is None:
            return None
        kernel = kernel_for(cc, variant.sass(platform), variant.ptx(platform),
                            integrated=cc in self.integrated_ccs)
        return (kernel.how, kernel.name) if kernel else None

    @property
    def integrated_ccs(self) -> FrozenSet[Tuple[int, int]]:
        """Compute capabilities of the integrated Jetson GPUs."""
        ccs = (parse_cc(g.compute_capability) for g in self.gpus if g.jetson)
        return frozenset(cc for cc in ccs if cc is not None)

    # --- Jetson -------------------------------------------------------------------------
    @property
    def jetpacks(self) -> Tuple[JetPack, ...]:
        return self._rows("jetson", JetPack)

    def jetpack_for_l4t(self, l4t: str) -> Optional[JetPack]:
        """The JetPack of an L4T release (``35.2.1``); an unknown revision of a known
        ``major.minor`` maps to the newest row of that line."""
        text = l4t.strip().lstrip("Rr")
        rows = self.jetpacks
        prefix = minor_version(text)
        return (next((row for row in rows if row.l4t == text), None)
                or next((row for row in rows if minor_version(row.l4t) == prefix), None))

    def jetpack(self, version: str) -> Optional[JetPack]:
        """A JetPack by its version (``5.1``, ``6.2``)."""
        return next((row for row in self.jetpacks if row.jetpack.split(" ")[0] == version.strip()), None)

    # --- ROCm ---------------------------------------------------------------------------
    @property
    def gfx_targets(self) -> Tuple[GfxTarget, ...]:
        return self._rows("rocm", GfxTarget)

    @property
    def therock_indexes(self) -> Tuple[TheRockIndex, ...]:
        return self._rows("therock", TheRockIndex)

    def therock_index_for(self, gfx: str, platform: str) -> Optional[TheRockIndex]:
        """AMD TheRock's index serving ``gfx`` on ``platform``: multi-arch first, stable before nightly."""
        rows = [r for r in self.therock_indexes if gfx in r.gfx and platform in r.platforms]
        rows.sort(key=lambda r: (r.kind != "multi-arch", r.channel != "stable"))
        return rows[0] if rows else None

    def gfx_target(self, name_or_gfx: str) -> Optional[GfxTarget]:
        """An AMD GPU by gfx target (first row with it) or by a name it lists."""
        text = name_or_gfx.strip().lower()
        rows = self.gfx_targets
        return (next((row for row in rows if row.gfx == text), None)
                or next((row for row in rows if text and text in row.name.lower()), None))

    def hsa_override(self, gfx: str) -> Optional[HsaOverride]:
        """The HSA_OVERRIDE_GFX_VERSION route for an AMD card (its ``hsa_override`` document row)."""
        table = self.document("hsa_override")
        for row in table["rows"]:
            if gfx in row["gfx"]:
                urls = tuple(str(table["sources"][i]) for i in row["source"])
                return HsaOverride(gfx=gfx, value=str(row["override"]), runs_as=str(row["runs_as"]),
                                   urls=urls, uncertain=bool(row.get("uncertain", True)))
        return None

    # --- companions -----------------------------------------------------------------------
    def paired_wheels(self, package: str, torch: Optional[str] = None,
                      variant: Optional[str] = None) -> Tuple[PairedWheels, ...]:
        """Prebuilt-wheel pages of ``package`` ("mmcv", "pyg"), for a torch (``2.1.0`` matches
        rows for ``2.1.0`` and the ``2.1`` series) and a variant (``cu121``)."""
        out = []
        for row in self._rows("paired-wheels", PairedWheels):
            if row.package != package or (variant is not None and row.variant != variant):
                continue
            if torch is not None:
                base = torch.split("+", 1)[0]
                series = minor_version(base)
                if not (row.torch == base or base.startswith(row.torch + ".") or row.torch == series):
                    continue
            out.append(row)
        return tuple(out)

    def torch_requirements(self, package: Optional[str] = None) -> Tuple[TorchRequirement, ...]:
        """Companion releases and the torch each needs (xformers, flash-attn, torchvision ...)."""
        rows = self._rows("torch-requirements", TorchRequirement)
        return tuple(r for r in rows if package is None or r.package == package)

    # --- conda, other frameworks -----------------------------------------------------------
    @property
    def conda_channels(self) -> Tuple[CondaChannel, ...]:
        return self._rows("conda-channels", CondaChannel)

    @property
    def conda_builds(self) -> Tuple[CondaBuild, ...]:
        return self._rows("conda-builds", CondaBuild)

    def framework_builds(self, framework: Optional[str] = None) -> Tuple[FrameworkBuild, ...]:
        rows = self._rows("frameworks", FrameworkBuild)
        return tuple(r for r in rows if framework is None or r.framework == framework)

    def cite(self, ids: Sequence[str]) -> List[str]:
        """``"title <url> (retrieved DATE)"`` per source id, for explanations."""
        out = []
        for ref in ids:
            source = self.sources.get(ref)
            out.append(f"{source.title} <{source.url}> (retrieved {source.retrieved})" if source else ref)
        return out


