"""Small CUDA libraries built by the real nvcc, and cuobjdump's listing of them.

nvcc comes with the CUDA toolkit (/usr/local/cuda on these machines); cuobjdump from the toolkit
or from the ``nvidia-cuda-cuobjdump`` wheel of the ``test`` extra. Tests skip, saying why, when
either is absent. The libraries are built once per test session, in parallel, in a temp dir.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest

KERNEL = """
__global__ void add(float *x, float y) { x[threadIdx.x] += y; }
extern "C" void launch(float *x) { add<<<1, 32>>>(x, 1.0f); }
"""

# name -> (nvcc target flags, the SASS and PTX the reader must report)
LIBRARIES: Dict[str, Tuple[List[str], Set[str], Set[str]]] = {
    # plain SASS, arch-specific (a) SASS and PTX, family (f) SASS, plain PTX
    "libplain.so": (["-gencode", "arch=compute_75,code=sm_75",
                     "-gencode", "arch=compute_90a,code=[sm_90a,compute_90a]",
                     "-gencode", "arch=compute_120f,code=sm_120f",
                     "-gencode", "arch=compute_80,code=compute_80"],
                    {"sm_75", "sm_90a", "sm_120f"}, {"compute_80", "compute_90a"}),
    # every entry zstd-compressed; family PTX
    "libcompressed.so": (["-Xfatbin", "-compress-all",
                          "-gencode", "arch=compute_86,code=sm_86",
                          "-gencode", "arch=compute_100f,code=compute_100f"],
                         {"sm_86"}, {"compute_100f"}),
}


def find_tool(name: str) -> Optional[str]:
    found = shutil.which(name) or next(iter(glob.glob(f"/usr/local/cuda*/bin/{name}")), None)
    if found:
        return found
    for base in {sys.prefix, sys.base_prefix}:
        pattern = os.path.join(base, "lib", "python3*", "site-packages", "nvidia", "cu*", "bin", name)
        for path in glob.glob(pattern):
            return path
    return None


def cuobjdump_listing(cuobjdump: str, path: str) -> Tuple[Set[str], Set[str]]:
    """(SASS, PTX) as ``cuobjdump --list-elf --list-ptx`` names them (sm_XY / compute_XY)."""
    out = subprocess.run([cuobjdump, "--list-elf", "--list-ptx", path], capture_output=True, text=True,
                         check=False).stdout
    sass = set(re.findall(r"^ELF file\s+\d+: .*\.(sm_\w+?)\.cubin$", out, re.MULTILINE))
    ptx = {"compute_" + arch
           for arch in re.findall(r"^PTX file\s+\d+: .*\.sm_(\w+?)\.ptx$", out, re.MULTILINE)}
    return sass, ptx


@pytest.fixture(scope="session")
def cuobjdump() -> str:
    path = find_tool("cuobjdump")
    if not path:
        pytest.skip("cuobjdump not found (CUDA toolkit, or pip install nvidia-cuda-cuobjdump)")
    return path


@pytest.fixture(scope="session")
def nvcc_libs(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    """name -> path of each library in LIBRARIES, plus ``kernel.fatbin`` (a bare fatbin)."""
    nvcc = find_tool("nvcc")
    if not nvcc:
        pytest.skip("nvcc not found (no CUDA toolkit on this machine)")
    where = tmp_path_factory.mktemp("nvcc-libs")
    source = where / "kernel.cu"
    source.write_text(KERNEL)
    jobs = {name: [nvcc, "-shared", "-Xcompiler", "-fPIC", *flags, str(source), "-o", str(where / name)]
            for name, (flags, _, _) in LIBRARIES.items()}
    jobs["kernel.fatbin"] = [nvcc, "-fatbin", "-gencode", "arch=compute_89,code=[sm_89,compute_89]",
                             str(source), "-o", str(where / "kernel.fatbin")]
    running = {name: subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
               for name, argv in jobs.items()}
    for name, proc in running.items():
        output = proc.communicate(timeout=600)[0]
        assert proc.returncode == 0, f"nvcc failed for {name}: {output.decode(errors='replace')[-2000:]}"
    return {name: where / name for name in jobs}
