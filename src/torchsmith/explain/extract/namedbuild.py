"""A torch build pip found none of, where pip's own lines name the interpreter it ran under and the
data says that build has a wheel for it. Pure.

``torch==X+cu121`` carries a local label: PyPI holds no local versions, so only PyTorch's
per-variant index (download.pytorch.org/whl/cu121) serves it. pip lists and installs a file only
where its tags fit the interpreter (src/pip/_internal/index/package_finder.py). Where pip's own
lines name that interpreter ("Requirement already satisfied: ... in C:\\...\\Python310\\lib\\
site-packages", "pip 24.0 from C:\\... (python 3.10)") on Windows, whose only platform torch publishes
for is x86_64, and the data says X+cu121 has a Windows wheel for that Python, the index that serves
it would have given pip a file: pip did not read it. Not where the text names a PyTorch index at all
(then it was given, in some form), nor where pip listed a +label build (it read one).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from torchsmith.compat import VARIANT_TOKEN
from torchsmith.explain.extract.listings import index_not_read
from torchsmith.explain.extract.model import InstallerError

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.refusal import Refusal

__all__ = ["build_for_named_interpreter"]

# The text runs pip on Windows: pip's own location of an installed requirement or of itself on a
# drive (req_install.py, utils/misc.py), or the Windows shell's prompt before the pip command
_WINDOWS_SAID = re.compile(r"Requirement already satisfied: [^\n]{1,300}? in [A-Za-z]:\\"
                           r"|\bpip \d+(?:\.\d+)+ from [A-Za-z]:\\"
                           r"|^(?:\([^)\n]{0,80}\) )?(?:PS )?[A-Za-z]:\\[^\n>]{0,300}>\s*"
                           r"(?:py(?:thon)?3?(?:\.exe)? -m )?pip3?(?:\.exe)? install\b",
                           re.MULTILINE | re.IGNORECASE)
# the interpreter's own folder names its version without the dot (C:\\...\\Python310\\lib\\site-packages)
_FOLDER_PYTHON = re.compile(r"Requirement already satisfied: [^\n]{1,300}? in [A-Za-z]:\\[^\n]{0,300}?"
                            r"\\python3(?P<minor>\d{1,2})\\lib\\site-packages", re.IGNORECASE)
_PIN = re.compile(r"^torch===?(?P<version>\d+\.\d+\.\d+)\+(?P<variant>" + VARIANT_TOKEN + r")$")
_SOURCES = ("https://github.com/pypa/pip/blob/24.0/src/pip/_internal/index/package_finder.py",
            "https://github.com/pypa/pip/blob/24.0/src/pip/_internal/req/req_install.py",
            "https://download.pytorch.org/whl/torch/")


def _windows_python(text: str, listed: Sequence[str], kb: KnowledgeBase) -> Optional[str]:
    """The one Python pip ran under on Windows: its own lines' (pip --version, a wheel's tag, the
    interpreter's folder), else the one whose Windows torch releases are exactly those it listed."""
    from torchsmith.explain.extract.indexes import _listing_fits
    from torchsmith.explain.extract.pinwheels import pip_pythons
    from torchsmith.versions import version_tuple

    named = pip_pythons(text) | {f"3.{m.group('minor')}" for m in _FOLDER_PYTHON.finditer(text)}
    if named:
        return named.pop() if len(named) == 1 else None
    known = {release.version: release for release in kb.releases}
    shown = {v for v in listed if v in known}
    if not shown:
        return None
    fits = {py for platform, py in _listing_fits(shown, max(shown, key=version_tuple), known)
            if platform == "windows-x86_64"}
    return fits.pop() if len(fits) == 1 else None


def _pins(refusal: Refusal) -> List[Tuple[str, str, Sequence[str]]]:
    """(version, variant, what pip listed) of each torch==X+variant pip found none of."""
    out: List[Tuple[str, str, Sequence[str]]] = []
    for missing in refusal.unavailable:
        pin = _PIN.match(missing.said.split(";")[0].strip())
        if missing.installer == "pip" and pin is not None:
            out.append((pin.group("version"), pin.group("variant"), missing.listed))
    return out


def build_for_named_interpreter(text: str, refusal: Refusal,
                                kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """pip found no torch==X+variant, its own lines put it on Windows under one Python, and X+variant
    has a Windows wheel for that Python."""
    if kb is None or "download.pytorch.org" in text or not refusal.unavailable:
        return []
    if not _WINDOWS_SAID.search(text):
        return []
    releases = {release.version: release for release in kb.releases}
    for version, variant, listed in _pins(refusal):
        release = releases.get(version)
        build = release.variant(variant) if release is not None else None
        if release is None or build is None or build.uncertain or not listed \
                or any("+" in v for v in listed):
            continue  # nothing listed: no torch fits this Python at all (a 32-bit one) whatever the index
        python = _windows_python(text, listed, kb)
        if python is None:
            continue
        if "windows-x86_64" not in build.platforms or python not in release.python.get("windows-x86_64", ()):
            continue
        return [index_not_read(f"torch=={version}+{variant}", variant,
                               f"pip ran on Windows under Python {python} and listed plain torch releases "
                               f"only (PyPI holds no +label builds)", _SOURCES)]
    return []
