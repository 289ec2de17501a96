"""The facts of one knowledge base the resolver walks, parsed once: releases newest first with
their versions, the integrated (Jetson) GPUs, and the source URLs cited in reasons."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, List, NamedTuple, Optional, Tuple

from packaging.version import InvalidVersion, Version

from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase, TorchRelease

__all__ = ["PYTORCH_INDEX_MARK", "Index", "Release", "index_of", "torch_index_url"]

PYTORCH_INDEX_MARK = "/whl/"


def torch_index_url(url: Optional[str], base: Optional[str]) -> Optional[str]:
    """A PyTorch index URL from the data, moved onto a mirror: ``<base>/cu126``."""
    if not url or not base or PYTORCH_INDEX_MARK not in url:
        return url
    return base.rstrip("/") + "/" + url.split(PYTORCH_INDEX_MARK, 1)[1].lstrip("/")


# Records here are NamedTuples and plain classes: dataclass creation costs start-up time that
# `plan --json` (250 ms budget, shared with probing and loading the data) cannot spare.
class Release(NamedTuple):
    """A torch release of the data with its parsed version."""

    data: TorchRelease
    version: Version
    text: str


class Index:
    """Parsed versions and sources of one knowledge base, built once."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        releases: List[Release] = []
        for release in kb.releases:
            try:
                releases.append(Release(release, Version(release.version), release.version))
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
        """`` [source: url; url]`` for the first ``limit`` source ids ("" for none)."""
        key = (tuple(ids), limit)
        text = self._cites.get(key)
        if text is None:
            picked = [self.urls.get(i, i) for i in list(dict.fromkeys(key[0]))[:limit] if i]
            text = self._cites[key] = f" [source: {'; '.join(picked)}]" if picked else ""
        return text


_INDEXES: Dict[int, Index] = {}


def index_of(kb: KnowledgeBase) -> Index:
    """The index of ``kb``, built on first use and kept for the next call."""
    cached = _INDEXES.get(id(kb))
    if cached is None or cached.kb is not kb:
        cached = Index(kb)
        if len(_INDEXES) > 8:
            _INDEXES.clear()
        _INDEXES[id(kb)] = cached
    return cached
