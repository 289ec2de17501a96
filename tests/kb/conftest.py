"""Knowledge-base tests: never read or write the user's cache; copies of the data to corrupt."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from torchsmith.kb import DATA_DIR, clear_cache


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    cache = tmp_path / "cache"
    monkeypatch.setenv("TORCHSMITH_CACHE_DIR", str(cache))
    monkeypatch.delenv("TORCHSMITH_KB", raising=False)
    clear_cache()
    yield cache
    clear_cache()


@pytest.fixture
def data_copy(tmp_path: Path) -> Path:
    """A writable copy of the packaged data directory."""
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, str(target))
    return target


def edit_json(directory: Path, name: str, change: Callable[[Any], None]) -> None:
    path = directory / name
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
