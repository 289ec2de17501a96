"""Import torch and exercise it on every device; print one JSON object on the last line.

Run by ``torchsmith doctor`` in a child process with a timeout: a torch that crashes or hangs
on import takes only this process down. Standard library + torch; no f-strings.
"""
import json
import sys
import time
import traceback


def tail(text, lines=8):
    return "\n".join(text.strip().splitlines()[-lines:])


def value(fn, default=None):
    """fn(), or ``default`` when this torch (old, partial, broken) lacks what fn asks for."""
    try:
        return fn()
    except Exception:
        return default


def value_and_error(fn):
    """(fn(), None), or (None, the error text)."""
    try:
        return fn(), None
    except Exception as exc:  # every failure is a fact to report, not a crash
        return None, tail("%s: %s" % (type(exc).__name__, exc), 4)


def attempt(fn):
    """(ok, error text) of calling fn."""
    error = value_and_error(fn)[1]
    return error is None, error


# A small model's training step (a ~1M-parameter MLP, batch 32): how much of it the GPU is busy.
SMALL_BATCH, LARGE_BATCH, STEPS, WARMUP = 32, 1024, 8, 3


def small_model_timing(torch, device, count_ops):
    """``{"step_ms", "gpu_busy_ms", "busy_fraction", "kernels_per_step", ...}`` on one device.

    Busy time is measured with the step's kernels queued up behind a spinning kernel
    (``torch.cuda._sleep``), so CUDA events bracket them back to back and time the GPU's work
    only; without ``_sleep`` the events include the gaps between launches (``method: events``),
    an upper bound on busy time.
    """
    started = time.perf_counter()
    nn = torch.nn
    model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(),
                          nn.Linear(512, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    result = {"params": sum(int(p.numel()) for p in model.parameters()), "batch": SMALL_BATCH,
              "steps": STEPS}

    def batch(size):
        return torch.randn(size, 512, device=device), torch.randn(size, 10, device=device)

    def step(x, y):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()

    def wall_ms(x, y):
        for _ in range(WARMUP):
            step(x, y)
        torch.cuda.synchronize(device)
        begin = time.perf_counter()
        for _ in range(STEPS):
            step(x, y)
        torch.cuda.synchronize(device)
        return (time.perf_counter() - begin) * 1000.0 / STEPS

    small, large = batch(SMALL_BATCH), batch(LARGE_BATCH)
    step_ms = wall_ms(*small)
    result["step_ms"] = round(step_ms, 4)
    busy_ms = gpu_busy_ms(torch, lambda: step(*small), step_ms, result)
    result["gpu_busy_ms"] = round(busy_ms, 4)
    result["busy_fraction"] = round(min(busy_ms / step_ms, 1.0), 4) if step_ms > 0 else None
    result["large_batch"] = LARGE_BATCH
    result["large_batch_step_ms"] = round(wall_ms(*large), 4)
    result["kernels_per_step"] = None
    if count_ops:
        result["kernels_per_step"], result["kernels_error"] = value_and_error(
            lambda: count_kernels(torch, device, lambda: step(*small)))
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


def gpu_busy_ms(torch, step, step_ms, result):
    """The GPU time of one ``step``, bracketed by CUDA events (``result["method"]`` says how)."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    result["method"] = "events"
    sleep = getattr(torch.cuda, "_sleep", None)

    def spin():
        # Calibrate the spin (GPU clock cycles per ms), then spin long enough to queue every step.
        start.record()
        sleep(10000000)
        end.record()
        end.synchronize()
        cycles_per_ms = 10000000 / max(start.elapsed_time(end), 1e-3)
        sleep(int(cycles_per_ms * min(STEPS * step_ms * 3 + 5, 500)))

    if sleep is not None:
        result["spin_error"] = value_and_error(spin)[1]
        if result["spin_error"]:
            sleep = None
    start.record()
    for _ in range(STEPS):
        step()
    end.record()
    if sleep is not None and not start.query():
        result["method"] = "queued"  # the GPU was still spinning: every step ran back to back
    end.synchronize()
    return start.elapsed_time(end) / STEPS


def count_kernels(torch, device, step):
    """GPU operations one step launches: ATen ops that compute (views and aliases launch nothing).

    A TorchDispatchMode sees every op, the backward's too (the autograd engine's threads inherit
    it); it costs one step with a Python call per op, where torch.profiler costs ~1 s to start.
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        ops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if getattr(func, "namespace", "aten") == "aten" and not getattr(func, "is_view", False):
                self.ops += 1
            return func(*args, **(kwargs or {}))

    with Count() as counter:
        step()
    torch.cuda.synchronize(device)
    return counter.ops


def device_checks(torch, index):
    device = torch.device("cuda", index)
    props = value(lambda: torch.cuda.get_device_properties(index))
    capability = value(lambda: "%d.%d" % tuple(torch.cuda.get_device_capability(index)))
    info = {
        "index": index,
        "name": getattr(props, "name", None) or value(lambda: torch.cuda.get_device_name(index)),
        "capability": "%d.%d" % (props.major, props.minor) if props is not None else capability,
        "gcn_arch": getattr(props, "gcnArchName", None),
        "memory_mib": int(props.total_memory // (1024 * 1024)) if props is not None else None,
    }

    def matmul():
        a = torch.ones((64, 64), device=device)
        value = float((a @ a).sum().item())
        if value != 64.0 * 64 * 64:
            raise RuntimeError("matmul gave %r, expected %r" % (value, 64.0 ** 3))

    def conv():
        x = torch.ones((1, 3, 16, 16), device=device)
        w = torch.ones((4, 3, 3, 3), device=device)
        torch.nn.functional.conv2d(x, w, padding=1)
        torch.cuda.synchronize(device)

    info["matmul_ok"], info["matmul_error"] = attempt(matmul)
    info["conv_ok"], info["conv_error"] = attempt(conv)
    if info["matmul_ok"]:
        def timing():
            with torch.cuda.device(index):  # events and the spin use the current device's stream
                return small_model_timing(torch, device, count_ops=index == 0)

        info["small_model"], error = value_and_error(timing)
        if error:
            info["small_model"] = {"error": error}
    return info


def cuda_report(torch, version_cuda):
    """What torch.cuda says: availability (with its warnings), compiled list, devices, NCCL."""
    cuda = {"built": bool(value(lambda: torch.backends.cuda.is_built(), version_cuda))}
    warnings_seen = []
    try:
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cuda["available"] = bool(torch.cuda.is_available())
            cuda["device_count"] = int(torch.cuda.device_count()) if cuda["available"] else 0
        warnings_seen = [str(w.message) for w in caught]
    except Exception as exc:
        cuda["available"] = False
        cuda["device_count"] = 0
        warnings_seen.append("%s: %s" % (type(exc).__name__, exc))
    cuda["warnings"] = [tail(w, 4) for w in warnings_seen]
    try:
        # The compiled list, even when no device is visible (get_arch_list() then returns []).
        cuda["arch_list"] = list(torch._C._cuda_getArchFlags().split()) if cuda["built"] else []
    except Exception:
        cuda["arch_list"] = list(torch.cuda.get_arch_list()) if cuda["available"] else []
    try:
        cuda["cudnn_version"] = torch.backends.cudnn.version() if cuda["built"] else None
    except Exception:
        cuda["cudnn_version"] = None
    cuda["devices"] = devices_report(torch, cuda["device_count"])
    try:
        import torch.distributed as dist
        cuda["nccl_available"] = bool(dist.is_available() and dist.is_nccl_available())
    except Exception:
        cuda["nccl_available"] = False
    try:
        cuda["nccl_version"] = ".".join(str(p) for p in torch.cuda.nccl.version()) \
            if cuda["nccl_available"] and cuda["available"] else None
    except Exception:
        cuda["nccl_version"] = None
    return cuda


def devices_report(torch, count):
    devices = []
    for index in range(count):
        try:
            devices.append(device_checks(torch, index))
        except Exception as exc:
            devices.append({"index": index, "error": tail("%s: %s" % (type(exc).__name__, exc), 4)})
    return devices


def tf32_report(torch):
    tf32 = {}
    try:
        tf32["matmul_allow_tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
        tf32["cudnn_allow_tf32"] = bool(torch.backends.cudnn.allow_tf32)
        tf32["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    except Exception as exc:
        tf32["error"] = "%s: %s" % (type(exc).__name__, exc)
    return tf32


def mps_report(torch):
    mps = {"built": False, "available": False}
    try:
        mps["built"] = bool(torch.backends.mps.is_built())
        mps["available"] = bool(torch.backends.mps.is_available())
        if mps["available"]:
            ok, error = attempt(lambda: float(torch.ones((8, 8), device="mps").sum().item()))
            mps["op_ok"], mps["op_error"] = ok, error
    except Exception:
        pass
    return mps


def main():
    started = time.time()
    try:
        import torch
    except BaseException:  # ImportError, OSError from a missing .so, SystemExit from a bad build
        print(json.dumps({"imported": False, "error": tail(traceback.format_exc(), 12),
                          "import_seconds": round(time.time() - started, 3)}))
        return
    report = {
        "imported": True,
        "import_seconds": round(time.time() - started, 3),
        "version": getattr(torch, "__version__", None),
        "file": getattr(torch, "__file__", None),
        "version_cuda": value(lambda: torch.version.cuda),
        "version_hip": value(lambda: torch.version.hip),
        "debug": bool(value(lambda: torch.version.debug, False)),
    }
    ok, error = attempt(lambda: float(torch.ones((8, 8)).matmul(torch.ones((8, 8))).sum()))
    report["cpu_matmul_ok"], report["cpu_matmul_error"] = ok, error

    report["cuda"] = cuda_report(torch, report["version_cuda"])
    report["tf32"] = tf32_report(torch)
    report["mps"] = mps_report(torch)
    report["seconds"] = round(time.time() - started, 3)
    sys.stdout.flush()
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
