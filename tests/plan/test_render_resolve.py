"""The rendered pip/uv commands, requirements files and pyproject, run for real by pip and uv
against the local test index (tests/support): torch from its PyTorch index only, everything else
from the "user's configured index" — here the dependency-confusion index, which also serves a
malicious ``torchtriton`` 9.9.9 that must never be installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Sequence

import pytest
from tests.support.pkgindex import IndexServer
from tests.support.render import render

from torchsmith.plan.model import PackagePin, Plan
from torchsmith.render import install_argvs, requirement_files

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytestmark = pytest.mark.slow

_VERSIONS = ("import json, importlib.metadata as m; "
             "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))")


def plan_for(server: IndexServer, *extra: PackagePin, torch: str = "2.6.0") -> Plan:
    index = server.index_url("pytorch/cu126")
    vision = {"2.6.0": "0.21.0", "2.7.1": "0.22.1"}[torch]
    return Plan(status="ok", platform="linux-x86_64", python=f"{sys.version_info[0]}.{sys.version_info[1]}",
                accelerator="cuda", variant="cu126", kb_version="test",
                packages=(PackagePin("torch", torch, "cu126", index, local_version="+cu126"),
                          PackagePin("torchvision", vision, "cu126", index, local_version="+cu126"),
                          *extra))


def new_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


def installed(python: Path) -> Dict[str, str]:
    out = subprocess.run([str(python), "-c", _VERSIONS], check=True, capture_output=True, text=True)
    versions: Dict[str, str] = json.loads(out.stdout)
    return versions


def run_all(argvs: Sequence[List[str]], env: Dict[str, str]) -> List[subprocess.CompletedProcess[str]]:
    results = []
    for argv in argvs:
        result = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=300)
        results.append(result)
        if result.returncode != 0:
            break
    return results


@pytest.fixture
def default_is_evil(package_index: IndexServer, installer_env: Dict[str, str]) -> Dict[str, str]:
    """The user's own configuration points pip and uv at the dependency-confusion index."""
    env = dict(installer_env)
    env["PIP_INDEX_URL"] = package_index.index_url("evil")
    env["UV_DEFAULT_INDEX"] = package_index.index_url("evil")
    return env


def test_pip_commands_install_torch_from_its_index_and_never_the_confused_package(
        package_index: IndexServer, default_is_evil: Dict[str, str], tmp_path: Path) -> None:
    python = new_venv(tmp_path / "venv")
    links = str(package_index.root / "pypi")  # a find-links directory, as mmcv's pages are
    plan = plan_for(package_index, PackagePin("mmcv", "2.2.0", find_links=links), PackagePin("ftfy", "6.2.0"))
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install"]
    results = run_all(install_argvs(plan, "pip", prefix=pip), default_is_evil)
    assert len(results) == 3 and all(r.returncode == 0 for r in results), results[-1].stderr
    versions = installed(python)
    assert versions["mmcv"] == "2.2.0"
    assert versions["torch"] == "2.6.0+cu126"
    assert versions["torchvision"] == "0.21.0+cu126"
    assert versions["torchtriton"] in ("3.2.0", "3.3.1")  # the PyTorch index's, never 9.9.9
    assert versions["ftfy"] == "6.2.0" and "wcwidth" in versions


def test_pip_second_command_refuses_to_swap_torch(
        package_index: IndexServer, default_is_evil: Dict[str, str], tmp_path: Path) -> None:
    """ftfy 6.3.0 needs torch>=2.7: the repeated torch pin turns a silent swap into an error."""
    python = new_venv(tmp_path / "venv")
    plan = plan_for(package_index, PackagePin("ftfy", "6.3.0"))
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install"]
    argvs = install_argvs(plan, "pip", prefix=pip)
    results = run_all(argvs, default_is_evil)
    assert results[0].returncode == 0
    assert results[1].returncode != 0
    assert "torch" in results[1].stderr + results[1].stdout
    assert installed(python)["torch"] == "2.6.0+cu126"
    # Control: without the repeated pins pip replaces the CUDA torch with the default index's.
    bare = [*pip, "ftfy==6.3.0"]
    assert subprocess.run(bare, env=default_is_evil, capture_output=True, check=False).returncode == 0
    assert installed(python)["torch"] == "2.7.1"


def test_uv_commands_install_torch_from_its_index_and_hold_it(
        package_index: IndexServer, default_is_evil: Dict[str, str], uv_bin: str, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([uv_bin, "venv", "--python", sys.executable, str(venv)], env=default_is_evil,
                   check=True, capture_output=True)
    links = str(package_index.root / "pypi")
    plan = plan_for(package_index, PackagePin("mmcv", "2.2.0", find_links=links), PackagePin("ftfy", "6.2.0"))
    uv = [uv_bin, "pip", "install", "--python", str(venv / "bin" / "python")]
    results = run_all(install_argvs(plan, "uv", prefix=uv), default_is_evil)
    assert len(results) == 3 and all(r.returncode == 0 for r in results), results[-1].stderr
    versions = installed(venv / "bin" / "python")
    assert versions["mmcv"] == "2.2.0"
    assert versions["torch"] == "2.6.0+cu126" and versions["torchtriton"] in ("3.2.0", "3.3.1")
    assert versions["ftfy"] == "6.2.0"
    # A companion that needs another torch fails instead of swapping it.
    swap = install_argvs(plan_for(package_index, PackagePin("ftfy", "6.3.0")), "uv", prefix=uv)[-1]
    result = subprocess.run(swap, env=default_is_evil, capture_output=True, text=True, check=False)
    assert result.returncode != 0, result.stdout
    assert installed(venv / "bin" / "python")["torch"] == "2.6.0+cu126"


def test_requirements_files_install_in_order(
        package_index: IndexServer, default_is_evil: Dict[str, str], tmp_path: Path) -> None:
    python = new_venv(tmp_path / "venv")
    plan = plan_for(package_index, PackagePin("ftfy", "6.2.0"), PackagePin("tqdm", "4.67.1"))
    files = requirement_files(plan)
    assert len(files) == 2
    for name, content in files.items():
        (tmp_path / name).write_text(content)
        result = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-r",
                                 str(tmp_path / name)], env=default_is_evil, capture_output=True,
                                text=True, check=False)
        assert result.returncode == 0, result.stderr
    versions = installed(python)
    assert versions["torch"] == "2.6.0+cu126" and versions["torchtriton"] in ("3.2.0", "3.3.1")
    assert versions["tqdm"] == "4.67.1"


def test_pip_dry_run_report_takes_every_torch_file_from_the_torch_index(
        package_index: IndexServer, default_is_evil: Dict[str, str], tmp_path: Path) -> None:
    plan = plan_for(package_index, torch="2.7.1")
    first = install_argvs(plan, "pip", prefix=[sys.executable, "-m", "pip", "install", "--dry-run",
                                               "--ignore-installed", "--quiet", "--report",
                                               str(tmp_path / "r.json")])[0]
    subprocess.run(first, env=default_is_evil, check=True, capture_output=True)
    report = json.loads((tmp_path / "r.json").read_text())
    urls = {i["metadata"]["name"]: i["download_info"]["url"] for i in report["install"]}
    assert {"torch", "torchvision", "torchtriton"} <= set(urls)
    base = package_index.index_url("pytorch/cu126").rstrip("/")
    wheels = package_index.url.rstrip("/") + "/"
    for name, url in urls.items():
        assert url.startswith(wheels) and "/evil/" not in url and "/pypi/" not in url, (name, url, base)


def test_pyproject_locks_torch_to_its_explicit_index(
        package_index: IndexServer, installer_env: Dict[str, str], uv_bin: str, tmp_path: Path) -> None:
    env = dict(installer_env)
    env["UV_DEFAULT_INDEX"] = package_index.index_url("pypi")
    env["UV_PYTHON"] = sys.executable
    links = str(package_index.root / "pypi")
    plan = plan_for(package_index, PackagePin("mmcv", "2.2.0", find_links=links), PackagePin("ftfy", "6.2.0"))
    (tmp_path / "pyproject.toml").write_text(render(plan, "pyproject"))
    result = subprocess.run([uv_bin, "lock"], cwd=tmp_path, env=env, capture_output=True, text=True,
                            check=False, timeout=300)
    assert result.returncode == 0, result.stderr
    lock = tomllib.loads((tmp_path / "uv.lock").read_text())
    source = {p["name"]: p.get("source", {}) for p in lock["package"]}
    cu126 = package_index.index_url("pytorch/cu126")
    assert source["torch"] == {"registry": cu126}
    assert source["torchvision"] == {"registry": cu126}
    assert source["ftfy"] == {"registry": package_index.index_url("pypi")}
    assert source["mmcv"] == {"registry": links}  # its find-links page, as a flat explicit index
    versions = {p["name"]: p["version"] for p in lock["package"]}
    assert versions["torch"] == "2.6.0+cu126"
