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

import os
import re
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from torchsmith.compat import kernel_for, parse_cc
from torchsmith.errors import KnowledgeBaseError
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
from torchsmith.versions import driver_tuple, minor_version

__all__ = [
    "DATA_DIR",
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

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
REFRESH_FILE = "refresh.json"


def default_overlay_dir(environ: Optional[Mapping[str, str]] = None) -> str:
    """Where `kb refresh` writes: ``$TORCHSMITH_CACHE_DIR/kb-overlay`` or the user cache dir."""
    env = os.environ if environ is None else environ
    base = env.get("TORCHSMITH_CACHE_DIR")
    if not base:
        if env.get("XDG_CACHE_HOME"):
            root = env["XDG_CACHE_HOME"]
        elif os.name == "nt" and env.get("LOCALAPPDATA"):
            root = env["LOCALAPPDATA"]
        else:
            root = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
        base = os.path.join(root, "torchsmith")
    return os.path.join(base, "kb-overlay")


class KnowledgeBase:
    """All tables, validated, with lookups. Build it with :func:`load_kb`."""

    def __init__(self, sections: Dict[Tuple[str, str], List[Any]], manifest: Mapping[str, Any],
                 sources: Mapping[str, Source], overlay: Optional[str] = None,
                 refresh: Optional[Mapping[str, Any]] = None) -> None:
        self._sections = sections
        self.manifest = dict(manifest)
        self.kb_version: str = str(manifest.get("kb_version", ""))
        self.schema: int = int(manifest.get("schema", 0))
        self.sources: Mapping[str, Source] = dict(sources)
        self.overlay = overlay  # the overlay directory in use, if any
        self.refresh: Mapping[str, Any] = dict(refresh or {})  # provenance of `kb refresh`
        self.releases: Tuple[TorchRelease, ...] = tuple(self._rows("releases"))
        self.warnings: List[str] = self._staleness()
        self._by_version: Dict[str, TorchRelease] = {r.version: r for r in self.releases}
        self._gpu_index: Optional[Dict[str, GpuModel]] = None
        self._packaged_dir = DATA_DIR
        self._documents: Dict[str, Dict[str, Any]] = {}

    def _rows(self, table: str) -> List[Any]:
        return self._sections[TABLE_FILES[table]]

    def table(self, name: str) -> Tuple[Any, ...]:
        """The rows of one table by its `kb show` name (see :data:`TABLE_FILES`)."""
        if name not in TABLE_FILES:
            raise KnowledgeBaseError(f"no table {name!r}", code="usage",
                                     hint=f"one of: {', '.join(TABLE_FILES)}")
        return tuple(self._rows(name))

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
        from torchsmith.kb.loader import version_key

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
        return tuple(self._rows("cuda"))

    def cuda_release(self, version: str) -> Optional[CudaRelease]:
        """The CUDA toolkit ``"12.6"`` (``"12.6.3"`` and ``"cu126"`` work too)."""
        text = version.strip()
        if text.startswith("cu") and text[2:].isdigit() and len(text) >= 5:
            text = f"{text[2:-1]}.{text[-1]}"
        wanted = minor_version(text)
        for row in self._rows("cuda"):
            if row.version == wanted:
                return row  # type: ignore[no-any-return]
        return None

    def minor_compat(self, cuda: str) -> Optional[MinorCompat]:
        major = cuda.strip().split(".")[0]
        for row in self._rows("minor-compat"):
            if row.cuda_major == major:
                return row  # type: ignore[no-any-return]
        return None

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
        for row in self._rows("cuda"):
            need = getattr(row, f"min_driver_{column}")
            if need:
                if have >= driver_tuple(need):
                    return row.version  # type: ignore[no-any-return]
            elif row.min_driver_linux and have[:1] >= driver_tuple(row.min_driver_linux)[:1]:
                return row.version  # type: ignore[no-any-return]
        return None

    def arch_support(self, cuda: str) -> Optional[ArchSupport]:
        """Which architectures the CUDA toolkit ``cuda`` compiles for (the newest row not newer)."""
        from torchsmith.kb.loader import version_key

        wanted = version_key(minor_version(cuda))
        for row in self._rows("arch-support"):
            if version_key(row.cuda) <= wanted:
                return row  # type: ignore[no-any-return]
        return None

    # --- GPUs ---------------------------------------------------------------------------
    @property
    def gpus(self) -> Tuple[GpuModel, ...]:
        return tuple(self._rows("gpus"))

    def gpu_by_name(self, name: str) -> Optional[GpuModel]:
        """A GPU model by its marketing or ``nvidia-smi`` name, tolerant of prefixes, case and
        suffixes such as ``-SXM4-80GB`` or ``Laptop GPU`` (the longest known name that the
        given name starts with, word by word)."""
        from torchsmith.kb.loader import normalize_gpu_name

        if self._gpu_index is None:
            index: Dict[str, GpuModel] = {}
            for gpu in self._rows("gpus"):
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
        for gpu in self._rows("gpus"):
            if key in gpu.pci_ids:
                return gpu  # type: ignore[no-any-return]
        return None

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
        ccs = (parse_cc(g.compute_capability) for g in self._rows("gpus") if g.jetson)
        return frozenset(cc for cc in ccs if cc is not None)

    # --- Jetson -------------------------------------------------------------------------
    @property
    def jetpacks(self) -> Tuple[JetPack, ...]:
        return tuple(self._rows("jetson"))

    def jetpack_for_l4t(self, l4t: str) -> Optional[JetPack]:
        """The JetPack of an L4T release (``35.2.1``); an unknown revision of a known
        ``major.minor`` maps to the newest row of that line."""
        text = l4t.strip().lstrip("Rr")
        rows = self._rows("jetson")
        for row in rows:
            if row.l4t == text:
                return row  # type: ignore[no-any-return]
        prefix = minor_version(text)
        for row in rows:
            if minor_version(row.l4t) == prefix:
                return row  # type: ignore[no-any-return]
        return None

    def jetpack(self, version: str) -> Optional[JetPack]:
        """A JetPack by its version (``5.1``, ``6.2``)."""
        for row in self._rows("jetson"):
            if row.jetpack.split(" ")[0] == version.strip():
                return row  # type: ignore[no-any-return]
        return None

    # --- ROCm ---------------------------------------------------------------------------
    @property
    def gfx_targets(self) -> Tuple[GfxTarget, ...]:
        return tuple(self._rows("rocm"))

    def gfx_target(self, name_or_gfx: str) -> Optional[GfxTarget]:
        """An AMD GPU by gfx target (first row with it) or by a name it lists."""
        text = name_or_gfx.strip().lower()
        for row in self._rows("rocm"):
            if row.gfx == text:
                return row  # type: ignore[no-any-return]
        for row in self._rows("rocm"):
            if text and text in row.name.lower():
                return row  # type: ignore[no-any-return]
        return None

    # --- companions -----------------------------------------------------------------------
    def paired_wheels(self, package: str, torch: Optional[str] = None,
                      variant: Optional[str] = None) -> Tuple[PairedWheels, ...]:
        """Prebuilt-wheel pages of ``package`` ("mmcv", "pyg"), for a torch (``2.1.0`` matches
        rows for ``2.1.0`` and the ``2.1`` series) and a variant (``cu121``)."""
        out = []
        for row in self._rows("paired-wheels"):
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
        return tuple(r for r in self._rows("torch-requirements") if package is None or r.package == package)

    # --- conda, other frameworks -----------------------------------------------------------
    @property
    def conda_channels(self) -> Tuple[CondaChannel, ...]:
        return tuple(self._rows("conda-channels"))

    @property
    def conda_builds(self) -> Tuple[CondaBuild, ...]:
        return tuple(self._rows("conda-builds"))

    def framework_builds(self, framework: Optional[str] = None) -> Tuple[FrameworkBuild, ...]:
        return tuple(r for r in self._rows("frameworks") if framework is None or r.framework == framework)

    def cite(self, ids: Sequence[str]) -> List[str]:
        """``"title <url> (retrieved DATE)"`` per source id, for explanations."""
        out = []
        for ref in ids:
            source = self.sources.get(ref)
            out.append(f"{source.title} <{source.url}> (retrieved {source.retrieved})" if source else ref)
        return out


# --- loading -------------------------------------------------------------------------------

_CACHE: Dict[Tuple[Any, ...], KnowledgeBase] = {}


def clear_cache() -> None:
    _CACHE.clear()


def _stamp(path: Optional[str]) -> Tuple[Tuple[str, float], ...]:
    if not path or not os.path.isdir(path):
        return ()
    out = []
    for name in sorted(os.listdir(path)):
        try:
            out.append((name, os.stat(os.path.join(path, name)).st_mtime))
        except OSError:
            continue
    return tuple(out)


def load_kb(path: Optional[str] = None, *, environ: Optional[Mapping[str, str]] = None,
            packaged_dir: Optional[str] = None, packaged_only: bool = False) -> KnowledgeBase:
    """The knowledge base: packaged data plus an overlay directory.

    ``path`` is an overlay (or a complete data directory); without it, the overlay written by
    `torchsmith kb refresh` is used when present. Loads are cached per path until a file in
    the overlay changes. ``packaged_only`` ignores every overlay. Raises
    :class:`KnowledgeBaseError` naming file, row and field.
    """
    base_dir = packaged_dir or DATA_DIR
    overlay: Optional[str] = None
    if path:
        overlay = os.path.abspath(path)
        if not os.path.isdir(overlay):
            raise KnowledgeBaseError(f"knowledge base overlay {path}: no such directory",
                                     hint="pass a directory with data files (--kb DIR / TORCHSMITH_KB)")
    elif not packaged_only:
        default = default_overlay_dir(environ)
        overlay = default if os.path.isdir(default) else None
    key = (base_dir, overlay, _stamp(overlay))
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    kb = _load(base_dir, overlay)
    kb._packaged_dir = base_dir  # the documents sit beside the tables
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[key] = kb
    return kb


def _read_refresh(overlay: str) -> Dict[str, Any]:
    path = os.path.join(overlay, REFRESH_FILE)
    if not os.path.exists(path):
        return {}
    from torchsmith.errors import parse_json_bytes, read_json_bytes

    try:
        loaded = parse_json_bytes(read_json_bytes(path))
    except (OSError, ValueError) as exc:
        raise KnowledgeBaseError(
            f"{REFRESH_FILE}: cannot read ({exc})", context=[f"file: {path}"],
            hint="delete the overlay and run `torchsmith kb refresh` again") from exc
    return loaded if isinstance(loaded, dict) else {}


def _load(base_dir: str, overlay: Optional[str]) -> KnowledgeBase:
    from torchsmith.kb import loader

    data = loader.read_dir(base_dir, packaged=True)
    releases = data.sections[("torch_releases.json", "releases")]
    data.manifest["packaged_newest"] = releases[0].version if releases else ""
    if overlay is None:
        loader.check_references(data)
        return KnowledgeBase(data.sections, data.manifest, data.sources)
    try:
        return _with_overlay(data, overlay)
    except KnowledgeBaseError as exc:  # name the overlay: the packaged data is not at fault
        raise KnowledgeBaseError(
            f"{exc.message} (in the overlay {overlay})", code=exc.code,
            context=exc.context or [f"overlay: {overlay}"],
            hint=f"`torchsmith kb validate {overlay}` re-checks it; or delete that directory "
                 "(`torchsmith kb refresh` writes a new one)") from exc


def _with_overlay(data: Any, overlay: str) -> KnowledgeBase:
    from torchsmith.kb import loader

    refresh = _read_refresh(overlay)
    made_for = refresh.get("packaged_kb_version")
    in_use: Optional[str] = overlay
    notes: List[str] = []
    if made_for and made_for != data.manifest.get("kb_version"):
        # A refresh of older packaged data would replace newer verified rows with guesses.
        notes.append(f"ignoring the `kb refresh` overlay in {overlay}: it was made for knowledge base "
                     f"{made_for}, this torchsmith ships {data.manifest.get('kb_version')}; "
                     f"run `torchsmith kb refresh` again")
        in_use, refresh = None, {}
    else:
        base = str(data.manifest["torch_index_base"])
        extra = loader.read_dir(overlay, packaged=False, index_base=base)
        data = loader.merge(data, extra)
    loader.check_references(data)
    kb = KnowledgeBase(data.sections, data.manifest, data.sources, overlay=in_use, refresh=refresh)
    kb.warnings.extend(notes)
    return kb
