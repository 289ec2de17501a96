"""Checks that read what a loader failure shows about the file it could not load: a package's
compiled module shown absent, and a torch DLL whose imports leave one cause. Pure: no I/O; the
DLL imports are data (formats.json ``torch_windows_dll_imports``, read from torch's wheels)."""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from torchsmith.explain.extract.model import Extracted
from torchsmith.kb import KnowledgeBase

__all__ = ["compiled_module_absence_shown", "dll_needs_only_vc_runtime"]

_IN_TORCH = re.compile(r"(?:^|[\\/])torch[\\/]")


def compiled_module_absence_shown(extracted: Extracted, facts: Mapping[str, Any],
                                  kb: Optional[KnowledgeBase]) -> Optional[str]:
    """The compiled module is shown absent from a package that is not torch's: Python's "cannot import
    name '_C' from 'pkg'" raised, not quoted in a warning (a package may do without it); importlib's
    _handle_fromlist ignores only the submodule's own ModuleNotFoundError, so a file that exists but
    fails to load raises its loader's error instead. Or the name is undefined where a package's own
    file uses it (its try/except import failed), in a file or frame outside torch (torch's own source
    tree says so from torch/__init__.py); or the package's own fixed message (text-generation-inference's
    for its kernel packages, Horovod's, lmdeploy's for turbomind)."""
    if facts.get("said"):
        return "text-generation-inference's own message names the kernel package it could not import"
    if facts.get("not_found"):
        return _built_from_source_only(str(facts.get("module")), kb)
    own = facts.get("own_check")
    if isinstance(own, str):  # Horovod's check that the file exists; lmdeploy's swallowed ImportError
        return None if _load_error_shown(extracted) else f"the package's own check says so: {own}"
    module, package = facts.get("module"), facts.get("package")
    if isinstance(package, str):
        # raised, not a warning's quote of an import the package tolerates (vllm._C on XPU builds)
        raised = any(e.type.endswith("ImportError") and f"import name '{module}'" in e.message
                     for e in extracted.exceptions)
        found = f"Python found no module {module} in {package}: its compiled file is not there"
        return found if raised else None
    if _load_error_shown(extracted):
        return None  # the swallowed import's own error is shown: the file is there, and fails to load
    place = facts.get("file")
    if isinstance(place, str) and place != "__init__.py":
        return f"{place} uses {module}, which its own failed import left undefined"
    frame = extracted.frames[-1] if extracted.frames else None
    if frame is not None and not _IN_TORCH.search(frame.path):
        return f"{frame.path} uses {module}, which its own failed import left undefined"
    return None


def _built_from_source_only(module: str, kb: Optional[KnowledgeBase]) -> Optional[str]:
    """Python found no module ``module`` at all, and it is a compiled extension that only its project's
    own build makes (error_vocab.json ``source_built_modules``: its setup.py, and no project of that
    name on the package index): no wheel installed it, so it was never built for this Python."""
    rows = kb.document("error_vocab").get("source_built_modules", ()) if kb is not None else ()
    row = next((r for r in rows if r.get("module") == module), None)
    if row is None:
        return None
    return f"{module} is built only from the sources of {row['project']}: no package index publishes it"


def _load_error_shown(extracted: Extracted) -> bool:
    """The loader's own failure is shown: a symbol a loaded library lacks, or a library it could not
    open (a package's bare ``except:`` around its import swallows these as well as a missing file)."""
    return (any(symbol.library for symbol in extracted.symbols)
            or any(lib.problem in (None, "incompatible") for lib in extracted.libraries)
            or any(e.message.startswith("DLL load failed") for e in extracted.exceptions))


_TORCH_LIB = re.compile(r"(?:^|[\\/])torch[\\/]lib[\\/][^\\/]+$", re.IGNORECASE)
_GPU_BUILD = re.compile(r"\+(?:cu|rocm|xpu)\d", re.IGNORECASE)


def dll_needs_only_vc_runtime(extracted: Extracted, facts: Mapping[str, Any],
                              kb: Optional[KnowledgeBase]) -> Optional[str]:
    """Windows could not load one of torch's DLLs with error 126 (a DLL it needs was not found: torch's
    loader loads only the DLLs it found in torch/lib), and in every torch wheel read that DLL imports
    nothing beyond Windows' own DLLs, the Universal CRT and the Visual C++ runtime: so the one not
    found is the Visual C++ runtime's (or the Universal CRT, which its redistributable installs before
    Windows 10). The imports were read from CPU wheels: a text showing a GPU build is not judged.
    Or torch's own message that it could not load the Visual C++ runtime DLLs, whatever the build."""
    if facts.get("vc_runtime_check"):  # torch/__init__.py printed it when ctypes could not load them
        return ("torch's own check could not load the Visual C++ runtime's DLLs (vcruntime140.dll, "
                "msvcp140.dll, vcruntime140_1.dll) before loading its own")
    path = str(facts.get("dll") or "")
    name = re.split(r"[\\/]", path)[-1].lower()
    table = kb.document("formats").get("torch_windows_dll_imports") if kb is not None else None
    rows = table.get("dlls") if isinstance(table, dict) else None
    row = next((r for n, r in (rows or {}).items() if n.lower() == name), None)
    if not isinstance(row, dict) or row.get("other") or not row.get("vc_runtime"):
        return None
    if not (_TORCH_LIB.search(path) or name.startswith(("c10", "torch"))):
        return None  # another package's DLL of the same name (uv.dll, libiomp5md.dll)
    env = extracted.environment
    if env.torch_cuda or (env.torch and _GPU_BUILD.search(env.torch)):
        return None
    releases = [str(r) for r in row.get("releases") or ()]
    read = f"torch {releases[0]} to {releases[-1]}" if releases else "the torch wheels read"
    return (f"{name} imports nothing but Windows' own DLLs, the Universal CRT and the Visual C++ runtime "
            f"({', '.join(str(d) for d in row['vc_runtime'])}) in every wheel read ({read})")
