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

__all__ = ["isolated_build_without_torch", "named_build_without_torch"]

_PIP_STEP = re.compile(r"Getting requirements to build (?:wheel|editable)(?: \.\.\. error|: finished with "
                       r"status 'error'| did not run successfully)")
_HOOK = re.compile(r"in get_requires_for_build_(?:wheel|editable)\b")
# The backend's own files under an isolated environment: pip's overlay, uv's build venvs.
_ISOLATED_ENV = re.compile(r"pip-build-env-\w+[\\/]+overlay[\\/]|[\\/]builds-v\d+[\\/]+\.tmp\w*[\\/]")
# torch's own files in the build's traceback (its overlay's site-packages/torch/): torch imported there
_TORCH_LOADED = re.compile(r"[\\/](?:site|dist)-packages[\\/]torch[\\/]")
_NO_TORCH = re.compile(r"No module named '?torch'?(?![\w.])")
# What was being built: uv names it ("Failed to build `name==version`"); old pip's failing command
# ran in its unpacked sdist directory (pip-install-*/name_<hash>, printed after the step); otherwise
# the last package pip collected or fetched as an sdist before the step.
_UV_BUILT = re.compile(r"Failed to (?:download and )?build `(?P<name>[A-Za-z][\w.-]{0,80}?)"
                       r"(?:==(?P<version>[\w.+!]+))?`")
_PIP_BUILD_DIR = re.compile(r"pip-install-\w{1,40}[\\/]+(?P<name>[A-Za-z][\w.-]{0,80}?)_[0-9a-f]{32}")
_PIP_COLLECTED = (
    re.compile(r"Collecting (?P<name>[A-Za-z][\w.-]{0,80}?)(?:==(?P<version>[\w.+!]+))?(?=[\s(;\[<>=!~,]|$)",
               re.MULTILINE),
    re.compile(r"Collecting (?P<url>git\+https?://[^\s/]+/[^\s/]+/(?P<name>[A-Za-z][\w.-]{0,80}?)"
               r"(?:\.git)?(?:@\S*)?)\s"),
    re.compile(r"(?:Downloading|Using cached) (?:\S*/)?(?P<name>[A-Za-z][\w.]{0,80}?)-(?P<version>\d[\w.+!]*)"
               r"\.tar\.gz"),
)
_AFTER_STEP = 8000  # characters after the failed step that hold its own output
_SOURCES = ("https://github.com/pypa/pip/blob/main/src/pip/_internal/distributions/sdist.py",
            "https://peps.python.org/pep-0517/#build-environment")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _isolated(text: str) -> Optional[Tuple[str, str, int]]:
    """(the failed step's line, the installer, where) where the text proves an isolated build failed."""
    step = _PIP_STEP.search(text)
    if step is not None:
        return step.group(), "pip", step.start()
    hook = _HOOK.search(text)
    if hook is not None and _ISOLATED_ENV.search(text):
        return hook.group(), "uv" if "builds-v" in text else "pip", hook.start()
    return None


def _built(text: str, at: int) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """(name, version, what to give the installer: the name, or the git URL) of the package whose
    build failed at ``at``."""
    match = _UV_BUILT.search(text) or _PIP_BUILD_DIR.search(text, at, at + _AFTER_STEP)
    if match is None:
        before = [m for pattern in _PIP_COLLECTED for m in pattern.finditer(text, 0, at)]
        match = max(before, key=lambda m: m.start()) if before else None
    if match is None:
        return None, None, None
    groups = match.groupdict()
    name = _canonical(match.group("name"))  # an sdist's file name spells it flash_attn
    return name, groups.get("version"), groups.get("url") or name


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
    step, installer, at = isolated
    name, version, requirement = _built(text, at)
    why: Optional[str] = "the build's own output ends in No module named 'torch'"
    if not _NO_TORCH.search(text, at, at + _AFTER_STEP):
        if _TORCH_LOADED.search(text, at, at + _AFTER_STEP):
            return []  # the build's own traceback runs through torch: it had torch, and failed later
        rows = kb.document("downstream").get("build_imports_torch", ()) if kb is not None else ()
        why = _imports_torch(name, version, rows) if name else None
    if why is None:
        return []
    meaning = (f"{installer} built {name or 'the package'} in an isolated environment holding only its "
               f"declared build requirements ({step.strip()}), and {why}")
    return [InstallerError(installer, "isolated-build-without-torch", step.strip(), meaning, requirement,
                           _SOURCES)]


# A build of a named package, in an installer's or a person's words: "Building wheel for X", "Failed
# to build X", "the X build", "X's setup.py".
_NAMED_BUILD = re.compile(r"\b(?:[Bb]uilding (?:wheel for )?|[Ff]ailed to build |[Bb]uild(?:ing)? of )`?"
                          r"(?P<a>[A-Za-z][\w.-]{1,60}?)`?(?=[\s,.:;)(]|$)"
                          r"|(?<![\w.-])`?(?P<b>[A-Za-z][\w.-]{1,60}?)`?(?:'s)? (?:build\b|setup\.py\b)",
                          re.MULTILINE)
_NEAR_CHARS = 2000  # of the text either side of "No module named 'torch'"
# pip's legacy path runs setup.py itself in the target environment, never isolated (isolation is for
# PEP 517 builds only: sdist.py prepares a build environment under use_pep517)
_LEGACY_BUILD = re.compile(r"Building wheel for [\w.-]{1,80} \(setup\.py\)"
                           r"|Running setup\.py (?:install|develop) for "
                           r"|python setup\.py (?:bdist_wheel|egg_info|develop|install) did not run")
_FRAME_FILE = re.compile(r'File "(?P<path>[^"\n]{1,400})", line \d+')
# files a build runs: the build script, pip's inline `-c` (<string>), a backend's hooks, a build env
_BUILD_FILE = re.compile(r"(?:^|[\\/])(?:setup|hatch_build|build)\.py$|^<string>$|pip-build-env|builds-v\d"
                         r"|_in_process|build_meta|backend")


def _raised_outside_a_build(text: str, at: int) -> bool:
    """The traceback frame just above the error at ``at`` is a file no build runs (a script's own)."""
    frames = list(_FRAME_FILE.finditer(text, max(0, at - 1500), at))
    return bool(frames) and not _BUILD_FILE.search(frames[-1].group("path"))


def named_build_without_torch(text: str, kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """No module named 'torch' beside a named build of a package whose build script imports torch
    without declaring it (``build_imports_torch``): under the default build isolation of pip and uv
    that build never sees torch. Not where the text passes --no-build-isolation or shows pip's legacy
    setup.py build (torch is then read from the environment itself), nor where the import that
    failed is a script's own, not a build's."""
    missing = _NO_TORCH.search(text) if kb is not None else None
    if missing is None or kb is None or "no-build-isolation" in text or _isolated(text) is not None:
        return []
    if _LEGACY_BUILD.search(text) or _raised_outside_a_build(text, missing.start()):
        return []
    rows = kb.document("downstream").get("build_imports_torch", ())
    window = text[max(0, missing.start() - _NEAR_CHARS):missing.end() + _NEAR_CHARS]
    for match in _NAMED_BUILD.finditer(window):
        name = _canonical(match.group("a") or match.group("b"))
        why = _imports_torch(name, None, rows)
        if why is None:
            continue
        said = match.group(0).strip()
        meaning = (f"the text names {name}'s build beside No module named 'torch' ({said}), "
                   f"and {why}: pip and uv build a package in an isolated environment holding only its "
                   f"declared build requirements unless told otherwise (--no-build-isolation)")
        return [InstallerError("build", "isolated-build-without-torch", missing.group(0), meaning, name,
                               _SOURCES)]
    return []
