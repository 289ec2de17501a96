"""torchsmith export: the environment as it stands, made again from the files it writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest
import yaml
from tests.plan.test_render_resolve import installed, new_venv
from tests.support.pkgindex import IndexServer
from tests.support.render import packaged_kb

from torchsmith.cli import main
from torchsmith.install.env_export import CondaRecord, Installed, Standing, conda_meta_records, export_files
from torchsmith.install.export import write_export
from torchsmith.install.lock import Lock, LockedPackage
from torchsmith.install.target import Target


def _conda_meta(prefix: Path, name: str, version: str, build: str, channel: str) -> None:
    (prefix / "conda-meta").mkdir(parents=True, exist_ok=True)
    (prefix / "conda-meta" / f"{name}-{version}-{build}.json").write_text(json.dumps(
        {"name": name, "version": version, "build": build, "channel": channel, "files": []}))


def _conda_env(prefix: Path) -> None:
    _conda_meta(prefix, "python", "3.11.9", "h9a8c6f5_0_cpython", "https://conda.anaconda.org/conda-forge/linux-64")
    _conda_meta(prefix, "numpy", "2.1.3", "py311h71ddf71_0", "https://conda.anaconda.org/conda-forge/linux-64")
    _conda_meta(prefix, "mkl", "2023.1.0", "h213fc3f_46344", "https://repo.anaconda.com/pkgs/main/linux-64")


def test_the_conda_export_keeps_the_envs_conda_packages(tmp_path: Path) -> None:
    _conda_env(tmp_path)
    target = Target(python=str(tmp_path / "bin" / "python"), prefix=str(tmp_path), kind="conda",
                    python_version="3.11.9")
    lock = Lock(packages=[LockedPackage("torch", "2.7.1+cpu", index="https://download.pytorch.org/whl/cpu",
                                        hashes=("sha256:" + "0" * 64,))])
    data = yaml.safe_load(Path(write_export(target, lock)).read_text())
    deps = data["dependencies"]
    assert "numpy=2.1.3=py311h71ddf71_0" in deps and "python=3.11.9=h9a8c6f5_0_cpython" in deps
    assert data["channels"][0] == "conda-forge" and "nodefaults" in data["channels"]
    assert "https://repo.anaconda.com/pkgs/main/linux-64" in data["channels"]  # mkl's, as it came
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    assert any(line.startswith("torch==2.7.1+cpu") for line in pip)


def test_export_of_a_conda_env_lists_conda_and_pip_packages_apart(tmp_path: Path) -> None:
    _conda_env(tmp_path)
    standing = Standing(str(tmp_path), "3.11.9", True,
                        (Installed("numpy", "2.1.3", "conda"), Installed("torch", "2.6.0+cu126", "pip"),
                         Installed("ftfy", "6.2.0", "pip"), Installed("pip", "24.0", "conda")),
                        tuple(conda_meta_records(str(tmp_path))), {})
    files = export_files(standing, packaged_kb(), "http://mirror.example/whl")
    assert sorted(files) == ["environment.yml", "recreate.sh", "requirements-pytorch-cu126.txt",
                             "requirements.txt"]
    env = yaml.safe_load(files["environment.yml"])
    assert "numpy=2.1.3=py311h71ddf71_0" in env["dependencies"]
    assert "--index-url http://mirror.example/whl/cu126" in files["requirements-pytorch-cu126.txt"]
    assert "ftfy==6.2.0" in files["requirements.txt"] and "numpy" not in files["requirements.txt"]
    script = files["recreate.sh"]
    assert script.index("conda env create") < script.index("requirements-pytorch-cu126.txt") < script.index(
        "-r requirements.txt")
    assert isinstance(CondaRecord("a", "1", "b", "c").spec, str)


def test_an_exported_file_does_not_claim_an_unknown_platform() -> None:
    """The environment is read, not planned for a platform: its header names its Python only."""
    standing = Standing("/envs/train", "3.11.9", False, (Installed("ftfy", "6.2.0", "pip"),), (), {})
    text = export_files(standing, packaged_kb())["requirements.txt"]
    assert "unknown platform" not in text and "for Python 3.11." in text


@pytest.mark.slow
def test_a_venv_exported_and_recreated_has_the_same_packages(
        package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path) -> None:
    env = dict(installer_env, PIP_INDEX_URL=package_index.index_url("pypi"))
    python = new_venv(tmp_path / "orig")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install"]
    subprocess.run([*pip, "--index-url", package_index.index_url("pytorch/cu126"), "torch==2.6.0+cu126"],
                   env=env, check=True, capture_output=True)
    subprocess.run([*pip, "ftfy", "tqdm", "torch==2.6.0+cu126"], env=env, check=True, capture_output=True)
    before = installed(python)
    out = tmp_path / "saved"
    assert main(["export", "--python", str(python), "--out", str(out),
                 "--torch-index", package_index.url.rstrip("/") + "/pytorch"]) == 0
    done = subprocess.run(["bash", str(out / "recreate.sh"), str(tmp_path / "again")], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    after = installed(tmp_path / "again" / "bin" / "python")
    tooling = {"pip", "setuptools", "wheel"}
    assert {k: v for k, v in after.items() if k not in tooling} == \
        {k: v for k, v in before.items() if k not in tooling}
    assert after["torch"] == "2.6.0+cu126" and after["ftfy"] == "6.2.0"
