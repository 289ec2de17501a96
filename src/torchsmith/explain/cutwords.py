"""The words a terminal's hard wrap may have cut where the next line goes on with a capital
(``CUDA_ERROR_NO_BINA`` / ``RY_FOR_GPU``, ``cudaErrorNoKernelImage`` / ``ForDevice``): the names of
the vendors' error enums (``error_vocab.json``) and the words the signatures' patterns spell. A line
that starts with a capital is as often one its program began, so a cut is joined only into a word
read from these sources (see :mod:`.pasted`), never blindly.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterator, Optional, Tuple

from torchsmith.explain.catalog import Catalog
from torchsmith.explain.pasted import Words

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["cut_words"]

# What a pattern's source holds besides the words it spells: escapes (\b, \d, \s), group names,
# back-references and the openings of groups and assertions
_NOT_SPELT = re.compile(r"\\[A-Za-z]|\(\?P<\w+>|\(\?P=\w+\)|\(\?<?[=!:]?|\(\?#[^)]*\)")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_NAME_KEYS = ("name", "driver_name", "python_name")

_CACHE: Dict[Tuple[int, int], Tuple[Catalog, Optional[KnowledgeBase], FrozenSet[str]]] = {}


def _cut_before_capital(word: str) -> bool:
    """A cut inside ``word`` can go on with a capital: it holds one after its first letter."""
    return any(letter.isupper() for letter in word[1:])


def _spelt(catalog: Catalog) -> Iterator[str]:
    for signature in catalog.signatures:
        for pattern in signature.patterns:
            yield from _WORD.findall(_NOT_SPELT.sub(" ", pattern.pattern))


def _enum_names(kb: Optional[KnowledgeBase]) -> Iterator[str]:
    from torchsmith.explain.extract import vocabulary

    for table, rows in vocabulary(kb).items():
        if table == "sonames":
            continue
        for row in rows:
            for key in _NAME_KEYS:
                value = row.get(key)
                if isinstance(value, str):
                    yield value


def _read(catalog: Catalog, kb: Optional[KnowledgeBase]) -> FrozenSet[str]:
    words = (*_spelt(catalog), *_enum_names(kb))
    return frozenset(word for word in words if _cut_before_capital(word))


def cut_words(catalog: Catalog, kb: Optional[KnowledgeBase]) -> Words:
    """The words of ``catalog`` and ``kb`` a cut may be joined into, read at the first call (a text
    that shows no such cut never reads them) and kept for the same catalog and knowledge base."""

    def words() -> FrozenSet[str]:
        key = (id(catalog), id(kb))
        cached = _CACHE.get(key)
        if cached is None or cached[0] is not catalog or cached[1] is not kb:
            if len(_CACHE) > 8:
                _CACHE.clear()
            cached = _CACHE[key] = (catalog, kb, _read(catalog, kb))
        return cached[2]

    return words
