"""Import torch and exercise it on every device; print one JSON object on the last line.

Run by ``torchsmith doctor`` in a child process with a timeout: a torch that crashes or hangs
on import takes only this process down. Standard library + torch; no f-strings.

After the device checks have touched cuBLAS, cuDNN and NCCL, it lists the CUDA libraries this
process actually loaded (``/proc/self/maps``; the module list on Windows) with the version each
one reports: where a library came from is read, never guessed from CUDA_HOME.
"""
import json
import os
import re
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


def device_checks(torch, index):
    device = torch.device("cuda", index)
    props = value(lambda: torch.cuda.get_device_properties(index))
    capability = value(lambda: "%d.%d" % tuple(torch.cuda.get_device_capability(index)))
    info = {
        "index": index,
        "name": getattr(props, "name", None) or value(lambda: torch.cuda.get_device_name(index)),
        "capability": "%d.%d" % (props.major, props.minor) if props is not None else capability,
        # A CUDA build's properties carry gcnArchName too (the device's name, on torch 2.11).
        "gcn_arch": getattr(props, "gcnArchName", None) if value(lambda: torch.version.hip) else None,
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

    info["matmul_ok"], info["matmul_error"] = attempt(matmul)  # loads cuBLAS
    info["conv_ok"], info["conv_error"] = attempt(conv)  # loads cuDNN
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
    cuda["built_with"] = {"cudnn": value(lambda: ".".join(str(p) for p in torch._C._cudnn.getCompileVersion()))}
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


# Loaded files worth reporting: CUDA's libraries and the driver's (basename, case-insensitive).
CUDA_FILE = re.compile(r"^(lib)?(cu|nccl|nvrtc|nvjitlink|nvidia|nvshmem|nvtoolsext|nvcuda)", re.I)
# The function each library answers its own version with: (symbol, returns it | writes an int*).
VERSION_CALLS = (
    ("cudnn", "cudnnGetVersion", "size_t"),
    ("cublaslt", "cublasLtGetVersion", "size_t"),
    ("cudart", "cudaRuntimeGetVersion", "int_ptr"),
    ("nccl", "ncclGetVersion", "int_ptr"),
    ("cuda", "cuDriverGetVersion", "int_ptr"),
    ("nvcuda", "cuDriverGetVersion", "int_ptr"),
)


def loaded_files():
    """(every shared library this process has mapped, where that list was read)."""
    if sys.platform == "win32":
        return windows_modules(), "EnumProcessModules"
    if sys.platform == "darwin":
        return [], "none (macOS: no CUDA)"
    names = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and ".so" in fields[5]:
                names.add(fields[5].strip().replace(" (deleted)", ""))
    return sorted(names), "/proc/self/maps"


def windows_modules():
    import ctypes
    from ctypes import wintypes
    kernel32, psapi = ctypes.WinDLL("kernel32"), ctypes.WinDLL("psapi")
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    psapi.EnumProcessModules.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.HMODULE),
                                         wintypes.DWORD, ctypes.POINTER(wintypes.DWORD)]
    kernel32.GetModuleFileNameW.argtypes = [wintypes.HMODULE, wintypes.LPWSTR, wintypes.DWORD]
    handles, needed = (wintypes.HMODULE * 4096)(), wintypes.DWORD()
    if not psapi.EnumProcessModules(kernel32.GetCurrentProcess(), handles, ctypes.sizeof(handles),
                                    ctypes.byref(needed)):
        return []
    buffer, names = ctypes.create_unicode_buffer(32768), []
    for handle in handles[:min(needed.value // ctypes.sizeof(wintypes.HMODULE), 4096)]:
        if kernel32.GetModuleFileNameW(handle, buffer, 32768):
            names.append(buffer.value)
    return names


def reported_version(path):
    """(symbol, the number it returned) from a loaded library that reports its version, else None."""
    import ctypes
    stem = re.sub(r"^lib", "", os.path.basename(path)).split(".")[0]
    stem = re.sub(r"(64)?_\d+$", "", stem).lower()  # cudnn64_9.dll
    for name, symbol, kind in VERSION_CALLS:
        if stem != name:
            continue
        library = ctypes.CDLL(path)  # already mapped: the same handle, nothing loaded anew
        function = getattr(library, symbol)
        if kind == "size_t":
            function.restype = ctypes.c_size_t
            return symbol, int(function())
        number = ctypes.c_int(0)
        if function(ctypes.byref(number)) == 0:
            return symbol, number.value
    return None


def loaded_report():
    """The CUDA and driver libraries this process loaded, each with its reported version."""
    try:
        files, source = loaded_files()
    except Exception as exc:
        return {"error": "%s: %s" % (type(exc).__name__, exc)}
    libraries = []
    for path in files:
        if not CUDA_FILE.match(os.path.basename(path)):
            continue
        entry = {"path": path}
        answer, error = value_and_error(lambda path=path: reported_version(path))
        if answer:
            entry["symbol"], entry["reported"] = answer
        elif error:
            entry["version_error"] = error
        libraries.append(entry)
    return {"source": source, "count": len(files), "libraries": libraries}


def main():
    started = time.time()
    try:
        import torch
    except BaseException:  # ImportError, OSError from a missing .so, SystemExit from a bad build
        print(json.dumps({"imported": False, "error": tail(traceback.format_exc(), 12),
                          "import_seconds": round(time.time() - started, 3), "loaded": loaded_report()}))
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
    report["loaded"] = loaded_report()
    report["seconds"] = round(time.time() - started, 3)
    sys.stdout.flush()
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    sys.stderr.flush()
    # The report is out: skip the interpreter's and CUDA's teardown, which the caller would wait
    # for (bench/real_gpu_profile.py measures what it costs).
    os._exit(0)
