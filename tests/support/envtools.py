"""Helpers for tests that build and compare environments.

- ``tree_digest(path)``: every entry under ``path`` -> (kind, mode, sha256 or link target): two
  equal digests mean byte-identical trees (what a rollback must give back).
- ``make_venv(path, python)``: a venv made with ``python -m venv`` (with pip).
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Tuple

__all__ = ["make_venv", "tree_digest"]


def tree_digest(root: Path) -> Dict[str, Tuple[str, int, str]]:
    out: Dict[str, Tuple[str, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            info = os.lstat(path)
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("link", mode, os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                out[rel] = ("dir", mode, "")
            else:
                with open(path, "rb") as handle:
                    out[rel] = ("file", mode, hashlib.sha256(handle.read()).hexdigest())
    return out


def make_venv(path: Path, python: Optional[str] = None, env: Optional[Dict[str, str]] = None) -> Path:
    """A venv with pip at ``path``; returns its interpreter."""
    subprocess.run([python or sys.executable, "-m", "venv", str(path)], check=True, env=env)
    return path / "bin" / "python"
