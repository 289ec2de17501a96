"""Source of a stand-in ``torch`` package for the test wheels: the few attributes torchsmith's
verify snippet uses, computed for real (a tiny pure-Python tensor), so a wrong result fails.

The device is simulated from the environment: with ``TORCHSMITH_FAKE_CUDA_CC=8.6`` a CUDA build
(``torch.version.cuda`` set) reports one GPU of that compute capability; a CPU build never does.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

__all__ = ["fake_companion_files", "fake_torch_files"]

_TORCH_INIT = '''\
"""Not PyTorch: a stand-in from torchsmith's tests."""
import os as _os

__version__ = {version!r}
float32 = "float32"


class device(object):
    def __init__(self, kind):
        self.type = str(kind).split(":")[0]

    def __str__(self):
        return self.type


class Tensor(object):
    def __init__(self, data, device="cpu"):
        self.data = data
        self.device = device

    @property
    def shape(self):
        shape, level = [], self.data
        while isinstance(level, list):
            shape.append(len(level))
            level = level[0] if level else None
        return tuple(shape)

    def to(self, dev):
        kind = str(dev).split(":")[0]
        if kind == "cuda" and not cuda.is_available():
            raise RuntimeError("Found no NVIDIA driver on your system.")
        if kind == "mps" and not backends.mps.is_available():
            raise RuntimeError("MPS backend is not available")
        return Tensor(self.data, kind)

    def cpu(self):
        return Tensor(self.data, "cpu")

    def tolist(self):
        return self.data

    def __matmul__(self, other):
        a, b = self.data, other.data
        if len(a[0]) != len(b):
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")
        cols = list(zip(*b))
        return Tensor([[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a], self.device)


def tensor(data, dtype=None, device="cpu"):
    return Tensor(data).to(device)


from torch import version, cuda, backends, nn  # noqa: E402,F401
'''

_VERSION = '''\
__version__ = {version!r}
cuda = {cuda!r}
hip = None
'''

_CUDA = '''\
import os as _os

from torch import version as _version

_ARCHES = {arches!r}


def _cc():
    value = _os.environ.get("TORCHSMITH_FAKE_CUDA_CC", "")
    if not value or _version.cuda is None:
        return None
    major, minor = value.split(".")
    return int(major), int(minor)


def is_available():
    return _cc() is not None


def device_count():
    return 1 if is_available() else 0


def get_arch_list():
    return list(_ARCHES) if is_available() else []


def get_device_capability(index=0):
    cc = _cc()
    if cc is None:
        raise RuntimeError("Found no NVIDIA driver on your system.")
    return cc


def get_device_name(index=0):
    get_device_capability(index)
    return "Fake GPU"


def synchronize():
    pass
'''

_MPS = "def is_available():\n    return False\n"

_FUNCTIONAL = '''\
from torch import Tensor


def conv2d(x, w):
    """NCHW input, OIHW weight, stride 1, no padding: enough for a smoke test."""
    out = []
    for sample in x.data:
        planes = []
        for kernel in w.data:
            kh, kw = len(kernel[0]), len(kernel[0][0])
            h, wd = len(sample[0]) - kh + 1, len(sample[0][0]) - kw + 1
            plane = [[sum(sample[c][i + di][j + dj] * kernel[c][di][dj]
                          for c in range(len(kernel)) for di in range(kh) for dj in range(kw))
                      for j in range(wd)] for i in range(h)]
            planes.append(plane)
        out.append(planes)
    return Tensor(out, x.device)
'''

_COMPANION = '''\
"""Not {name}: a stand-in that, like the real one, only works beside the torch it was built for."""
import torch

__version__ = {version!r}
if torch.__version__ != {torch_version!r}:
    raise RuntimeError("operator {name}::nms does not exist (built for torch {torch_version}, "
                       "found " + torch.__version__ + ")")
'''


def fake_torch_files(version: str, cuda: Optional[str], arches: Sequence[str]) -> Dict[str, str]:
    """The files of a fake torch wheel: ``fake_torch_files("2.6.0+cu126", "12.6", ["sm_80"])``."""
    return {
        "torch/__init__.py": _TORCH_INIT.format(version=version),
        "torch/version.py": _VERSION.format(version=version, cuda=cuda),
        "torch/cuda/__init__.py": _CUDA.format(arches=list(arches)),
        "torch/backends/__init__.py": "from torch.backends import mps  # noqa: F401\n",
        "torch/backends/mps/__init__.py": _MPS,
        "torch/nn/__init__.py": "from torch.nn import functional  # noqa: F401\n",
        "torch/nn/functional.py": _FUNCTIONAL,
    }


def fake_companion_files(name: str, version: str, torch_version: str) -> Dict[str, str]:
    """A torchvision-like package that refuses to import beside any other torch."""
    module = name.replace("-", "_")
    return {f"{module}/__init__.py": _COMPANION.format(name=name, version=version,
                                                       torch_version=torch_version)}
