"""How the file that failed its hash check arrived, read from the installer's output before the
failure (a progress bar stopped short, a broken connection, pip's cache, conda's verification).
What download-corrupted and index-metadata-broken need from it is checked in explain.confirmations. Pure."""

from __future__ import annotations

import re
from typing import List

__all__ = ["transfers"]

# What an installer's output shows of the file whose hash did not match (pip's HashMismatch, uv's
# "Hash mismatch for", conda's CondaVerificationError): the transfer before it.
_HASH_ERROR = re.compile(r"THESE PACKAGES DO NOT MATCH THE HASHES|Hash mismatch for `|CondaVerificationError")
# (a cached .metadata file is not the file that failed)
_FETCH = re.compile(r"^[^\n]*?\b(?P<how>Downloading|Using cached)\s+(?!\S+\.metadata\b)\S", re.MULTILINE)
# rich's progress bar (pip 22+): "176.2/176.2 MB"; 1 decimal, so only kB/MB totals are exact enough.
_PROGRESS = re.compile(r"(?P<done>\d+(?:\.\d+)?)/(?P<total>\d+(?:\.\d+)?) (?P<unit>[kMG]B)\b")
_BROKEN = re.compile(r"IncompleteRead|Connection broken|ChunkedEncodingError|Connection reset by peer|"
                     r"Read timed out|ContentTooShortError")


def transfers(text: str) -> List[str]:
    """How the file that failed its hash check arrived: ``cut`` (the progress bar stopped short of
    its size, or the connection broke), ``cached`` (pip took it from its cache), ``complete`` (a
    fresh download that reached its full size), ``conda-verify`` (conda found its extracted package
    damaged)."""
    failed = _HASH_ERROR.search(text)
    if failed is None:
        return []
    if failed.group().startswith("CondaVerification"):
        return ["conda-verify"]
    before = text[: failed.start()]
    fetches = list(_FETCH.finditer(before))
    since = before[fetches[-1].end():] if fetches else before  # the failed file's own transfer
    found: List[str] = ["cut"] if _BROKEN.search(since) else []
    if fetches and fetches[-1].group("how") == "Using cached":
        found.append("cached")
    bars = list(_PROGRESS.finditer(since))
    if bars:
        done, total = float(bars[-1].group("done")), float(bars[-1].group("total"))
        if done < total:
            found.append("cut")
        elif bars[-1].group("unit") != "GB" and "cached" not in found:
            found.append("complete")
    return list(dict.fromkeys(found))
