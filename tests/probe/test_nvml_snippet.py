"""The NVML child (snippets/nvml_probe.py) against a stand-in libnvidia-ml.so.1 built here by the
C compiler: the snippet's ctypes calls and structures must match nvml.h's C API, since it no
longer goes through the pynvml binding. The stand-in answers as the recorded H200 host did."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from torchsmith.doctor.inspect import snippet_path

# nvml.h's signatures and structures; the answers are the real H200 host's (2026-11-26), the
# second GPU refuses its UUID and MIG mode as an old driver would.
FAKE_NVML = r"""
#include <string.h>
typedef void *nvmlDevice_t;
typedef struct { char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
                 char busId[32]; } nvmlPciInfo_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
static int devices[2];
const char *nvmlErrorString(int r) { return r == 9 ? "Driver Not Loaded" : "Not Supported"; }
int nvmlInit_v2(void) { return INIT_STATUS; }
int nvmlShutdown(void) { return 0; }
int nvmlSystemGetDriverVersion(char *v, unsigned n) { strncpy(v, "580.159.04", n); return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 13000; return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *h) { *h = &devices[i]; return 0; }
static int which(nvmlDevice_t h) { return (int *)h - devices; }
int nvmlDeviceGetName(nvmlDevice_t h, char *s, unsigned n) {
  strncpy(s, which(h) ? "NVIDIA H100 80GB HBM3" : "NVIDIA H200", n); return 0; }
int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int *major, int *minor) {
  *major = 9; *minor = 0; return 0; }
int nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t *m) {
  m->total = which(h) ? 85520809984ULL : 150754820096ULL; m->free = 1; m->used = 2; return 0; }
int nvmlDeviceGetUUID(nvmlDevice_t h, char *s, unsigned n) {
  if (which(h)) return 3; strncpy(s, "GPU-00000000-1111-2222-3333-444444444444", n); return 0; }
int nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t *p) {
  memset(p, 0, sizeof *p); strcpy(p->busIdLegacy, "0000:00:06.0");
  strcpy(p->busId, which(h) ? "00000000:00:07.0" : "00000000:00:06.0"); return 0; }
int nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned *current, unsigned *pending) {
  if (which(h)) return 3; *current = 0; *pending = 0; return 0; }
"""


def _fake_nvml(directory: Path, init_status: int) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None or sys.platform != "linux":
        pytest.skip("building the stand-in libnvidia-ml.so.1 needs a C compiler on Linux")
    source = directory / "nvml.c"
    source.write_text(FAKE_NVML)
    subprocess.run([compiler, "-shared", "-fPIC", f"-DINIT_STATUS={init_status}", "-o",
                    str(directory / "libnvidia-ml.so.1"), str(source)], check=True)
    return directory


def _run(library_dir: Path) -> Dict[str, Any]:
    # -IS as the probe starts it: no site, no PYTHON* variables; the loader's path still applies.
    env = {**os.environ, "LD_LIBRARY_PATH": str(library_dir)}
    result = subprocess.run([sys.executable, "-IS", snippet_path("nvml_probe.py")], env=env,
                            capture_output=True, text=True, timeout=60, check=True)
    answer: Dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return answer


def test_the_snippet_reads_nvml_through_its_c_api(tmp_path: Path) -> None:
    answer = _run(_fake_nvml(tmp_path, init_status=0))
    assert answer["driver_version"] == "580.159.04"
    assert answer["cuda_driver_version"] == 13000
    assert "error" not in answer
    h200, h100 = answer["gpus"]
    assert h200 == {"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0",
                    "memory_mib": 143771, "uuid": "GPU-00000000-1111-2222-3333-444444444444",
                    "bus_id": "00000000:00:06.0", "mig_mode": "Disabled"}
    # A refused call leaves that field unknown; the rest of the GPU is still read.
    assert h100["name"] == "NVIDIA H100 80GB HBM3" and h100["memory_mib"] == 81559
    assert h100["bus_id"] == "00000000:00:07.0"
    assert h100["uuid"] is None and h100["mig_mode"] is None


def test_a_failed_init_is_reported_in_nvmls_own_words(tmp_path: Path) -> None:
    answer = _run(_fake_nvml(tmp_path, init_status=9))
    assert answer == {"error": "nvmlInit failed: Driver Not Loaded"}
