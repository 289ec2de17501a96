"""Find the known failure signatures in a text and turn them into explanations. Pure: no I/O.

Each pattern scans the whole text once: ``str.find`` jumps to the first occurrence of the literal
text the pattern starts with, and ``re.search`` goes on from there, so a 10 MB log takes a
fraction of a second (``bench/explain_bench.py``). Facts come from the named groups of every
pattern of a signature that matches, plus ``details`` regexes run only on the lines around the
first match.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any, Dict, List, Match, Optional, Pattern, Set, Tuple

from torchsmith.compat import sm_arch
from torchsmith.explain.catalog import PLACEHOLDER, Catalog, Signature
from torchsmith.explain.cutwords import cut_words
from torchsmith.explain.extract import Extracted, extract
from torchsmith.explain.factvalues import add_facts, normalise_fact
from torchsmith.explain.families import Candidate
from torchsmith.explain.literals import literal_absent
from torchsmith.explain.messages import one_message, plain_quotes, unwrap, without_line_prefixes
from torchsmith.explain.negation import denied
from torchsmith.explain.noise import without_noise
from torchsmith.explain.pasted import as_written
from torchsmith.explain.planflags import plan_flags
from torchsmith.explain.reason import blocked, capability, conclusions, confirmation
from torchsmith.explain.triggers import fired, named_capabilities
from torchsmith.kb import KnowledgeBase
from torchsmith.machine import Machine
from torchsmith.records import dataclass

__all__ = ["Explanation", "Found", "Report", "explain", "explain_report", "find_signatures", "normalise_fact",
           "render_text"]

_DETAIL_LINES = 6  # lines before and after the match that `details` regexes see
_DETAIL_CHARS = 4000  # and at most this many characters either side (a log may be one huge line)
_EXCERPT_MAX = 240
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Found:
    """One signature found in the text: where first, and the facts it carried."""

    signature: Signature
    offset: int  # where the earliest match starts
    end: int  # where that match ends
    line: int  # 1-based line of that match
    excerpt: str  # that line, cleaned and shortened
    facts: Dict[str, Any]


@dataclass
class Explanation:
    signature: Signature
    line: int
    excerpt: str
    facts: Dict[str, Any]
    cause: str
    fix: List[str]
    host_facts: List[str] = field(default_factory=list)
    # No single cause proven: each cause's id and text, and the check that tells it apart.
    candidates: List[Candidate] = field(default_factory=list)
    kb_facts: Dict[str, str] = field(default_factory=dict)  # computed from the knowledge base
    reasoning: List[str] = field(default_factory=list)  # what the rules conclude from the text's facts

    def to_json(self) -> Dict[str, Any]:
        sig = self.signature
        return {
            "id": sig.id,
            "title": sig.title,
            "cause": self.cause,
            "fix": list(self.fix),
            "facts": dict(self.facts),
            "host_facts": list(self.host_facts),
            "excerpt": self.excerpt,
            "line": self.line,
            "related_finding": sig.related_finding,
            "priority": sig.priority,
            "sources": list(sig.sources),
            "candidates": [{"id": c.id, "cause": c.cause, "check": c.check} for c in self.candidates],
            "kb_facts": dict(self.kb_facts),
            "reasoning": list(self.reasoning),
        }


# --- scanning ------------------------------------------------------------------------------

def _line_bounds(text: str, offset: int) -> Tuple[int, int]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, len(text) if end < 0 else end


def _excerpt(text: str, offset: int) -> str:
    start, end = _line_bounds(text, offset)
    line = text[start:end]
    column = offset - start
    if len(line) > _EXCERPT_MAX:  # keep the match in view
        left = max(0, min(column - 40, len(line) - _EXCERPT_MAX))
        line = ("…" if left else "") + line[left:left + _EXCERPT_MAX] + "…"
    return _CONTROL.sub("", line).strip()


def _detail_window(text: str, offset: int) -> str:
    start, end = _line_bounds(text, offset)
    for _ in range(_DETAIL_LINES):
        if start > 0:
            start = text.rfind("\n", 0, start - 1) + 1
        if end < len(text):
            nxt = text.find("\n", end + 1)
            end = len(text) if nxt < 0 else nxt
    return text[max(start, offset - _DETAIL_CHARS):min(end, offset + _DETAIL_CHARS)]


_Hit = Tuple[Signature, int, int, Dict[str, Any]]  # signature, start, end, facts
_NEAR_TRIES = 1000  # matches of one pattern examined for one whose surroundings fit `near`


def _search(pattern: Pattern[str], needle: str, text: str, pos: int,
            seen: Optional[Dict[str, int]] = None) -> Optional[Match[str]]:
    if needle:  # a match starts with the needle, so none can start before its first occurrence
        first = seen.get(needle) if seen is not None else None
        if first is None or 0 <= first < pos:
            first = text.find(needle, pos)
            if seen is not None and pos == 0:
                seen[needle] = first  # patterns sharing a needle search for it once
        if first < 0:
            return None
        pos = first
    return pattern.search(text, pos)


_WRAPPED_CHARS = 256 * 1024  # of a log's end searched again with its messages joined
_BEFORE_CHARS = 400  # of the match's line that `before` / `not_before` regexes see


def _near(sig: Signature, text: str, match: Match[str]) -> bool:
    if sig.before or sig.not_before:
        start = max(text.rfind("\n", 0, match.start()) + 1, match.start() - _BEFORE_CHARS)
        leading = text[start:match.start()]
        if sig.before and not any(pattern.search(leading) for pattern in sig.before):
            return False
        if any(pattern.search(leading) for pattern in sig.not_before):
            return False
    if not sig.near:
        return True
    window = _detail_window(text, match.start())
    return any(pattern.search(window) for pattern in sig.near)


def _first_match(sig: Signature, pattern: Pattern[str], needle: str, text: str,
                 pos: int, *, seen: Optional[Dict[str, int]] = None) -> Optional[Match[str]]:
    for _ in range(_NEAR_TRIES):
        match = _search(pattern, needle, text, pos, seen)
        if match is None or (_near(sig, text, match) and not denied(pattern, text, match)):
            return match
        pos = match.start() + 1
    return None


def _first_hit(sig: Signature, text: str, pos: int = 0,
               seen: Optional[Dict[str, int]] = None) -> Optional[_Hit]:
    tries = (_first_match(sig, p, n, text, pos, seen=seen) for p, n, r
             in zip(sig.patterns, sig.needles, sig.required) if not literal_absent(r, n, text, seen))
    matches = [m for m in tries if m is not None]
    if not matches:
        return None
    matches.sort(key=lambda m: m.start())
    first = matches[0]
    facts: Dict[str, Any] = {}
    for match in matches:
        add_facts(facts, match)
    if sig.details:
        window = _detail_window(text, first.start())
        for detail in sig.details:
            found = detail.search(window)
            if found is not None:
                add_facts(facts, found)
    return sig, first.start(), first.end(), facts


def _wrapped_hits(text: str, signatures: List[Signature]) -> List[_Hit]:
    """Hits of ``signatures`` in the message-joined text (messages split over lines), at their
    original positions; a match over more lines than one message spans is not one message."""
    if not signatures:
        return []
    base = max(0, len(text) - _WRAPPED_CHARS)  # a big log's wrapped message is its last one
    base = text.find("\n", base) + 1 if base else 0
    joined = unwrap(text[base:])
    seen: Dict[str, int] = {}
    hits: List[_Hit] = []
    for sig in signatures:
        hit = _first_hit(sig, joined.text, 0, seen)
        if hit is None:
            continue
        start = base + joined.original(hit[1])
        end = base + joined.original(max(hit[2] - 1, hit[1])) + 1
        window = _detail_window(text, start) if sig.near else ""
        if sig.near and not any(pattern.search(window) for pattern in sig.near):
            continue  # `near` means near in the original lines
        if one_message(text, start, end):
            hits.append((sig, start, end, hit[3]))
    return hits


_REPEATS_FROM = 1 << 20  # a log this long is read for its distinct lines first


def _absent_needles(text: str, catalog: Catalog) -> Dict[str, int]:
    """The needles (literal prefixes) and required literals a long log cannot hold, found in its
    distinct lines: a big log repeats its progress lines, and each needle is otherwise one scan of
    the whole log.
    A needle without a newline occurs in the log exactly when it occurs in one of its lines."""
    if len(text) < _REPEATS_FROM:
        return {}
    parts = text.split("\n")
    lines = dict.fromkeys(parts)
    if len(lines) * 4 > len(parts):  # few repeats: the digest would cost more than it saves
        return {}
    digest = "\n".join(lines)
    needles = {n for s in catalog.signatures for n in s.needles + sum(s.required, ()) if n and "\n" not in n}
    return {needle: -1 for needle in needles if needle not in digest}


def find_signatures(text: str, catalog: Catalog) -> List[Found]:
    """Every signature that occurs in ``text``, most fundamental first, then by position.

    A signature not found line by line is looked for again in the text with its messages joined
    (:mod:`.messages`): a message wrapped by a terminal or a logger is one message."""
    seen = _absent_needles(text, catalog)  # needle -> its first position in text (-1: absent)
    hits: List[_Hit] = [hit for hit in (_first_hit(sig, text, 0, seen) for sig in catalog.signatures) if hit]
    found_ids = {hit[0].id for hit in hits}
    hits.extend(_wrapped_hits(text, [sig for sig in catalog.signatures if sig.id not in found_ids]))
    # A signature that explains a span better replaces the ones it supersedes inside that span;
    # they still count where they occur outside it.
    spans: Dict[str, List[Tuple[int, int]]] = {}
    for sig, start, end, _ in hits:
        for other in sig.supersedes:
            spans.setdefault(other, []).append((start, end))
    kept: List[_Hit] = []
    for hit in hits:
        current: Optional[_Hit] = hit
        while current is not None:
            inside = next((span for span in spans.get(current[0].id, ()) if span[0] <= current[1] < span[1]),
                          None)
            if inside is None:
                kept.append(current)
                break
            current = _first_hit(current[0], text, inside[1])
    # Line numbers by counting newlines between consecutive hits: one pass over the text.
    lines: Dict[int, int] = {}
    line, position = 1, 0
    for start in sorted({hit[1] for hit in kept}):
        line += text.count("\n", position, start)
        position = start
        lines[start] = line
    found_list = [Found(sig, start, end, lines[start], _excerpt(text, start), facts)
                  for sig, start, end, facts in kept]
    found_list.sort(key=lambda f: (f.signature.priority, f.offset))
    return found_list


# --- explanations --------------------------------------------------------------------------

def _fact_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)


def render_text(template: str, facts: Dict[str, Any]) -> str:
    """Fill ``{name}`` / ``{name|default}`` placeholders from the facts."""

    def fill(match: Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in facts:
            return _fact_text(facts[name])
        return default if default is not None else "?"

    text = PLACEHOLDER.sub(fill, template)
    return re.sub(r"  +", " ", text).replace(" ,", ",").replace("( ", "(").strip()


PLAN_STEP = ("On the machine that shows this error: `torchsmith plan{args}` names the torch build that "
             "works there, and `torchsmith install`, run there, installs and verifies it")


def _step_text(template: str, facts: Dict[str, Any]) -> str:
    """A step filled in. Only a step that opens with a fact (a sentence torchsmith wrote) gets a
    capital: the rest is as the data wrote it, and a command is never re-cased (``pip``)."""
    text = render_text(template, facts)
    return text[:1].upper() + text[1:] if template.startswith("{") else text


def _fix_steps(sig: Signature, facts: Dict[str, Any], plan_args: str) -> List[str]:
    instead = [steps for name, steps in sig.fix_instead_if if name in facts]
    fix = [_step_text(step, facts) for step in (instead[0] if instead else sig.fix)]
    first = [_step_text(step, facts) for name, steps in sig.fix_if if name in facts for step in steps]
    # After what the text itself settles (a typo, a CPU torch to replace); not when no build can help.
    if sig.fix_with_plan and not instead:
        first.append(PLAN_STEP.format(args=f" {plan_args}" if plan_args else ""))
    # Never re-cased: a step that is a command is pasted as written (`pip`, not `Pip`).
    return [step for step in first + [s for s in fix if s not in first] if step]


@dataclass
class Report:
    """What ``explain`` read in a text and what it concluded."""

    extracted: Extracted
    explanations: List[Explanation]
    # Signatures whose pattern matched but whose cause the text's facts disprove, or do not show
    # the evidence it needs (``confirmed_by``): (id, why).
    contradicted: List[Tuple[str, str]] = field(default_factory=list)


def _triggered(text: str, catalog: Catalog, read: Extracted, found: Set[str],
               kb: Optional[KnowledgeBase] = None) -> List[Found]:
    """Signatures whose failure an extracted fact states, where no pattern found them."""
    out: List[Found] = []
    for sig in catalog.signatures:
        if not sig.triggers or sig.id in found:
            continue
        hit = fired(sig.triggers, read, kb)
        if hit is None:
            continue
        needles, facts = hit
        offset = next((at for at in (text.find(n) for n in needles) if at >= 0), 0)
        line = text.count("\n", 0, offset) + 1
        out.append(Found(sig, offset, offset + len(needles[0]) if needles else offset, line,
                         _excerpt(text, offset), facts))
    return out


def _machine_capability(machine: Optional[Machine]) -> Optional[str]:
    if machine is None or machine.nvidia is None:
        return None
    return next((g.compute_capability for g in machine.nvidia.visible_gpus if g.compute_capability), None)


def _derived_facts(sig: Signature, facts: Dict[str, str], read: Extracted, machine: Optional[Machine],
                   kb: Optional[KnowledgeBase]) -> Dict[str, str]:
    """Facts beyond the match's own: the GPU's, the knowledge base's, and the evidence that confirmed
    the cause where the cause cites it (``{confirmation}``)."""
    from torchsmith.explain.context import kb_facts

    derived = {**_gpu_facts(sig, facts, read, machine, kb), **kb_facts(sig.kb_facts, facts, kb)}
    evidence = confirmation(sig.confirmed_by, read, facts, kb) if "{confirmation" in sig.cause else None
    if evidence:
        derived["confirmation"] = evidence
    return derived


def _gpu_facts(sig: Signature, facts: Dict[str, str], read: Extracted, machine: Optional[Machine],
               kb: Optional[KnowledgeBase]) -> Dict[str, str]:
    """The GPU's capability (the machine's, or the text's); without a machine, the GPU the text
    names in prose and its sm_XY for a cause that speaks of the GPU where its trigger read no name
    (a runtime error, not torch's capability warning)."""
    gpu_cc = _machine_capability(machine) or capability(read.environment, facts, kb)
    out = {"gpu_capability": gpu_cc} if gpu_cc else {}
    named = named_capabilities(read.environment, kb) if machine is None else []
    if named and "{gpu_name" in sig.cause and "gpu_name" not in facts and "arch" not in facts:
        out.update(gpu_name=named[0][0], arch=sm_arch(named[0][1]))
    return out


def explain_report(
    text: str,
    catalog: Catalog,
    machine: Optional[Machine] = None,
    plan_args: str = "",
    *,
    machine_probed: bool = True,
    kb: Optional[KnowledgeBase],
    extracted: Optional[Extracted] = None,
) -> Report:
    """The facts read from ``text`` and the explanation of every known signature in it that the
    facts do not contradict; with a machine, its facts too.

    ``plan_args`` follow ``torchsmith plan`` in the suggested fix (e.g. ``--host node7.json``; when
    empty, the machine the text names); ``machine_probed`` is False for a machine made of stated
    facts only (see ``host_facts``). ``kb`` gives the facts some signatures compute from the data
    and the rules' conclusions (None: explain without them).
    """
    from torchsmith.explain.context import adapt_fix_for_jetson, jetson_context
    from torchsmith.explain.host import host_facts

    written = as_written(text, cut_words(catalog, kb))  # the marks of a paste undone (see .pasted)
    text = without_line_prefixes(plain_quotes(written.text))
    read = extracted if extracted is not None else extract(text, kb)
    report = Report(read, [])
    found_list = find_signatures(text, catalog)
    triggered = _triggered(text, catalog, read, {f.signature.id for f in found_list}, kb)
    found_list = sorted(found_list + triggered, key=lambda f: (f.signature.priority, f.offset))
    if not found_list:
        return report
    explained = {other for f in found_list for other in f.signature.explains
                 if not blocked(f.signature.contradicted_by, f.signature.confirmed_by, read, f.facts, kb)}
    found_list = [found for found in found_list if found.signature.id not in explained]
    jetson = jetson_context(text, machine, kb)
    if not plan_args and machine is None:  # no machine at hand: the one the text names
        plan_args = plan_flags(read.environment, kb)
    for found in found_list:
        sig = found.signature
        against = blocked(sig.contradicted_by, sig.confirmed_by, read, found.facts, kb)
        if against:
            report.contradicted.append((sig.id, against))
            continue
        derived = _derived_facts(sig, found.facts, read, machine, kb)
        facts = {**found.facts, **derived}
        report.explanations.append(Explanation(
            signature=sig,
            line=written.line(found.line),
            excerpt=found.excerpt,
            facts=dict(found.facts),
            kb_facts=derived,
            cause=render_text(sig.cause, facts),
            fix=adapt_fix_for_jetson(_fix_steps(sig, facts, plan_args), jetson),
            host_facts=host_facts(sig.host_facts, facts, machine, looked=machine_probed),
            candidates=[Candidate(c.id, render_text(c.cause, facts), render_text(c.check, facts))
                        for c in sig.candidates],
            reasoning=conclusions(read, found.facts, kb),
        ))
    report.explanations, noise = without_noise(report.explanations, read)  # (see .noise)
    report.contradicted += noise
    return report


def explain(
    text: str,
    catalog: Catalog,
    machine: Optional[Machine] = None,
    plan_args: str = "",
    *,
    machine_probed: bool = True,
    kb: Optional[KnowledgeBase],
) -> List[Explanation]:
    """The explanations of every known signature in ``text`` (see :func:`explain_report`)."""
    return explain_report(text, catalog, machine, plan_args, machine_probed=machine_probed,
                          kb=kb).explanations
