"""What the real uv (its own ``wheel-variants`` preview) does with the variants.json torch publishes,
recorded in variant_labels.json: the caveat `plan/fleet --variants` gives is what uv does.

A local find-links directory holds one wheel per label, each carrying its ``variant.json``, and the
release's ``torch-<version>-variants.json``; detection is forced through the providers' own
variables, so the machine is the described one.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from torchsmith.kb import load_kb
from torchsmith.plan.variant_labels import (
    mainline_uv_caveat,
    recorded,
    uv_preview,
    uv_skipped_nvidia,
    uv_unparsed,
)
from torchsmith.plan.variant_pick import FORCE_DRIVER, FORCE_SM
from torchsmith.plan.variant_providers import AMD_FORCE_GFX, AMD_FORCE_ROCM

pytestmark = pytest.mark.slow
KB = load_kb(None)


def _record(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _links(root: Path, version: str, metadata: Dict[str, Any]) -> Path:
    """torch-<version>-variants.json and a wheel per label whose torch/__init__.py names it."""
    root.mkdir()
    (root / f"torch-{version}-variants.json").write_text(json.dumps(metadata))
    shared = {key: value for key, value in metadata.items() if key != "variants"}
    for label, properties in metadata["variants"].items():
        info = f"torch-{version}.dist-info"
        files = {"torch/__init__.py": f"VARIANT = {label!r}\n".encode(),
                 f"{info}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n".encode(),
                 f"{info}/WHEEL": (b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                                   b"Tag: py3-none-any\n"),
                 f"{info}/variant.json": json.dumps({**shared, "variants": {label: properties}}).encode()}
        record = [f"{path},{_record(data)},{len(data)}" for path, data in files.items()]
        record.append(f"{info}/RECORD,,")
        files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
        with zipfile.ZipFile(root / f"torch-{version}-py3-none-any-{label}.whl", "w") as archive:
            for path, data in files.items():
                archive.writestr(path, data)
    return root


def _metadata(version: str) -> Dict[str, Any]:
    row = recorded(KB, version)
    assert row is not None
    data = {key: copy.deepcopy(row[key]) for key in ("default-priorities", "static-properties", "providers",
                                                      "variants") if key in row}
    return {"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json", **data}


def _install(uv: str, links: Path, tmp: Path, env: Dict[str, str]) -> Tuple[int, str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    environ.update(env, UV_NO_CONFIG="1", UV_CACHE_DIR=str(tmp / "cache"))
    venv = tmp / "venv"
    subprocess.run([uv, "venv", "-q", str(venv), "--python", sys.executable], check=True, env=environ)
    python = venv / "bin" / "python"
    done = subprocess.run([uv, "pip", "install", "-v", "--preview-features", "wheel-variants", "--no-index",
                           "--find-links", str(links), "--python", str(python), "torch"],
                          check=False, env=environ, capture_output=True, text=True)
    installed = subprocess.run([str(python), "-c", "import torch; print(torch.VARIANT)"],
                               check=False, capture_output=True, text=True).stdout.strip()
    return done.returncode, done.stderr, installed


REAL = Path(__file__).parent / "data" / "variant-repack-e75a16d9"  # the configs' files, verbatim


def _stripped(version: str) -> Dict[str, Any]:
    """A recorded file without every field uv's preview was seen to refuse."""
    metadata = _metadata(version)
    metadata.pop("static-properties", None)
    metadata["default-priorities"].pop("property", None)
    metadata["providers"].pop("priority", None)
    metadata["default-priorities"]["namespace"] = [n for n in metadata["default-priorities"]["namespace"]
                                                   if n != "priority"]
    for provider in metadata["providers"].values():
        provider.pop("enable-if", None)
    for properties in metadata["variants"].values():
        properties.pop("priority", None)
    assert not uv_unparsed(KB, metadata)
    return metadata


@pytest.mark.parametrize("version", ["2.8.0", "2.9.0", "2.10.0"])
def test_uv_refuses_the_real_files_verbatim_as_the_data_records(version: str, tmp_path: Path,
                                                               uv_bin: str) -> None:
    """The file exactly as PyTorch's release workflow repacks with (wheelnext/variant-repack@e75a16d9
    configs/torch-X.Y), and the uv this test runs, are the ones variant_labels.json's uv_preview names."""
    seen = uv_preview(KB)
    assert subprocess.run([uv_bin, "--version"], capture_output=True, text=True,
                          check=True).stdout.split()[1] == seen["version"]
    real = json.loads((REAL / f"torch-{version}-variants.json").read_text())
    assert {k: v for k, v in real.items() if k != "$schema"} == {
        k: v for k, v in (recorded(KB, version) or {}).items() if k not in ("torch", "source", "path")}
    assert version in seen["refused"] and uv_unparsed(KB, real)
    code, stderr, installed = _install(uv_bin, _links(tmp_path / "links", version, real), tmp_path,
                                       {FORCE_DRIVER: "12.8", FORCE_SM: "9.0"})
    assert code != 0 and installed == "" and seen["message"].replace("torch ", "") in stderr


@pytest.mark.parametrize("field", ["", "providers.*.enable-if", "default-priorities.property",
                                   "static-properties"])
def test_uv_refuses_each_recorded_field_alone(field: str, tmp_path: Path, uv_bin: str) -> None:
    """Without any of the fields ("" below) uv parses 2.10's file but skips its NVIDIA provider, whose
    ``requires`` (>=0.0.2) its own provider does not satisfy: the null variant; with 2.8's (>=0.0.1)
    it runs it and takes a CUDA label. Each field put back alone makes it refuse the file."""
    assert not field or field in [r["field"] for r in uv_preview(KB)["rejects"]]
    metadata = _stripped("2.10.0")
    forced = {FORCE_DRIVER: "12.8", FORCE_SM: "9.0"}
    if not field:
        assert uv_skipped_nvidia(KB, metadata) == "nvidia-variant-provider>=0.0.2,<1.0.0"
        links = _links(tmp_path / "one", "2.10.0", metadata)
        code, stderr, installed = _install(uv_bin, links, tmp_path, forced)
        assert code == 0 and installed == "null", stderr[-1500:]
        assert "Skipping unsupported wheel variant provider `nvidia_variant_provider" in stderr
        metadata["providers"]["nvidia"]["requires"] = _metadata("2.8.0")["providers"]["nvidia"]["requires"]
        assert uv_skipped_nvidia(KB, metadata) is None
        code, stderr, installed = _install(uv_bin, _links(tmp_path / "two", "2.10.0", metadata),
                                           tmp_path / "two", forced)
        assert code == 0 and installed.startswith("cuda12."), stderr[-1500:]
        return
    metadata["providers"]["nvidia"]["requires"] = _metadata("2.8.0")["providers"]["nvidia"]["requires"]
    if field == "providers.*.enable-if":
        metadata["providers"]["nvidia"]["enable-if"] = "platform_system == 'Linux'"
    elif field == "default-priorities.property":
        metadata["default-priorities"]["property"] = {"nvidia": {"cuda_version_lower_bound": ["13.0"]}}
    else:
        metadata["static-properties"] = {"nvidia": {"sm_arch": ["90_real"]}}
    code, stderr, _ = _install(uv_bin, _links(tmp_path / "links", "2.10.0", metadata), tmp_path, forced)
    assert code != 0 and "has invalid metadata" in stderr, stderr[-1500:]


@pytest.mark.parametrize("version", ["2.8.0", "2.9.0", "2.10.0"])
def test_uv_cannot_parse_the_published_files_as_the_caveat_says(version: str, tmp_path: Path,
                                                                 uv_bin: str) -> None:
    caveat = mainline_uv_caveat(KB, version, vendor=False)
    assert caveat is not None and caveat.startswith("uv 0.13.9's own preview cannot parse")
    forced = {FORCE_DRIVER: "12.8", FORCE_SM: "9.0"}
    code, stderr, installed = _install(uv_bin, _links(tmp_path / "links", version, _metadata(version)),
                                       tmp_path, forced)
    assert code != 0 and installed == ""
    assert "has invalid metadata" in stderr and f"torch-{version}-variants.json" in stderr


def test_uv_skips_the_amd_provider_so_an_amd_machine_gets_cpu(tmp_path: Path, uv_bin: str) -> None:
    """The 2.10 labels without the fields uv does not parse, AMD detection forced to a GPU and ROCm
    the rocm7.1 label lists: a provider-running installer takes rocm7.1; uv's own preview skips the
    AMD provider and takes the null variant."""
    metadata = _metadata("2.10.0")
    metadata.pop("static-properties")
    metadata["providers"].pop("priority")
    metadata["default-priorities"]["namespace"].remove("priority")
    for provider in metadata["providers"].values():
        provider.pop("enable-if", None)
    for properties in metadata["variants"].values():
        properties.pop("priority", None)
    assert not uv_unparsed(KB, metadata)
    caveat = mainline_uv_caveat(KB, "2.99.0", vendor=True)
    assert caveat is not None and caveat.startswith("uv 0.13.9's own preview runs only its built-in")
    links = _links(tmp_path / "links", "2.10.0", metadata)
    code, stderr, installed = _install(uv_bin, links, tmp_path, {AMD_FORCE_GFX: "gfx1100",
                                                                 AMD_FORCE_ROCM: "7.1.0"})
    assert code == 0 and installed == "null", stderr[-2000:]
    assert "Skipping unsupported wheel variant provider `amd_variant_provider" in stderr
