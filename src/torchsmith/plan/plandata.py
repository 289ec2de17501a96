"""Small sourced tables the resolver reads (``kb/data``; callers move to ``KnowledgeBase.document``)."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from torchsmith.errors import KnowledgeBaseError, load_json_file

__all__ = ["load_table"]

_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kb", "data")
_CACHE: Dict[str, Dict[str, Any]] = {}


def load_table(name: str, directory: Optional[str] = None) -> Dict[str, Any]:
    """``kb/data/<name>.json``, read once. Corrupt data is a one-line ``kb-invalid`` error."""
    path = os.path.join(directory or _DIR, f"{name}.json")
    cached = _CACHE.get(path)
    if cached is not None:
        return cached
    data = load_json_file(path, "plan data", KnowledgeBaseError)
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise KnowledgeBaseError(f"{path}: expected an object with a 'rows' list")
    sources = data.get("sources", {})
    for number, row in enumerate(data["rows"]):
        ids = row.get("source") if isinstance(row, dict) else None
        if not ids or any(i not in sources for i in ids):
            raise KnowledgeBaseError(f"{path} row {number} field source: missing or unknown source id")
    _CACHE[path] = data
    return data
