"""Signatures that fire on an extracted fact, not on a line of text. Pure: no I/O.

A signature's ``extracted`` list names facts of :mod:`.extract` that state its failure however the
text words it: ``gpu:cudaErrorNoKernelImageForDevice`` (an error of the vendor's enum, by name,
code or message), ``gpu:hip:arch`` (any HIP error of that kind), ``library:cudnn`` (a missing
library of that kind), ``symbol:mkl`` (an undefined symbol of that owner), ``compiler:nvcc``.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from torchsmith.explain.extract.model import Extracted

__all__ = ["TRIGGER", "failing_package", "fired"]

TRIGGER = re.compile(r"^(?:gpu|library|symbol|compiler|env):[\w.-]+(?::[\w-]+)?$")


def _gpu(arguments: List[str], extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    for error in extracted.gpu_errors:
        if len(arguments) == 2:
            api, kind = arguments
            if not error.api.startswith(api) or error.kind != kind:
                continue
        elif arguments[0] != error.name:
            continue
        needles = [n for n in (error.name, error.message) if n]
        return needles, {"error": error.name or error.message or ""}
    return None


# Packages whose own loader fails for its own reasons (their signatures say so).
_NOT_EXTENSIONS = frozenset({"torch", "nvidia", "tensorflow", "jax", "jaxlib", "importlib", "ctypes"})


_TORCH_LIBRARY = re.compile(r"^(?:lib)?(?:torch|c10|caffe2|shm)(?:_\w+)?\.(?:so|dll|dylib)")


def failing_package(extracted: Extracted) -> Optional[str]:
    """Whose load failed: the library that asked for a missing one ("libonnxruntime_providers_cuda.so"),
    else the package of the traceback's innermost frame in site-packages."""
    asked = [lib.needed_by for lib in extracted.libraries if lib.needed_by]
    if asked:
        return "torch" if _TORCH_LIBRARY.match(asked[0]) else asked[0]
    packages = [f.package for f in extracted.frames if f.package]
    return packages[-1] if packages else None


def _other_cuda(major: Optional[str], extracted: Extracted) -> Optional[str]:
    """A CUDA the text names (the toolkit, torch's build) of another major than ``major``."""
    env = extracted.environment
    for cuda in (env.cuda, env.torch_cuda):
        if major and cuda and cuda.split(".")[0] != major.split(".")[0]:
            return cuda
    return None


def _library(arguments: List[str], extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """``library:KIND`` a missing library of that kind; ``:extension`` asked for by a compiled
    extension, ``:torch`` by torch; ``:mixed`` of another CUDA major than the one the text names;
    ``:incompatible`` found, but of another release than the one asked for."""
    kind, qualifier = arguments[0], (arguments[1:] or [""])[0]
    package = failing_package(extracted)
    extension = package is not None and package not in _NOT_EXTENSIONS
    if qualifier == "extension" and not extension:
        return None  # "extension": loaded by a compiled extension, not by torch
    if qualifier == "torch" and (extension or not extracted.mentions_torch):
        return None  # a cause about torch's own libraries: torch must be in the text
    wanted = "incompatible" if qualifier == "incompatible" else None
    for library in extracted.libraries:
        if library.kind != kind or library.problem != wanted:
            continue
        if qualifier == "mixed":
            other = _other_cuda(library.major, extracted)
            if other is None:
                continue
            return [library.soname], {"lib": library.soname, "toolkit_cuda": other}
        return [library.soname], {"lib": library.soname}
    return None


def _symbol(owner: str, extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    for symbol in extracted.symbols:
        if symbol.owner_kind == owner:
            return [symbol.symbol], {"symbol": symbol.symbol}
    return None


def _compiler(tool: str, extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    for message in extracted.compiler:
        if message.tool == tool:
            return [message.text], {}
    return None


# torch's compiled core missing, as Python says it ("No module named 'torch._C'", "name '_C' is
# not defined" from torch/__init__.py before 0.4, "cannot import name '_C'")
_NO_TORCH_C = re.compile(r"No module named '?torch\._C'?|name '_C' is not defined|cannot import name '_C'")
# An installed package lives under site-/dist-packages, an egg or a frozen app's bundle.
_INSTALLED = re.compile(r"(?:site|dist)-packages|\.egg\b|[\\/]_MEI\w+[\\/]|\.zip[\\/]", re.IGNORECASE)


def _source_tree(extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """torch imported from a directory that is not an installation (its torch/__init__.py is in
    no site-packages) and its compiled core not there: a source checkout shadows the install."""
    if not any(_NO_TORCH_C.search(e.message) for e in extracted.exceptions):
        return None
    for frame in extracted.frames:
        path = frame.path.replace("\\", "/")
        if path.endswith("torch/__init__.py") and not _INSTALLED.search(path):
            return [frame.path], {"path": frame.path}
    return None


def _env(name: str, extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """``env:cpu-build``: the text shows a CPU-only torch where CUDA was expected (not on macOS,
    whose builds are CPU/MPS by design). ``env:source-tree``: see :func:`_source_tree`."""
    env = extracted.environment
    if name == "cpu-build" and env.torch_cpu_only and env.platform != "macos":
        return [env.torch or "cpu"], {}
    if name == "source-tree":
        return _source_tree(extracted)
    return None


def fired(triggers: Sequence[str], extracted: Extracted) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """(texts to locate the evidence by, facts it carries) of the first trigger that holds."""
    for trigger in triggers:
        kind, _, rest = trigger.partition(":")
        arguments = rest.split(":")
        if kind == "gpu":
            hit = _gpu(arguments, extracted)
        elif kind == "library":
            hit = _library(arguments, extracted)
        elif kind == "env":
            hit = _env(arguments[0], extracted)
        elif kind == "symbol":
            hit = _symbol(arguments[0], extracted)
        else:
            hit = _compiler(arguments[0], extracted)
        if hit is not None:
            return hit
    return None
