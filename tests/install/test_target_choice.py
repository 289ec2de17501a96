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
from torchsmith.install.target_choice import OWN, TargetChoice, select_target


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
    chosen = select_target(_host(VIRTUAL_ENV=str(active)), own_prefix=sys.prefix, cwd=str(tmp_path))
    assert (chosen.python, chosen.source) == (str(active / "bin" / "python"), "VIRTUAL_ENV")
    own = select_target(_host(VIRTUAL_ENV=str(active)), own_prefix=str(active), cwd=str(tmp_path))
    assert (own.python, own.source, own.own) == (None, OWN, True)
    conda = select_target(_host(CONDA_PREFIX=str(active)), own_prefix=sys.prefix, cwd=str(tmp_path))
    assert conda.source == "CONDA_PREFIX"


def _dot_venv(root: Path) -> Path:
    venv = _venv(root, ".venv")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return venv


@pytest.mark.parametrize("default", ["active", "new-venv", "active-or-venv"])
def test_one_rule_for_every_command(tmp_path: Path, default: str) -> None:
    """uv's order: --python, the active venv, the active conda env, ./.venv here or in a parent;
    torchsmith's own environment only when --python names it."""
    project = tmp_path / "project"
    work = project / "src" / "deep"
    work.mkdir(parents=True)
    venv = _dot_venv(project)
    conda = _venv(tmp_path, "conda")
    active = _venv(tmp_path, "active")

    def chosen(**environ: str) -> TargetChoice:
        return select_target(_host(**environ), default=default,  # type: ignore[arg-type]
                             own_prefix=str(tmp_path / "own"), cwd=str(work))

    assert chosen(VIRTUAL_ENV=str(active), CONDA_PREFIX=str(conda)).source == "VIRTUAL_ENV"
    assert chosen(CONDA_PREFIX=str(conda)).python == str(conda / "bin" / "python")
    parent = chosen()
    assert (parent.python, parent.source) == (str(venv / "bin" / "python"), f".venv in {project}")
    # torchsmith's own active venv is passed over: ./.venv is found as if none were active.
    assert chosen(VIRTUAL_ENV=str(tmp_path / "own")).prefix == str(venv)
    named = select_target(_host(VIRTUAL_ENV=str(active)), python=str(tmp_path / "own" / "bin" / "python"),
                          default=default, own_prefix=str(tmp_path / "own"), cwd=str(work))  # type: ignore[arg-type]
    assert named.source == "--python"


def test_nothing_found_is_said(tmp_path: Path) -> None:
    """No environment: install makes ./.venv, guard refuses, the rest name torchsmith's own."""
    new = select_target(_host(), default="new-venv", own_prefix=sys.prefix, cwd=str(tmp_path))
    assert (new.prefix, new.source) == (str(tmp_path / ".venv"), "./.venv")
    with pytest.raises(UsageError, match="no environment to guard"):
        select_target(_host(), default="active-or-venv", own_prefix=sys.prefix, cwd=str(tmp_path))
    fallback = select_target(_host(), own_prefix=sys.prefix, cwd=str(tmp_path))
    assert fallback.own and "no environment found" in fallback.label()


def test_build_prefix_prefers_conda_and_guard_falls_back_to_dot_venv(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    both = _host(CONDA_PREFIX="/opt/conda/envs/b", VIRTUAL_ENV="/v")
    assert select_target(both, default="build-prefix").prefix == "/opt/conda/envs/b"
    assert select_target(both, default="active-or-venv").prefix == "/v"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="no environment to guard"):
        select_target(_host(), default="active-or-venv")
    _dot_venv(tmp_path)
    chosen = select_target(_host(), default="active-or-venv")
    assert (chosen.prefix, chosen.source) == (str(tmp_path / ".venv"), "./.venv")
    assert select_target(_host(), default="new-venv").location == str(tmp_path / ".venv" / "bin" / "python")


def test_installers_are_found_by_name_and_an_absent_one_is_a_clear_error() -> None:
    assert list(INSTALLERS) == ["uv", "pip"]
    assert choose_installer(_host(), "pip").name == "pip"
    with pytest.raises(InstallError, match="unknown installer 'conda'"):
        installer_kind("conda")
    if INSTALLERS["uv"].present(_host()):
        assert choose_installer(_host(), None).name == "uv"
    else:
        assert choose_installer(_host(), None).name == "pip"


def test_torchsmiths_own_dot_venv_is_never_installed_into_unnamed(tmp_path: Path) -> None:
    """The README's quick start puts torchsmith into ./.venv: `install` then asks for a target."""
    own = _dot_venv(tmp_path)
    with pytest.raises(UsageError, match="torchsmith's own environment") as refused:
        select_target(_host(), default="new-venv", own_prefix=str(own), cwd=str(tmp_path))
    assert "--venv" in str(refused.value.hint) and "--python .venv/bin/python" in str(refused.value.hint)
    named = select_target(_host(), python=str(own / "bin" / "python"), default="new-venv",
                          own_prefix=str(own), cwd=str(tmp_path))
    assert named.python == str(own / "bin" / "python")
    assert select_target(_host(), own_prefix=str(own), cwd=str(tmp_path)).own  # read-only: its own, said
