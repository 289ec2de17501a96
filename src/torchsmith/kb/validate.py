"""`kb validate`: every table and every document of a knowledge base, checked the way its reader
checks it; the first problem is one line naming the file and the row."""

from __future__ import annotations

import os
from typing import Dict

from torchsmith.errors import KnowledgeBaseError, TorchsmithError
from torchsmith.kb.documents import DOCUMENTS
from torchsmith.kb.invariants import private_source
from torchsmith.kb.knowledge import KnowledgeBase

__all__ = ["validate_documents"]


def validate_documents(kb: KnowledgeBase) -> Dict[str, str]:
    """Read and check every document (the overlay's file where it has one): name -> the file.

    The row tables are checked when ``kb`` is loaded; the signatures get explain's full check
    (patterns compile, placeholders known), not only the document's shape.
    """
    used: Dict[str, str] = {}
    for name in DOCUMENTS:
        _public_sources(name, kb.document(name), kb.document_path(name))
        used[name] = kb.document_path(name)
    from torchsmith.explain.catalog import parse_catalog  # explain's own reader, only here
    from torchsmith.kb.coverage import check_coverage

    check_coverage(kb)
    path = used["signatures"]
    try:
        parse_catalog(kb.document("signatures"), path)
    except TorchsmithError as exc:
        in_overlay = kb.overlay is not None and path.startswith(os.path.join(kb.overlay, ""))
        raise KnowledgeBaseError(exc.message + (f" (in the overlay {kb.overlay})" if in_overlay else ""),
                                 hint=f"fix or delete {path}") from exc
    return used


def _public_sources(name: str, document: object, path: str) -> None:
    """A document's sources are public pages, files or artifacts, never a report of ours."""
    sources = document.get("sources") if isinstance(document, dict) else None
    for key, entry in (sources.items() if isinstance(sources, dict) else ()):
        why = private_source(entry)
        if why:
            raise KnowledgeBaseError(f"{os.path.basename(path)} ({name}) source {key}: {why}",
                                     hint="cite the public page, file or artifact itself")
