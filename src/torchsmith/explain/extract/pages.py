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

__all__ = ["build_page_without_wheel", "companion_page_failures", "installer_table_without_wheel"]

_PLACEHOLDERS = {"torch": r"\d+\.\d+\.\d+", "variant": VARIANT_TOKEN,
                 "series": r"\d+\.\d+"}
_REFUSED = re.compile(r"(?<![\w.])40[34](?![\w.])|Forbidden|Not Found|NoSuchKey|AccessDenied")
_S3 = "https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html"
_PIP_LOCATIONS = "https://github.com/pypa/pip/blob/23.2.1/src/pip/_internal/models/search_scope.py"


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


# pip logs "Looking in links: <pages>" (models/search_scope.py get_formatted_locations) and, when
# no candidate on any page or index fits, "Could not find a version that satisfies the requirement
# <req> (from versions: none)" (resolution/resolvelib/factory.py): nothing anywhere installs here.
_PIP_FINDER = "https://github.com/pypa/pip/blob/23.2.1/src/pip/_internal/resolution/resolvelib/factory.py"
_LINKS = re.compile(r"Looking in links: (?P<pages>[^\n]+)")
_NO_VERSION = re.compile(r"Could not find a version that satisfies the requirement "
                         r"(?P<package>[A-Za-z0-9][\w.-]{0,80})[^\n]{0,200}?\(from versions: none\)")
# a page named for one torch build: its torch release (pyt171, torch-2.5.0, torch2.4.0) and its CUDA/CPU
_TORCH_TAG = re.compile(r"(?:pyt|torch[-_]?)\d[\d.]{1,6}")
_BUILD_TAG = re.compile(r"(?<![a-z])(?:cu\d{2,3}|cpu|rocm\d[\d.]*)(?![a-z])")
_TORCH_ITSELF = {"torch", "torchvision", "torchaudio", "pytorch"}
# pip failing to read a page or index (index/collector.py "Could not fetch URL <url>: <reason> - skipping",
# urllib3's retries), other than the page answering 404 (which says the page is not published)
_UNREAD = re.compile(r"Could not fetch URL (?![^\n]*(?:404 Client Error|Not Found for url))"
                     r"|Retrying \(Retry\(|connection broken by|Failed to establish a new connection|SSLError"
                     r"|ProxyError")


def build_page_without_wheel(text: str) -> List[InstallerError]:
    """A links page named for one torch build (a project's own wheel page: pytorch3d's
    ``py38_cu110_pyt171``, PyG's ``torch-2.5.0+cu124.html``) was read, and pip then found no version
    of the project's package at all: the project published no wheel for that build here."""
    if "Looking in links" not in text or "from versions: none" not in text:
        return []
    missing = _NO_VERSION.search(text)
    links = _LINKS.search(text)
    if missing is None or links is None or missing.group("package").lower() in _TORCH_ITSELF:
        return []
    if _UNREAD.search(text):
        return []  # pip could not read a page (network, TLS, proxy): "none" is then no proof
    package = missing.group("package")
    for page in re.split(r"[,\s]+", links.group("pages").strip()):
        if _TORCH_TAG.search(page) and _BUILD_TAG.search(page):
            meaning = (f"pip read the project's page for one torch build ({page}) and found no version of "
                       f"{package} that installs here, on it or anywhere: the project has published no wheel "
                       f"of {package} for this torch build, CUDA and Python (its pages are a support matrix)")
            return [InstallerError("index", "companion-page-missing", page, meaning, package,
                                   (_PIP_LOCATIONS, _PIP_FINDER))]
    return []


# Companion installers that pick a prebuilt wheel from their own table of (CUDA, torch) builds say so
# in one fixed wording when the table has none: DazzleML's SageAttention installer
# (comfyui_triton_sageattention.py, check_compatibility's message) and ComfyUI-TRELLIS2's wheel picker.
_NO_TABLE_WHEEL = re.compile(r"No matching wheel for CUDA (?P<cuda>\d+(?:\.\d+)?) \+ PyTorch "
                             r"(?P<torch>\d+\.\d+(?:\.\d+)?)")
_TABLE_SOURCES = ("https://github.com/DazzleML/comfyui-triton-and-sageattention-installer/blob/"
                  "586630a88deb45d0fd6d2bc2813d4c5afac1653d/comfyui_triton_sageattention.py",
                  "https://github.com/PozzettiAndrea/ComfyUI-TRELLIS2")


def installer_table_without_wheel(text: str) -> List[InstallerError]:
    """A companion's installer says its table of published wheels has none for this CUDA and torch."""
    said = _NO_TABLE_WHEEL.search(text) if "No matching wheel for CUDA" in text else None
    if said is None:
        return []
    meaning = (f"the installer's own table of the companion's prebuilt wheels has none for CUDA "
               f"{said.group('cuda')} with torch {said.group('torch')} (\"{said.group(0)}\"): no wheel of it "
               f"was published for this torch build")
    return [InstallerError("installer", "companion-page-missing", said.group(0), meaning, None,
                           _TABLE_SOURCES)]
