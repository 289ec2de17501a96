"""select_target: which environment each command means, and where that came from."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict

import pytest

from torchsmith.errors import InstallError, UsageError
from torchsmith.host.live import LiveHost
from torchsmith.install.installers import INSTALLERS, choose_installer, installer_kind
from torchsmith.install.target_choice import select_target


def _venv(root: Path, name: str) -> Path:
    """A directory laid out like a venv (only its interpreter's name matters here)."""
    (root / name / "bin").mkdir(parents=True)
    (root / name / "bin" / "python").write_text("")
    return root / name


def _host(**environ: str) -> LiveHost:
    base: Dict[str, str] = {"PATH": os.environ.get("PATH", "")}
    return LiveHost({**base, **environ})


def test_flags_win_and_say_so(tmp_path: Path) -> None:
    host = _host(VIRTUAL_ENV=str(_venv(tmp_path, "active")))
    python = select_target(host, python="/opt/env/bin/python")
    assert (python.python, python.source) == ("/opt/env/bin/python", "--python")
    venv = select_target(host, venv="elsewhere", python="3.12", default="new-venv")
    assert (venv.prefix, venv.version, venv.source) == (os.path.abspath("elsewhere"), "3.12", "--venv")
    build = select_target(host, prefix="/opt/conda", python="/opt/conda/bin/python", default="build-prefix")
    assert (build.prefix, build.python, build.source) == ("/opt/conda", "/opt/conda/bin/python", "--prefix")


def test_two_flags_naming_the_target_are_refused() -> None:
    with pytest.raises(UsageError, match="--venv and --python PATH both name the target"):
        select_target(_host(), python="/usr/bin/python3", venv="v")


def test_a_version_is_no_interpreter_for_commands_that_inspect_one() -> None:
    with pytest.raises(UsageError, match=r"doctor inspects an interpreter, not a version: --python 3\.12"):
        select_target(_host(), python="3.12", interpreter_for="doctor")
    assert select_target(_host(), python="3.13t").version == "3.13t"


def test_active_env_is_the_default_unless_it_is_torchsmiths_own(tmp_path: Path) -> None:
    active = _venv(tmp_path, "active")
    chosen = select_target(_host(VIRTUAL_ENV=str(active)), own_prefix=sys.prefix)
    assert (chosen.python, chosen.source) == (str(active / "bin" / "python"), "VIRTUAL_ENV")
    own = select_target(_host(VIRTUAL_ENV=str(active)), own_prefix=str(active))
    assert (own.python, own.source) == (None, "this interpreter")
    conda = select_target(_host(CONDA_PREFIX=str(active)), own_prefix=sys.prefix)
    assert conda.source == "CONDA_PREFIX"


def test_build_prefix_prefers_conda_and_guard_falls_back_to_dot_venv(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    both = _host(CONDA_PREFIX="/opt/conda/envs/b", VIRTUAL_ENV="/v")
    assert select_target(both, default="build-prefix").prefix == "/opt/conda/envs/b"
    assert select_target(both, default="active-or-venv").prefix == "/v"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="no environment to guard"):
        select_target(_host(), default="active-or-venv")
    _venv(tmp_path, ".venv")
    chosen = select_target(_host(), default="active-or-venv")
    assert (chosen.prefix, chosen.source) == (str(tmp_path / ".venv"), "./.venv")
    assert select_target(_host(), default="new-venv").location == str(tmp_path / ".venv")


def test_installers_are_found_by_name_and_an_absent_one_is_a_clear_error() -> None:
    assert list(INSTALLERS) == ["uv", "pip"]
    assert choose_installer(_host(), "pip").name == "pip"
    with pytest.raises(InstallError, match="unknown installer 'conda'"):
        installer_kind("conda")
    if INSTALLERS["uv"].present(_host()):
        assert choose_installer(_host(), None).name == "uv"
    else:
        assert choose_installer(_host(), None).name == "pip"
