"""torch's own requirements per release (``torch_requires.json``), read from an index's core
metadata: the reader both tools/torch_requires.py (the shipped file) and `kb refresh` (the
overlay's) use. torch writes its Requires-Dist per platform (the nvidia-* wheels on Linux only,
mkl on Windows for some releases), so each release keeps the union over one wheel per platform
family, each requirement once, its version range dropped and its environment marker kept.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.errors import FetchError
from torchsmith.kb.pkgmeta import IndexFile, parse_index_page, split_filename
from torchsmith.redact import redact

__all__ = ["FAMILIES", "metadata_headers", "refresh_torch_requires", "release_requires", "without_range"]

FAMILIES = (("linux-x86_64", ("linux", "x86_64")), ("linux-aarch64", ("linux", "aarch64")),
            ("windows", ("win_amd64",)), ("macos", ("macosx",)))
_PRE = re.compile(r"(?:a|b|rc|dev)\d*")


def metadata_headers(text: str) -> Tuple[List[str], List[str]]:
    """(Requires-Dist, Provides-Extra) of a core-metadata file."""
    from email.parser import HeaderParser  # ~90 ms of imports: only when metadata is read

    headers = HeaderParser().parsestr(text, headersonly=True)
    return ([r.strip() for r in headers.get_all("Requires-Dist") or ()],
            [e.strip() for e in headers.get_all("Provides-Extra") or ()])


def without_range(requirement: str) -> str:
    """``sympy>=1.13.3`` -> ``sympy``; ``triton==3.5.0; platform_system == "Linux"`` keeps its marker."""
    head, _, marker = requirement.partition(";")
    name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?)", head)
    text = name.group(1) if name else head.strip()
    return f"{text}; {marker.strip()}" if marker.strip() else text


def release_requires(wheels: Sequence[IndexFile],
                     read: Callable[[IndexFile], str]) -> Optional[Dict[str, Any]]:
    """One release's row from one wheel per platform family (``read``: a wheel's core metadata,
    "" when it cannot be read); None when no wheel was read."""
    requires: List[str] = []
    extras: List[str] = []
    families: List[str] = []
    for family, needles in FAMILIES:
        picked = sorted((w for w in wheels if all(n in w.filename for n in needles)),
                        key=lambda w: w.filename)
        text = read(picked[-1]) if picked else ""
        if not text:
            continue
        families.append(family)
        found, provided = metadata_headers(text)
        requires.extend(r for r in map(without_range, found) if r not in requires)
        extras.extend(e for e in provided if e not in extras)
    if not families:
        return None
    return {"requires": requires, "extras": extras, "platforms_read": families}


def _order(version: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version.split("+", maxsplit=1)[0])[:4])


def refresh_torch_requires(packaged: Mapping[str, Any], fetch: Callable[[str, float], str], index: str, *,
                           today: str, timeout: float = 20.0,
                           read: Optional[List[Dict[str, Any]]] = None) -> Optional[Dict[str, Any]]:
    """The packaged document with the final releases it lacks read from ``index`` (their wheels'
    ``.metadata`` files); the import names stay as packaged. None when the index cannot be read
    or has no release the document lacks."""
    page = f"{index.rstrip('/')}/torch/"
    try:
        files = parse_index_page(fetch(page, timeout), page)
    except (FetchError, ValueError) as exc:
        if read is not None:
            read.append({"url": redact(page), "status": str(exc)})
        return None
    known = {str(r["version"]) for r in packaged.get("releases") or ()}
    wheels: Dict[str, List[IndexFile]] = {}
    for entry in files:
        split = split_filename(entry.filename)
        if split is None or entry.yanked or not entry.filename.endswith(".whl") or _PRE.search(split[1]):
            continue
        if split[1] not in known:
            wheels.setdefault(split[1], []).append(entry)

    def metadata(wheel: IndexFile) -> str:
        try:
            return fetch(wheel.url + ".metadata", timeout)
        except FetchError:
            return ""

    read_rows = ((version, release_requires(found, metadata)) for version, found in wheels.items())
    rows = [{"version": version, **row} for version, row in read_rows if row is not None]
    if read is not None:
        read.append({"url": redact(page), "status": "ok", "versions": len(rows)})
    if not rows:
        return None
    releases = sorted([*rows, *(packaged.get("releases") or ())], key=lambda r: _order(str(r["version"])),
                      reverse=True)
    return {**packaged, "retrieved": today, "source": redact(page), "releases": releases}
