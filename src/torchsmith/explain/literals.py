"""The literal text every match of a regex contains, read from the regex's own parse (the standard
library's parser, the one ``re.compile`` uses). Pure.

A pattern that does not start with literal text (alternatives, a class) gives the matcher no
needle to skip to, so the regex engine tries it at every position of a long log; where a literal it
must contain is absent from the log, no match can exist and the pattern is not run at all. Where
a pattern does start with literal text (``literal_prefix``), the matcher skips straight to it.
"""

from __future__ import annotations

import re
import sys
from typing import Dict, Iterator, List, Match, Optional, Pattern, Sequence, Tuple

if sys.version_info >= (3, 11):
    from re import _parser
else:  # the same module under its old name (importing that name warns from 3.11 on)
    import sre_parse as _parser

__all__ = [
    "finditer", "literal_absent", "literal_prefix", "may_match", "required_literal", "required_literals",
]

_REPEATS = (_parser.MAX_REPEAT, _parser.MIN_REPEAT)
Literals = Tuple[str, ...]  # literals one of which every match contains (none: nothing known)


def required_literal(pattern: Pattern[str]) -> str:
    """The longest literal text every match of ``pattern`` contains ("" when none is known)."""
    found = required_literals(pattern)
    return found[0] if len(found) == 1 else ""


def required_literals(pattern: Pattern[str]) -> Literals:
    """Literals one of which every match of ``pattern`` contains: the longest single one, or one of
    each alternative's (``(?:first|second)``) where those are longer; () when none is known."""
    if pattern.flags & re.IGNORECASE:
        return ()
    try:
        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except (re.error, RecursionError):  # compiled already, so only a parser of another version
        return ()
    return _best(parsed.data)


def _best(items: Sequence[Tuple[object, object]]) -> Literals:
    """The requirement of ``items`` whose shortest literal is the longest (the rarest to find)."""
    runs: List[str] = [""]
    sets: List[Literals] = []
    _collect(items, runs, sets)
    candidates = [(run,) for run in runs if run] + sets
    return max(candidates, key=lambda found: (min(map(len, found)), -len(found)), default=())


def _collect(items: Sequence[Tuple[object, object]], runs: List[str], sets: List[Literals]) -> None:
    """Extend ``runs`` (the last one open) with the literal runs that ``items``, matched in sequence,
    always contain, and ``sets`` with the alternatives' requirements. Only what must match is read:
    a group, a repeat of at least once, alternatives; anything else (a class, an optional part, an
    assertion) ends the run."""
    for op, av in items:
        if op is _parser.LITERAL and isinstance(av, int):
            runs[-1] += chr(av)
            continue
        if op is _parser.SUBPATTERN and isinstance(av, tuple) and not av[1] & re.IGNORECASE:
            _collect(av[3].data, runs, sets)  # a group's content is part of the sequence
            continue
        runs.append("")
        if op in _REPEATS and isinstance(av, tuple) and av[0] >= 1:
            _collect(av[2].data, runs, sets)  # matched at least once: its own runs are required
            runs.append("")
        elif op is _parser.BRANCH and isinstance(av, tuple):
            each = [_best(branch.data) for branch in av[1]]
            if all(each):  # every alternative requires one of its own literals
                sets.append(tuple(dict.fromkeys(literal for found in each for literal in found)))


_REQUIRED: Dict[Pattern[str], Literals] = {}  # required_literals of each pattern a reader asked about


def may_match(pattern: Pattern[str], text: str) -> bool:
    """``text`` holds the literal every match of ``pattern`` contains (or none is known): a
    prefilter that a reader scanning a long text with many patterns asks before each one."""
    found = _REQUIRED.get(pattern)
    if found is None:
        if len(_REQUIRED) > 4096:  # patterns made at run time: the cache stays small
            _REQUIRED.clear()
        found = _REQUIRED[pattern] = required_literals(pattern)
    return not found or any(literal in text for literal in found)


def finditer(pattern: Pattern[str], text: str) -> Iterator[Match[str]]:
    """``pattern.finditer(text)``, without a scan where no match can exist (see may_match)."""
    return pattern.finditer(text) if may_match(pattern, text) else iter(())


def literal_absent(required: Literals, needle: str, text: str, seen: Optional[Dict[str, int]]) -> bool:
    """Each of the literals one of which every match contains (``required``) is absent from
    ``text``: known absent from its distinct lines (matcher._absent_needles), or, for a pattern
    without a needle that the regex engine would try at every position, searched for once."""
    if not required:
        return False
    for literal in required:
        at = seen.get(literal) if seen is not None else None
        if at is None and not needle:
            at = text.find(literal)
            if seen is not None:
                seen[literal] = at  # a needle's first position, as _search keeps it
        if at is None or at >= 0:
            return False
    return True


_META = frozenset(".^$*+?{}[]|()")


def _structure(source: str) -> Iterator[Tuple[int, str, int]]:
    """(index, character, group depth after it) for each character outside escapes and classes."""
    depth, i, in_class = 0, 0, False
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        else:
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            yield i, c, depth
        i += 1


def _has_top_level_alternation(source: str) -> bool:
    return any(c == "|" and depth == 0 for _, c, depth in _structure(source))


def _closing_paren(source: str) -> int:
    """Index of the parenthesis closing the one at ``source[0]``, or -1."""
    return next((i for i, c, depth in _structure(source) if c == ")" and depth == 0), -1)


def literal_prefix(source: str) -> str:
    """The literal text every match of the regex ``source`` starts with ("" when unknown).

    ``str.find`` locates it several times faster than the regex engine scans, so matching skips
    straight to the first place a match can start.
    """
    comment = re.match(r"\(\?#[^)]*\)", source)
    if comment:  # a regex comment (the mark of a said pattern, explain.negation) matches nothing
        return literal_prefix(source[comment.end():])
    if _has_top_level_alternation(source):
        return ""
    group = re.match(r"\((?:\?P<\w+>|\?:)", source)
    if group:  # a leading group that must match: its own prefix
        close = _closing_paren(source)
        if close < 0 or source[close + 1:close + 2] in ("?", "*", "{"):
            return ""
        return literal_prefix(source[group.end():close])
    out: List[str] = []
    i = 0
    while i < len(source):
        c = source[i]
        if c == "\\":
            if i + 1 >= len(source) or source[i + 1].isalnum():
                break  # a class (\d, \s) or an assertion (\b)
            char, step = source[i + 1], 2
        elif c in _META:
            break
        else:
            char, step = c, 1
        following = source[i + step:i + step + 1]
        if following in ("?", "*", "{"):
            break  # this character may be absent or repeated
        out.append(char)
        if following == "+":
            break
        i += step
    return "".join(out)
