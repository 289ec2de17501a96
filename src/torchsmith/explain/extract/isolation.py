"""A package's build that failed in an isolated build environment because torch was not in it. Pure.

PEP 517 front ends build a package in a fresh environment holding only its declared build
requirements. A build script that imports torch without declaring it fails there, however torch is
installed outside. Two facts prove it:

- the build was isolated: pip runs ``get_requires_for_build_wheel`` ("Getting requirements to
  build wheel") only for an isolated build (pip's ``distributions/sdist.py``: under
  ``should_isolate``), and a traceback through ``pip-build-env-*/overlay`` or uv's ``builds-v0``
  environment shows the backend imported from such an environment;
- torch was what it lacked: its output ends in "No module named 'torch'", or the package is one
  whose build script imports torch while declaring no build requirement on it
  (``downstream.json`` ``build_imports_torch``: read from each release's setup.py/pyproject.toml).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Mapping, Optional, Sequence, Tuple

from torchsmith.explain.extract.model import InstallerError
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["isolated_build_without_torch"]

_PIP_STEP = re.compile(r"Getting requirements to build (?:wheel|editable)(?: \.\.\. error|: finished with "
                       r"status 'error'| did not run successfully)")
_HOOK = re.compile(r"in get_requires_for_build_(?:wheel|editable)\b")
# The backend's own files under an isolated environment: pip's overlay, uv's build venvs.
_ISOLATED_ENV = re.compile(r"pip-build-env-\w+[\\/]+overlay[\\/]|[\\/]builds-v\d+[\\/]+\.tmp\w*[\\/]")
_NO_TORCH = re.compile(r"No module named '?torch'?(?![\w.])")
# What was being built: uv's "Failed to build `name==version`", pip's "Collecting name==version"
# or its unpacked sdist directory, a git URL's repository name, a downloaded sdist's file name.
_PACKAGE = (
    re.compile(r"Failed to (?:download and )?build `(?P<name>[A-Za-z][\w.-]{0,80}?)"
               r"(?:==(?P<version>[\w.+!]+))?`"),
    re.compile(r"Collecting (?P<name>[A-Za-z][\w.-]{0,80}?)==(?P<version>[\w.+!]+)"),
    re.compile(r"Collecting (?P<url>git\+https?://[^\s/]+/[^\s/]+/(?P<name>[A-Za-z][\w.-]{0,80}?)"
               r"(?:\.git)?(?:@\S*)?)\s"),
    re.compile(r"pip-install-\w{1,40}[\\/]+(?P<name>[A-Za-z][\w.-]{0,80}?)_[0-9a-f]{32}"),
    re.compile(r"Downloading (?:\S*/)?(?P<name>[A-Za-z][\w.]{0,80}?)-(?P<version>\d[\w.+!]*)\.tar\.gz"),
)
_SOURCES = ("https://github.com/pypa/pip/blob/main/src/pip/_internal/distributions/sdist.py",
            "https://peps.python.org/pep-0517/#build-environment")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _isolated(text: str) -> Optional[Tuple[str, str]]:
    """(the failed step's line, the installer) where the text proves an isolated build failed there."""
    step = _PIP_STEP.search(text)
    if step is not None:
        return step.group(), "pip"
    hook = _HOOK.search(text)
    if hook is not None and _ISOLATED_ENV.search(text):
        return hook.group(), "uv" if "builds-v" in text else "pip"
    return None


def _built(text: str) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """(name, version, what to give the installer: the name, or the git URL it was built from)."""
    for pattern in _PACKAGE:
        match = pattern.search(text)
        if match is not None:
            groups = match.groupdict()
            return match.group("name"), groups.get("version"), groups.get("url") or match.group("name")
    return None, None, None


def _imports_torch(name: str, version: Optional[str], rows: Sequence[Mapping[str, object]]) -> Optional[str]:
    """The data's row saying ``name`` (at ``version``, where known) imports torch to build without
    declaring it; None when no row covers it (a version newer than the newest read)."""
    for row in rows:
        if _canonical(str(row["package"])) != _canonical(name):
            continue
        upto = str(row.get("upto") or "")
        if version and upto and version_tuple(version) > version_tuple(upto):
            return None
        return f"{name}'s build script imports torch and declares no build requirement on it" + (
            f" (every release read up to {upto})" if upto else "")
    return None


def isolated_build_without_torch(text: str, kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """The isolated build that failed for want of torch, with why the text and data prove it."""
    if "requirements to build" not in text and "get_requires_for_build" not in text:
        return []
    isolated = _isolated(text)
    if isolated is None:
        return []
    step, installer = isolated
    name, version, requirement = _built(text)
    why: Optional[str] = "the build's own output ends in No module named 'torch'"
    if not _NO_TORCH.search(text[text.find(step):]):
        rows = kb.document("downstream").get("build_imports_torch", ()) if kb is not None else ()
        why = _imports_torch(name, version, rows) if name else None
    if why is None:
        return []
    meaning = (f"{installer} built {name or 'the package'} in an isolated environment holding only its "
               f"declared build requirements ({step.strip()}), and {why}")
    return [InstallerError(installer, "isolated-build-without-torch", step.strip(), meaning, requirement,
                           _SOURCES)]
