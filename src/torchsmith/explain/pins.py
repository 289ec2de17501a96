"""What a resolver's refusal says of torch pins, as conclusions: "package A pins torch==X; the release
of A that pairs with torch Y is ...", "package A requires torch<2.0,>=1.8, which torch Y is outside".
Read from the refusal's structure (:mod:`torchsmith.refusal`, through ``Extracted.conflicts``).
Pure: no I/O."""

from __future__ import annotations

import re
from typing import List, Optional

from torchsmith.explain.extract.model import Extracted
from torchsmith.kb import KnowledgeBase
from torchsmith.versions import version_tuple

__all__ = ["pin_conclusions"]


def _torch_wanted(extracted: Extracted) -> Optional[str]:
    """The torch asked for (the request's ``torch==X``) or installed, as the resolver said."""
    for conflict in extracted.conflicts:
        if conflict.what == "torch" and conflict.who in ("user", "installed"):
            version = conflict.spec if conflict.who == "installed" else re.sub(r"^\s*===?\s*", "",
                                                                                 conflict.spec)
            if re.match(r"\d", version):
                return version
    return None


def _outside(spec: str, torch: str) -> bool:
    """``torch`` (``2.6.0+cu126``) is outside a resolver's range (``<2.0,>=1.8``); False when unread."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return Version(torch.split("+", maxsplit=1)[0]) not in SpecifierSet(spec, prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def pin_conclusions(extracted: Extracted, kb: KnowledgeBase) -> List[str]:
    """ "package A pins torch==X; the release of A that pairs with torch Y is ..." from the data;
    "package A requires torch<2.0,>=1.8, which torch Y is outside" for a range."""
    out: List[str] = []
    torch_wanted = _torch_wanted(extracted)
    for conflict in extracted.conflicts:
        pin = re.match(r"==\s*([\d.]+)", conflict.spec)
        version = re.match(r"[=\s]*v?(\d[\w.]*)", conflict.who_version)
        if conflict.what != "torch" or conflict.who_name in ("", "torch"):
            continue
        who, release = conflict.who_name, (torch_wanted or "").split("+")[0]
        named = f"{who} {version.group(1)}" if version else who  # uv: "all versions of gamma"
        if pin:
            pinned = pin.group(1).rstrip(".")
            text = f"{named} pins torch=={pinned}"
            if not torch_wanted or version_tuple(release) == version_tuple(pinned):
                out.extend([text] if text not in out else [])
                continue
        elif torch_wanted and conflict.spec[:1] in "<>!~" and _outside(conflict.spec, torch_wanted):
            text = f"{named} requires torch{conflict.spec}, which torch {torch_wanted} is outside"
        else:
            continue
        pairs = [r for r in kb.torch_requirements(who) if r.torch.lstrip("=") == release]
        if pairs:
            text += f"; the release of {who} that pairs with torch {torch_wanted} is {pairs[0].version}"
        if text not in out:
            out.append(text)
    return out
