"""Explain an error message or a whole log: which known failure it is, why, and the fix.

The failure signatures are data (``signatures.json``, validated by :mod:`.catalog`); matching is
pure (:mod:`.matcher`); facts about the machine come from a host profile (:mod:`.host`).
"""

from __future__ import annotations

from torchsmith.explain.catalog import Catalog, Signature, catalog_of, load_catalog, parse_catalog
from torchsmith.explain.matcher import Explanation, Found, explain, find_signatures

__all__ = [
    "Catalog",
    "Explanation",
    "Found",
    "Signature",
    "catalog_of",
    "explain",
    "find_signatures",
    "load_catalog",
    "parse_catalog",
]
