"""The shared local package index: wheels pip accepts, simple-index pages, stalls, clean shutdown."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Dict

import pytest
from tests.support.pkgindex import IndexServer, build_wheel, serve_index, sha256_of
from tests.support.torchstack import EVIL_TRITON, TorchStack


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def test_wheel_has_metadata_and_a_record_that_matches(tmp_path: Path) -> None:
    path = build_wheel(tmp_path, "torch", "2.6.0+cu126", requires=["torchtriton>=3.2"])
    assert path.name == "torch-2.6.0+cu126-py3-none-any.whl"
    with zipfile.ZipFile(path) as archive:
        metadata = archive.read("torch-2.6.0+cu126.dist-info/METADATA").decode()
        record = archive.read("torch-2.6.0+cu126.dist-info/RECORD").decode().splitlines()
        for line in record:
            name, digest, size = line.rsplit(",", 2)
            if digest:
                data = archive.read(name)
                assert int(size) == len(data)
                assert digest.startswith("sha256=")
    assert "Version: 2.6.0+cu126" in metadata and "Requires-Dist: torchtriton>=3.2" in metadata
    # Same inputs, same bytes: lock hashes stay stable across sessions.
    again = build_wheel(tmp_path / "again", "torch", "2.6.0+cu126", requires=["torchtriton>=3.2"])
    assert sha256_of(again) == sha256_of(path)


def test_index_pages_list_projects_and_files_with_hashes(package_index: IndexServer,
                                                         torch_stack: TorchStack) -> None:
    assert {"pypi", "evil", "pytorch/cpu", "pytorch/cu126", "pytorch/cu128"} <= set(package_index.indexes())
    root = _get(package_index.index_url("pytorch/cu126"))
    assert 'href="torch/"' in root and 'href="nvidia-cuda-runtime-cu12/"' in root
    page = _get(package_index.index_url("pytorch/cu126") + "torch/")
    links = re.findall(r'href="([^"]+)"', page)
    assert len(links) == 2
    wheel = torch_stack.root / "pytorch/cu126/torch-2.6.0+cu126-py3-none-any.whl"
    assert any(link.endswith("#sha256=" + sha256_of(wheel)) for link in links)
    # The link resolves to the wheel's bytes.
    file_url = urllib.request.urljoin(package_index.index_url("pytorch/cu126") + "torch/", links[0])
    with urllib.request.urlopen(file_url.split("#")[0], timeout=10) as response:
        body = response.read()
    assert hashlib.sha256(body).hexdigest() == links[0].split("=")[-1]
    assert package_index.fetched("torch-2.6.0+cu126")
    assert 'href="torchtriton/"' not in _get(package_index.index_url("pytorch/cpu"))
    assert f"torchtriton-{EVIL_TRITON}" in _get(package_index.index_url("evil") + "torchtriton/")
    assert f"torchtriton-{EVIL_TRITON}" not in _get(package_index.index_url("pypi") + "torchtriton/")


def test_unknown_paths_are_404(package_index: IndexServer) -> None:
    for path in ("/nope/", "/pypi/nope/", "/../../etc/passwd"):
        with pytest.raises(urllib.error.HTTPError) as caught:
            _get(package_index.url + path)
        assert caught.value.code == 404
        caught.value.close()


def test_stall_holds_a_download_until_released(tmp_path: Path) -> None:
    build_wheel(tmp_path / "idx", "slowpkg", "1.0")
    with serve_index(tmp_path) as server:
        server.stall("slowpkg-")
        got: Dict[str, bytes] = {}

        def fetch() -> None:
            with urllib.request.urlopen(server.url + "/idx/slowpkg-1.0-py3-none-any.whl",
                                        timeout=10) as response:
                got["body"] = response.read()

        worker = threading.Thread(target=fetch)
        worker.start()
        assert server.stall_hit.wait(5)
        worker.join(0.3)
        assert worker.is_alive() and not got
        server.release()
        worker.join(5)
        assert got["body"][:2] == b"PK"


@pytest.mark.slow
def test_pip_installs_from_the_index_and_the_fake_stack_imports(
        package_index: IndexServer, installer_env: Dict[str, str], tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q",
         "--index-url", package_index.index_url("pytorch/cu126"), "torchvision==0.21.0+cu126"],
        env=installer_env, check=True)
    code = ("import torch, torchvision; print(torch.__version__, torch.version.cuda, "
            "torchvision.__version__, torch.cuda.is_available())")
    out = subprocess.run([python, "-c", code], env=installer_env, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out == ["2.6.0+cu126", "12.6", "0.21.0+cu126", "False"]
    env = dict(installer_env, TORCHSMITH_FAKE_CUDA_CC="8.6")
    code = "import torch; print(torch.cuda.is_available(), torch.cuda.get_device_capability())"
    out = subprocess.run([python, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
    assert out.strip() == "True (8, 6)"
