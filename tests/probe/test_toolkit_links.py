"""One CUDA install reached through several links is one toolkit (the real H100 host showed three)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict

from torchsmith.host.live import LiveHost
from torchsmith.host.recorded import RecordedHost, RecordingHost
from torchsmith.probe.system import detect_toolkits

VERSION_JSON = json.dumps({"cuda": {"name": "CUDA SDK", "version": "13.0.2"}})


def _capture(links: Dict[str, str]) -> Dict[str, Any]:
    """/usr/local as the real H100 host has it: cuda, cuda-13 and cuda-13.0."""
    files = {f"/usr/local/{name}/version.json": VERSION_JSON for name in ("cuda", "cuda-13", "cuda-13.0")}
    dirs: Dict[str, Any] = {"/usr/local": ["bin", "cuda", "cuda-13", "cuda-13.0", "lib"]}
    dirs.update({f"/usr/local/{name}/bin": ["nvcc"] for name in ("cuda", "cuda-13", "cuda-13.0")})
    platform = {"system": "Linux", "machine": "x86_64", "release": "6.8", "python_version": "3.12.3",
                "python_implementation": "CPython", "python_executable": "/usr/bin/python3",
                "python_prefix": "/usr", "python_base_prefix": "/usr"}
    return {"schema": 1, "platform": platform, "files": files, "dirs": dirs, "links": links}


def test_links_to_one_install_give_one_toolkit() -> None:
    links = {"/usr/local/cuda": "/usr/local/cuda-13.0", "/usr/local/cuda-13": "/usr/local/cuda-13.0"}
    toolkits = detect_toolkits(RecordedHost(_capture(links)), [])
    assert [(t.path, t.version) for t in toolkits] == [("/usr/local/cuda", "13.0")]


def test_separate_installs_stay_separate() -> None:
    toolkits = detect_toolkits(RecordedHost(_capture({})), [])
    assert [t.path for t in toolkits] == ["/usr/local/cuda", "/usr/local/cuda-13", "/usr/local/cuda-13.0"]


def test_a_recording_keeps_the_links_it_resolved(tmp_path: Path) -> None:
    real = tmp_path / "cuda-13.0"
    real.mkdir()
    os.symlink(real, tmp_path / "cuda")
    recorder = RecordingHost(LiveHost({}))
    assert recorder.real_path(str(tmp_path / "cuda")) == str(real)
    assert recorder.real_path(str(real)) == str(real)
    assert recorder.capture()["links"] == {str(tmp_path / "cuda"): str(real)}


def test_only_the_head_of_cuda_h_is_read(tmp_path: Path) -> None:
    """CUDA 13's cuda.h is 1.1 MB and its version line is ~15 KB in: the probe reads the head,
    live and from a capture, and a recording keeps only what was read."""
    include = tmp_path / "cuda-13.0" / "include"
    include.mkdir(parents=True)
    header = ("/* licence */\n" * 1000 + "#define CUDA_VERSION 13000\n"
              + "CUresult cuInit(unsigned);\n" * 40000)
    (include / "cuda.h").write_text(header, encoding="utf-8")
    assert len(header) > 1_000_000
    recorder = RecordingHost(LiveHost({}))
    toolkit = str(tmp_path / "cuda-13.0")
    from torchsmith.probe.system import toolkit_version

    assert toolkit_version(recorder, toolkit) == ("13.0", "include/cuda.h")
    kept = recorder.capture()["files"][str(include / "cuda.h")]
    assert kept.startswith("/* licence */") and "CUDA_VERSION 13000" in kept and len(kept) <= 128 * 1024
    replay = RecordedHost({**_capture({}), "files": {str(include / "cuda.h"): header, "/f": "é" * 10}})
    assert toolkit_version(replay, toolkit) == ("13.0", "include/cuda.h")
    assert replay.read_text("/f", 5) == "éé\ufffd"  # bytes, as a live read counts them
