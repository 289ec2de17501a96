"""Fixtures the plan tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No pip/uv configuration of this machine's reaches the test: its own HOME and XDG
    directories, and none of the variables that would add constraints or sources."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "no-system-config"))
    for name in ("PIP_CONSTRAINT", "UV_CONSTRAINT", "PIP_CONFIG_FILE", "PIP_FIND_LINKS"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path
