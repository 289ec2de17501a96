"""The distributions a text shows installed, in pip's own output formats: ``pip list``'s rows
(name, two or more spaces, version), ``pip freeze``'s ``name==version``, ``pip show``'s
``Name:`` line, ``Successfully installed name-version ...`` and ``Requirement already
satisfied: name``. Names are canonical (PEP 503: lower case, runs of -_. as one -). Pure."""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

__all__ = ["installed_distributions", "installed_versions"]

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,80}"
_LINES = (
    re.compile(rf"^[ \t]*(?P<name>{_NAME})[ \t]{{2,}}\d[\w.+!-]{{0,40}}[ \t]*(?:[ \t]\S+)?[ \t]*$",
               re.MULTILINE),
    # pip freeze, and torch's collect_env listing it ("[pip3] numpy==1.26.4")
    re.compile(rf"^[ \t]*(?:\[pip3?\] )?(?P<name>{_NAME})==\d[\w.+!-]{{0,40}}[ \t]*$", re.MULTILINE),
    re.compile(rf"^[ \t]*Name: (?P<name>{_NAME})[ \t]*$", re.MULTILINE),
    re.compile(rf"Requirement already satisfied: (?P<name>{_NAME}?)(?=[ \t<>=!~;\[(]|$)", re.MULTILINE),
)
_INSTALLED = re.compile(r"Successfully installed ([^\n]{1,4000})")
_WITH_VERSION = re.compile(rf"^(?P<name>{_NAME}?)-\d[\w.+!]*$")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_distributions(text: str) -> List[str]:
    """Each distribution the text shows installed, once, in the order first shown (at most 300)."""
    found: List[str] = []
    for pattern in _LINES:
        found.extend(_canonical(m.group("name")) for m in pattern.finditer(text))
    for line in _INSTALLED.finditer(text):
        for token in line.group(1).split():
            named = _WITH_VERSION.match(token)
            if named:
                found.append(_canonical(named.group("name")))
    return list(dict.fromkeys(found))[:300]


_VERSION = r"\d[\w.+!]{0,40}"
# the same shapes with the version kept: pip list's row, pip freeze's (and collect_env's) name==version,
# and pip's "Requirement already satisfied: name in <site-packages> (version)"; pip show's Name: line
# with the Version: line it prints next (commands/show.py); a module's __version__ as Python prints it
# on the next line (the REPL's quoted echo, or print()'s first value)
_VERSIONED_LINES = (
    re.compile(rf"^[ \t]*(?P<name>{_NAME})[ \t]{{2,}}(?P<version>{_VERSION})[ \t]*(?:[ \t]\S+)?[ \t]*$",
               re.MULTILINE),
    re.compile(rf"^[ \t]*(?:\[pip3?\] )?(?P<name>{_NAME})==(?P<version>{_VERSION})[ \t]*$", re.MULTILINE),
    re.compile(rf"Requirement already satisfied: (?P<name>{_NAME}?)(?:[<>=!~][^\s]*)? in \S+ "
               rf"\((?P<version>{_VERSION})\)"),
    re.compile(rf"^[ \t]*Name: (?P<name>{_NAME})[ \t]*\r?\n[ \t]*Version: (?P<version>{_VERSION})[ \t]*$",
               re.MULTILINE),
    re.compile(r"\b(?P<name>[A-Za-z_]\w{0,40})\.__version__\)?[^\n]{0,60}\r?\n[ \t]*(?:Out\[\d+\]: )?"
               r"(?P<quote>['\"]?)(?P<version>\d+\.\d[\w.+!]{0,40})(?P=quote)(?=[\s,]|$)"),
)
_WITH_VERSION_KEPT = re.compile(rf"^(?P<name>{_NAME}?)-(?P<version>\d[\w.+!]*)$")


def installed_versions(text: str) -> Dict[str, str]:
    """The version each distribution is shown installed at (canonical name -> version), the last one
    shown winning (a later "Successfully installed" replaces what a listing showed before)."""
    found: List[Tuple[int, str, str]] = []
    for pattern in _VERSIONED_LINES:
        found.extend((m.start(), _canonical(m.group("name")), m.group("version"))
                     for m in pattern.finditer(text))
    for line in _INSTALLED.finditer(text):
        for token in line.group(1).split():
            named = _WITH_VERSION_KEPT.match(token)
            if named:
                found.append((line.start(), _canonical(named.group("name")), named.group("version")))
    return {name: version for _, name, version in sorted(found)[:600]}
