"""GPU product names as people write them, matched against the product lists in the data.

The AMD table lists products compactly ("Radeon RX 7900 XTX/XT/GRE, Radeon PRO W7900/W7800",
"Instinct MI300X/MI300A/MI325X"). Each listing is expanded to full names, so "Radeon RX 7900 XT",
"7900 XTX", "MI300X" or "AMD Radeon PRO W7800" find their gfx target. A name that is the start
of several products ("Radeon RX 7", "Instinct") is a family; the vendor alone ("amd") is every
product. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterable, List, Sequence, Tuple

from torchsmith.records import dataclass

__all__ = ["ProductMatch", "expand_listing", "match_product", "product_tokens"]

# Words that name the vendor or the device class, not a product: "AMD Radeon RX 7900 XTX".
_VENDOR_WORDS = frozenset({"amd", "ati", "intel", "gpu", "gpus", "graphics", "card", "series",
                           "(model", "given)", "not", "model", "unknown", "corporation"})
_NOISE = re.compile(r"\((?:tm|r)\)|[®™]", re.IGNORECASE)


@dataclass(frozen=True)
class ProductMatch:
    """How a described name matched: ``exact`` (one product), ``family`` (the start of several
    products), ``vendor`` (no product named at all) or ``unknown``; ``keys`` are the rows' keys
    (gfx targets, xpu families) it covers, ``products`` the full names that matched."""

    kind: str
    keys: Tuple[str, ...] = ()
    products: Tuple[str, ...] = ()


def product_tokens(name: str) -> Tuple[str, ...]:
    """Lower-case words of a product name without the vendor's words and trademark signs."""
    words = _NOISE.sub(" ", name).lower().replace(",", " ").split()
    return tuple(w for w in words if w not in _VENDOR_WORDS)


def _has_digit(word: str) -> bool:
    return any(c.isdigit() for c in word)


def expand_listing(listing: str) -> List[str]:
    """``Radeon RX 7900 XTX/XT/GRE, Radeon PRO W7900/W7800 (Navi 31)`` -> every full name, and
    the words in parentheses as a name of their own ("Navi 31")."""
    names: List[str] = []
    aliases = re.findall(r"\(([^)]*)\)", listing)
    plain = re.sub(r"\([^)]*\)", " ", listing)
    for group in (g.strip() for g in plain.split(",")):
        if not group:
            continue
        first, *alternatives = [p.strip() for p in group.split("/")]
        names.append(first)
        words = first.split()
        for alternative in alternatives:
            names.append(_substitute(words, alternative))
    names.extend(a.strip() for a in aliases if a.strip())
    return names


def _substitute(words: Sequence[str], alternative: str) -> str:
    """The first name with its tail replaced by an alternative: a model number replaces the
    last word holding digits and what follows ("6800/6800 XT"), a suffix the last word ("XTX/XT")."""
    if not words:
        return alternative
    if _has_digit(alternative.split(maxsplit=1)[0]):
        cut = max((i for i, w in enumerate(words) if _has_digit(w)), default=len(words) - 1)
    else:
        cut = len(words) - 1
    return " ".join([*words[:cut], alternative])


def _runs(query: Tuple[str, ...], product: Tuple[str, ...]) -> Tuple[bool, bool]:
    """(exact, starts): the query is the product's tail (exact), or a run of its words whose
    last word may be cut short ("rx 79" starts "rx 7900 xtx")."""
    if not query or len(query) > len(product):
        return False, False
    exact = product[-len(query):] == query and any(_has_digit(w) for w in query)
    for start in range(len(product) - len(query) + 1):
        window = product[start:start + len(query)]
        if window[:-1] == query[:-1] and window[-1].startswith(query[-1]):
            return exact, True
    return exact, False


def match_product(name: str, rows: Iterable[Tuple[str, Sequence[str]]]) -> ProductMatch:
    """Match a described name against ``(key, product names)`` rows."""
    query = product_tokens(name)
    table = [(key, tuple(products)) for key, products in rows]
    if not query:
        return ProductMatch("vendor", tuple(dict.fromkeys(k for k, _ in table)))
    exact: List[Tuple[str, str]] = []
    family: List[Tuple[str, str]] = []
    for key, products in table:
        for product in products:
            is_exact, starts = _runs(query, product_tokens(product))
            if is_exact:
                exact.append((key, product))
            elif starts:
                family.append((key, product))
    found = exact or family
    if not found:
        return ProductMatch("unknown")
    keys = tuple(dict.fromkeys(k for k, _ in found))
    kind = "exact" if exact and len(keys) == 1 else "family"
    return ProductMatch(kind, keys, tuple(dict.fromkeys(p for _, p in found)))
