"""Suite-wide pytest setup. Keep it tiny: shared fixtures live in tests/support/."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["tests.support.fixtures", "tests.support.gpubin"]


@pytest.fixture(autouse=True)
def _isolated_from_the_users_setup(tmp_path_factory: pytest.TempPathFactory,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads a refresh overlay or TORCHSMITH_* facts left on the machine running it."""
    cache: Path = tmp_path_factory.getbasetemp() / "torchsmith-cache"
    monkeypatch.setenv("TORCHSMITH_CACHE_DIR", str(cache))
    # Human output is fitted to the terminal (80 columns when piped): a test reads whole lines
    # unless it asks for a width (tests/test_terminal_output.py deletes this).
    monkeypatch.setenv("TORCHSMITH_COLUMNS", "1000")
    for name in ("TORCHSMITH_KB", "TORCHSMITH_TORCH_INDEX", "TORCHSMITH_PLATFORM", "TORCHSMITH_DRIVER",
                 "TORCHSMITH_DRIVER_CUDA", "TORCHSMITH_GPUS", "TORCHSMITH_NO_GPU",
                 "TORCHSMITH_PYTHON_VERSION", "TORCHSMITH_JETSON", "TORCHSMITH_ROCM_GFX",
                 "TORCHSMITH_ROCM_VERSION",
                 # An activated environment would become the one every in-process command describes.
                 "VIRTUAL_ENV", "CONDA_PREFIX"):
        monkeypatch.delenv(name, raising=False)
