"""A pattern is skipped only where the text lacks a literal every one of its matches contains: the
same signatures fire, at the same places, with the shortcut as without it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.explain.test_signatures import CATALOG

from torchsmith.explain import matcher
from torchsmith.explain.literals import required_literal, required_literals
from torchsmith.explain.messages import without_line_prefixes


@pytest.mark.parametrize("source, literals", [
    (r"(?:PC: @ +0x[0-9a-f]{1,16}|#0 +) ?(?P<frame>pybind11::detail::(?:make_new|generic))",
     ("pybind11::detail::",)),
    (r"(?:eglInitialize|eglGetDisplay)\(\) failed", ("Initialize", "GetDisplay")),  # one of each alternative
    (r"(?:egl|EGL)\(\) failed", ("() failed",)),  # unless a single literal is longer
    (r"a(?:bc)?defg", ("defg",)),  # an optional group is not required
    (r"x{0,3}yz", ("yz",)),
    (r"(?:abcd)+e", ("abcd",)),  # repeated at least once: its text is required
    (r"ab(?i:CDEFG)h", ("ab",)),  # case-insensitive text matches other text
    (r"\b(?:system|machine)\b", ("system", "machine")),
    (r"(?:first|\d+)x", ("x",)),  # an alternative that requires no literal
    (r"[ab]\d+", ()),
])
def test_required_literals(source: str, literals: tuple) -> None:
    assert required_literals(re.compile(source)) == literals
    assert required_literal(re.compile(source)) == (literals[0] if len(literals) == 1 else "")


def test_a_case_insensitive_pattern_requires_no_literal() -> None:
    assert required_literal(re.compile("pybind11::detail", re.IGNORECASE)) == ""


def test_every_match_in_the_corpus_contains_one_of_its_patterns_required_literals() -> None:
    corpus = Path(__file__).parent / "corpus"
    texts = [p.read_text(encoding="utf-8") for p in sorted(corpus.glob("*.txt"))]
    for sig in CATALOG.signatures:
        assert len(sig.required) == len(sig.patterns)
        for pattern, literals in zip(sig.patterns, sig.required):
            for text in texts:
                for match in pattern.finditer(text):
                    assert not literals or any(literal in match.group(0) for literal in literals), sig.id


def test_a_pattern_without_a_needle_is_not_run_where_its_literal_is_absent() -> None:
    [sig] = [s for s in CATALOG.signatures if s.id == "pybind11-clash-between-packages"]
    assert "" in sig.needles  # the pattern that starts with alternatives
    frame = "#0  0x00007f3c in pybind11::detail::generic_type::initialize(...)\n"
    noise = "#1 step 12 loss=0.53\n" * 2000
    assert matcher._first_hit(sig, noise + frame, 0, {}) is not None
    seen: dict = {}
    assert matcher._first_hit(sig, noise, 0, seen) is None
    [literals] = [found for needle, found in zip(sig.needles, sig.required) if not needle]
    assert literals and all(seen.get(literal) == -1 for literal in literals)  # searched for, no regex scan


def test_a_prefix_at_every_line_start_is_removed_in_one_scan_as_line_by_line() -> None:
    lines = ["2025-03-01 12:00:01,123 - trainer - ERROR - RuntimeError: boom", "2025-03-01 12:00:01",
             "> quoted", ">>> import torch", "[rank0]: x", "[rank0]:", "   indented", "E1127 01:02:03.456789"
             "  4242 trainer.cc:88] glog", "2025-03-01 12:00:01,123 INFO", "", "\r", "Nov 27 01:02:03 node7 "
             "python[4242]: syslog"]
    text = "\n".join(lines * 3)
    # most of these lines are prefixed: a prefix alone there is an empty line (test_pasted)
    alone = {"2025-03-01 12:00:01", "[rank0]:", "2025-03-01 12:00:01,123 INFO"}
    assert without_line_prefixes(text) == "\n".join(
        "" if line in alone else without_line_prefixes(line) for line in lines * 3)
    assert without_line_prefixes(text).split("\n")[:4] == ["RuntimeError: boom", "", "quoted",
                                                           ">>> import torch"]
    assert without_line_prefixes("\n".join(lines[1:3])) == "2025-03-01 12:00:01\nquoted"


def test_a_reader_skips_a_pattern_whose_literal_the_text_lacks_with_the_same_matches() -> None:
    from torchsmith.explain.extract.gpu import _CODES
    from torchsmith.explain.literals import finditer, may_match

    pattern = _CODES[1][0]  # "Error 804: forward compatibility was attempted on non supported HW"
    text = "step 1 loss=0.5\n" * 100 + "Error 804: forward compatibility was attempted on non supported HW\n"
    assert may_match(pattern, text) and not may_match(pattern, text.replace("Error", "Errno"))
    assert [m.span() for m in finditer(pattern, text)] == [m.span() for m in pattern.finditer(text)] != []
    assert list(finditer(pattern, "step 1 loss=0.5\n" * 100)) == []
