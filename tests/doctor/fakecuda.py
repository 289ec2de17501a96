"""A fake CUDA torch for the doctor's small-model timing: a simulated GPU with a virtual clock.

Importing it replaces ``time.perf_counter`` and ``time.sleep`` in the child with a virtual clock,
so every figure is exact whatever the machine's load. Every op "launches" kernels: the CPU pays
``launch_ms`` (a virtual sleep), the simulated GPU runs
them in order for ``kernel_ms`` each, starting when it is free. CUDA events are stamped with the
time the GPU reaches them, ``synchronize`` waits for the queue to drain, ``torch.cuda._sleep``
queues a spin of ``cycles / 1e6`` ms (a 1 GHz clock), and a TorchDispatchMode sees every op.
So a launch-bound step (launches slower than kernels) really leaves the simulated GPU idle
between kernels, and the busy time the snippet measures is known: ``KERNELS_PER_STEP * kernel_ms``.
"""

from __future__ import annotations

from pathlib import Path

from tests.doctor.envs import write_torch

__all__ = ["KERNELS_PER_STEP", "write_fake_cuda_torch"]

# 3 Linear + 2 ReLU + mse_loss forward, 6 backward, 6 SGD updates (one per parameter tensor).
KERNELS_PER_STEP = 18

_INIT = '''\
"""Not PyTorch: a simulated CUDA device from torchsmith's doctor tests."""
import contextlib
import sys
import time
import types

from torch import version

__version__ = version.__version__
_KERNEL_MS, _LAUNCH_MS = {kernel_ms!r}, {launch_ms!r}
_gpu = {{"free_at": 0.0}}
_clock = [0.0]


def _now():
    return _clock[0]


def _pass(seconds):
    _clock[0] += max(0.0, seconds)


# A virtual clock for this process: only launches and waits move it, so the machine's load
# (another job, one core) cannot change what the snippet measures.
time.perf_counter = _now
time.sleep = _pass


def _kernel(ms):
    time.sleep(_LAUNCH_MS / 1000.0)
    start = max(time.perf_counter(), _gpu["free_at"])
    _gpu["free_at"] = start + (_KERNEL_MS if ms is None else ms) / 1000.0


class _Op(object):
    """An ATen op as a dispatch mode sees it; a view launches no kernel."""

    namespace = "aten"

    def __init__(self, ms=None, is_view=False):
        self.ms, self.is_view = ms, is_view

    def __call__(self):
        if not self.is_view:
            _kernel(self.ms)


_modes = []


def _dispatch(op):
    if _modes:
        _modes[-1].__torch_dispatch__(op, (), (), {{}})
    else:
        op()


def _launch(count=1, ms=None):
    for _ in range(count):
        _dispatch(_Op(ms))


def _prod(shape):
    total = 1
    for n in shape:
        total *= n
    return total


class device(object):
    def __init__(self, kind, index=None):
        self.type, self.index = kind, index


class Tensor(object):
    def __init__(self, shape, value=1.0):
        self.shape, self.value = tuple(shape), value

    def __matmul__(self, other):
        _launch()
        return Tensor(self.shape[:-1] + other.shape[1:], self.value * other.value * self.shape[-1])

    matmul = __matmul__

    def sum(self):
        _launch()
        return Tensor((), self.value * _prod(self.shape))

    def item(self):
        cuda.synchronize()
        return self.value

    def __float__(self):
        return float(self.item())

    def numel(self):
        return _prod(self.shape)

    def backward(self):
        _launch(6)


def ones(shape, device=None):
    _launch()
    return Tensor(shape)


def randn(*shape, **kwargs):
    _launch()
    return Tensor(shape)


class _Module(object):
    def parameters(self):
        return list(self._params)

    def to(self, target):
        return self


class _Linear(_Module):
    def __init__(self, inputs, outputs):
        self.outputs = outputs
        self._params = [Tensor((outputs, inputs)), Tensor((outputs,))]

    def __call__(self, x):
        _dispatch(_Op(is_view=True))  # the weight's transpose
        _launch()
        return Tensor((x.shape[0], self.outputs))


class _ReLU(_Module):
    _params = []

    def __call__(self, x):
        _launch()
        return x


class _Sequential(_Module):
    def __init__(self, *layers):
        self.layers = layers
        self._params = [p for layer in layers for p in layer.parameters()]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def _mse_loss(a, b):
    _launch()
    return Tensor(())


def _conv2d(x, w, padding=0):
    _launch()
    return Tensor((x.shape[0], w.shape[0]) + x.shape[2:])


class _SGD(object):
    def __init__(self, params, lr):
        self.params = list(params)

    def zero_grad(self):
        pass

    def step(self):
        _launch(len(self.params))


nn = types.SimpleNamespace(Linear=_Linear, ReLU=_ReLU, Sequential=_Sequential,
                           functional=types.SimpleNamespace(mse_loss=_mse_loss, conv2d=_conv2d))
optim = types.SimpleNamespace(SGD=_SGD)


class _Event(object):
    def __init__(self, enable_timing=False):
        self.at = None

    def record(self, stream=None):
        self.at = max(time.perf_counter(), _gpu["free_at"])

    def query(self):
        return time.perf_counter() >= self.at

    def synchronize(self):
        time.sleep(max(0.0, self.at - time.perf_counter()))

    def elapsed_time(self, end):
        return (end.at - self.at) * 1000.0


def _synchronize(device=None):
    time.sleep(max(0.0, _gpu["free_at"] - time.perf_counter()))


def _spin(cycles):
    _launch(1, cycles / 1e6)


cuda = types.SimpleNamespace(
    is_available=lambda: True,
    device_count=lambda: 1,
    get_arch_list=lambda: ["sm_80", "sm_90"],
    get_device_capability=lambda index=0: (9, 0),
    get_device_properties=lambda index=0: types.SimpleNamespace(
        name={name!r}, major=9, minor=0, total_memory=80 * 1024 ** 3),
    synchronize=_synchronize,
    Event=_Event,
    device=lambda index: contextlib.nullcontext(),
)
if {spin!r}:
    cuda._sleep = _spin


class _TorchDispatchMode(object):
    def __enter__(self):
        _modes.append(self)
        return self

    def __exit__(self, *exc):
        _modes.pop()


utils = types.ModuleType("torch.utils")
utils._python_dispatch = types.ModuleType("torch.utils._python_dispatch")
utils._python_dispatch.TorchDispatchMode = _TorchDispatchMode
sys.modules["torch.utils"] = utils
sys.modules["torch.utils._python_dispatch"] = utils._python_dispatch
'''


def write_fake_cuda_torch(
    site: Path,
    kernel_ms: float,
    launch_ms: float,
    spin: bool = True,
    name: str = "NVIDIA H100 80GB HBM3",
) -> Path:
    """A CUDA 12.4 torch 2.5.1 whose one GPU runs each kernel in ``kernel_ms``."""
    init = _INIT.format(kernel_ms=kernel_ms, launch_ms=launch_ms, spin=spin, name=name)
    return write_torch(site, "2.5.1+cu124", cuda="12.4", init=init)
