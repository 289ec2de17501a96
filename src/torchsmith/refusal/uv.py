"""uv's refusals, read in the forms uv writes them.

uv explains a failed resolution as a derivation (astral-sh/uv@00df417f12fbfb43e398c79c9582e418fb5ece10
crates/uv-resolver/src/pubgrub/report.rs): sentences "Because {premises}, we can conclude that
{conclusion}." and "And because ...". A premise is an external fact -- "{package}{range} depends on
{dependency}{range}" ("all versions of x depend on ...", "... depends on a and b"), "you require ..." /
"your project requires ..." (the request), "there is no version of x==1", "only x<=1.0 is available",
"x was not found in the package registry" (crates/uv-resolver/src/resolver/availability.rs),
"x==1 has no wheels with a matching platform tag (e.g., `...`)", "the current Python version (3.8.18)
does not satisfy Python>=3.9" -- and a conclusion is uv's own inference, not a published requirement.
A package carries its markers in braces (``torch{sys_platform == 'linux'}==2.4.0``); uv wraps its
sentences over indented lines, and its hints ("hint: Wheels are available for `torch` (v2.6.0) on the
following platforms: ...") say what was offered. A report of one external fact has no "Because".
Pure: no I/O."""

from __future__ import annotations

import re
from typing import List, Tuple

from torchsmith.kb.pkgmeta import canonical
from torchsmith.refusal.model import Have, Missing, Offer, Requirement, clean

__all__ = ["read"]

_HEADER = re.compile(r"No solution found when resolving[^\n]*")
_PACKAGE = (r"(?P<{0}>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?(?:\{{(?P<{0}_markers>[^{{}}]*)\}})?"
            r"(?P<{0}_spec>(?:===|[<>=!~]=?)[^\s,;]+(?:,(?:===|[<>=!~]=?)[^\s,;]+)*)?")
_WHO = _PACKAGE.format("who")
_WHAT = _PACKAGE.format("what")
_DEPENDS = re.compile(rf"(?:all versions of )?(?<![\w.+{{}}-]){_WHO}\s+depends? on {_WHAT}(?=[\s,.]|$)")
_AND = re.compile(rf"\s+and {_WHAT}(?=,|$)")
_REQUIRE = re.compile(r"(?:you require|your project requires|your workspace requires) (?P<list>[^\x00]+)")
_MISSING = re.compile(rf"(?<![\w.-]){_WHAT} was not found in the (?:package registry|provided package "
                      rf"locations|cache)|there (?:is no version|are no versions) of "
                      rf"{_PACKAGE.format('none')}")
_ONLY = re.compile(rf"only (?:the following versions of )?{_WHAT} (?:is|are) available"
                   r"(?::(?P<list>(?:\s+[A-Za-z0-9][\w.-]*(?:===|[<>=!~]=?)[^\s,;]+)+))?")
_UNUSABLE = re.compile(rf"(?<![\w.-]){_WHAT} (?:has|have) (?P<why>(?:no|only) [^\x00]+?)(?= and |$)")
_PYTHON = re.compile(r"the (?P<kind>current|requested) Python version \((?P<have>[^)]+)\) does not satisfy "
                     r"Python(?P<spec>[^\s,]+)")
_REQUIRES_PYTHON = re.compile(rf"{_WHO} requires? Python ?(?P<spec>[<>=!~][^\s,]*)")
_HINT = re.compile(r"hint: (?P<said>[^\n]*(?:\n(?!\s*\n)(?!\s*hint:)[^\n]*)*)")
_HINT_NAME = re.compile(r"`(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)` (?:\(v|was )")


_SEGMENTS = re.compile(r"(?:one|all) of:(?P<segments>(?:\s+(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)"
                       r"(?:\{[^{}]*\})?(?:===|[<>=!~]=?)[^\s,;]+(?:,(?:===|[<>=!~]=?)[^\s,;]+)*(?=\s))+)")


def _one_range(match: re.Match[str]) -> str:
    """uv's range of several segments ("one of:" then a package range a line) as one range whose
    segments are joined by "||" (either holds): ``torch<2.0||>=2.1``."""
    segments = match.group("segments").split()
    name = match.group("name")
    return name + "||".join(s[len(name):] for s in segments if s.startswith(name))


# A wrap inside one word: pixi (miette) wraps with the textwrap crate, whose default word splitter
# also breaks after a hyphen ("pytorch-" / "triton{...}"), and a specifier may start the next line
# ("...'linux'}" / "==3.2.0"); uv writes no space inside a name or between it and its specifier.
_WORD_WRAP = re.compile(r"(?<=[A-Za-z0-9]-)[ \t]*\n[ \t]*(?:│[ \t]*)?(?=[A-Za-z0-9])"
                        r"|(?<=[\w.}])[ \t]*\n[ \t]*(?:│[ \t]*)?(?====?|[<>!~]=)(?=[<>=!~]{1,3}[\w*])")


def _flat(region: str) -> str:
    """uv's report as one line: its wrapped lines and its frame ("cause:", "╰─▶") joined."""
    region = _WORD_WRAP.sub("", region)
    flat = re.sub(r"\s*\n\s*(?:cause:|╰─▶|│|×)?\s*", " ", region).strip() + " "
    return _SEGMENTS.sub(_one_range, flat).strip()


def _sentences(text: str) -> List[str]:
    """The premises of each of uv's sentences, in order (the conclusions left out)."""
    header = _HEADER.search(text)
    region = text[header.end():] if header else text
    region = region.split("hint:", 1)[0]
    flat = _flat(region)
    found = []
    for piece in re.split(r"(?=\b(?:And because|Because) )", flat):
        opening = re.match(r"(?:And because|Because) ", piece)
        if opening and "we can conclude that" in piece:
            found.append(piece[opening.end():].split("we can conclude that", 1)[0].strip().rstrip(","))
    if not found and header:  # one external fact, said as is
        found = [flat.lstrip(":").strip()]
    return found


def _requirement(match: re.Match[str], who: str = "", who_spec: str = "") -> Requirement:
    what = canonical(match.group("what"))
    spec = (match.group("what_spec") or "").rstrip(".")
    shown = f"{who}{who_spec}" if who else ""
    return Requirement("uv", canonical(who) if who else "", who_spec, what, spec,
                       (match.group("what_markers") or "").strip(), shown, f"{match.group('what')}{spec}")


def _premise(premise: str) -> Tuple[List[Requirement], List[Missing], List[Offer], List[Have]]:
    needs: List[Requirement] = []
    for match in _DEPENDS.finditer(premise):
        who, who_spec = match.group("who"), (match.group("who_spec") or "")
        needs.append(_requirement(match, who, who_spec))
        second = _AND.match(premise, match.end())
        if second:  # "a depends on b and c"
            needs.append(_requirement(second, who, who_spec))
        premise = premise[:match.start()] + "\x00" * (match.end() - match.start()) + premise[match.end():]
    for match in _REQUIRE.finditer(premise):
        for part in re.split(r",\s*(?:and\s+)?|\s+and\s+", match.group("list").split("\x00", 1)[0]):
            item = re.match(_WHAT + r"\s*$", part.strip())
            if item:
                needs.append(_requirement(item))
    for match in _REQUIRES_PYTHON.finditer(premise):
        who_spec = match.group("who_spec") or ""
        needs.append(Requirement("uv", canonical(match.group("who")), who_spec, "python", match.group("spec"),
                                 "", match.group("who") + who_spec, f"Python{match.group('spec')}"))
    missing = [Missing("uv", "".join(m.group(g) or "" for g in ("what", "none", "what_spec", "none_spec")))
               for m in _MISSING.finditer(premise)]
    offers = [Offer("uv", canonical(m.group("what")), clean(m.group(0)))
              for pattern in (_ONLY, _UNUSABLE) for m in pattern.finditer(premise)]
    have = [Have("uv", "python", m.group("have"), f"Python {m.group('have')}")
            for m in _PYTHON.finditer(premise)]
    return needs, missing, offers, have


def _hints(text: str) -> List[Offer]:
    offers = []
    for match in _HINT.finditer(text):
        said = re.sub(r"\s+", " ", match.group("said")).strip()
        name = _HINT_NAME.search(said)
        if name:
            offers.append(Offer("uv", canonical(name.group("name")), said[:300]))
    return offers


def read(text: str) -> Tuple[List[Requirement], List[Have], List[Missing], List[Offer]]:
    """(requirements, what the environment has, what no index has, what was offered) of uv's words."""
    if not (_HEADER.search(text) or "we can conclude that" in text):
        return [], [], [], []
    needs: List[Requirement] = []
    missing: List[Missing] = []
    offers: List[Offer] = []
    have: List[Have] = []
    for premise in _sentences(text):
        found = _premise(premise)
        needs.extend(found[0])
        missing.extend(found[1])
        offers.extend(found[2])
        have.extend(found[3])
    return needs, have, missing, offers + _hints(text)
