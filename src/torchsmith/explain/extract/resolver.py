"""Installer output: the requirements a resolver (pip, uv, conda/mamba, pixi) found in conflict and
the requirements no index or channel had (both from :mod:`torchsmith.refusal`), the packages pip
builds from source, and the HTTP failures (URL and status). Pure."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from torchsmith.explain.extract.model import Conflict, HttpFailure, InstallerError
from torchsmith.explain.literals import finditer
from torchsmith.refusal import Refusal, Requirement

__all__ = ["conflicts", "host_not_resolved", "http_failures", "not_found", "shared_nvidia_wheels",
           "source_builds"]

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


# A host name that did not resolve, as the resolver words it: getaddrinfo's gai_strerror (glibc:
# "Name or service not known", "Temporary failure in name resolution",
# bminor/glibc@658f601f2ae3230559f7e9c629053bd2890dcf82 sysdeps/posix/gai_strerror-strs.h; musl:
# "Name does not resolve", bminor/musl@0b44a0315b47dd8eced9f3b7f31580cf14bbfc01 src/network/gai_strerror.c;
# Windows' "getaddrinfo failed"; macOS' "nodename nor servname provided"), curl's "Could not resolve host"
_DNS = re.compile(r"Name or service not known|Temporary failure in name resolution|Name does not resolve"
                  r"|getaddrinfo failed|nodename nor servname provided"
                  r"|Could not resolve host: (?P<host>[\w.-]+)")


def http_failures(text: str) -> List[HttpFailure]:
    """Each failed download or index request: the URL and the status (000: no connection)."""
    found: List[HttpFailure] = []
    seen = set()
    for pattern in _HTTP:
        for match in finditer(pattern, text):
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
    dns = _DNS.search(text)
    if dns is not None:  # the host: curl names it, else the URL that failed
        urls = [f.url for f in found if f.url and "://" in f.url]
        host = dns.group("host") or (urls[0].split("/")[2] if urls else None)
        found.append(HttpFailure(None, "dns", dns.group(), host))
    return found


def host_not_resolved(http: Sequence[HttpFailure]) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """The first host name that did not resolve, where the text shows which host (the
    ``env:host-not-resolved`` trigger): the resolver's words to locate it, the host as ``what``."""
    dns = next((h for h in http if h.status == "dns" and h.host), None)
    return ([dns.text], {"what": str(dns.host)}) if dns is not None else None


# torch's CUDA wheels pin NVIDIA's library wheels exactly (torch 2.1.1 Requires-Dist:
# nvidia-cudnn-cu12==8.9.2.26); one environment holds one version of each such wheel.
_REQUIRES_DIST = "https://pypi.org/project/torch/2.1.1/ (Requires-Dist: nvidia-cudnn-cu12==8.9.2.26; ...)"
_UV_REPORT = "https://github.com/astral-sh/uv/blob/main/crates/uv-resolver/src/pubgrub/report.rs"
# uv's word for a version unfit for the platform: then the wheel is missing, not taken by another package
_NO_PLATFORM_WHEEL = re.compile(r"matching platform tag|has no wheels|no versions? of nvidia-", re.IGNORECASE)


def _version(spec: str) -> str:
    return re.sub(r"^\s*===?\s*", "", spec).strip()


def _replaced(pin: Conflict, found: List[Conflict]) -> Optional[InstallerError]:
    """Another version of the NVIDIA wheel torch pins: installed in its place, or asked for."""
    pinned = _version(pin.spec)
    other = next((c for c in found if c.what == pin.what and c.who_name != "torch"
                  and _version(c.spec) not in ("", pinned)), None)
    if other is None:
        return None
    have = _version(other.spec)
    whose = ("installed in its place" if other.who == "installed"
             else f"required by {other.who}" if other.who != "user" else "asked for")
    why = (f"{pin.who} pins {pin.what}=={pinned} (the NVIDIA library wheel it is built against), and this "
           f"environment has {pin.what} {have} {whose}: an environment holds one version of that wheel, "
           f"so torch and what needs the other version cannot both have theirs")
    return InstallerError(pin.installer, "nvidia-wheel-shared", f"{pin.what} {have}", why, pin.what,
                          (_REQUIRES_DIST,))


def _excluded_by_uv(pin: Conflict, found: List[Conflict], text: str) -> Optional[InstallerError]:
    """uv's derivation runs through several versions torch pins and a term excluding them ("!=")."""
    pins = {_version(c.spec) for c in found if c.what == pin.what and c.who_name == "torch"}
    negated = re.search(re.escape(pin.what) + r"(?:\{[^}\n]{0,200}\})?!=", text)
    if pin.installer != "uv" or len(pins) < 2 or negated is None or _NO_PLATFORM_WHEEL.search(text):
        return None
    why = (f"the resolver found no solution through the versions of {pin.what} that torch pins "
           f"({', '.join(sorted(pins))}): another requirement excludes them ({negated.group()}...), so "
           f"that package and these torch releases need different versions of one NVIDIA wheel")
    return InstallerError(pin.installer, "nvidia-wheel-shared", negated.group(), why, pin.what,
                          (_REQUIRES_DIST, _UV_REPORT))


def shared_nvidia_wheels(found: List[Conflict], text: str) -> List[InstallerError]:
    """torch pins an NVIDIA library wheel exactly, and the resolver shows that same wheel wanted at
    another version: installed in its place (pip's "torch X requires nvidia-Y==A, but you have
    nvidia-Y B"), asked for by another package, or (uv) excluded from every version torch pins by a
    term "nvidia-Y!=A" of its derivation."""
    for pin in found:
        if pin.who_name != "torch" or not pin.what.startswith("nvidia-") or not pin.spec.startswith("=="):
            continue
        error = _replaced(pin, found) or _excluded_by_uv(pin, found, text)
        if error is not None:
            return [error]
    return []
