"""The standard set of test wheels, shaped like PyTorch's indexes and PyPI.

Layout under the root (each directory is one index of :func:`~tests.support.pkgindex.serve_index`):

- ``pytorch/cpu``, ``pytorch/cu126``, ``pytorch/cu128``: torch, torchvision, torchaudio with local
  versions (``2.6.0+cu126``); the CUDA builds depend on fake ``nvidia-*-cu12`` runtime wheels and
  on ``torchtriton`` (all hosted on the same index, as download.pytorch.org does). Each
  torchvision/torchaudio requires its torch exactly (``torch==2.6.0+cu126``) and refuses to
  import beside another.
- ``pypi``: plain torch/torchvision/torchaudio (no local label, like PyPI's), torchtriton, the
  nvidia wheels, and: ``mmcv`` 2.2.0 (``torch>=2.6,<2.7``: a companion that pins torch),
  ``xformers`` 0.0.29.post3 (``torch==2.6.0``) and 0.0.31 (``torch==2.7.1``), ``ftfy`` 6.2.0
  (``torch>=2.6``) and 6.3.0 (``torch>=2.7``: installing it would swap torch 2.6), ``wcwidth``, ``tqdm``,
  and ``tabulate``, ``colorama``, ``idna`` (plain packages no other test downloads: safe to stall).
- ``evil``: everything in ``pypi`` plus a malicious ``torchtriton`` 9.9.9: dependency confusion, as
  in the December 2022 attack on PyTorch nightly. Use it as "the user's configured index". Once
  installed, every interpreter start appends "ran" to the file ``TORCHSMITH_TEST_EVIL_MARK`` names.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from tests.support.faketorch import fake_companion_files, fake_torch_files
from tests.support.pkgindex import build_wheel

__all__ = ["ARCHES", "RELEASES", "TorchStack", "build_standard_indexes"]

# torch version -> (torchvision, torchaudio, torchtriton)
RELEASES: Dict[str, Tuple[str, str, str]] = {
    "2.6.0": ("0.21.0", "2.6.0", "3.2.0"),
    "2.7.1": ("0.22.1", "2.7.1", "3.3.1"),
}
# variant -> (CUDA version, nvidia runtime pins, compiled arches); None for CPU
CUDA_VARIANTS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "cu126": ("12.6", ("nvidia-cuda-runtime-cu12==12.6.77", "nvidia-cublas-cu12==12.6.4.1")),
    "cu128": ("12.8", ("nvidia-cuda-runtime-cu12==12.8.57", "nvidia-cublas-cu12==12.8.3.14")),
}
ARCHES: Dict[str, List[str]] = {
    "cu126": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
    "cu128": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
}
VARIANT_RELEASES: Dict[str, Tuple[str, ...]] = {
    "cpu": ("2.6.0", "2.7.1"),
    "cu126": ("2.6.0", "2.7.1"),
    "cu128": ("2.7.1",),  # as upstream: cu128 wheels start at torch 2.7
}
EVIL_TRITON = "9.9.9"


@dataclass(frozen=True)
class TorchStack:
    root: Path  # serve this with serve_index

    def wheels(self, index: str) -> List[str]:
        return sorted(p.name for p in (self.root / index).glob("*.whl"))


def _nvidia(dest: Path, pin: str) -> None:
    name, version = pin.split("==")
    module = name[len("nvidia-"):-len("-cu12")].replace("-", "_")
    build_wheel(dest, name, version, files={f"nvidia/{module}/__init__.py": f'__version__ = "{version}"\n'})


def _torch_family(dest: Path, torch_version: str, variant: Optional[str]) -> None:
    """torch, torchvision, torchaudio of one release for one variant (None: PyPI's plain wheels)."""
    vision, audio, triton = RELEASES[torch_version]
    label = f"+{variant}" if variant else ""
    cuda_variant = variant if variant in CUDA_VARIANTS else ("cu126" if variant is None else None)
    requires: List[str] = []
    cuda: Optional[str] = None
    if cuda_variant:
        cuda, runtime = CUDA_VARIANTS[cuda_variant]
        requires = [*runtime, f"torchtriton=={triton}" if variant is None else f"torchtriton>={triton}"]
        for pin in runtime:
            _nvidia(dest, pin)
        build_wheel(dest, "torchtriton", triton)
    torch = f"{torch_version}{label}"
    build_wheel(dest, "torch", torch, requires=requires,
                files=fake_torch_files(torch, cuda, ARCHES.get(cuda_variant or "", [])))
    for name, version in (("torchvision", vision), ("torchaudio", audio)):
        build_wheel(dest, name, f"{version}{label}", requires=[f"torch=={torch}"],
                    files=fake_companion_files(name, f"{version}{label}", torch))


def build_standard_indexes(root: Path) -> TorchStack:
    """Build every index of the standard set under ``root`` (about a second)."""
    for variant, versions in VARIANT_RELEASES.items():
        for version in versions:
            _torch_family(root / "pytorch" / variant, version, variant)
    pypi = root / "pypi"
    for version in RELEASES:
        _torch_family(pypi, version, None)
    build_wheel(pypi, "torchtriton", "3.3.1")
    build_wheel(pypi, "mmcv", "2.2.0", requires=["torch>=2.6,<2.7"])
    build_wheel(pypi, "xformers", "0.0.29.post3", requires=["torch==2.6.0"])
    build_wheel(pypi, "xformers", "0.0.31", requires=["torch==2.7.1"])
    build_wheel(pypi, "wcwidth", "0.2.13")
    build_wheel(pypi, "tqdm", "4.67.1")
    build_wheel(pypi, "tabulate", "0.9.0")
    build_wheel(pypi, "colorama", "0.4.6")
    build_wheel(pypi, "idna", "3.10")
    build_wheel(pypi, "ftfy", "6.2.0", requires=["torch>=2.6", "wcwidth"])
    build_wheel(pypi, "ftfy", "6.3.0", requires=["torch>=2.7", "wcwidth"])
    evil = root / "evil"
    evil.mkdir(parents=True, exist_ok=True)
    for wheel in pypi.glob("*.whl"):
        shutil.copy2(wheel, evil / wheel.name)
    # Its code records that it ran: at every interpreter start (a .pth line) and on import.
    mark = 'import os; p = os.environ.get("TORCHSMITH_TEST_EVIL_MARK"); p and open(p, "a").write("ran\\n")\n'
    build_wheel(evil, "torchtriton", EVIL_TRITON, files={
        "torchtriton/__init__.py": 'import os\nEVIL = True\nos.environ["PWNED"] = "1"\n' + mark,
        "torchtriton-evil.pth": mark})
    return TorchStack(root)


if __name__ == "__main__":  # python -m tests.support.torchstack DIR: build and list, for a look
    import sys

    stack = build_standard_indexes(Path(sys.argv[1]))
    for dirpath, _dirs, files in sorted(os.walk(stack.root)):
        for name in sorted(files):
            print(os.path.join(dirpath, name))
