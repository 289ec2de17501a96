"""Which file the dynamic loader took for each library, from glibc's own trace (LD_DEBUG=libs). Pure.

With ``LD_DEBUG=libs`` glibc's loader prints ``calling init: PATH`` for every object it initialises
(elf/dl-init.c, ``_dl_debug_printf ("\\ncalling init: %s\\n\\n", ...)``). A library a process
loads by name is looked up in the same order for every name (DT_RPATH, LD_LIBRARY_PATH,
DT_RUNPATH, the cache, the default directories: elf/dl-load.c), so where the sub-libraries of one
NVIDIA package come from a pip wheel's directory (site-packages/nvidia/<package>/lib) and one of
them from a system directory, that wheel's directory does not hold that one file.
"""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

from torchsmith.explain.extract.model import InstallerError

__all__ = ["wheel_library_from_system"]

_INIT = re.compile(r"calling init: (?P<path>/[^\s]{1,400}?/(?P<name>lib[A-Za-z]+)[\w.+-]*\.so(?:\.\d+)*)\s*$",
                   re.MULTILINE)
# The family's own library (libcudnn.so.9): torch's libraries name it with an RPATH into the wheel
# (and torch preloads it by path), so the wheel's copy says nothing of where a name search looks
_MAIN_LIBRARY = re.compile(r"/(?P<name>lib[A-Za-z]+)\.so(?:\.\d+)*$")
_WHEEL_DIR = re.compile(r"[\\/](?:site|dist)-packages[\\/]nvidia[\\/](?P<package>[\w-]+)[\\/]lib[\\/]")
_SOURCES = ("https://sourceware.org/git/?p=glibc.git;a=blob;f=elf/dl-init.c",
            "https://sourceware.org/git/?p=glibc.git;a=blob;f=elf/dl-load.c")


def _major(path: str) -> str:
    """libcudnn_graph.so.9 -> 9 (the soname's major: one release of the family)."""
    version = re.search(r"\.so\.(\d+)", path)
    return version.group(1) if version else ""


def wheel_library_from_system(text: str) -> List[InstallerError]:
    """A library of an NVIDIA wheel's family that the loader took from outside the wheel, while the
    family's other sub-libraries (found by the same name search) came from the wheel's own directory."""
    if "calling init:" not in text or "nvidia" not in text:
        return []
    wheel: Dict[Tuple[str, str], Tuple[str, str]] = {}  # (family, major) -> (wheel package, a path)
    names = set()  # every file name taken from a wheel
    elsewhere: Dict[Tuple[str, str], str] = {}  # (family, major) -> the first path outside site-packages
    for init in _INIT.finditer(text):
        path = init.group("path")
        key = (init.group("name"), _major(path))
        inside = _WHEEL_DIR.search(path)
        if inside is not None:
            names.add(path.rsplit("/", 1)[-1])
            if not _MAIN_LIBRARY.search(path):  # a sub-library, which the family loads by name
                wheel.setdefault(key, (inside.group("package"), path))
        elif "-packages" not in path:
            elsewhere.setdefault(key, path)
    for (family, major), path in elsewhere.items():
        if (family, major) not in wheel or path.rsplit("/", 1)[-1] in names:
            continue  # another release of the family (another major), or a second copy of one file
        package, sibling = wheel[(family, major)]
        file = path.rsplit("/", 1)[-1]
        meaning = (f"the loader took {family}'s other libraries from the nvidia-{package} wheel "
                   f"({sibling.rsplit('/', 1)[0]}) but {file} from {path.rsplit('/', 1)[0]} (LD_DEBUG's "
                   f"'calling init' lines): the loader searches the same directories in the same order for "
                   f"each, so the wheel's directory does not hold {file}, and the system's copy fills the "
                   f"gap")
        return [InstallerError("loader", "wheel-library-from-system", f"calling init: {path}", meaning,
                               f"nvidia-{package}", _SOURCES)]
    return []
