"""Installer output: the requirements a resolver (pip, uv, conda/mamba, pixi) found in conflict and
the requirements no index or channel had (both from :mod:`torchsmith.refusal`), the packages pip
builds from source, and the HTTP failures (URL and status). Pure."""

from __future__ import annotations

import re
from typing import List

from torchsmith.explain.extract.model import Conflict, HttpFailure
from torchsmith.refusal import Refusal, Requirement

__all__ = ["conflicts", "http_failures", "not_found", "source_builds"]

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


def _conflict(requirement: Requirement) -> Conflict:
    return Conflict(requirement.installer, requirement.who_said or "user", requirement.said,
                    requirement.who, requirement.who_version, requirement.what, requirement.spec,
                    requirement.markers)


def conflicts(refusal: Refusal) -> List[Conflict]:
    """The requirements a resolver reported as in conflict: who needs what (read by
    :func:`torchsmith.refusal.read`, the reader ``plan --confirm`` uses too), then what is installed."""
    found = [_conflict(r) for r in refusal.needs()] + [_conflict(r) for r in refusal.requested()]
    found.extend(Conflict(have.installer, "installed", have.said or f"{have.name} {have.version}",
                          what=have.name, spec=have.version) for have in refusal.installed)
    return list(dict.fromkeys(found))[:30]


def not_found(refusal: Refusal) -> List[str]:
    """The requirements that no index (pip, uv) or channel (conda, pixi) could provide."""
    return list(refusal.missing)[:20]


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
