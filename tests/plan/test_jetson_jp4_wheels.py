"""JetPack 4.4-4.6.x: NVIDIA's cp36 wheels behind box.com links whose last segment is no wheel
file name (pip refuses them), planned as a download under the real name, then ``pip install ./FILE``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from tests.support.shell import assert_scripts_pass

from torchsmith.cli import main
from torchsmith.kb import load_kb

BOX_110 = "https://nvidia.box.com/shared/static/fjtbno0vpo676a25cgvuqc1wty0fkkg6.whl"
FILE_110 = "torch-1.10.0-cp36-cp36m-linux_aarch64.whl"
DOWNLOAD_110 = f"wget -O {FILE_110} {BOX_110}"
INSTALL_110 = f"python3 -m pip install ./{FILE_110}"


@pytest.fixture(autouse=True)
def _no_local_python(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX", "TORCHSMITH_PYTHON_VERSION", "PIP_CONFIG_FILE"):
        monkeypatch.delenv(variable, raising=False)


def _plan(capsys: pytest.CaptureFixture[str], l4t: str, *extra: str) -> Dict[str, Any]:
    code = main(["plan", "--fresh", "--jetson", l4t, "--python", "3.6", "--json", *extra])
    data: Dict[str, Any] = json.loads(capsys.readouterr().out)["data"]
    assert code == 0, data.get("reasons")
    return data


def _pin(data: Dict[str, Any], name: str) -> Dict[str, Any]:
    pin: Dict[str, Any] = next(p for p in data["packages"] if p["name"] == name)
    return pin


@pytest.mark.parametrize("l4t,variant", [("32.6.1", "jetson-jp46"), ("32.5.1", "jetson-jp451"),
                                         ("32.4.3", "jetson-jp44")])
def test_jetpack_4_4_to_4_6_plans_the_1_10_wheel_as_download_then_install(
        capsys: pytest.CaptureFixture[str], l4t: str, variant: str) -> None:
    data = _plan(capsys, l4t)
    torch = _pin(data, "torch")
    assert (data["variant"], torch["version"], torch["wheel_url"]) == (variant, "1.10.0", BOX_110)
    assert torch["wheel_filename"] == FILE_110
    assert data["commands"]["pip"] == [DOWNLOAD_110, INSTALL_110]
    assert data["commands"]["uv"][1] == f"uv pip install ./{FILE_110}"
    assert _pin(data, "torchvision")["version"] == "0.11.1"  # built from source at v0.11.1
    assert "libopenblas-base" in " ".join(data["system_prerequisites"])


def test_jetpack_4_6_1_keeps_its_newer_1_11_wheel_and_offers_1_10_when_asked(
        capsys: pytest.CaptureFixture[str]) -> None:
    newest = _pin(_plan(capsys, "32.7.1"), "torch")
    assert newest["version"].startswith("1.11.0") and newest["wheel_filename"] is None
    data = _plan(capsys, "32.7.1", "torch==1.10.0", "torchvision")
    assert data["commands"]["pip"] == [DOWNLOAD_110, INSTALL_110]
    # NVIDIA's list names JetPack 4.4-4.6 for 1.10.0; on 4.6.1 only jetson-containers uses it.
    assert any("uncertain" in w and "1.10.0" in w for w in data["warnings"])


def test_later_jetpack_4_6_releases_share_the_4_6_1_wheels(capsys: pytest.CaptureFixture[str]) -> None:
    data = _plan(capsys, "32.7.4", "torch<1.11", "torchvision")
    assert (_pin(data, "torch")["version"], _pin(data, "torchvision")["version"]) == ("1.10.0", "0.11.1")
    assert data["commands"]["pip"] == [DOWNLOAD_110, INSTALL_110]


def test_an_older_wheel_only_where_nvidia_listed_it(capsys: pytest.CaptureFixture[str]) -> None:
    data = _plan(capsys, "32.5.1", "torch==1.8.0", "torchvision")
    assert data["commands"]["pip"][0].startswith("wget -O torch-1.8.0-cp36-cp36m-linux_aarch64.whl https://")
    assert _pin(data, "torchvision")["version"] == "0.9.0"
    assert any("uncertain" in w for w in data["warnings"])
    code = main(["plan", "--fresh", "--jetson", "32.6.1", "--python", "3.6", "--json", "torch==1.8.0"])
    assert code != 0 and "1.10.0" in " ".join(json.loads(capsys.readouterr().out)["data"]["reasons"])


def test_human_output_shows_the_file_and_the_two_steps(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHSMITH_COLUMNS", "200")  # each command on one line
    assert main(["plan", "--fresh", "--jetson", "32.6.1", "--python", "3.6", "-v"]) == 0
    out = capsys.readouterr().out
    assert "torch==1.10.0" in out and f"{FILE_110} from {BOX_110}" in out
    lines = [line.strip().lstrip("$ ") for line in out.splitlines()]  # commands show as `$ ...`
    assert lines.index(DOWNLOAD_110) + 1 == lines.index(INSTALL_110)
    assert f"torch @ {BOX_110}" not in out  # the form pip refuses


def _rendered(capsys: pytest.CaptureFixture[str], fmt: str, l4t: str = "32.6.1") -> str:
    assert main(["plan", "--fresh", "--jetson", l4t, "--python", "3.6", "--format", fmt]) == 0
    return capsys.readouterr().out


def test_pip_format_downloads_then_installs_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    commands = [line for line in _rendered(capsys, "pip").splitlines() if not line.startswith("#")]
    assert commands == [DOWNLOAD_110, INSTALL_110]


def test_requirements_format_says_to_download_first(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _rendered(capsys, "requirements").splitlines()
    assert f"# download first: {DOWNLOAD_110}" in lines and f"./{FILE_110}" in lines


def test_jetson_script_order_and_shell_checks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = _rendered(capsys, "jetson")
    lines = text.splitlines()
    apt = "$SUDO apt-get install -y libopenblas-base libopenmpi-dev libomp-dev"
    numpy = "python3 -m pip install 'numpy<2'"
    cython = "python3 -m pip install Cython"  # NVIDIA's JetPack 4 steps, before NumPy
    order = [lines.index(line) for line in (apt, cython, numpy, DOWNLOAD_110, INSTALL_110)]
    assert order == sorted(order)
    assert any(line.startswith("git clone --depth 1 --branch v0.11.1 ") for line in lines)
    path = tmp_path / "install-jetson.sh"
    path.write_text(text)
    assert_scripts_pass(path)


def test_no_planned_wheel_url_is_one_pip_refuses() -> None:
    """A URL pip installs ends in the wheel's file name; any other carries the name to save it under,
    whose version and Python tag are the row's."""
    wheel_name = re.compile(r"^torch-(?P<version>[^-]+)-cp(?P<py>\d+)-")
    checked: List[str] = []
    for jetpack in load_kb().jetpacks:
        for wheel in jetpack.wheels:
            last = wheel.url.rsplit("/", 1)[-1]
            name = wheel.filename or last
            match = wheel_name.match(name)
            assert match, (jetpack.l4t, wheel.url)
            if wheel.filename is not None:
                assert match["version"] == wheel.torch and match["py"] == wheel.python.replace(".", "")
                checked.append(jetpack.l4t)
            assert "box.com" not in wheel.url or wheel.filename, (jetpack.l4t, wheel.url)
    assert {"32.4.3", "32.4.4", "32.5.0", "32.5.1", "32.6.1", "32.7.1"} <= set(checked)
    assert not [j.note for j in load_kb().jetpacks if "not planned automatically" in j.note]


def test_pyproject_pins_the_saved_file_as_the_uv_source(capsys: pytest.CaptureFixture[str]) -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    text = _rendered(capsys, "pyproject")
    data = tomllib.loads(text)
    assert "torch==1.10.0" in data["project"]["dependencies"]
    assert data["tool"]["uv"]["sources"]["torch"] == {"path": FILE_110}
    assert f"# torch: download first: {DOWNLOAD_110}" in text.splitlines()


def test_install_refuses_a_wheel_it_would_have_to_download_first() -> None:
    from tests.plan.plan_hosts import host

    from torchsmith.errors import InstallError
    from torchsmith.install.steps import groups_from_plan
    from torchsmith.plan.model import Request
    from torchsmith.plan.resolve import resolve

    plan = resolve(host(platform="linux-aarch64", python="3.6", jetson="32.6.1"), Request(), load_kb())
    with pytest.raises(InstallError) as caught:
        groups_from_plan(plan)
    assert caught.value.code == "install-needs-download" and FILE_110 in str(caught.value)
    assert "\n" not in str(caught.value)
