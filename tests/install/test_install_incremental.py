"""Installing into an environment torchsmith made merges: after torch, an unrelated package and
then a torch-dependent one, the guard, the hold and the lock still describe the whole
environment, a later swap of torch is refused, and ``install --lock`` recreates it all.
Real pip and real uv against the local index of tests/support."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from tests.support.pkgindex import IndexServer

from torchsmith.install.export import EXPORT_NAME

pytestmark = pytest.mark.slow

GPU = ["--gpu", "8.6", "--driver", "570.86.10"]


def _run(args: List[str], env: Dict[str, str]) -> Dict[str, object]:
    proc = subprocess.run([sys.executable, "-m", "torchsmith", *args], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return dict(json.loads(proc.stdout)["data"])


def _versions(python: Path) -> Dict[str, str]:
    code = ("import json, importlib.metadata as m; "
            "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout
    return dict(json.loads(out))


def _lock(venv: Path) -> Dict[str, str]:
    packages = json.loads((venv / "torchsmith.lock.json").read_text())["packages"]
    return {p["name"]: p["version"] for p in packages}


def _guard(venv: Path) -> Dict[str, str]:
    pins = [line.split("==") for line in (venv / "torchsmith-guard.txt").read_text().splitlines()
            if "==" in line and not line.startswith("#")]
    return {pin[0]: pin[1] for pin in pins}


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_incremental_installs_keep_guard_hold_and_lock_whole(installer: str, package_index: IndexServer,
                                                             installer_env: Dict[str, str], uv_bin: str,
                                                             tmp_path: Path) -> None:
    env = dict(installer_env)
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")
    env["TORCHSMITH_FAKE_CUDA_CC"] = "8.6"
    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    common = ["install", "--yes", "--json", "--installer", installer, "--torch-index",
              package_index.url + "/pytorch", *GPU]

    first = _run([*common, "--venv", str(venv), "torch==2.6.0", "torchvision"], env)
    assert first["target"] == {"python": str(python), "prefix": str(venv), "new": True,  # type: ignore[comparison-overlap]
                               "source": "--venv", "version": None}
    torch_pins = _guard(venv)
    assert torch_pins["torch"] == "2.6.0+cu126"
    # From here on the prefix reads as a conda environment: each install also writes its export.
    (venv / "conda-meta").mkdir()

    second = _run([*common, "--python", str(python), "tqdm"], env)
    assert second["target"]["new"] is False  # type: ignore[index]
    third = _run([*common, "--python", str(python), "ftfy==6.2.0"], env)
    assert third["changed"].get("torch") is None  # type: ignore[union-attr]

    installed = _versions(python)
    lock = _lock(venv)
    # The lock holds everything torchsmith installed, at the versions now installed.
    for name in ("torch", "torchvision", "torchtriton", "tqdm", "ftfy", "wcwidth"):
        assert lock.get(name) == installed[name], name
    export = (venv / EXPORT_NAME).read_text()
    for name in ("torch", "torchvision", "tqdm", "ftfy"):
        assert f"- {name}=={installed[name]}" in export, name
    # The guard still pins torch's stack, as after the first install (the hold is kept).
    guard = _guard(venv)
    assert {n: guard.get(n) for n in torch_pins} == torch_pins
    status = _run(["guard", "--json", "status", "--python", str(python)], env)
    assert status["on"] and "torch" in status["held"]  # type: ignore[operator]
    assert not status["drift"]

    # A later swap of torch is refused, whichever installer runs it.
    swap = ([str(python), "-m", "pip", "install", "--quiet", "ftfy==6.3.0"] if installer == "pip" else
            [uv_bin, "pip", "install", "--python", str(python), "ftfy==6.3.0"])
    proc = subprocess.run(swap, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    assert _versions(python)["torch"] == "2.6.0+cu126"

    # install --lock recreates the whole environment elsewhere.
    other = tmp_path / "other"
    _run(["install", "--yes", "--json", "--installer", installer, "--torch-index",
          package_index.url + "/pytorch", "--lock", str(venv / "torchsmith.lock.json"),
          "--venv", str(other)], env)
    recreated = _versions(other / "bin" / "python")
    assert {n: recreated.get(n) for n in lock} == lock
