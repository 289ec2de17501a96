"""A module torch's own code imports that torch does not require: an optional dependency.

Reads torch's published requirements (``torch_requires.json``: every release's Requires-Dist and
Provides-Extra, and the top-level names torch and each requirement install). Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from torchsmith.explain.extract.model import Extracted

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["optional_dependency"]

# CPython's wording (Python/import.c: "No module named %R"; Python 2 left the quotes out)
_NO_MODULE = re.compile(r"^No module named '?(?P<module>[A-Za-z_][\w.]*)'?")
# The statement torch's innermost frame shows: the import of the missing module itself.
_IMPORT = re.compile(r"(?:import|from)\s+(?P<module>[A-Za-z_][\w.]*)")
_EXTRA = re.compile(r"""extra\s*==\s*['"](?P<extra>[\w.-]+)['"]""")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _names(kb: KnowledgeBase, torch: Optional[str]) -> Tuple[Set[str], Dict[str, str], Set[str], str]:
    """(import names of what the torch release the text names requires, else of what any release
    requires; import name -> the extra that declares it; torch's own top-level names; whose
    requirements were read)."""
    document = kb.document("torch_requires")
    installs: Dict[str, List[str]] = document["import_names"]["names"]
    required: Set[str] = set()
    extras: Dict[str, str] = {}
    base = (torch or "").split("+")[0]
    named = [r for r in document["releases"] if r["version"] == base]
    for release in named or document["releases"]:
        for requirement in release["requires"]:
            name = _canonical(re.split(r"[;\[ ]", requirement)[0])
            provided = {_canonical(n) for n in installs.get(name, ())} | {name}
            extra = _EXTRA.search(requirement)
            if extra:
                extras.update((p, extra.group("extra")) for p in provided)
            else:
                required |= provided
    own = {_canonical(n) for n in installs.get("torch", ("torch",))}
    return required, extras, own, f"torch {base}" if named else "no torch release"


def optional_dependency(extracted: Extracted,
                        kb: Optional[KnowledgeBase]) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """"No module named 'M'" raised inside torch itself (the traceback's innermost frame is in the
    installed torch, and the line it shows imports M), where M is neither torch's own nor installed
    by any requirement of any torch release: torch imported an optional dependency that is not
    installed. A frame that loads a name it was given (torch.load's unpickler finding the classes a
    checkpoint names) imports the caller's modules, not torch's dependencies."""
    if kb is None or not extracted.frames or extracted.frames[-1].package != "torch":
        return None
    innermost = extracted.frames[-1]
    missing = next((m for e in reversed(extracted.exceptions)
                    if e.type.endswith(("ModuleNotFoundError", "ImportError"))
                    for m in [_NO_MODULE.match(e.message)] if m), None)
    if missing is None:
        return None
    module = missing.group("module")
    if "." in module:
        return None  # Python names the first part it cannot find: 'M.sub' missing means M is installed
    top = _canonical(module)
    imported = _IMPORT.match(innermost.code or "")
    if imported is None or _canonical(imported.group("module").split(".")[0]) != top:
        return None  # torch's code does not import it there: an unpickler's find_class, importlib
    required, extras, own, read = _names(kb, extracted.environment.torch)
    if top in own or top in required:
        return None  # torch's own module, or a dependency pip installs with torch: another cause
    extra = extras.get(top)
    declared = (f"torch declares it only as the optional extra torch[{extra}]" if extra
                else f"{read} lists it in its requirements" if read == "no torch release"
                else f"{read} does not list it in its requirements")
    return [missing.group(0)], {"module": module, "path": innermost.path, "declared": declared}
