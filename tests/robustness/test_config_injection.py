"""Dependency confusion through the user's installer configuration, with real pip and real uv.

Each case plants a stranger's index by routes pip's and uv's documentation name
(https://pip.pypa.io/en/stable/topics/configuration/: config files at every level,
``PIP_CONFIG_FILE``, every option as ``PIP_<NAME>``, ``[install] requirement``;
https://docs.astral.sh/uv/reference/environment/ and /concepts/configuration-files/:
``UV_CONFIG_FILE``, user and project ``uv.toml``, ``UV_INDEX``, ``UV_EXTRA_INDEX_URL``,
``UV_FIND_LINKS``, ``UV_CONSTRAINT``, ``UV_OVERRIDE``). The stranger's ``torchtriton`` 9.9.9
records every interpreter start in a marker file: the torch step must never take it, and its
code must never run. Routes that mask each other (a ``PIP_CONFIG_FILE`` stops the user file)
are in different cases.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict

import pytest
from tests.support.pkgindex import IndexServer, sha256_of
from tests.support.torchstack import EVIL_TRITON, TorchStack

pytestmark = pytest.mark.slow

Plant = Callable[[Path, Dict[str, str], str, str], None]  # (home, env, evil index URL, evil dir)


def _pip_env_and_file(home: Path, env: Dict[str, str], evil: str, evil_dir: str) -> None:
    reqs = home / "r.txt"
    reqs.write_text(f"--extra-index-url {evil}\ntorchtriton\n")
    conf = home / "pip.conf"
    conf.write_text(f"[global]\nextra-index-url = {evil}\n[install]\nrequirement = {reqs}\n")
    constraints = home / "c.txt"
    constraints.write_text(f"--extra-index-url {evil}\n")
    env.update({"PIP_CONFIG_FILE": str(conf), "PIP_REQUIREMENT": str(reqs),
                "PIP_CONSTRAINT": str(constraints)})


def _pip_user_file(home: Path, env: Dict[str, str], evil: str, evil_dir: str) -> None:
    (home / "xdg" / "pip").mkdir(parents=True)
    (home / "xdg" / "pip" / "pip.conf").write_text(f"[global]\nextra-index-url = {evil}\n")
    del env["PIP_CONFIG_FILE"]
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg"), "PIP_EXTRA_INDEX_URL": evil,
                "PIP_FIND_LINKS": evil_dir})


def _uv_config_file(home: Path, env: Dict[str, str], evil: str, evil_dir: str) -> None:
    toml = home / "uv.toml"
    toml.write_text(f'[[index]]\nurl = "{evil}"\n\n[pip]\nextra-index-url = ["{evil}"]\n')
    override = home / "o.txt"
    override.write_text(f"torchtriton=={EVIL_TRITON}\n")
    env.update({"UV_CONFIG_FILE": str(toml), "UV_INDEX": evil, "UV_OVERRIDE": str(override)})


def _uv_user_and_project_file(home: Path, env: Dict[str, str], evil: str, evil_dir: str) -> None:
    (home / "xdg" / "uv").mkdir(parents=True)
    (home / "xdg" / "uv" / "uv.toml").write_text(f'[[index]]\nurl = "{evil}"\n')
    (home / "uv.toml").write_text(f'[pip]\nextra-index-url = ["{evil}"]\n')  # the working directory's
    constraints = home / "c.txt"
    constraints.write_text(f"torchtriton=={EVIL_TRITON}\n")
    del env["UV_NO_CONFIG"]
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg"), "UV_EXTRA_INDEX_URL": evil,
                "UV_FIND_LINKS": evil_dir, "UV_CONSTRAINT": str(constraints)})


CASES = {
    "pip: PIP_CONFIG_FILE with extra-index-url and [install] requirement, PIP_REQUIREMENT, PIP_CONSTRAINT":
        ("pip", _pip_env_and_file),
    "pip: the user's pip.conf, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS": ("pip", _pip_user_file),
    "uv: UV_CONFIG_FILE with [[index]] and [pip] extra-index-url, UV_INDEX, UV_OVERRIDE":
        ("uv", _uv_config_file),
    "uv: the user's and the project's uv.toml, UV_EXTRA_INDEX_URL, UV_FIND_LINKS, UV_CONSTRAINT":
        ("uv", _uv_user_and_project_file),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_torch_step_takes_nothing_from_the_users_configuration(
        case: str, package_index: IndexServer, torch_stack: TorchStack, installer_env: Dict[str, str],
        tmp_path: Path) -> None:
    installer, plant = CASES[case]
    env = dict(installer_env)
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")
    env["TORCHSMITH_FAKE_CUDA_CC"] = "8.6"
    marker = tmp_path / "evil-ran"
    env["TORCHSMITH_TEST_EVIL_MARK"] = str(marker)
    home = tmp_path / "home"
    home.mkdir()
    plant(home, env, package_index.index_url("evil"), str(torch_stack.root / "evil"))
    fetched = len(package_index.fetched(f"torchtriton-{EVIL_TRITON}"))
    venv = tmp_path / "venv"
    proc = subprocess.run(
        [sys.executable, "-m", "torchsmith", "install", "--yes", "--json", "--torch-index",
         package_index.url + "/pytorch", "--venv", str(venv), "--installer", installer,
         "--gpu", "8.6", "--driver", "570.86.10", "torch==2.6.0"],
        env=env, cwd=str(home), capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists(), "the stranger's package ran"
    assert len(package_index.fetched(f"torchtriton-{EVIL_TRITON}")) == fetched
    lock = {p["name"]: p for p in json.loads((venv / "torchsmith.lock.json").read_text())["packages"]}
    assert lock["torchtriton"]["version"] == "3.3.1"
    assert lock["torchtriton"]["index"].endswith("/pytorch/cu126")
    # The file fetched, as the index lists it: pip's report says it; uv installed hash-checked pins
    # read from the index's listing, and the installed wheel's tags name the file.
    wheel = "torchtriton-3.3.1-py3-none-any.whl"
    assert lock["torchtriton"]["url"] == f"{package_index.url}/pytorch/cu126/{wheel}"
    digest = sha256_of(torch_stack.root / "pytorch" / "cu126" / wheel)
    assert lock["torchtriton"]["hashes"] == [f"sha256:{digest}"]
