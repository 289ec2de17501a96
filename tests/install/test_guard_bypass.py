"""The guard against an environment that switches pip's configuration off: real pip and uv.

``PIP_CONFIG_FILE=/dev/null`` (pip reads no pip.conf), a user ``PIP_CONSTRAINT`` (it replaces
the guard's constraint), ``uv pip install --python`` from a shell where the environment is not
activated, and ``pip uninstall torch``: none may replace the guarded torch, and ``guard status``
and ``doctor`` say which setting bypasses the constraints.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from tests.support.pkgindex import IndexServer

pytestmark = pytest.mark.slow


def _torchsmith(args: List[str], env: Dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchsmith", *args], env=env, capture_output=True,
                          text=True, timeout=240, check=False)


def _torch(python: Path) -> str:
    code = "import importlib.metadata as m; print(m.version('torch'))"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout
    return out.strip()


def test_a_guard_pip_and_uv_cannot_get_around(package_index: IndexServer, installer_env: Dict[str, str],
                                              uv_bin: str, tmp_path: Path) -> None:
    env = dict(installer_env)
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")
    venv = tmp_path / "venv"
    proc = _torchsmith(["install", "--yes", "--json", "--installer", "pip", "--torch-index",
                        package_index.url + "/pytorch", "--venv", str(venv), "--no-gpu", "torch==2.6.0"], env)
    assert proc.returncode == 0, proc.stderr
    python = venv / "bin" / "python"
    assert _torch(python) == "2.6.0+cpu"
    user_constraints = tmp_path / "mine.txt"
    user_constraints.write_text("tqdm<5\n")
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    clean = {k: v for k, v in env.items() if k != "PIP_CONFIG_FILE"}  # pip reads the site pip.conf
    attempts = [
        (dict(env, PIP_CONFIG_FILE="/dev/null"), [*pip, "install", "torch==2.7.1"]),
        (dict(clean, PIP_CONSTRAINT=str(user_constraints)), [*pip, "install", "ftfy==6.3.0"]),  # torch>=2.7
        (env, [*pip, "uninstall", "-y", "torch"]),
        (env, [uv_bin, "pip", "install", "--python", str(python), "torch==2.7.1"]),
        (env, [uv_bin, "pip", "uninstall", "--python", str(python), "torch"]),
    ]
    errors = []
    for attempt_env, argv in attempts:
        result = subprocess.run(argv, env=attempt_env, capture_output=True, text=True, check=False)
        assert result.returncode != 0, (argv, result.stdout, result.stderr)
        assert _torch(python) == "2.6.0+cpu", argv
        errors.append(result.stderr)
    # pip's refusal names the guard; uv's names the RECORD it cannot read.
    assert "installed by torchsmith guard" in errors[0] and "installed by torchsmith guard" in errors[2]
    assert "RECORD" in errors[3] and "RECORD" in errors[4]

    # guard status tells the truth about the environment it runs in.
    bypassing = dict(env, PIP_CONFIG_FILE="/dev/null", PIP_CONSTRAINT=str(user_constraints))
    status = json.loads(_torchsmith(["guard", "--json", "status", "--python", str(python)], bypassing).stdout)
    data = status["data"]
    assert data["on"] and not data["effective"] and status["status"] == "bypassed"
    assert [r.split("=", 1)[0] for r in data["bypassed"]] == ["PIP_CONFIG_FILE", "PIP_CONSTRAINT"]
    assert "torch" in data["held"]
    status = json.loads(_torchsmith(["guard", "--json", "status", "--python", str(python)], clean).stdout)
    assert status["data"]["effective"] and status["data"]["bypassed"] == []
    doctor = json.loads(_torchsmith(["doctor", "--json", "--python", str(python)], bypassing).stdout)
    found = {f["code"]: f for f in doctor["data"]["findings"]}
    assert "guard-bypassed" in found, sorted(found)
    assert any("PIP_CONSTRAINT" in fact["text"] for fact in found["guard-bypassed"]["facts"])

    # guard off gives the packages back: pip may then change torch, deliberately.
    assert _torchsmith(["guard", "off", "--python", str(python)], env).returncode == 0
    subprocess.run([*pip, "install", "--quiet", "torch==2.7.1"], env=clean, check=True, capture_output=True)
    assert _torch(python) == "2.7.1"
