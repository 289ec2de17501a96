"""The packaged JSON is exactly what tools/build_kb_data.py generates (no hand edits drift)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FACTS = "/work/shared/facts/facts.json"


@pytest.mark.skipif(not os.path.exists(FACTS), reason="the shared fact sheet is not on this machine")
def test_packaged_data_is_up_to_date() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "build_kb_data.py"), "--check",
                             "--facts", FACTS], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "up to date"
