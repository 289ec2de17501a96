"""The post-install smoke test, run in the target interpreter; prints one JSON object.

    python verify.py [--expect cpu|cuda|rocm|mps] [--import NAME ...]

Imports torch; when the host has a GPU (``--expect``), requires torch to see it, checks that the
device's architecture is in ``torch.cuda.get_arch_list()`` (or runs from compatible SASS/PTX);
runs a small matmul and a convolution on the device and compares them with known answers;
imports each companion (torchvision, ...). ``"ok"`` is true only when every check passed.
Standard library + torch; no f-strings (any Python 3).
"""
import json
import sys
import traceback

MATMUL_A = [[1.0, 2.0], [3.0, 4.0]]
MATMUL_B = [[5.0, 6.0], [7.0, 8.0]]
MATMUL_WANT = [[19.0, 22.0], [43.0, 50.0]]
CONV_X = [[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]  # N=1, C=1, 3x3
CONV_W = [[[[1.0, 1.0], [1.0, 1.0]]]]  # O=1, I=1, 2x2
CONV_WANT = [[[[12.0, 16.0], [24.0, 28.0]]]]


def last_line(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return text.strip().splitlines()[-1][:300] if text.strip() else type(exc).__name__


def flatten(value):
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            out.extend(flatten(item))
        return out
    return [float(value)]


def close(got, want):
    a, b = flatten(got), flatten(want)
    return len(a) == len(b) and all(abs(x - y) <= 1e-3 * max(1.0, abs(y)) for x, y in zip(a, b))


def add_check(report, name, passed, detail):
    report["checks"].append({"name": name, "ok": bool(passed), "detail": detail})
    return passed


def parse_args(argv):
    expect = "cpu"
    imports = []
    args = list(argv)
    while args:
        flag = args.pop(0)
        if flag == "--expect" and args:
            expect = args.pop(0)
        elif flag == "--import" and args:
            imports.append(args.pop(0))
    return expect, imports


def is_integrated(torch):
    """An integrated GPU (Jetson) runs only SASS of its exact capability."""
    try:
        return bool(getattr(torch.cuda.get_device_properties(0), "is_integrated", False))
    except Exception:  # an older torch without the property: a discrete GPU is the common case
        return False


def gpu_device(torch, expect, report):
    """"cuda" when torch sees the GPU (its architecture checked); None when it does not."""
    available = bool(torch.cuda.is_available())
    build = report["torch_hip"] if expect == "rocm" else report["torch_cuda"]
    if not add_check(report, "%s available" % expect, available,
                     "torch sees %d device(s)" % torch.cuda.device_count() if available else
                     "torch.cuda.is_available() is False (torch built for %s %s)"
                     % (expect, build or "none: a CPU build")):
        return None
    arch_list = list(torch.cuda.get_arch_list())
    report["arch_list"] = arch_list
    report["device_name"] = str(torch.cuda.get_device_name(0))
    if expect == "cuda":
        # torchsmith judges the kernels (compat.kernel_for): one rule, not a copy here.
        major, minor = torch.cuda.get_device_capability(0)
        report["device_arch"] = "sm_%d%d" % (major, minor)
        report["device_capability"] = [int(major), int(minor)]
        report["integrated"] = is_integrated(torch)
        return "cuda"
    arch = str(torch.cuda.get_device_properties(0).gcnArchName).split(":")[0]
    report["device_arch"] = arch
    covered = arch in arch_list
    add_check(report, "architecture", covered, "%s %s torch's compiled list" % (arch, "in" if covered else "not in"))
    return "cuda"


def pick_device(torch, expect, report):
    """The device the checks run on; None (the failure recorded) when the expected one is absent."""
    try:
        if expect in ("cuda", "rocm"):
            return gpu_device(torch, expect, report)
        if expect == "mps":
            available = bool(torch.backends.mps.is_available())
            if not add_check(report, "mps available", available, "Metal device found" if available
                             else "torch.backends.mps.is_available() is False"):
                return None
            return "mps"
    except Exception as exc:
        add_check(report, "%s device" % expect, False, last_line(exc))
        return None
    return "cpu"


def compute_checks(torch, device, report):
    """A matmul and a convolution on ``device``, compared with known answers."""
    def run_on_device(name, compute, want):
        try:
            got = compute()
            if device == "cuda":
                torch.cuda.synchronize()
            passed = close(got, want)
            add_check(report, name, passed, "on %s" % device if passed else "on %s gave %r, expected %r"
                      % (device, got, want))
        except Exception as exc:
            add_check(report, name, False, "on %s: %s" % (device, last_line(exc)))

    def tensor(data):
        return torch.tensor(data, dtype=torch.float32, device=device)

    run_on_device("matmul", lambda: (tensor(MATMUL_A) @ tensor(MATMUL_B)).cpu().tolist(), MATMUL_WANT)
    run_on_device("conv2d", lambda: torch.nn.functional.conv2d(tensor(CONV_X), tensor(CONV_W))
                  .cpu().tolist(), CONV_WANT)


def main(argv):
    expect, imports = parse_args(argv)
    report = {"ok": False, "expect": expect, "python": sys.version.split()[0],
              "executable": sys.executable, "checks": []}
    try:
        import torch
    except BaseException as exc:  # a broken torch is the answer, not a crash
        add_check(report, "import torch", False, last_line(exc))
        report["traceback"] = traceback.format_exc()[-2000:]
        return report
    version = getattr(torch, "version", None)
    report["torch"] = str(getattr(torch, "__version__", "?"))
    report["torch_cuda"] = getattr(version, "cuda", None)
    report["torch_hip"] = getattr(version, "hip", None)
    add_check(report, "import torch", True, "torch %s from %s" % (report["torch"], getattr(torch, "__file__", "?")))
    device = pick_device(torch, expect, report)
    if device is None:
        return report
    report["device"] = device
    compute_checks(torch, device, report)
    for name in imports:
        try:
            module = __import__(name)
            add_check(report, "import %s" % name, True, "%s %s" % (name, getattr(module, "__version__", "?")))
        except BaseException as exc:
            add_check(report, "import %s" % name, False, last_line(exc))
    report["ok"] = all(c["ok"] for c in report["checks"])
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), sort_keys=True))
