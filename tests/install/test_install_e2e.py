"""torchsmith install and guard end to end: real uv and real pip against the local index.

The user's configured index is the ``evil`` index (PyPI's packages plus a malicious torchtriton
9.9.9), so every install here is also a dependency-confusion test. The fake torch sees a GPU of
compute capability 8.6 when TORCHSMITH_FAKE_CUDA_CC=8.6, which the machine overrides
``--gpu 8.6 --driver 570.86.10`` describe.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest
from tests.support.envtools import tree_digest
from tests.support.pkgindex import IndexServer
from tests.support.torchstack import EVIL_TRITON

pytestmark = pytest.mark.slow

GPU = ["--gpu", "8.6", "--driver", "570.86.10"]


def _env(installer_env: Dict[str, str], index: IndexServer, user_index: str = "evil",
         gpu: bool = True) -> Dict[str, str]:
    env = dict(installer_env)
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = index.index_url(user_index)
    if gpu:
        env["TORCHSMITH_FAKE_CUDA_CC"] = "8.6"
    return env


def _torchsmith(args: List[str], env: Dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchsmith", *args], env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _json(proc: subprocess.CompletedProcess) -> dict:
    try:
        return dict(json.loads(proc.stdout))
    except ValueError:
        raise AssertionError(f"no JSON (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}") from None


def _versions(python: Path) -> Dict[str, str]:
    code = ("import json, importlib.metadata as m; "
            "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout
    return dict(json.loads(out))


def _install(args: List[str], env: Dict[str, str], index: IndexServer) -> subprocess.CompletedProcess:
    return _torchsmith(["install", "--yes", "--json", "--torch-index", index.url + "/pytorch", *args], env)


def test_the_evil_index_really_would_win_a_naive_install(package_index: IndexServer,
                                                         installer_env: Dict[str, str],
                                                         tmp_path: Path) -> None:
    """The trap is real: --extra-index-url takes the highest torchtriton from any index."""
    report = tmp_path / "report.json"
    subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                    "--report", str(report), "--index-url", package_index.index_url("evil"),
                    "--extra-index-url", package_index.index_url("pytorch/cu126"), "torch==2.6.0+cu126"],
                   env=installer_env, check=True)
    items = json.loads(report.read_text())["install"]
    chosen = {i["metadata"]["name"]: i["metadata"]["version"] for i in items}
    assert chosen["torchtriton"] == EVIL_TRITON


def test_uv_install_verifies_locks_guards_and_never_touches_the_evil_index(
        package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path) -> None:
    env = _env(installer_env, package_index)
    venv = tmp_path / "venv"
    evil_before = len(package_index.fetched(f"torchtriton-{EVIL_TRITON}"))  # the naive test's download
    proc = _install(["--venv", str(venv), "--installer", "uv", *GPU, "torch==2.6.0", "torchvision",
                     "ftfy==6.2.0"], env, package_index)
    data = _json(proc)["data"]
    assert proc.returncode == 0, proc.stderr
    assert data["installed"] and data["verify"]["ok"] and data["verify"]["device"] == "cuda"
    assert {c["name"] for c in data["verify"]["checks"]} >= {"architecture", "matmul", "conv2d",
                                                              "import torchvision"}
    versions = _versions(venv / "bin" / "python")
    assert versions["torch"] == "2.6.0+cu126" and versions["torchvision"] == "0.21.0+cu126"
    assert versions["torchtriton"] == "3.3.1" and versions["ftfy"] == "6.2.0"
    assert len(package_index.fetched(f"torchtriton-{EVIL_TRITON}")) == evil_before
    # The torch step asked the PyTorch index only; the user's index served ftfy.
    torch_step, rest_step = data["steps"]
    assert torch_step["argv"][torch_step["argv"].index("--index-url") + 1].endswith("/pytorch/cu126")
    assert "--index-url" not in rest_step["argv"] and "-c" in rest_step["argv"]

    lock = json.loads((venv / "torchsmith.lock.json").read_text())
    by_name = {p["name"]: p for p in lock["packages"]}
    assert by_name["torch"]["index"].endswith("/pytorch/cu126") and by_name["ftfy"]["index"] is None
    assert by_name["torchtriton"]["index"].endswith("/pytorch/cu126")
    assert all(p["hashes"] and p["hashes"][0].startswith("sha256:") for p in lock["packages"])
    guard = (venv / "torchsmith-guard.txt").read_text()
    assert "torch==2.6.0+cu126" in guard and "torchtriton==3.3.1" in guard and "ftfy" not in guard

    # The lock reproduces the same stack elsewhere, hash-checked, with no resolving.
    other = tmp_path / "other"
    proc = _install(["--lock", str(venv / "torchsmith.lock.json"), "--venv", str(other)], env, package_index)
    assert proc.returncode == 0, proc.stderr
    steps = _json(proc)["data"]["steps"]
    assert all("--require-hashes" in s["argv"] and "--no-deps" in s["argv"] for s in steps)
    locked = {p["name"]: p["version"] for p in lock["packages"]}
    reproduced = _versions(other / "bin" / "python")
    assert {n: reproduced.get(n) for n in locked} == locked

    # A lock whose hash does not match what the index serves installs nothing.
    by_name["torch"]["hashes"] = ["sha256:" + "0" * 64]
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(lock))
    bad = tmp_path / "bad"
    proc = _install(["--lock", str(tampered), "--venv", str(bad)], env, package_index)
    error = _json(proc)["errors"][0]  # the torch index does not list that hash: refused before uv runs
    assert proc.returncode == 1 and error["code"] == "install-provenance"
    assert "lock's sha256 for torch" in error["message"]
    assert not bad.exists()
    # The same zeroed torch hash beside a package with no hash at all: refused, not unchecked.
    by_name["torchtriton"]["hashes"] = []
    tampered.write_text(json.dumps(lock))
    proc = _install(["--lock", str(tampered), "--venv", str(bad)], env, package_index)
    error = _json(proc)["errors"][0]
    assert proc.returncode == 1 and error["code"] == "lock-unverifiable" and "torchtriton" in error["message"]
    assert not bad.exists()

    # guard check predicts, changing nothing; the venv has no pip, torchsmith's own pip is used.
    before = tree_digest(venv)
    pypi_env = _env(installer_env, package_index, "pypi")
    for tool in (["pip", "install"], ["uv", "pip", "install"]):
        proc = _torchsmith(["guard", "--json", "check", "--python", str(venv / "bin" / "python"), "--",
                            *tool, "xformers"], pypi_env)
        result = _json(proc)
        assert proc.returncode == 5, proc.stderr
        assert result["data"]["breaks"]["torch"] == {"from": "2.6.0+cu126", "to": "2.7.1"}
        assert result["data"]["fits"] == {"xformers": "0.0.29.post3"}
    assert result["data"]["installer"] == "uv"
    assert result["data"]["dragged_by"]["torch"] == ["xformers 0.0.31 requires torch"]
    proc = _torchsmith(["guard", "--json", "check", "--python", str(venv / "bin" / "python"), "--",
                        "pip", "install", "xformers"], pypi_env)
    assert _json(proc)["data"]["dragged_by"]["torch"] == ["xformers 0.0.31 requires torch==2.7.1"]
    proc = _torchsmith(["guard", "check", "--python", str(venv / "bin" / "python"), "--",
                        "pip", "install", "tqdm"], pypi_env)
    assert proc.returncode == 0 and "Safe" in proc.stdout
    assert tree_digest(venv) == before

    # In an activated shell, uv applies the guard: the swap is refused, torch stays.
    proc = subprocess.run(["bash", "-c", f". {venv}/bin/activate && uv pip install xformers==0.0.31"],
                          env={**pypi_env, "PATH": f"{Path(sys.executable).parent}:{pypi_env['PATH']}"},
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0 and "torch" in proc.stderr
    assert _versions(venv / "bin" / "python")["torch"] == "2.6.0+cu126"


def test_pip_install_and_the_guard_blocking_a_swap(package_index: IndexServer, installer_env: Dict[str, str],
                                                   tmp_path: Path) -> None:
    env = _env(installer_env, package_index)
    venv = tmp_path / "venv"
    evil_before = len(package_index.fetched(f"torchtriton-{EVIL_TRITON}"))
    proc = _install(["--venv", str(venv), "--installer", "pip", *GPU, "torch==2.6.0", "torchvision"],
                    env, package_index)
    data = _json(proc)["data"]
    assert proc.returncode == 0, proc.stderr
    assert data["installer"] == "pip" and data["verify"]["ok"] and data["verify"]["device"] == "cuda"
    python = venv / "bin" / "python"
    versions = _versions(python)
    assert versions["torch"] == "2.6.0+cu126" and versions["torchtriton"] == "3.3.1"
    assert len(package_index.fetched(f"torchtriton-{EVIL_TRITON}")) == evil_before
    lock = json.loads((venv / "torchsmith.lock.json").read_text())
    assert all(p["hashes"] for p in lock["packages"])  # from pip's installation report
    # The same install again changes nothing and downloads nothing: the lock keeps every hash.
    proc = _install(["--python", str(python), "--installer", "pip", *GPU, "torch==2.6.0", "torchvision"],
                    env, package_index)
    assert proc.returncode == 0 and _json(proc)["data"]["changed"] == {}, proc.stderr
    again = json.loads((venv / "torchsmith.lock.json").read_text())
    assert again["packages"] == lock["packages"]

    # A later plain `pip install` in the environment reads its pip.conf (site configuration);
    # this machine's own pip configuration is kept out with empty XDG directories.
    empty = tmp_path / "no-config"
    empty.mkdir()
    user = {k: v for k, v in installer_env.items() if k != "PIP_CONFIG_FILE"}
    user.update({"XDG_CONFIG_HOME": str(empty), "XDG_CONFIG_DIRS": str(empty), "HOME": str(empty),
                 "PIP_INDEX_URL": package_index.index_url("pypi")})
    swap = [str(python), "-m", "pip", "install", "--quiet", "ftfy==6.3.0"]
    proc = subprocess.run(swap, env=user, capture_output=True, text=True, check=False)
    assert proc.returncode != 0 and "conflicting dependencies" in proc.stderr
    assert _versions(python)["torch"] == "2.6.0+cu126"

    # guard check names the dragger and what fits instead; guard off lets the swap through.
    proc = _torchsmith(["guard", "--json", "check", "--python", str(python), "--", "pip", "install", "ftfy"],
                       _env(installer_env, package_index, "pypi", gpu=False))
    data = _json(proc)["data"]
    assert proc.returncode == 5
    assert data["dragged_by"]["torch"] == ["ftfy 6.3.0 requires torch>=2.7"]
    assert data["fits"] == {"ftfy": "6.2.0"}
    assert _torchsmith(["guard", "off", "--python", str(python)], env).returncode == 0
    subprocess.run(swap, env=user, check=True, capture_output=True)
    assert _versions(python)["torch"] == "2.7.1"

    # The old guard does not stand in the way of the next torchsmith install; the new one pins it.
    assert _torchsmith(["guard", "on", "--python", str(python)], env).returncode == 0
    status = _json(_torchsmith(["guard", "--json", "status", "--python", str(python)], env))["data"]
    assert status["on"] and status["drift"]["torch"] == {"pinned": "2.6.0+cu126", "installed": "2.7.1"}
    proc = _install(["--python", str(python), "--installer", "pip", "--no-gpu", "torch==2.7.1",
                     "torchvision"], env, package_index)
    assert proc.returncode == 0, proc.stderr
    assert _versions(python)["torch"] == "2.7.1+cpu"
    assert "torch==2.7.1+cpu" in (venv / "torchsmith-guard.txt").read_text()


def _small_env(tmp_path: Path, env: Dict[str, str], index: IndexServer) -> Path:
    venv = tmp_path / "existing"
    proc = _install(["--venv", str(venv), "--installer", "uv", "--no-gpu", "torch==2.6.0", "torchvision"],
                    env, index)
    assert proc.returncode == 0, proc.stderr
    return venv


def test_failed_verification_restores_an_existing_environment_exactly(
        package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path) -> None:
    env = _env(installer_env, package_index, gpu=False)
    venv = _small_env(tmp_path, env, package_index)
    before = tree_digest(venv)
    # The host claims a GPU this machine does not have: torch installs, but cannot see it.
    proc = _install(["--python", str(venv / "bin" / "python"), *GPU, "torch==2.7.1", "torchvision"],
                    env, package_index)
    error = _json(proc)["errors"][0]
    assert proc.returncode == 1 and error["code"] == "verify-failed"
    assert "cuda available" in error["message"]
    assert any("restored exactly" in line for line in error["context"])
    assert tree_digest(venv) == before
    assert sorted(os.listdir(tmp_path)) == ["existing"]  # no snapshot left behind
    # A new environment that fails verification is removed.
    proc = _install(["--venv", str(tmp_path / "new"), *GPU, "torch==2.7.1"], env, package_index)
    assert proc.returncode == 1 and not (tmp_path / "new").exists()


def test_a_conda_prefix_gets_an_environment_export(package_index: IndexServer,
                                                   installer_env: Dict[str, str], tmp_path: Path) -> None:
    env = _env(installer_env, package_index, gpu=False)
    prefix = _small_env(tmp_path, env, package_index)
    (prefix / "conda-meta").mkdir()  # what makes a prefix a conda environment
    proc = _install(["--python", str(prefix / "bin" / "python"), "--no-gpu", "torch==2.7.1", "torchvision"],
                    env, package_index)
    data = _json(proc)["data"]
    assert proc.returncode == 0, proc.stderr
    assert data["kind"] == "conda" and data["export"] == str(prefix / "torchsmith-environment.yml")
    export = (prefix / "torchsmith-environment.yml").read_text()
    assert "  - python=3." in export and "    - torch==2.7.1+cpu --hash=sha256:" in export
    # conda hands the pip section to pip as a requirements file: it must resolve as written,
    # the +cpu torch from the PyTorch index it names, every file hash-checked.
    section = export.split("  - pip:\n", 1)[1]
    requirements = tmp_path / "pip-section.txt"
    requirements.write_text("".join(line.strip()[2:] + "\n" for line in section.splitlines()))
    assert f"--index-url {package_index.url}/pytorch/cpu" in requirements.read_text()
    report = tmp_path / "report.json"
    subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                    "--report", str(report), "-r", str(requirements)], env=env, check=True)
    items = json.loads(report.read_text())["install"]
    assert {i["metadata"]["name"]: i["metadata"]["version"] for i in items}["torch"] == "2.7.1+cpu"


_WITH_DEFAULT_SIGNALS = (
    "import os, signal, sys\n"
    "for name in ('SIGINT', 'SIGTERM'):\n"
    "    signal.signal(getattr(signal, name), signal.SIG_DFL)\n"
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])\n"
)


def _children(pid: int) -> List[int]:
    kids: List[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as handle:
            kids.extend(int(k) for k in handle.read().split())
    return kids


@pytest.mark.parametrize(("how", "package"), [("kill-installer", "tabulate"), ("ctrl-c", "colorama"),
                                               ("sigterm", "idna")])
def test_an_interrupted_install_restores_the_environment_exactly(
        package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path, how: str,
        package: str) -> None:
    env = _env(installer_env, package_index, gpu=False)
    venv = _small_env(tmp_path, env, package_index)
    before = tree_digest(venv)
    package_index.stall(f"{package}-")
    # A batch runner (nohup, `trap '' INT`) starts us with SIGINT ignored, and an ignored signal stays
    # ignored across exec: put the default back in the child so Python turns SIGINT into Ctrl-C.
    argv = [sys.executable, "-c", _WITH_DEFAULT_SIGNALS, "-m", "torchsmith", "install", "--yes",
            "--torch-index", package_index.url + "/pytorch", "--python", str(venv / "bin" / "python"),
            "--no-gpu", "torch==2.7.1", "torchvision", package]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert package_index.stall_hit.wait(120), "the installer never asked for the stalled wheel"
        # torch 2.7.1 is in place by now: the environment really changed before the interruption.
        assert tree_digest(venv) != before
        if how == "kill-installer":
            installer = _children(proc.pid)
            assert installer
            os.killpg(installer[0], signal.SIGKILL)  # LiveHost runs it in its own process group
        else:
            os.kill(proc.pid, signal.SIGINT if how == "ctrl-c" else signal.SIGTERM)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        package_index.release()
        _out, err = proc.communicate(timeout=60)
    if how == "kill-installer":
        assert proc.returncode == 1 and "was killed (signal 9)" in err, err
    else:
        assert proc.returncode == 130 and "install-interrupted" in err, err
    assert "restored exactly" in err
    assert tree_digest(venv) == before
