"""torch's own requirements (torch_requires.json): what `kb refresh` reads of the releases the
packaged file lacks, from the index's core-metadata files, the same way tools/torch_requires.py does."""

from __future__ import annotations

import json
from typing import Callable, Dict, List

import pytest

from torchsmith.errors import FetchError
from torchsmith.kb import load_kb
from torchsmith.kb.torch_requires import refresh_torch_requires, without_range

INDEX = "https://index.example/simple"
WHEELS = ("torch-9.9.0-cp312-cp312-manylinux_2_28_x86_64.whl", "torch-9.9.0-cp312-cp312-win_amd64.whl",
          "torch-9.9.0rc1-cp312-cp312-win_amd64.whl", "torch-2.15.0-cp312-cp312-win_amd64.whl")
META = {
    "manylinux_2_28_x86_64": "Metadata-Version: 2.1\nName: torch\nVersion: 9.9.0\nRequires-Dist: filelock\n"
                             "Requires-Dist: nvidia-cudnn-cu13==9.9; platform_system == \"Linux\"\n"
                             "Requires-Dist: onnxscript>=0.5; extra == \"onnx\"\nProvides-Extra: onnx\n",
    "win_amd64": "Metadata-Version: 2.1\nName: torch\nVersion: 9.9.0\nRequires-Dist: filelock>=3\n"
                 "Requires-Dist: mkl; platform_system == \"Windows\"\n",
}


def _fetch(pages: Dict[str, str]) -> Callable[[str, float], str]:
    def fetch(url: str, timeout: float) -> str:
        if url not in pages:
            raise FetchError(f"{url}: HTTP 404", status=404)
        return pages[url]
    return fetch


def _pages() -> Dict[str, str]:
    files = [{"filename": name, "url": f"https://files.example/{name}", "core-metadata": True}
             for name in WHEELS]
    pages = {f"{INDEX}/torch/": json.dumps({"meta": {"api-version": "1.1"}, "name": "torch", "files": files})}
    for name in WHEELS:
        tag = name.rsplit("-", 1)[1][:-len(".whl")]
        if "9.9.0-" in name:
            pages[f"https://files.example/{name}.metadata"] = META[tag]
    return pages


def test_refresh_adds_the_final_releases_the_packaged_file_lacks_with_the_union_of_their_platforms() -> None:
    packaged = load_kb(packaged_only=True).document("torch_requires")
    read: List[Dict[str, object]] = []
    document = refresh_torch_requires(packaged, _fetch(_pages()), INDEX, today="2030-01-01", read=read)
    assert document is not None and document["retrieved"] == "2030-01-01"
    newest = document["releases"][0]
    assert newest["version"] == "9.9.0"  # the release candidate is not read
    assert newest["requires"] == ["filelock", 'nvidia-cudnn-cu13; platform_system == "Linux"',
                                  'onnxscript; extra == "onnx"', 'mkl; platform_system == "Windows"']
    assert newest["extras"] == ["onnx"] and newest["platforms_read"] == ["linux-x86_64", "windows"]
    # what the packaged file read stays; the import names stay as packaged
    assert len(document["releases"]) == len(packaged["releases"]) + 1
    assert document["import_names"] == packaged["import_names"]
    assert read[-1]["status"] == "ok"


def test_an_index_without_new_releases_or_unreadable_leaves_the_packaged_file() -> None:
    packaged = load_kb(packaged_only=True).document("torch_requires")
    assert refresh_torch_requires(packaged, _fetch({}), INDEX, today="2030-01-01") is None
    pages = {k: v for k, v in _pages().items() if not k.endswith(".metadata")}
    assert refresh_torch_requires(packaged, _fetch(pages), INDEX, today="2030-01-01") is None


@pytest.mark.parametrize(("requirement", "kept"), [
    ("sympy>=1.13.3", "sympy"),
    ('triton==3.5.0; platform_system == "Linux"', 'triton; platform_system == "Linux"'),
    ("opt-einsum[x] (>=3.3)", "opt-einsum[x]"),
])
def test_a_requirement_keeps_its_name_and_marker(requirement: str, kept: str) -> None:
    assert without_range(requirement) == kept
