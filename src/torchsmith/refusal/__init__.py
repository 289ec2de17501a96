"""One reader of resolver refusals -- pip's, uv's, conda's/mamba's and pixi's (rattler's) -- into one
structure: who requires what (the package that pins torch, at which version or range, under which
markers), what the environment has, what no index or channel offers, and what was offered instead.

``explain`` (explain/extract/resolver.py; indexes.py for the torch pins no index had) and ``plan
--confirm``/``install`` (plan/conflict_words.py) both render from :func:`read`, so a refusal is read
the same way wherever it is shown. Each installer's forms are read from the words its own source
writes (see pip.py, uv.py, conda.py). Pure: no I/O."""

from __future__ import annotations

import re
from typing import Callable, List, Tuple

from torchsmith.refusal import conda, pip, uv
from torchsmith.refusal.model import Have, Missing, Offer, Refusal, Requirement

__all__ = ["Have", "Missing", "Offer", "Refusal", "Requirement", "read"]

_Read = Callable[[str], Tuple[List[Requirement], List[Have], List[Missing], List[Offer]]]
_READERS: Tuple[_Read, ...] = (pip.read, uv.read, conda.read)
_MAX = 60  # facts of one kind kept from one text
# A terminal's colours (uv and pip colour their words under FORCE_COLOR: "`\x1b[36mtorch\x1b[39m`").
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def read(text: str) -> Refusal:
    """Every refusal fact the text states, each once, in the order the installers said them."""
    requirements: List[Requirement] = []
    installed: List[Have] = []
    missing: List[Missing] = []
    offers: List[Offer] = []
    text = _ANSI.sub("", text)
    for reader in _READERS:
        found = reader(text)
        requirements.extend(found[0])
        installed.extend(found[1])
        missing.extend(found[2])
        offers.extend(found[3])
    return Refusal(tuple(dict.fromkeys(requirements))[:_MAX], tuple(dict.fromkeys(installed))[:_MAX],
                   tuple(dict.fromkeys(m for m in missing if m.said))[:_MAX],
                   tuple(dict.fromkeys(offers))[:_MAX])
