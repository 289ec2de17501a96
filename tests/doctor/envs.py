"""Environments for the doctor's tests: fake site-packages written file by file, and reports.

A fake torch is a ``torch/`` directory with ``version.py`` (what the static snippet reads) and an
``__init__.py`` whose body decides what ``import torch`` does (raise, hang, or work enough).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Sequence

from torchsmith.machine import Machine, NvidiaGpu, NvidiaInfo, OsInfo, PythonInfo

__all__ = [
    "cpu_host",
    "gpu_host",
    "report",
    "write_dist",
    "write_torch",
]


def write_dist(
    site: Path,
    name: str,
    version: str,
    requires: Sequence[str] = (),
    installer: Optional[str] = "pip",
    direct_url: Optional[str] = None,
) -> Path:
    """A ``NAME-VERSION.dist-info`` as pip leaves it (METADATA, INSTALLER, RECORD)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n\nA test package.\n", encoding="utf-8")
    if installer is not None:
        (info / "INSTALLER").write_text(installer + "\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    if direct_url:
        (info / "direct_url.json").write_text(json.dumps({"url": direct_url}), encoding="utf-8")
    return info


def write_torch(
    site: Path,
    version: str,
    cuda: Optional[str] = None,
    hip: Optional[str] = None,
    init: str = "",
    dist: bool = True,
) -> Path:
    """A fake torch: ``version.py`` in PyTorch's own layout, and ``__init__.py`` running ``init``."""
    torch = site / "torch"
    torch.mkdir(parents=True, exist_ok=True)
    (torch / "version.py").write_text(
        "from typing import Optional\n\n"
        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n"
        f"__version__ = {version!r}\n"
        "debug = False\n"
        f"cuda: Optional[str] = {cuda!r}\n"
        "git_version = '0123456789abcdef0123456789abcdef01234567'\n"
        f"hip: Optional[str] = {hip!r}\n"
        "xpu: Optional[str] = None\n",
        encoding="utf-8",
    )
    (torch / "__init__.py").write_text(init or "", encoding="utf-8")
    if dist:
        write_dist(site, "torch", version, requires=["filelock", "typing-extensions>=4.10.0"])
    return torch


def gpu_host(
    cc: str = "8.6",
    name: str = "NVIDIA GeForce RTX 3090",
    driver: str = "550.54.14",
    driver_cuda: Optional[str] = "12.4",
    count: int = 1,
    system: str = "linux",
) -> Machine:
    gpus = tuple(
        NvidiaGpu(index=i, name=name, compute_capability=cc, source="nvidia-smi") for i in range(count)
    )
    return Machine(
        os=OsInfo(system=system, arch="x86_64", glibc="2.36", source="test"),
        python=PythonInfo(version="3.11.7", executable="/env/bin/python", prefix="/env"),
        nvidia=NvidiaInfo(
            driver_version=driver,
            driver_version_source="/proc/driver/nvidia/version",
            driver_cuda=driver_cuda,
            driver_cuda_source="nvidia-smi",
            gpus=gpus,
            gpus_source="nvidia-smi",
        ),
    )


def cpu_host() -> Machine:
    return Machine(
        os=OsInfo(system="linux", arch="x86_64", glibc="2.36", source="test"),
        python=PythonInfo(version="3.11.7", executable="/env/bin/python", prefix="/env"),
    )


def _torch(version: str, cuda: Optional[str], hip: Optional[str]) -> Dict[str, Any]:
    return {
        "path": "/env/lib/python3.11/site-packages/torch",
        "version": version,
        "cuda": cuda,
        "hip": hip,
        "git_version": "0" * 40,
        "version_file": "/env/lib/python3.11/site-packages/torch/version.py",
        "glibcxx_needed": "3.4.21",
        "glibcxx_file": "/env/lib/python3.11/site-packages/torch/lib/libc10.so",
        "bundled_cuda_libs": [],
    }


# An environment no torchsmith guard holds: fixes are the installer's own commands there.
UNGUARDED: Dict[str, Any] = {"guard_file": None, "guard_text": None, "pip_conf": None,
                             "pip_conf_uses_guard": False}


def report(
    torch_version: Optional[str] = "2.5.1+cu124",
    cuda: Optional[str] = "12.4",
    hip: Optional[str] = None,
    companions: Iterable[Dict[str, Any]] = (),
    dynamic: Optional[Dict[str, Any]] = None,
    **extra: Any,
) -> Dict[str, Any]:
    """A static report as ``inspect_env.py`` prints it, for one fake environment."""
    data: Dict[str, Any] = {
        "schema": 1,
        "python": {
            "version": "3.11.7",
            "executable": "/env/bin/python",
            "prefix": "/env",
            "base_prefix": "/usr",
            "virtualenv": "/env",
            "conda_prefix": None,
            "platform": "linux",
        },
        "torch": _torch(torch_version, cuda, hip) if torch_version else None,
        "torch_installs": (
            [
                {
                    "source": "pip",
                    "version": torch_version,
                    "location": "/env/lib/python3.11/site-packages",
                    "metadata": f"/env/lib/python3.11/site-packages/torch-{torch_version}.dist-info",
                }
            ]
            if torch_version
            else []
        ),
        "companions": list(companions),
        "nvidia_wheels": [],
        "conda": [],
        "cuda_libraries_provided": [],
        "library_dirs": [],
        "libstdcxx": {"path": "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "glibcxx_max": "3.4.30"},
        "guard": {
            "guard_file": "/env/torchsmith-guard.txt",
            "guard_text": "torch==2.5.1",
            "pip_conf": "/env/pip.conf",
            "pip_conf_uses_guard": True,
        },
        "environ": {},
    }
    data.update(extra)
    if dynamic is not None:
        data["dynamic"] = dynamic
    return data


def dynamic_ok(
    version: str = "2.5.1+cu124",
    cuda: Optional[str] = "12.4",
    available: bool = True,
    arch_list: Sequence[str] = ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"),
    devices: Sequence[Dict[str, Any]] = (),
    **extra: Any,
) -> Dict[str, Any]:
    """What ``torch_check.py`` prints for a torch that imports."""
    data: Dict[str, Any] = {
        "status": "ok",
        "imported": True,
        "import_seconds": 1.2,
        "version": version,
        "version_cuda": cuda,
        "version_hip": None,
        "cpu_matmul_ok": True,
        "cpu_matmul_error": None,
        "cuda": {
            "built": bool(cuda),
            "available": available,
            "device_count": len(devices),
            "warnings": [],
            "arch_list": list(arch_list),
            "cudnn_version": 90100,
            "devices": list(devices),
            "nccl_available": bool(cuda),
            "nccl_version": "2.21.5",
        },
        "tf32": {"matmul_allow_tf32": False, "cudnn_allow_tf32": True, "float32_matmul_precision": "highest"},
        "mps": {"built": False, "available": False},
    }
    data.update(extra)
    return data


def device(
    index: int = 0, cc: str = "8.6", name: str = "NVIDIA GeForce RTX 3090", **extra: Any
) -> Dict[str, Any]:
    data = {
        "index": index,
        "name": name,
        "capability": cc,
        "gcn_arch": None,
        "memory_mib": 24576,
        "matmul_ok": True,
        "matmul_error": None,
        "conv_ok": True,
        "conv_error": None,
    }
    data.update(extra)
    return data


def fake_site(tmp: Path) -> Path:
    site = tmp / "site"
    site.mkdir(parents=True, exist_ok=True)
    return site


def path_env(site: Path, **extra: str) -> Dict[str, str]:
    """This process's environment with ``site`` first on sys.path of any child Python."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TORCHSMITH_", "LD_LIBRARY"))}
    env["PYTHONPATH"] = str(site)
    env.update(extra)
    return env
