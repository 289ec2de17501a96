"""The installer-format facts the renderers use (package names, channels, doc links), with sources.

Read from ``data/formats.json`` once; a corrupted file is a one-line ``kb-invalid`` error.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from torchsmith.errors import load_data_file
from torchsmith.kb.documents import DATA_DIR

__all__ = ["formats_data", "source_urls"]

_PATH = os.path.join(DATA_DIR, "formats.json")
_cache: Optional[Dict[str, Any]] = None


def _check(data: Dict[str, Any]) -> None:
    for key in ("sources", "conda", "pixi", "jetson_torchvision_build"):
        if not isinstance(data.get(key), dict):
            raise ValueError(f"missing table {key!r}")
    for table in ("conda", "pixi", "jetson_torchvision_build", "jetson_numpy", "jetson_cython",
                  "conda_legacy", "conda_compiled", "tensorflow_windows_gpu"):
        for source in data[table].get("sources", ()):
            if source not in data["sources"]:
                raise ValueError(f"{table}: unknown source id {source!r}")


def formats_data(path: str = _PATH) -> Dict[str, Any]:
    global _cache  # noqa: PLW0603 - read once per process
    if _cache is not None and path == _PATH:
        return _cache
    data = load_data_file(path, "installer format data", _check)
    if path == _PATH:
        _cache = data
    return dict(data)


def source_urls(table: str) -> List[str]:
    data = formats_data()
    return [data["sources"][s]["url"] for s in data[table].get("sources", ())]
