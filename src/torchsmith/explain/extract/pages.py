"""A project's own per-build wheel page that answered 403 or 404. Pure.

Projects that publish CUDA builds of their packages outside the package index name one page per
torch build (PyG's ``data.pyg.org/whl/torch-{torch}+{variant}.html``, OpenMMLab's
``mmcv/dist/{variant}/torch{series}.0/index.html``); ``wheel_pages.json`` holds those URL templates
with their sources. Such a page is absent until the project builds for that torch release (a
static host answers 404, or 403 where listing is not allowed: S3's documented answer for a missing
key without ListBucket), so a refused page is a build the project has not published.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Pattern, Tuple

from torchsmith.compat import VARIANT_TOKEN
from torchsmith.explain.extract.model import InstallerError

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["companion_page_failures"]

_PLACEHOLDERS = {"torch": r"\d+\.\d+\.\d+", "variant": VARIANT_TOKEN,
                 "series": r"\d+\.\d+"}
_REFUSED = re.compile(r"(?<![\w.])40[34](?![\w.])|Forbidden|Not Found|NoSuchKey|AccessDenied")
_S3 = "https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html"


def _template(url: str) -> Optional[Pattern[str]]:
    """The regex of a URL template with {placeholders} (None: a single page, no build in its URL)."""
    if "{" not in url:
        return None
    # a directory page is quoted with or without its final slash (whl/cu123 and whl/cu123/)
    bare = url.split("://", 1)[-1]
    parts = re.split(r"\{(\w+)\}", bare.rstrip("/"))
    regex = "".join(re.escape(part) if i % 2 == 0 else _PLACEHOLDERS.get(part, r"[\w.+-]+")
                    for i, part in enumerate(parts))
    regex = regex.replace(r"\+", r"(?:\+|%2B)") + ("/?" if bare.endswith("/") else "")
    return re.compile(r"(?:https?://)?" + regex + r"(?![\w+-]|\.\w)")


def _pages(kb: KnowledgeBase) -> List[Tuple[str, Pattern[str], Tuple[str, ...]]]:
    rows = kb.document("wheel_pages").get("rows") or []
    sources = kb.document("wheel_pages").get("sources") or {}
    out = []
    for row in rows:
        pattern = _template(str(row.get("url", "")))
        if pattern is not None:
            cited = tuple(str(sources.get(s, s)).split(" ", 1)[0] for s in row.get("source") or ())
            out.append((str(row.get("id")), pattern, cited))
    return out


def companion_page_failures(text: str, kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """Each per-build wheel page the text shows refused (403/404 on its line)."""
    if kb is None or "40" not in text or not _REFUSED.search(text):
        return []
    pages = _pages(kb)  # once, not once per refused line
    found: List[InstallerError] = []
    for line in text.splitlines():
        if not _REFUSED.search(line):
            continue
        for project, pattern, cited in pages:
            match = pattern.search(line)
            if match is None:
                continue
            meaning = (f"{project}'s page for this build ({match.group()}) was refused: the project "
                       f"publishes one such page per torch build or CUDA variant it has built wheels for, "
                       f"so it has none for this one (yet)")
            found.append(InstallerError("index", "companion-page-missing", match.group(), meaning, project,
                                        (*cited, _S3)))
    return found[:2]
