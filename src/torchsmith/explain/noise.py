"""Which harmless notes a report states. Pure.

A harmless note (a warning or hint a signature marks ``harmless``) is the answer only where the text
shows no failure: beside a failure a signature names, or an exception no signature explains, it is
left out; a harmless family (one that lists candidates) still speaks beside an unexplained exception.
"""

from __future__ import annotations

from typing import List, Optional, Protocol, Sequence, Tuple, TypeVar

from torchsmith.explain.catalog import Signature
from torchsmith.explain.extract.model import Extracted
from torchsmith.explain.families import Candidate

__all__ = ["unexplained_failure", "without_noise"]

# What an availability check catches and logs beside its own warning (try: import X, except
# ImportError: warn), so a harmless note may stand beside it
_PROBED = ("ImportError", "ModuleNotFoundError")


class _Stated(Protocol):
    signature: Signature
    candidates: List[Candidate]


Stated = TypeVar("Stated", bound=_Stated)


def unexplained_failure(extracted: Extracted) -> Optional[str]:
    """An exception the text raises (not a warning, not an import an availability check logged)."""
    for raised in reversed(extracted.exceptions):
        kind = raised.type.rsplit(".", 1)[-1]
        if kind.endswith(("Error", "Exception")) and kind not in _PROBED:
            return (f"the text shows a failure this note does not explain "
                    f"({raised.type}: {raised.message[:80]})")
    return None


def without_noise(stated: Sequence[Stated],
                  extracted: Extracted) -> Tuple[List[Stated], List[Tuple[str, str]]]:
    """The explanations to state, and the notes left out beside an unexplained failure (id, why)."""
    if any(not s.signature.harmless for s in stated):  # the failure, not the noise
        return [s for s in stated if not s.signature.harmless], []
    failure = unexplained_failure(extracted)
    if failure is None:
        return list(stated), []
    notes = [s for s in stated if not s.candidates]
    return [s for s in stated if s.candidates], [(s.signature.id, failure) for s in notes]
