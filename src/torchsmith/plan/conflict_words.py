"""A resolver's refusal (uv's or pip's), read into facts and said in plain words.

uv explains a failed resolution as a derivation ("Because beta>=2.0 depends on torch==2.4.0 and
all versions of alpha depend on beta>=2, ..."), pip as a list ("The conflict is caused by: The
user requested torch==2.6.0+cu126 / beta 2.0 depends on torch==2.4.0"). :mod:`torchsmith.refusal`
reads both (the same reader ``explain`` uses) into :class:`Need` facts -- who asks for what -- so
``plan --confirm`` and ``install`` say a conflict in the same words: which package pins what, against
which planned pin, and (where its published metadata is known) which release of it pairs with the
planned torch. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from torchsmith.records import dataclass
from torchsmith.refusal import read as read_refusal

__all__ = ["Need", "Pair", "Pairing", "ResolverFailure", "clashes", "conflict_lines", "pairs",
           "parse_failure", "unreachable_line"]

# Who pairs with a torch build: a pin on one of these against the plan's is the conflict to name.
FAMILY = ("torch", "torchvision", "torchaudio")

# A resolver that could not reach its index says so in words like these (uv, then pip).
_UNREACHABLE = ("Failed to fetch", "error sending request", "tcp connect error", "dns error",
                "Connection refused", "failed to lookup address", "network was disabled",
                "Failed to establish a new connection", "NewConnectionError", "Max retries exceeded",
                "Temporary failure in name resolution", "Network is unreachable", "timed out")


@dataclass(frozen=True)
class Need:
    """One fact of a refusal: ``who`` (with its version or range, if said) needs ``what``."""

    who: str  # canonical name
    who_version: str  # "2.0", ">=2.0", "" (all versions)
    what: str  # canonical name
    spec: str  # "==2.4.0", "" (any)
    markers: str = ""  # where it applies: "sys_platform == 'linux'", "" (everywhere)

    def said(self) -> str:
        shown = self.who_version if self.who_version[:1] in "<>=!~" else (
            f" {self.who_version}" if self.who_version else "")
        return f"{self.who}{shown} requires {self.what}{self.spec or ' (any version)'}"


@dataclass(frozen=True)
class ResolverFailure:
    """What a refusal says, read from its text."""

    needs: Tuple[Need, ...] = ()
    required: Tuple[str, ...] = ()  # the requirements given to it, as it repeats them
    missing: Tuple[str, ...] = ()  # requirements no index offers
    first_line: str = ""  # its own first error line, when nothing else could be read


def _first_error(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip().lstrip("×").strip()
        if stripped.lower().startswith(("error", "cause:", "because", "╰─▶")):
            return stripped[:300]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def unreachable_line(text: str) -> str:
    """The line saying the index could not be reached, or "" when the refusal is not that."""
    said = [re.sub(r"^(?:error:|cause:|╰─▶)\s*", "", line.strip()) for line in text.splitlines()
            if any(word.lower() in line.lower() for word in _UNREACHABLE)]
    if not said:
        return ""
    return (said[0] if len(said) == 1 else f"{said[0]} ({said[-1]})")[:300]


def parse_failure(text: str) -> ResolverFailure:
    """The facts of a uv or pip refusal, as :func:`torchsmith.refusal.read` reads them (the reader
    ``explain`` uses too): who needs what, what was asked for, what no index has."""
    refusal = read_refusal(text)
    needs = (Need(r.who, r.who_version, r.what, r.spec, r.markers) for r in refusal.needs())
    asked = tuple(dict.fromkeys(r.said for r in refusal.requested()))
    return ResolverFailure(tuple(dict.fromkeys(needs)), asked, refusal.missing, _first_error(text))


# (package, torch version, the range its dependent accepts) -> (release that pairs, where its
# metadata was read), or None.
Pairing = Callable[[str, str, str], Optional[Tuple[str, str]]]


@dataclass(frozen=True)
class Pair:
    """The release of a package that pins the torch family which pairs with the planned torch."""

    package: str
    torch: str
    version: str  # "" when no release read pairs
    source: str = ""
    within: str = ""  # the range the package that asks for it accepts (">=2"), "" for any
    needs: str = ""  # what the clashing release asks of the torch family ("torch==2.4.0")


def clashes(failure: ResolverFailure, planned: Mapping[str, str]) -> List[Need]:
    """The needs a planned pin does not meet (``planned``: name -> ``2.6.0+cu126``)."""
    from torchsmith.plan.published import spec_allows

    return [n for n in failure.needs if n.what in planned and not spec_allows(n.spec, planned[n.what])]


def pairs(failure: ResolverFailure, planned: Mapping[str, str], pairing: Optional[Pairing]) -> List[Pair]:
    """For each package whose torch-family pin clashes with the plan: its release that pairs."""
    torch = planned.get("torch", "").split("+", 1)[0]
    if pairing is None or not torch:
        return []
    asked = {n.what: n.spec for n in failure.needs}
    found: Dict[str, Pair] = {}
    for need in clashes(failure, planned):
        if need.what in FAMILY and need.who not in found:
            within = asked.get(need.who, "")
            paired = pairing(need.who, torch, within)
            found[need.who] = Pair(need.who, torch, *(paired or ("", "")), within=within,
                                   needs=need.what + need.spec)
    return list(found.values())


def conflict_lines(failure: ResolverFailure, planned: Mapping[str, str], by: str,
                   pairing: Optional[Pairing] = None) -> List[str]:
    """The refusal in plain words, one line per fact, first the pins that clash with the plan.

    ``planned``: canonical name -> the version the plan pins (``2.6.0+cu126``); ``by``: who
    refused ("uv pip compile")."""
    asked_by: Dict[str, Need] = {}
    for need in failure.needs:
        asked_by.setdefault(need.what, need)
    paired = {p.package: p for p in pairs(failure, planned, pairing)}
    lines: List[str] = []
    for need in clashes(failure, planned):
        line = f"{need.said()}, but the plan installs {need.what} {planned[need.what]}"
        parent = asked_by.get(need.who)
        if parent is not None and parent.who != need.who:
            line += f" ({parent.who} asks for {need.who}{parent.spec or ''})"
        pair = paired.get(need.who) if need.what in FAMILY else None
        if pair is not None and pair.version:
            line += (f"; the newest {pair.package} that pairs with torch {pair.torch} is "
                     f"{pair.package}=={pair.version} [source: {pair.source}]")
        elif pair is not None:
            accepted = f" within {pair.package}{pair.within}" if pair.within else ""
            line += (f"; no release of {pair.package}{accepted} whose metadata torchsmith read pairs "
                     f"with torch {pair.torch}")
        lines.append(line + ".")
    if not lines:
        lines = [f"{need.said()}." for need in failure.needs[:6]]
    lines.extend(f"{name} is on none of the indexes given." for name in failure.missing)
    if not lines and failure.first_line:
        lines.append(failure.first_line)
    return [f"{by} refused the whole request: {lines[0]}", *lines[1:]] if lines else []
