"""What a resolver's refusal says, as values: who requires what, what the environment has, what no
index or channel offers, and what was offered instead. Pure: no I/O."""

from __future__ import annotations

import re
from typing import Tuple

from torchsmith.kb.pkgmeta import canonical
from torchsmith.records import dataclass

__all__ = ["Have", "Missing", "Offer", "Refusal", "Requirement", "clean", "package", "split_requirement"]


@dataclass(frozen=True)
class Requirement:
    """One requirement a resolver named: ``who`` (at ``who_version``) requires ``what`` ``spec``.

    ``who`` is "" for the request itself (pip's "The user requested", uv's "you require", a conda
    spec asked for). ``what`` is ``python`` for the interpreter and ``__cuda``-style names for conda's
    virtual packages."""

    installer: str  # pip | uv | conda | pixi
    who: str  # canonical name, "" for the request
    who_version: str  # "2.0", ">=2.0", "1.9.0 cuda112py38h0bbbad9_1", "" (all versions)
    what: str  # canonical name
    spec: str  # "==2.4.0", ">=1.8,<2.0", "11.7.*", "" (any)
    markers: str = ""  # the environment markers it applies under: "sys_platform == 'linux'"
    who_said: str = ""  # as the resolver named who: "torchvision 0.13.0", "beta>=2.0"
    said: str = ""  # the requirement as the resolver said it: "torch==1.12.0"


@dataclass(frozen=True)
class Have:
    """What the environment or the machine has that a requirement met: ``torch 2.2.1``, ``__cuda 10.2``,
    ``python 3.8.10``."""

    installer: str
    name: str  # canonical name
    version: str
    said: str = ""


@dataclass(frozen=True)
class Missing:
    """A requirement no index or channel offers, as ``installer`` said it (``torch==9.9``), with the
    versions the installer listed as what it could see instead (pip's "(from versions: ...)")."""

    installer: str
    said: str
    listed: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Offer:
    """What an index or channel offered for a package, in the resolver's words: the versions it
    had, the wheels it could not use and why."""

    installer: str
    name: str  # canonical name
    said: str


@dataclass(frozen=True)
class Refusal:
    """Everything one text says about why a resolver refused, in reading order."""

    requirements: Tuple[Requirement, ...] = ()
    installed: Tuple[Have, ...] = ()
    unavailable: Tuple[Missing, ...] = ()
    offers: Tuple[Offer, ...] = ()

    @property
    def missing(self) -> Tuple[str, ...]:
        """The requirements no index or channel offers, as said, each once."""
        return tuple(dict.fromkeys(m.said for m in self.unavailable))

    def requested(self) -> Tuple[Requirement, ...]:
        """What was asked for (the request and its constraints)."""
        return tuple(r for r in self.requirements if not r.who)

    def needs(self) -> Tuple[Requirement, ...]:
        """What one package requires of another."""
        return tuple(r for r in self.requirements if r.who)


def clean(said: str) -> str:
    """A requirement as said, without the quotes, dots and wrapping around it (a quote that closes
    one inside it, as in a marker's ``"linux"``, stays)."""
    said = re.sub(r"\s+", " ", said).strip()
    while True:
        before = said
        if len(said) > 1 and said[0] == said[-1] and said[0] in "'\"`":
            said = said[1:-1].strip()
        said = said.rstrip(".`").lstrip("`")
        for quote in "'\"":
            if said.count(quote) % 2 and said.endswith(quote):
                said = said[:-1]
            elif said.count(quote) % 2 and said.startswith(quote):
                said = said[1:]
        if said == before:
            return said


def package(name: str) -> str:
    """A package's canonical name; a conda virtual package keeps its ``__`` (``__cuda``)."""
    return "__" + canonical(name[2:]) if name.startswith("__") else canonical(name)


_NAME = re.compile(r"\s*(?P<name>[A-Za-z0-9_][A-Za-z0-9._-]*)(?:\[(?P<extras>[^\]]*)\])?")


def split_requirement(said: str) -> Tuple[str, str, str]:
    """``torch>=1.8; python_version < "3.9"`` -> (``torch``, ``>=1.8``, ``python_version < "3.9"``).

    pip writes a range's parts joined by " and " (``torch<2.0 and >=1.8``); they are one range."""
    match = _NAME.match(said)
    if match is None:
        return "", "", ""
    rest, _, markers = said[match.end():].partition(";")
    spec = re.sub(r"\s+and\s+", ",", rest.strip())
    spec = re.sub(r"\s*,\s*", ",", spec)
    return package(match.group("name")), re.sub(r"(?<=[<>=!~])\s+", "", spec), markers.strip()
