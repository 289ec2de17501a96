"""A family's candidates: the causes a message is printed for, each with an id and the check that
tells it apart. Pure.

A signature that lists candidates (a family) asserts none of them. Each candidate's ``id`` names
its cause: the signature that states that cause when a text proves it, a cause of the field
corpus's list, or an id of its own. A candidate id may be another family (a narrower failure whose
own candidates are causes of this one too), never in a circle. The ids make the taxonomy
explicit: a user's tooling (``explain --json``) and the score (``tools/explain_score.py``'s
*narrowed*) read which causes a family held without parsing prose.

Problems are raised as ``ValueError`` with a one-line message; the catalogue names the file.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, List, Mapping, Sequence, Set, Tuple

from torchsmith.records import dataclass

__all__ = ["Candidate", "check_family_graph", "family_causes", "parse_candidates"]

KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Candidate:
    id: str  # the cause's id (kebab-case)
    cause: str
    check: str  # what tells this cause apart from the family's others


def parse_candidates(value: object, family_id: str) -> Tuple[Candidate, ...]:
    """The candidates of the family ``family_id`` as read from its JSON ``candidates`` list."""
    if not isinstance(value, list) or any(
            not isinstance(c, Mapping) or set(c) != {"id", "cause", "check"}
            or not all(isinstance(v, str) and v.strip() for v in c.values()) for c in value):
        raise ValueError("'candidates' must be a list of {\"id\": kebab-case id, \"cause\": text, "
                         "\"check\": text}")
    if len(value) == 1:
        raise ValueError("'candidates' needs at least two causes (one is a cause, not candidates)")
    candidates = tuple(Candidate(id=c["id"], cause=c["cause"], check=c["check"]) for c in value)
    seen: Set[str] = set()
    for candidate in candidates:
        if not KEBAB.match(candidate.id):
            raise ValueError(f"candidate id {candidate.id!r} is not kebab-case")
        if candidate.id == family_id:
            raise ValueError(f"candidate id {candidate.id!r} is the family's own id (a family asserts "
                             "none of its causes: name the candidate's own cause)")
        if candidate.id in seen:
            raise ValueError(f"candidate id {candidate.id!r} appears twice")
        seen.add(candidate.id)
    return candidates


def check_family_graph(families: Mapping[str, Sequence[str]]) -> None:
    """No family is, through the families its candidates name, a candidate of itself.

    ``families`` maps each family's id to its candidates' ids."""
    done: Set[str] = set()
    for start in families:
        path: List[str] = []
        _visit(start, families, path, done)


def _visit(family: str, families: Mapping[str, Sequence[str]], path: List[str], done: Set[str]) -> None:
    if family in path:
        circle = [*path[path.index(family):], family]
        raise ValueError(f"candidate ids form a circle: {' -> '.join(circle)}")
    if family in done or family not in families:
        return
    path.append(family)
    for candidate in families[family]:
        _visit(candidate, families, path, done)
    path.pop()
    done.add(family)


def family_causes(families: Mapping[str, Sequence[str]]) -> Dict[str, FrozenSet[str]]:
    """Each family's candidate ids, with those of the families among them (their causes are this
    family's causes too). The graph must have passed ``check_family_graph``."""
    closed: Dict[str, FrozenSet[str]] = {}

    def causes(family: str) -> FrozenSet[str]:
        if family not in closed:
            found = set(families[family])
            for candidate in families[family]:
                if candidate in families:
                    found |= causes(candidate)
            closed[family] = frozenset(found)
        return closed[family]

    for family in families:
        causes(family)
    return closed
