"""The real uv (preview ``wheel-variants``) against a local find-links directory of torch variant
wheels: each way it refuses is recognised by explain as what it is, with its door.

The corpus samples ``tests/explain/corpus/wheel-variant-*`` were printed by these runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from tests.plan import test_variant_pick_uv as variants

from torchsmith.explain.catalog import catalog_of
from torchsmith.explain.matcher import explain_report
from torchsmith.kb import load_kb
from torchsmith.plan.variant_pick import FORCE_DRIVER, FORCE_SM

pytestmark = pytest.mark.slow

KB = load_kb(packaged_only=True)
CATALOG = catalog_of(KB)
AMD = {"$schema": "https://variants-schema.wheelnext.dev/v0.2.0.json",
       "default-priorities": {"namespace": ["amd"]},
       "providers": {"amd": {"requires": ["amd-variant-provider>=0.0.1"],
                             "plugin-api": "amd_variant_provider.plugin:AMDVariantPlugin"}},
       "variants": {"rocm64": {"amd": {"gfx_arch": ["gfx1100"]}}}}


def _links(where: Path, metadata: Dict[str, Any]) -> Path:
    where.mkdir()
    (where / f"torch-{variants.VERSION}-variants.json").write_text(json.dumps(metadata))
    saved = variants.VARIANTS
    variants.VARIANTS = metadata  # the wheels carry the same providers as the index file
    try:
        for label, properties in metadata["variants"].items():
            variants._variant_wheel(where, label, properties)
    finally:
        variants.VARIANTS = saved
    return where


@pytest.fixture(scope="module")
def uv_env(tmp_path_factory: pytest.TempPathFactory, uv_bin: str) -> Dict[str, Any]:
    root = tmp_path_factory.mktemp("uv-variant-errors")
    labels = {k: v for k, v in variants.VARIANTS["variants"].items() if k != variants.NULL}
    no_null = {**variants.VARIANTS, "variants": labels}
    env = {key: value for key, value in os.environ.items() if not key.startswith(("UV_", "PIP_"))}
    env.update({"UV_NO_CONFIG": "1", "UV_CACHE_DIR": str(root / "cache"),
                FORCE_DRIVER: "11.8", FORCE_SM: "8.9"})  # a driver below every label's floor
    subprocess.run([uv_bin, "venv", "-q", str(root / "venv"), "--python", sys.executable],
                   check=True, env=env)
    return {"root": root, "env": env, "uv": uv_bin, "python": str(root / "venv" / "bin" / "python"),
            "gpu": _links(root / "gpu", no_null), "amd": _links(root / "amd", AMD)}


def _uv(setup: Dict[str, Any], *args: str) -> str:
    done = subprocess.run([setup["uv"], *args], env=setup["env"], capture_output=True, text=True, check=False)
    assert done.returncode != 0, done.stdout
    return done.stderr


def _causes(text: str) -> List[str]:
    return [e.signature.id for e in explain_report(text, CATALOG, kb=KB).explanations]


def test_no_variant_for_an_old_driver_is_named_with_the_provider_override(uv_env: Dict[str, Any]) -> None:
    args = ["pip", "install", "--preview-features", "wheel-variants", "--no-index", "--find-links",
            str(uv_env["gpu"]), "--python", uv_env["python"], "torch"]
    text = "$ uv " + " ".join(args) + "\n" + _uv(uv_env, *args)
    assert "has only unsupported wheel variants" in text
    (explanation,) = explain_report(text, CATALOG, kb=KB).explanations
    assert explanation.signature.id == "wheel-variant-none-matched"
    assert "none of the published variants fits" in explanation.cause


def test_a_variant_wheel_without_the_preview_flag(uv_env: Dict[str, Any]) -> None:
    wheel = next(uv_env["gpu"].glob("*-cu126.whl"))
    text = _uv(uv_env, "pip", "install", "--python", uv_env["python"], str(wheel))
    assert _causes(text) == ["wheel-variant-preview-off"]


def test_a_provider_uv_does_not_run_is_named(uv_env: Dict[str, Any]) -> None:
    text = _uv(uv_env, "pip", "install", "-v", "--preview-features", "wheel-variants", "--no-index",
               "--find-links", str(uv_env["amd"]), "--python", uv_env["python"], "torch")
    assert set(_causes(text)) == {"wheel-variant-provider-skipped", "wheel-variant-none-matched"}


def test_pylock_export_of_a_variant_is_named(uv_env: Dict[str, Any]) -> None:
    requirements = uv_env["root"] / "requirements.in"
    requirements.write_text("torch\n")
    links = uv_env["root"] / "with-null"
    if not links.exists():
        _links(links, variants.VARIANTS)
    env = {**uv_env["env"], FORCE_DRIVER: "12.9"}
    done = subprocess.run([uv_env["uv"], "pip", "compile", "--preview-features", "wheel-variants",
                           "--no-index", "--find-links", str(links), "--format", "pylock.toml",
                           str(requirements)],
                          env=env, capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert _causes(done.stderr) == ["wheel-variant-pylock-unsupported"]


def test_a_truncated_variants_json_is_named(uv_env: Dict[str, Any]) -> None:
    broken = uv_env["root"] / "broken"
    if not broken.exists():
        _links(broken, variants.VARIANTS)
        (broken / f"torch-{variants.VERSION}-variants.json").write_text('{"variants": \n')
    text = _uv(uv_env, "pip", "install", "--preview-features", "wheel-variants", "--no-index", "--find-links",
               str(broken), "--python", uv_env["python"], "torch")
    assert _causes(text) == ["wheel-variant-metadata-unreadable"]
