"""Whether a person's sentence states what a pattern reads in it, or denies, asks or supposes it.
Pure: no I/O.

A tool prints its message as a statement; a person writes the same words inside a denial ("I do
not think there is no gcc in the image"), a question ("is it because there's no gcc installed?") or
a condition ("if there is no g++ on PATH, ..."). A pattern that reads a person's words (a *said*
pattern: its source opens with ``(?#said)``, a regex comment the engine ignores) counts only where
its clause states it:

- no negation (``not``, ``never``, ``n't``, ``no longer``, ``neither``/``nor``, ``hardly``,
  ``doubt``) and no condition (``if``, ``whether``, ``unless``, ``in case``) stands in its clause
  before the match (the clause starts at a sentence's or clause's punctuation, a line's start or a
  conjunction or a question word: "torch.compile does not work because there is no gcc" and "I
  don't know why there is no gcc" state it);
- no negation inside the match that the pattern does not need: the pattern still matches the
  match with that word taken out ("reloading the nvidia_uvm module has not fixed it"), while a
  pattern's own "not found" is its statement;
- the sentence does not end in a question mark.
"""

from __future__ import annotations

import re
from typing import Match, Pattern

__all__ = ["SAID", "denied", "denied_in_clause"]

SAID = "(?#said)"

_NEGATION = re.compile(r"\b(?:not|never|no longer|neither|nor|hardly|doubts?|doubted)\b|n't\b", re.IGNORECASE)
_CONDITION = re.compile(r"\b(?:if|whether|unless|in case)\b", re.IGNORECASE)
# Where the clause a match stands in starts: punctuation that ends a sentence or a clause, a dash,
# a line's start, or a conjunction or question word that opens a clause of its own ("I don't know
# why there is no gcc" states that there is none)
_CLAUSE_START = re.compile(
    r"[.!?;:,(\[\]\"]\s|\n|\s[-\u2013\u2014]\s"
    r"|\b(?:because|since|so|but|and|or|as|which|while|though|although|then|yet|however"
    r"|why|how|where|when|what|who)\b",
    re.IGNORECASE)
_CLAUSE_CHARS = 120  # of the text before a match read for its clause
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")


def _clause_before(text: str, start: int) -> str:
    before = text[max(0, start - _CLAUSE_CHARS):start]
    starts = list(_CLAUSE_START.finditer(before))
    return before[starts[-1].end():] if starts else before


def _asked(text: str, end: int) -> bool:
    """The sentence the match ends in ends in a question mark."""
    after = _SENTENCE_END.search(text, end, end + 200)
    return after is not None and after.group().startswith("?")


def denied_in_clause(text: str, start: int) -> bool:
    """The clause that text[start:] starts in negates or supposes it (see the module's docstring)."""
    clause = _clause_before(text, start)
    return bool(_NEGATION.search(clause) or _CONDITION.search(clause))


def _negated_inside(pattern: Pattern[str], matched: str) -> bool:
    """A negation inside ``matched`` that the pattern does not need: taken out, the rest matches."""
    for negation in _NEGATION.finditer(matched):
        before, after = matched[:negation.start()], matched[negation.end():]
        if negation.group().lower() == "n't":  # "hasn't fixed": "has fixed"
            without = before + after
        else:
            without = before.rstrip(" ") + " " + after.lstrip(" ")
        if pattern.search(without) is not None:
            return True
    return False


def denied(pattern: Pattern[str], text: str, match: Match[str]) -> bool:
    """``match`` of a said pattern does not state what it reads: its clause denies, asks or supposes
    it. Never for a pattern that reads a tool's message (no ``(?#said)``)."""
    if not pattern.pattern.startswith(SAID):
        return False
    return (denied_in_clause(text, match.start()) or _asked(text, match.end())
            or _negated_inside(pattern, match.group()))
