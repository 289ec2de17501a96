"""A package pip says is installed under one Python's site-packages, and an import of it that fails
under another's. Pure.

pip names where a requirement is installed: "Requirement already satisfied: <req> in <location>"
(``InstallRequirement.__str__`` appends `` in {display_path(satisfied_by.location)}``: the
site-packages directory, made relative to the working directory where it lies below it, and
lower-cased on Windows by ``os.path.normcase``), and where pip itself runs: ``pip X from
<site-packages>/pip (python 3.Y)`` (``utils/misc.py`` ``get_pip_version``). A traceback's frames name
the files of the interpreter that ran the program (``.../site-packages/<package>/...``). Where the
module pip installed is the one the program found none of, and no frame is in the site-packages pip
named, the program ran another Python (or environment) than the one pip installed into: a Python
finds what its own site-packages hold.
"""

from __future__ import annotations

import re
from typing import List, Sequence, Set, Tuple

from torchsmith.explain.extract.model import Frame, InstallerError

__all__ = ["installed_for_another_python"]

_SATISFIED = re.compile(r"Requirement already satisfied: (?P<name>[A-Za-z0-9][\w.-]{0,80})(?:\[[^\]\n]*\])?"
                        r"[^\n]{0,200}? in (?P<location>[^\n]{1,300}?[\\/](?:site|dist)-packages)\b")
_PIP_VERSION = re.compile(r"\bpip \d+(?:\.\d+)+ from (?P<location>[^\n]{1,300}?[\\/](?:site|dist)-packages)"
                          r"[\\/]pip\b")
_INSTALLED = re.compile(r"Successfully installed (?P<names>[^\n]{1,2000})")
_SITE_ROOT = re.compile(r"^(?P<root>.*?[\\/](?:site|dist)-packages)(?=[\\/])", re.IGNORECASE)
_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:[\\/]|/|\\\\)")
_SOURCES = ("https://github.com/pypa/pip/blob/24.0/src/pip/_internal/req/req_install.py",
            "https://github.com/pypa/pip/blob/24.0/src/pip/_internal/utils/misc.py",
            "https://docs.python.org/3/library/site.html")


def _name(name: str) -> str:
    """A distribution's or module's name as one spelling (PEP 503 folds -, _ and . alike)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _folded(path: str) -> str:
    """A path as pip prints it on Windows (normcase: lower case, backslashes) and as on POSIX."""
    return path.replace("\\", "/").rstrip("/").lower()


def _same_place(pip_location: str, frame_root: str) -> bool:
    """Whether pip's location (absolute, or relative to pip's working directory) may be the frame's
    site-packages: equal, or a relative path the absolute one ends with."""
    pip, frame = _folded(pip_location), _folded(frame_root)
    if _ABSOLUTE.match(pip_location) and _ABSOLUTE.match(frame_root):
        return pip == frame
    tail = re.sub(r"^(?:\./)+", "", pip)
    return frame == pip or frame.endswith("/" + tail) or pip.endswith("/" + frame)


_NOT_FOUND = re.compile(r"ModuleNotFoundError: No module named '(?P<module>[\w.]+)'")


def _missing_modules(text: str) -> Set[str]:
    """The top-level modules Python's import found nowhere (ModuleNotFoundError, raised)."""
    return {_name(m.group("module").split(".")[0]) for m in _NOT_FOUND.finditer(text)}


def _pip_locations(text: str, missing: Set[str]) -> List[Tuple[str, str, str]]:
    """(module, where pip says it is installed, pip's line) for each missing module pip installed."""
    found = [(_name(m.group("name")), m.group("location").strip(), m.group(0))
             for m in _SATISFIED.finditer(text)]
    pip_own = _PIP_VERSION.search(text)
    if pip_own is not None:
        for line in _INSTALLED.finditer(text):
            for entry in line.group("names").split():
                name = _name(entry.rsplit("-", 1)[0])
                said = f"{pip_own.group(0)} ... {line.group(0)}"
                found.append((name, pip_own.group("location").strip(), said))
    return [row for row in found if row[0] in missing]


def installed_for_another_python(text: str, frames: Sequence[Frame]) -> List[InstallerError]:
    """pip installed a module into one site-packages, and the program that found no such module ran
    with frames in other site-packages only."""
    if "No module named" not in text or not ("already satisfied" in text or "Successfully installed" in text):
        return []
    missing = _missing_modules(text)
    roots = {m.group("root") for m in (_SITE_ROOT.match(f.path) for f in frames) if m is not None}
    if not missing or not roots:
        return []
    for module, location, said in _pip_locations(text, missing):
        if any(_same_place(location, root) for root in roots):
            continue
        other = _shown_root(sorted(roots))
        meaning = (f"pip says {module} is installed in {location}, and the program that found no module "
                   f"named {module} runs from {other}: a Python imports only from its own site-packages, so "
                   f"the program runs another Python or environment than the one pip installed into")
        shown = _short(said.split(" ... ")[-1])
        return [InstallerError("pip", "installed-for-another-python", shown, meaning, module, _SOURCES)]
    return []


def _shown_root(roots: Sequence[str]) -> str:
    return roots[0] if len(roots) == 1 else f"{roots[0]} (and {len(roots) - 1} more)"


def _short(said: str, limit: int = 160) -> str:
    said = " ".join(said.split())
    return said if len(said) <= limit else said[: limit - 1] + "…"
