"""Whether the text shows NumPy 2 installed, where a compiled module failed to import NumPy's C
API. Pure: no I/O.

NumPy's import_array() raises "numpy.core.multiarray failed to import" (and "numpy._core..." since
NumPy 2; numpy/_core/code_generators/generate_numpy_api.py), and torch raises "Numpy is not
available" (torch/csrc/utils/tensor_numpy.cpp) whenever that import failed: NumPy absent, NumPy
older than the module's build, or NumPy 2 under a module built for NumPy 1.x. NumPy 2's own
messages say which ("A module that was compiled using NumPy 1.x cannot be run in NumPy 2...",
"_ARRAY_API not found"); otherwise the NumPy version the text shows installed does: 2 or later under
those messages leaves only a module built for NumPy 1.x.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional

from torchsmith.explain.extract.model import Extracted
from torchsmith.kb import KnowledgeBase

__all__ = ["NUMPY_CONFIRMATIONS"]


def numpy_two_shown(extracted: Extracted, facts: Mapping[str, Any],
                    kb: Optional[KnowledgeBase]) -> Optional[str]:
    """NumPy 2's own wording matched, or the text shows NumPy 2 or later installed."""
    if facts.get("numpy") or facts.get("numpy_own"):
        return "NumPy 2's own message says so"
    shown = extracted.versions.get("numpy")
    if shown is None:
        return None
    major = shown.split(".")[0]
    return f"the text shows NumPy {shown} installed" if major.isdigit() and int(major) >= 2 else None


NUMPY_CONFIRMATIONS: Dict[str, Callable[[Extracted, Mapping[str, Any], Optional[KnowledgeBase]],
                                        Optional[str]]] = {"numpy_two_shown": numpy_two_shown}
