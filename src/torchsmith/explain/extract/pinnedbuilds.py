"""A build torch pins at a local version (pytorch-triton==3.2.0+git0d4682f0) that uv found no version
of, while it read torch itself from a PyTorch index. Pure.

uv's report (crates/uv-resolver/src/pubgrub/report.rs) says "Because there is no version of
DEP==V+LOCAL and torch<SPEC> depends on DEP==V+LOCAL, ...". Two facts decide it:

- torch's versions carry a +label or are nightlies (.devYYYYMMDD): only PyTorch's indexes publish
  those (PyPI holds neither local versions nor torch nightlies), so uv read a PyTorch index for torch;
- the dependency's pinned version is a local one (+git...): PyPI holds none, and PyTorch publishes
  that build on the index beside the torch that pins it (pytorch/pytorch scripts/install_triton_wheel.sh
  installs pytorch-triton==X+HASH from download.pytorch.org/whl/nightly/).

uv (and pixi, which resolves PyPI packages with uv) reads an index pinned to a package (explicit =
true with [tool.uv.sources], pixi's per-package index) only for that package, so the index that
served torch was not read for the build torch pins.
"""

from __future__ import annotations

import re
from typing import List

from torchsmith.explain.extract.model import InstallerError

__all__ = ["pinned_build_not_read"]

_MARKERS = r"(?:\{[^}]{0,300}\})?"  # uv's environment markers on a requirement
_NO_VERSION = re.compile(r"there is no version of (?P<dep>[A-Za-z0-9][\w.-]{0,80})" + _MARKERS
                         + r" ?==(?P<version>\d[\w.!]*\+[\w.]+)")
_TORCH_PINS = re.compile(r"\btorch" + _MARKERS + r"(?P<spec>[<>=!~]=?[^\s]{1,200}?) depends on "
                         r"(?P<dep>[A-Za-z0-9][\w.-]{0,80})" + _MARKERS
                         + r" ?==(?P<version>\d[\w.!]*\+[\w.]+)")
_PYTORCH_ONLY = re.compile(r"\+[A-Za-z]|\.dev\d")
_SOURCES = ("https://github.com/astral-sh/uv/blob/main/crates/uv-resolver/src/pubgrub/report.rs",
            "https://docs.astral.sh/uv/concepts/indexes/#pinning-a-package-to-an-index",
            "https://github.com/pytorch/pytorch/blob/main/scripts/install_triton_wheel.sh")


def _unwrapped(text: str) -> str:
    """uv's report as one line: its wrapping joined (uv breaks lines after a hyphen too)."""
    return re.sub(r"\s+", " ", re.sub(r"-[ \t]*\r?\n[ \t]*", "-", text))


def pinned_build_not_read(text: str) -> List[InstallerError]:
    """uv found no version of the local build a PyTorch-index torch pins."""
    if "there is no version of" not in text or "depends on" not in text:
        return []
    flat = _unwrapped(text)
    for missing in _NO_VERSION.finditer(flat):
        dep, version = missing.group("dep"), missing.group("version")
        for pin in _TORCH_PINS.finditer(flat):
            if pin.group("dep") != dep or pin.group("version") != version:
                continue
            if not _PYTORCH_ONLY.search(pin.group("spec")):
                continue  # torch from PyPI: which index holds the pinned build is not shown
            meaning = (f"uv read torch{pin.group('spec')} from a PyTorch index (a +label or nightly "
                       f"build: PyPI holds neither), and that torch pins {dep}=={version}, a build "
                       f"PyTorch publishes beside it on the same index (a local version: PyPI holds none); "
                       f"uv found no version of it, so it did not read that index for {dep}: an index "
                       f"pinned to a package (explicit = true with [tool.uv.sources], pixi's per-package "
                       f"index) is read for that package only")
            return [InstallerError("uv", "index-not-given", f"{dep}=={version}", meaning, dep, _SOURCES)]
    return []
