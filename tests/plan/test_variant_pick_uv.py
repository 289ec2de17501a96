"""The prediction of plan.variant_pick against the real uv (preview ``wheel-variants``): a local
find-links directory holds variant wheels and their ``torch-<version>-variants.json`` (PEP 825
draft), NVIDIA detection is faked through the provider's own override variables, and what uv
installs is read back from the environment."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Dict

import pytest

from torchsmith.kb.variant_index import parse_variants_json
from torchsmith.plan.variant_pick import FORCE_DRIVER, FORCE_SM, installer_pick

pytestmark = pytest.mark.slow


def _label(lower: str, *archs: str) -> Dict[str, Any]:
    return {"nvidia": {"cuda_version_lower_bound": [lower], "sm_arch": list(archs)}}


VARIANTS = {"$schema": "https://variants-schema.wheelnext.dev/v0.2.0.json",
            "default-priorities": {"namespace": ["nvidia"]},
            "providers": {"nvidia": {"requires": ["nvidia-variant-provider>=0.0.1,<1.0.0"],
                                     "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin"}},
            "variants": {"cu126": _label("12.6", "70_real", "75_real", "80_real", "86_real", "90_real"),
                         "cu128": _label("12.8", "75_real", "80_real", "86_real", "90_real", "100_real",
                                         "120_real"),
                         "null": {}}}


def _record(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _variant_wheel(links: Path, label: str, properties: Dict[str, Any]) -> None:
    info = "torch-2.9.0.dist-info"
    one = {key: VARIANTS[key] for key in ("$schema", "default-priorities", "providers")}
    files = {"torch/__init__.py": f"VARIANT = {label!r}\n".encode(),
             f"{info}/METADATA": b"Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\n",
             f"{info}/WHEEL": (b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                               b"Tag: py3-none-any\n"),
             f"{info}/variant.json": json.dumps({**one, "variants": {label: properties}}).encode()}
    record = [f"{path},{_record(data)},{len(data)}" for path, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(links / f"torch-2.9.0-py3-none-any-{label}.whl", "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("variant-links")
    (where / "torch-2.9.0-variants.json").write_text(json.dumps(VARIANTS))
    for label, properties in VARIANTS["variants"].items():
        _variant_wheel(where, label, properties)
    return where


@pytest.mark.parametrize(("driver_cuda", "cc"), [("12.2", "8.9"), ("12.4", "8.9"), ("12.9", "8.9"),
                                                 ("12.6", "8.9"), ("13.0", "7.0")])
def test_the_prediction_is_what_uv_installs(links: Path, tmp_path: Path, uv_bin: str, driver_cuda: str,
                                            cc: str) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("UV_", "PIP_"))}
    env.update({FORCE_DRIVER: driver_cuda, FORCE_SM: cc, "UV_NO_CONFIG": "1",
                "UV_CACHE_DIR": str(tmp_path / "cache")})
    venv = tmp_path / "venv"
    subprocess.run([uv_bin, "venv", "-q", str(venv), "--python", sys.executable], check=True, env=env)
    python = venv / "bin" / "python"
    subprocess.run([uv_bin, "pip", "install", "-q", "--preview-features", "wheel-variants", "--no-index",
                    "--find-links", str(links), "--python", str(python), "torch"], check=True, env=env)
    installed = subprocess.run([str(python), "-c", "import torch; print(torch.VARIANT)"], check=True,
                               capture_output=True, text=True).stdout.strip()
    labels = parse_variants_json((links / "torch-2.9.0-variants.json").read_text())
    predicted = installer_pick(labels, [cc], driver_cuda).label or "null"
    assert predicted == installed
