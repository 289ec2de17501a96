"""The literal text every match of a regex contains, read from the regex's own parse (the standard
library's parser, the one ``re.compile`` uses). Pure.

A pattern that does not start with literal text (alternatives, a class) gives the matcher no
needle to skip to, so the regex engine tries it at every position of a long log; where a literal it
must contain is absent from the log, no match can exist and the pattern is not run at all.
"""

from __future__ import annotations

import re
import sys
from typing import Dict, Iterator, List, Match, Optional, Pattern, Sequence, Tuple

if sys.version_info >= (3, 11):
    from re import _parser
else:  # the same module under its old name (importing that name warns from 3.11 on)
    import sre_parse as _parser

__all__ = ["finditer", "literal_absent", "may_match", "required_literal"]

_REPEATS = (_parser.MAX_REPEAT, _parser.MIN_REPEAT)


def required_literal(pattern: Pattern[str]) -> str:
    """The longest literal text every match of ``pattern`` contains ("" when none is known)."""
    if pattern.flags & re.IGNORECASE:
        return ""
    try:
        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except (re.error, RecursionError):  # compiled already, so only a parser of another version
        return ""
    runs = [""]
    _collect(parsed.data, runs)
    return max(runs, key=len)


def _collect(items: Sequence[Tuple[object, object]], runs: List[str]) -> None:
    """Extend ``runs`` (the last one open) with the literal runs that ``items``, matched in sequence,
    always contain. Only what must match is read: a group, a repeat of at least once; anything else
    (a class, alternatives, an optional part, an assertion) ends the run."""
    for op, av in items:
        if op is _parser.LITERAL and isinstance(av, int):
            runs[-1] += chr(av)
            continue
        if op is _parser.SUBPATTERN and isinstance(av, tuple) and not av[1] & re.IGNORECASE:
            _collect(av[3].data, runs)  # a group's content is part of the sequence
            continue
        runs.append("")
        if op in _REPEATS and isinstance(av, tuple) and av[0] >= 1:
            _collect(av[2].data, runs)  # matched at least once: its own runs are required
            runs.append("")


_REQUIRED: Dict[Pattern[str], str] = {}  # required_literal of each pattern a reader asked about


def may_match(pattern: Pattern[str], text: str) -> bool:
    """``text`` holds the literal every match of ``pattern`` contains (or none is known): a
    prefilter that a reader scanning a long text with many patterns asks before each one."""
    literal = _REQUIRED.get(pattern)
    if literal is None:
        if len(_REQUIRED) > 4096:  # patterns made at run time: the cache stays small
            _REQUIRED.clear()
        literal = _REQUIRED[pattern] = required_literal(pattern)
    return not literal or literal in text


def finditer(pattern: Pattern[str], text: str) -> Iterator[Match[str]]:
    """``pattern.finditer(text)``, without a scan where no match can exist (see may_match)."""
    return pattern.finditer(text) if may_match(pattern, text) else iter(())


def literal_absent(required: str, needle: str, text: str, seen: Optional[Dict[str, int]]) -> bool:
    """A literal that every match contains (``required``) is absent from ``text``: known absent
    from its distinct lines (matcher._absent_needles), or, for a pattern without a needle that the regex
    engine would try at every position, searched for once."""
    if not required:
        return False
    at = seen.get(required) if seen is not None else None
    if at is None and not needle:
        at = text.find(required)
        if seen is not None:
            seen[required] = at  # a needle's first position, as _search keeps it
    return at is not None and at < 0
