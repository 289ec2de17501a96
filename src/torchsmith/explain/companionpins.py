"""A companion package shown installed at a release whose published torch pin excludes the torch
shown installed, where the failure is that companion's own. Pure: the pins are data (companions.json
``torch_requirements``, each read from the release's Requires-Dist)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from torchsmith.explain.extract.model import Extracted, PyException

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["companion_other_torch"]

# torch's own companions, released in step with torch (each release for one torch): a third-party
# extension pinned to torch (flash-attn, xformers) is an extension built for another torch instead
# (extension-abi-mismatch), a cause this trigger does not state
_COMPANIONS = ("torchvision", "torchaudio", "torchtext", "torchcodec")


def _satisfies(version: str, specifier: str) -> Optional[bool]:
    """Whether ``version`` meets ``specifier`` (a local label such as +cu128 matches its public
    version, as pip matches it); None when either cannot be parsed."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None


# What a companion built or pinned for another torch raises: its import or its operators fail
# (ImportError, AttributeError on torch's API, "operator torchvision::nms does not exist", "Could not
# run 'torchvision::nms'"); not an error of the work it was given (a TypeError, CUDA out of memory).
_MISMATCH_TYPES = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "OSError",
                             "NotImplementedError"})
_MISMATCH_RUNTIME = re.compile(r"operator \S+ does not exist|Could not run '|No such operator|"
                               r"undefined symbol|not registered|schema|Unknown builtin op", re.IGNORECASE)


def _mismatch_shaped(exception: PyException) -> bool:
    kind = exception.type.rsplit(".", 1)[-1]
    if kind == "RuntimeError":
        return bool(_MISMATCH_RUNTIME.search(exception.message))
    return kind in _MISMATCH_TYPES


def _fails_in(name: str, extracted: Extracted) -> bool:
    """The failure is the companion's compiled part, the part built against one torch, or of the shape
    another torch gives it: its operators ("operator torchvision::nms does not exist") or a library of
    it that failed to load or lacks a symbol; or the last exception, raised in its own frames, is an
    import's or an operator's failure. An error that only names it (another package asking for a module
    it moved: "No module named 'torchvision.transforms.functional_tensor'") is no proof."""
    stem = name.replace("-", "_")
    compiled = re.compile(rf"\b{stem}::|[\\/]{stem}[\\/][^\s'\"]*\.(?:so|pyd|dll|dylib)\b|"
                          rf"\blib{stem}\w*\.(?:so|pyd|dll)")
    if any(compiled.search(e.message) for e in extracted.exceptions):
        return True
    last = extracted.exceptions[-1] if extracted.exceptions else None
    if last is not None and _mismatch_shaped(last) and any(f.package == stem for f in extracted.frames):
        return True
    return any(stem in (lib.needed_by or "") or stem in lib.soname for lib in extracted.libraries) or any(
        stem in (s.library or "") for s in extracted.symbols)


def companion_other_torch(extracted: Extracted,
                          kb: Optional[KnowledgeBase]) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """``env:companion-other-torch``: the text shows torch installed at T and a companion at V whose
    published Requires-Dist pins torch to releases that exclude T, and the failure is the companion's."""
    torch = extracted.versions.get("torch") or extracted.environment.torch
    if kb is None or not torch:
        return None
    for name, shown in extracted.versions.items():
        if name not in _COMPANIONS:
            continue
        public = shown.split("+")[0]
        pin = next((r.torch for r in kb.torch_requirements(name) if r.version == public), None)
        if pin is None or not _fails_in(name, extracted) or _satisfies(torch, pin) is not False:
            continue
        return [f"{name} {shown}", shown], {"companion": name, "companion_version": shown,
                                            "required": f"torch{pin}", "installed": torch}
    return None
