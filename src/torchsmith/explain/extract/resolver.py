"""Installer output: the requirements a resolver (pip, uv, conda/mamba) found in conflict, the
requirements no index or channel had, and the HTTP failures (URL and status). Pure."""

from __future__ import annotations

import re
from typing import List, Tuple

from torchsmith.explain.extract.model import Conflict, HttpFailure

__all__ = ["conflicts", "http_failures", "not_found", "source_builds"]

_REQ = r"[A-Za-z_][\w.\-\[\],]*\s*(?:[<>=!~]=?|===?)\s*[^\s,;)'\"]+(?:\s*,\s*[<>=!~]=?\s*[^\s,;)'\"]+)*"
_PIP_DEPENDS = re.compile(
    r"^\s*(?P<who>[A-Za-z_][\w.\-]*(?: \d[\w.+!-]*)?) depends on (?P<wants>[^\n;]+?)\s*$", re.MULTILINE
)
_PIP_USER = re.compile(r"^\s*The user requested (?P<wants>[^\n]+?)\s*$", re.MULTILINE)
_PIP_CANNOT = re.compile(r"Cannot install (?P<what>[^\n]+?) because these package versions have conflicting")
_UV = re.compile(
    r"(?P<who>[A-Za-z_][\w.\-]*(?:[<>=!~]=?[\w.*+]+|==[\w.+*]+)?) depends on (?P<wants>" + _REQ + ")"
)
_UV_USER = re.compile(r"(?:you require|you requested|your project requires) (?P<wants>" + _REQ + ")")
_CONDA_REQ = re.compile(
    r"(?:package |├─ |└─ )?(?P<who>[\w.\-]+[-= ][\w.*]+(?:[-=][\w.*]+)?) (?:requires|needs) "
    r"(?P<wants>[^\n,]+?)"
    r"(?:, (?:but|which)|\s*$)",
    re.MULTILINE,
)
_PIP_INCOMPATIBLE = re.compile(
    r"^(?P<who>[A-Za-z_][\w.\-]* [\w.+!]+) requires (?P<wants>[^\n,]+), but you have "
    r"(?P<have>[^\n]+?) which is incompatible",
    re.MULTILINE,
)
_CONDA_CONSTRAINT = re.compile(
    r"package (?P<who>\S+) has constraint (?P<wants>[^\n]+?) conflicting with (?P<have>\S+)"
)
_CONDA_NOTHING = re.compile(r"nothing provides (?P<wants>[^\n]+?) needed by (?P<who>[^\s\n]+)")
_CONDA_VIRTUAL = re.compile(
    r"(?P<wants>__(?:cuda|glibc|osx|linux|win|archspec|unix)\b[^\n,]{0,40}?)\s*"
    r"(?:,\s*which (?:is missing|can be installed)|\s+is missing on the system)"
)
_NOT_FOUND = (
    re.compile(r"No matching distribution found for (?P<req>[^\s\n]+)"),
    re.compile(r"Could not find a version that satisfies the requirement (?P<req>[^\s\n]+)"),
    re.compile(
        r"Because (?P<req>[\w.\-]+(?:[<>=!~]=?[\w.*+]+)?) was not found in the (?:package registry|provided "
        r"package locations)"
    ),
)
_CONDA_MISSING_BLOCK = re.compile(
    r"(?:PackagesNotFoundError|packages are not available from current channels|"
    r"The following packages are (?:missing|not available))[^\n]*\n"
    r"(?P<block>(?:[ \t]*\n|[ \t]*-[ \t]*\S[^\n]*\n?){1,20})"
)
_HTTP = (
    re.compile(r"HTTP error (?P<status>\d{3}) while getting (?P<url>\S+)"),
    re.compile(r"(?P<status>\d{3}) Client Error:[^\n]*? for url: (?P<url>\S+)"),
    re.compile(r"(?P<status>\d{3}) Server Error:[^\n]*? for url: (?P<url>\S+)"),
    re.compile(r"CondaHTTPError: HTTP (?P<status>\d{3})[^\n]*? for url <?(?P<url>[^\s>]+)"),
    re.compile(r"HTTP Error (?P<status>\d{3}):[^\n]*"),
    re.compile(r"Could not fetch URL (?P<url>\S+?): [^\n]*"),
    re.compile(r"Failed to (?:fetch|download)[:\s]+`?(?P<url>https?://[^\s`]+)`?"),
    re.compile(r"status(?: code)?:? (?P<status>[45]\d\d)[^\n]{0,80}?(?P<url>https?://\S+)"),
    re.compile(r"(?P<status>SSL)(?:Error|: CERTIFICATE_VERIFY_FAILED|: certificate verify failed)[^\n]*"),
    # reqwest (uv, pixi): "HTTP status client error (404 Not Found) for url (https://...)"
    re.compile(r"HTTP status (?:client|server) error \((?P<status>\d{3})[^)\n]{0,40}\) for url "
               r"\((?P<url>[^)\s]+)\)"),
)


_CONDA_WORDS = (
    "Unsatisfiable",
    "Encountered problems while solving",
    "nothing provides",
    "Could not solve",
    "LibMamba",
    "The following packages are incompatible",
    "Found conflicts",
)


def _clean(requirement: str) -> str:
    return re.sub(r"\s+", " ", requirement.strip().strip(".`'\"")).strip()


def conflicts(text: str) -> List[Conflict]:
    """The requirements a resolver reported as in conflict: who needs what."""
    found: List[Tuple[str, str, str]] = []

    def add(installer: str, who: str, wants: str) -> None:
        item = (installer, _clean(who), _clean(wants))
        if item not in found and len(found) < 30:
            found.append(item)

    if "conflicting dependencies" in text or "The conflict is caused by" in text:
        for match in _PIP_DEPENDS.finditer(text):
            add("pip", match.group("who"), match.group("wants"))
        for match in _PIP_USER.finditer(text):
            add("pip", "user", match.group("wants"))
    for match in _PIP_INCOMPATIBLE.finditer(text):
        add("pip", match.group("who"), match.group("wants"))
        add("pip", "installed", match.group("have"))
    for match in _CONDA_CONSTRAINT.finditer(text):
        add("conda", match.group("who"), match.group("wants"))
        add("conda", "installed", match.group("have"))
    if "No solution found" in text or "we can conclude" in text or "are incompatible" in text:
        for match in _UV.finditer(text):
            add("uv", match.group("who"), match.group("wants"))
        for match in _UV_USER.finditer(text):
            add("uv", "user", match.group("wants"))
    if any(word in text for word in _CONDA_WORDS):
        for match in _CONDA_NOTHING.finditer(text):
            add("conda", match.group("who"), match.group("wants"))
        for match in _CONDA_REQ.finditer(text):
            add("conda", match.group("who"), match.group("wants"))
        for match in _CONDA_VIRTUAL.finditer(text):
            add("conda", "the system", match.group("wants"))
    return [Conflict(*item) for item in found]


def not_found(text: str) -> List[str]:
    """The requirements that no index (pip, uv) or channel (conda) could provide."""
    found: List[str] = []
    for pattern in _NOT_FOUND:
        for match in pattern.finditer(text):
            found.append(_clean(match.group("req")))
    for block in _CONDA_MISSING_BLOCK.finditer(text):
        found.extend(
            _clean(line.strip()[1:])
            for line in block.group("block").splitlines()
            if line.strip().startswith("-")
        )
    return list(dict.fromkeys(r for r in found if r))[:20]


# pip building a package from its source distribution: "...pip-install-abc123/torch/setup.py",
# "Building wheel for torch (setup.py)", "Running setup.py install for torch".
_SOURCE_BUILD = (
    re.compile(r"pip-install-\w{1,40}[\\/]+(?P<pkg>[A-Za-z][\w.-]{0,80}?)(?:_[0-9a-f]{32})?[\\/]+setup\.py"),
    re.compile(r"(?:Building wheel for|Running setup\.py install for) (?P<pkg>[A-Za-z][\w.-]{0,80})"),
)


def source_builds(text: str) -> List[str]:
    """The packages pip builds from source (no wheel it could use)."""
    found = [m.group("pkg").lower() for pattern in _SOURCE_BUILD for m in pattern.finditer(text)]
    return list(dict.fromkeys(found))[:10]


def http_failures(text: str) -> List[HttpFailure]:
    """Each failed download or index request: the URL and the status (000: no connection)."""
    found: List[HttpFailure] = []
    seen = set()
    for pattern in _HTTP:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            url = (groups.get("url") or "").rstrip(".,;:)'\"") or None
            status = groups.get("status")
            key = (url, status)
            if key in seen or (url is None and status is None) or len(found) >= 10:
                continue
            seen.add(key)
            found.append(
                HttpFailure(url, status.lower() if status == "SSL" else status, match.group().strip()[:200])
            )
    return found
