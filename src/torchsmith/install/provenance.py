"""What a pinned step actually fetched, checked against the pinned index's own listing.

pip's installation report (``--report``, https://pip.pypa.io/en/stable/reference/installation-report/)
names, per package, the URL it downloaded (``download_info.url``) and the file's hash
(``download_info.archive_info.hashes``). Each file of a pinned step must be a link on the pinned
index's project page (PEP 503: ``<index>/<name>/``) with the same sha256 (the link's
``#sha256=`` fragment). This runs before anything of the step is imported (verify, the next
step's interpreter), so a file from anywhere else stops the install and is rolled back unrun.
"""

from __future__ import annotations

import html
import re
import urllib.parse
from typing import Dict, Mapping, Optional, Tuple

from torchsmith.errors import FetchError, InstallError
from torchsmith.host import Host
from torchsmith.install.lock import report_downloads
from torchsmith.redact import redact, strip_credentials

__all__ = ["Fetched", "check_fetched", "fetched_from_report"]

Fetched = Dict[str, Tuple[str, str]]  # canonical name -> (URL without credentials, sha256 hex)
_HREF = re.compile(r"""<a\s[^>]*?href\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_PAGE_BYTES = 8 * 1024 * 1024
_PAGE_SECONDS = 30.0


def fetched_from_report(text: str) -> Fetched:
    """canonical name -> (URL, sha256) of every file a ``pip install --report`` downloaded."""
    return {name: (strip_credentials(url), digest)
            for name, (url, digest) in report_downloads(text).items() if url}


def _same_file(url: str) -> str:
    """A URL compared by what it names: no fragment, no credentials, its path unquoted."""
    parts = urllib.parse.urlsplit(strip_credentials(url.split("#", 1)[0]))
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.lower(), urllib.parse.unquote(parts.path),
                                    parts.query, ""))


def listed_files(page_url: str, text: str) -> Dict[str, Optional[str]]:
    """Each file a PEP 503 project page links, absolute -> its listed sha256 (None: none listed)."""
    out: Dict[str, Optional[str]] = {}
    for href in _HREF.findall(text):
        absolute = urllib.parse.urljoin(page_url, html.unescape(href))
        fragment = urllib.parse.urlsplit(absolute).fragment
        digest = fragment[len("sha256="):].lower() if fragment.startswith("sha256=") else None
        out[_same_file(absolute)] = digest
    return out


def check_fetched(host: Host, index_url: str, fetched: Mapping[str, Tuple[str, str]]) -> None:
    """Raise unless every fetched file is listed by ``index_url`` with the same sha256."""
    base = index_url.rstrip("/") + "/"
    for name, (url, digest) in sorted(fetched.items()):
        page = f"{base}{name}/"
        try:
            listing = listed_files(page, host.fetch_url(page, _PAGE_SECONDS, _PAGE_BYTES))
        except FetchError as exc:  # no listing: the file cannot be vouched for
            raise InstallError(f"could not read {redact(page)} to check where {name} came from: {exc}",
                               code="install-provenance") from None
        key = _same_file(url)
        if key not in listing:
            raise InstallError(f"{name} was fetched from {redact(url)}, which {redact(base)} does not list",
                               code="install-provenance",
                               hint="a configuration or mirror sent the torch step elsewhere; nothing of "
                                    "it was run, and the environment was put back")
        listed = listing[key]
        if listed and digest.lower() != listed:
            raise InstallError(f"{name} from {redact(url)} has sha256 {digest or 'unknown'}, "
                               f"but {redact(base)} lists {listed}", code="install-provenance",
                               hint="the file changed on its way; nothing of it was run, and the "
                                    "environment was put back")
