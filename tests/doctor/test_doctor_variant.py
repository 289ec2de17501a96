"""doctor on a torch a wheel-variant installer put in: which variant (dist-info/variant.json) and
whether it fits the machine's GPUs and driver.

The fast tests feed the report as ``inspect_env.py`` prints it; the slow one installs variant
wheels with the real uv 0.13.9 (preview ``wheel-variants``, NVIDIA detection faked through the
provider's own override variables) and reads the environment with the real snippet.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from tests.doctor.envs import cpu_host, gpu_host, report

from torchsmith.doctor.checks import run_checks
from torchsmith.doctor.checks.variant import check_variant_install
from torchsmith.doctor.inspect import snippet_path
from torchsmith.machine import NvidiaGpu
from torchsmith.plan.variant_pick import FORCE_DRIVER, FORCE_SM

CU128 = {"nvidia": {"cuda_version_lower_bound": ["12.8"],
                    "sm_arch": ["75_real", "80_real", "86_real", "90_real", "100_real", "120_real"]}}


def variant_report(label: str, properties: Dict[str, Any], installer: str = "uv") -> Dict[str, Any]:
    rep = report("2.9.0", "12.8")
    metadata = rep["torch_installs"][0]["metadata"]
    rep["torch_installs"][0].update(source=installer, variant={"file": f"{metadata}/variant.json",
                                                               "variants": {label: properties}})
    return rep


def test_a_variant_that_fits_is_reported_with_what_it_carries() -> None:
    host = gpu_host(cc="8.9", driver_cuda="12.9")
    found = check_variant_install(variant_report("cu128", CU128), host, None)
    assert found is not None and (found.code, found.severity) == ("variant-install", "info")
    assert "wheel variant cu128" in found.title
    assert found.facts[0].text.startswith("torch 2.9.0 was installed by uv as wheel variant cu128")
    assert "CUDA floor 12.8" in found.facts[0].text and "sm_120" in found.facts[0].text
    assert found.facts[0].source.endswith("torch-2.9.0.dist-info/variant.json")


def test_a_variant_without_code_for_one_gpu_is_an_error_with_both_doors() -> None:
    # The provider reports the highest GPU only: a V100 next to a B200 gets a label without sm_70.
    machine = gpu_host(cc="10.0", name="NVIDIA B200", driver_cuda="13.0")
    assert machine.nvidia is not None
    volta = NvidiaGpu(index=1, name="Tesla V100-SXM2-32GB", compute_capability="7.0", source="nvidia-smi")
    machine = dataclasses.replace(machine, nvidia=dataclasses.replace(machine.nvidia,
                                                                      gpus=(*machine.nvidia.gpus, volta)))
    found = check_variant_install(variant_report("cu128", CU128), machine, None)
    assert found is not None and (found.code, found.severity) == ("variant-mismatch", "error")
    assert "no code for compute capability 7.0" in found.title
    assert any(f"{FORCE_DRIVER}=13.0 {FORCE_SM}=7.0 uv pip install" in step for step in found.fix)
    assert any("torchsmith plan --installer uv --variants" in step for step in found.fix)


def test_a_floor_above_the_driver_and_a_cpu_variant_on_a_gpu_host_do_not_fit() -> None:
    old_driver = gpu_host(cc="8.9", driver="535.104.05", driver_cuda="12.2")
    found = check_variant_install(variant_report("cu128", CU128), old_driver, None)
    assert found is not None and "CUDA floor 12.8 is above the driver's CUDA 12.2" in found.title
    null = check_variant_install(variant_report("null", {}), old_driver, None)
    assert null is not None and null.code == "variant-mismatch"
    assert "the null variant" in null.facts[0].text and "CPU build" in null.title


def test_a_cuda_variant_on_a_machine_without_nvidia_gpus_is_not_called_a_fit() -> None:
    found = check_variant_install(variant_report("cu128", CU128), cpu_host(), None)
    assert found is not None and found.severity == "info" and "shows none" in found.title


def test_no_variant_metadata_means_no_finding_and_run_checks_includes_the_check() -> None:
    plain = report("2.9.0", "12.8")
    assert check_variant_install(plain, gpu_host(), None) is None
    host = gpu_host(cc="8.9", driver_cuda="12.9")
    codes = {f.code for f in run_checks(variant_report("cu128", CU128), host, None)}
    assert "variant-install" in codes


@pytest.mark.slow
def test_a_real_uv_variant_install_is_read_from_its_dist_info(tmp_path: Path, uv_bin: str) -> None:
    from tests.plan.test_variant_pick_uv import VARIANTS, VERSION, _variant_wheel

    links = tmp_path / "links"
    links.mkdir()
    (links / f"torch-{VERSION}-variants.json").write_text(json.dumps(VARIANTS))
    for label, properties in VARIANTS["variants"].items():
        _variant_wheel(links, label, properties)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("UV_", "PIP_"))}
    env.update({FORCE_DRIVER: "12.9", FORCE_SM: "8.9", "UV_NO_CONFIG": "1",
                "UV_CACHE_DIR": str(tmp_path / "c")})
    venv = tmp_path / "venv"
    subprocess.run([uv_bin, "venv", "-q", str(venv), "--python", sys.executable], check=True, env=env)
    python = str(venv / "bin" / "python")
    subprocess.run([uv_bin, "pip", "install", "-q", "--preview-features", "wheel-variants", "--no-index",
                    "--find-links", str(links), "--python", python, "torch"], check=True, env=env)
    out = subprocess.run([python, snippet_path("inspect_env.py")], check=True, capture_output=True, text=True)
    rep: Dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    (install,) = rep["torch_installs"]
    # uv takes the newest label whose floor the driver meets
    assert install["source"] == "uv" and list(install["variant"]["variants"]) == ["cu129"]
    fits: Optional[Any] = check_variant_install(rep, gpu_host(cc="8.9", driver_cuda="12.9"), None)
    assert fits is not None and fits.code == "variant-install"
    misfit = check_variant_install(rep, gpu_host(cc="6.0", name="Tesla P100", driver_cuda="12.9"), None)
    assert misfit is not None and misfit.code == "variant-mismatch"
    seen: List[str] = [f.text for f in misfit.facts]
    assert any("installed by uv as wheel variant cu129" in text for text in seen)
