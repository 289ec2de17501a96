"""The guard's parts that need no installer: holding RECORDs, the settings that bypass it, what it pins.
(Real pip and uv against a held environment: test_guard_bypass.py.)"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional

import pytest

from torchsmith.install.closure import guarded_names
from torchsmith.install.guard_hold import bypasses, held, hold, release


def _dist(site: Path, name: str, version: str, installer: str = "uv") -> Path:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Name: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n")
    (info / "INSTALLER").write_text(f"{installer}\n")
    return info


def test_hold_and_release_round_trip(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    torch = _dist(site, "torch", "2.6.0+cu126")
    cublas = _dist(site, "nvidia-cublas-cu12", "12.6.4.1")
    drifted = _dist(site, "torchvision", "0.22.0")
    other = _dist(site, "tqdm", "4.67.1")
    pins = {"torch": "2.6.0+cu126", "nvidia-cublas-cu12": "12.6.4.1", "torchvision": "0.21.0+cu126"}
    assert hold(str(tmp_path), pins) == ["nvidia-cublas-cu12", "torch"]
    assert held(str(tmp_path)) == ["nvidia-cublas-cu12", "torch"]
    for info in (torch, cublas):
        assert (info / "RECORD").is_dir()  # pip reads no RECORD; uv fails to read it
        assert "torchsmith guard" in (info / "INSTALLER").read_text()
    for info in (drifted, other):  # a drifted pin and an unpinned package stay as they were
        assert (info / "RECORD").is_file() and (info / "INSTALLER").read_text() == "uv\n"
    assert hold(str(tmp_path), pins) == ["nvidia-cublas-cu12", "torch"]  # idempotent
    assert release(str(tmp_path)) == ["nvidia-cublas-cu12", "torch"]
    assert (torch / "RECORD").read_text() == "torch/__init__.py,,\n"
    assert (torch / "INSTALLER").read_text() == "uv\n"
    assert sorted(os.listdir(torch)) == ["INSTALLER", "METADATA", "RECORD"]
    assert held(str(tmp_path)) == []


GUARD = "/env/torchsmith-guard.txt"


@pytest.mark.parametrize(("environ", "files", "expected"), [
    ({}, {}, []),
    ({"PIP_CONFIG_FILE": "/dev/null"}, {}, ["PIP_CONFIG_FILE=/dev/null"]),
    ({"PIP_CONSTRAINT": "/home/me/c.txt"}, {}, ["PIP_CONSTRAINT=/home/me/c.txt"]),
    ({"PIP_CONSTRAINT": f"/home/me/c.txt {GUARD}"}, {}, []),
    ({"PIP_CONFIG_FILE": "/home/me/pip.conf"}, {"/home/me/pip.conf": "[install]\nconstraint = /c.txt\n"},
     ["PIP_CONFIG_FILE=/home/me/pip.conf"]),
    # [global] loses to the site file's [install]: no bypass.
    ({"PIP_CONFIG_FILE": "/home/me/pip.conf"}, {"/home/me/pip.conf": "[global]\nconstraint = /c.txt\n"}, []),
    ({"VIRTUAL_ENV": "/env", "UV_CONSTRAINT": "/mine.txt"}, {}, ["UV_CONSTRAINT=/mine.txt"]),
    ({"VIRTUAL_ENV": "/env"}, {}, ["UV_CONSTRAINT is not set"]),
    ({"VIRTUAL_ENV": "/env", "UV_CONSTRAINT": GUARD}, {}, []),
    ({"VIRTUAL_ENV": "/other", "UV_CONSTRAINT": "/mine.txt"}, {}, []),  # another environment's shell
])
def test_bypasses(environ: Dict[str, str], files: Dict[str, str], expected: list) -> None:
    def read(path: str) -> Optional[str]:
        return files.get(path)

    found = bypasses("/env", GUARD, environ, read)
    assert len(found) == len(expected) and all(f.startswith(e) for f, e in zip(found, expected)), found


def test_the_guard_pins_the_torch_family_and_cuda_wheels_not_generic_dependencies() -> None:
    info = {
        "torch": {"requires": ["filelock", "sympy>=1.13", "nvidia-cublas-cu12==12.6.4.1", "triton==3.2.0"]},
        "torchvision": {"requires": ["torch==2.6.0", "numpy"]},
        "xformers": {"requires": ["torch==2.6.0"]},
        "mmcv": {"requires": ["torch>=2.6"]},
    }
    came_with_torch = {"torch", "torchvision", "nvidia-cublas-cu12", "triton", "filelock", "sympy",
                       "jinja2", "networkx", "fsspec", "setuptools", "typing-extensions"}
    assert guarded_names(info, came_with_torch, {"torch", "torchvision"}) == {
        "torch", "torchvision", "nvidia-cublas-cu12", "triton", "xformers"}
