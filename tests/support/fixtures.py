"""Pytest fixtures over the local package index; registered for the whole suite in tests/conftest.py.

- ``torch_stack`` (session): the standard wheels of :mod:`tests.support.torchstack`, built once.
- ``package_index`` (session): those wheels served on 127.0.0.1; ``package_index.index_url("pypi")``,
  ``package_index.index_url("pytorch/cu126")``, ``package_index.url + "/pytorch"`` (a PyTorch
  index base, for ``--torch-index``), ``package_index.fetched("torchtriton-9.9.9")``.
- ``installer_env`` (function): an environment for running real pip and uv against that index
  and nothing else: no PIP_*/UV_* from this machine, PIP_CONFIG_FILE=/dev/null, UV_NO_CONFIG=1,
  and caches in a session temp directory (warm after the first test that fills them).
- ``uv_bin``: the uv executable from the ``uv`` test dependency.

Example::

    @pytest.mark.slow
    def test_something(package_index, installer_env, tmp_path):
        subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "v")], check=True)
        subprocess.run([str(tmp_path / "v/bin/python"), "-m", "pip", "install",
                        "--index-url", package_index.index_url("pypi"), "tqdm"],
                       env=installer_env, check=True)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterator

import pytest
from tests.support.pkgindex import IndexServer, serve_index
from tests.support.torchstack import TorchStack, build_standard_indexes

__all__ = ["installer_env", "isolated_environ", "package_index", "torch_stack", "uv_bin"]

_DROPPED_PREFIXES = ("PIP_", "UV_", "VIRTUAL_ENV", "CONDA_", "PYTHONPATH", "PYTHONHOME")


def isolated_environ(cache_dir: Path, base: Dict[str, str]) -> Dict[str, str]:
    """``base`` without this machine's installer settings, and with caches under ``cache_dir``."""
    env = {k: v for k, v in base.items() if not k.startswith(_DROPPED_PREFIXES)}
    env.update({
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
        "PIP_CACHE_DIR": str(cache_dir / "pip"),
        "UV_NO_CONFIG": "1",
        "UV_CACHE_DIR": str(cache_dir / "uv"),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_PROGRESS": "1",
    })
    return env


@pytest.fixture(scope="session")
def torch_stack(tmp_path_factory: pytest.TempPathFactory) -> TorchStack:
    return build_standard_indexes(tmp_path_factory.mktemp("wheels"))


@pytest.fixture(scope="session")
def package_index(torch_stack: TorchStack) -> Iterator[IndexServer]:
    with serve_index(torch_stack.root) as server:
        yield server


@pytest.fixture(scope="session")
def _installer_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("installer-cache")


@pytest.fixture
def installer_env(_installer_cache: Path) -> Dict[str, str]:
    return isolated_environ(_installer_cache, dict(os.environ))


@pytest.fixture(scope="session")
def uv_bin() -> str:
    try:
        from uv import find_uv_bin
    except ImportError:
        pytest.skip("the uv package (a test dependency) is not installed")
    return str(find_uv_bin())
