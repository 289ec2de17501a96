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


# torch 2.8's published file (wheelnext/variant-repack@e75a16d9 configs/torch-2.8), verbatim but for
# the provider's ``enable-if``, the one field uv's own preview refuses it for
# (test_variant_index_uv.py): labels cu126 (floor 12.0), cu128 (12.8), cu129 (12.9), null 00000000.
VARIANTS = json.loads((Path(__file__).parent / "data" / "variant-repack-e75a16d9" /
                       "torch-2.8.0-variants.json").read_text())
del VARIANTS["providers"]["nvidia"]["enable-if"]
VERSION = "2.8.0"  # the release the file above is for
NULL = next(label for label, properties in VARIANTS["variants"].items() if not properties)


def _record(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _variant_wheel(links: Path, label: str, properties: Dict[str, Any]) -> None:
    info = f"torch-{VERSION}.dist-info"
    one = {key: VARIANTS[key] for key in ("$schema", "default-priorities", "providers")}
    files = {"torch/__init__.py": f"VARIANT = {label!r}\n".encode(),
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {VERSION}\n".encode(),
             f"{info}/WHEEL": (b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                               b"Tag: py3-none-any\n"),
             f"{info}/variant.json": json.dumps({**one, "variants": {label: properties}}).encode()}
    record = [f"{path},{_record(data)},{len(data)}" for path, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(links / f"torch-{VERSION}-py3-none-any-{label}.whl", "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("variant-links")
    (where / f"torch-{VERSION}-variants.json").write_text(json.dumps(VARIANTS))
    for label, properties in VARIANTS["variants"].items():
        _variant_wheel(where, label, properties)
    return where


@pytest.mark.parametrize(("driver_cuda", "cc", "label"), [
    ("12.2", "8.9", "cu126"), ("12.4", "8.9", "cu126"), ("12.9", "8.9", "cu129"), ("12.6", "8.9", "cu126"),
    ("13.0", "7.0", "cu129"), ("13.0", "5.0", "cu126"),  # only cu126 declares sm_50
    ("12.4", "12.0", NULL),  # R550 + Blackwell: only cu128/cu129 have sm_120, their floors are above 12.4
])
def test_the_prediction_is_what_uv_installs(links: Path, tmp_path: Path, uv_bin: str, driver_cuda: str,
                                            cc: str, label: str) -> None:
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
    labels = parse_variants_json((links / "torch-2.8.0-variants.json").read_text())
    predicted = installer_pick(labels, [cc], driver_cuda).label or NULL
    assert predicted == installed == label
