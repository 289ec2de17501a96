"""Sample every GPU through NVML about once a second; print one JSON line per sample.

Run by ``torchsmith watch`` in a child process (NVML never loads into torchsmith itself). The first
line describes the devices; each later line is a sample: device utilisation, memory used and
total, the compute processes with their memory, and each process's SM utilisation since the last
sample (``nvmlDeviceGetProcessUtilization``, which answers Not Found until a process has a CUDA
context). On a MIG-enabled GPU the MIG devices are sampled too: NVML gives their memory and
processes, not their utilisation. Stops when stdin closes or after --count samples.
Usage: nvml_watch.py [--interval SECONDS] [--count N]
"""
import json
import sys
import threading
import time


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def error_name(exc):
    return text(getattr(exc, "__str__", lambda: repr(exc))())


def attempt(fn, default=None):
    try:
        return fn()
    except Exception:
        return default


def mib(value):
    return int(value // (1024 * 1024)) if isinstance(value, int) else None


def devices(pynvml):
    """(key, handle, parent key or None) of every device to sample: GPU "0", its MIG device "0/1"."""
    found = []
    for index in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        found.append((str(index), handle, None))
        mig = attempt(lambda handle=handle: pynvml.nvmlDeviceGetMigMode(handle)[0], 0)
        if mig:
            for slot in range(attempt(lambda handle=handle: pynvml.nvmlDeviceGetMaxMigDeviceCount(handle), 0)):
                child = attempt(lambda h=handle, s=slot: pynvml.nvmlDeviceGetMigDeviceHandleByIndex(h, s))
                if child is not None:
                    found.append(("%d/%d" % (index, slot), child, str(index)))
    return found


def describe(pynvml, handle, key, parent):
    return {"key": key, "parent": parent, "name": attempt(lambda: text(pynvml.nvmlDeviceGetName(handle))),
            "uuid": attempt(lambda: text(pynvml.nvmlDeviceGetUUID(handle))),
            "mig_mode": attempt(lambda: list(pynvml.nvmlDeviceGetMigMode(handle))) if parent is None else None}


def sample(pynvml, handle, last_seen):
    """One device's numbers now; ``last_seen`` keeps the newest process-utilisation timestamp."""
    out = {}
    util = attempt(lambda: pynvml.nvmlDeviceGetUtilizationRates(handle))
    out["util"] = {"gpu": util.gpu, "memory": util.memory} if util is not None else None
    memory = attempt(lambda: pynvml.nvmlDeviceGetMemoryInfo(handle))
    out["memory_mib"] = {"used": mib(memory.used), "total": mib(memory.total)} if memory is not None else None
    processes = attempt(lambda: pynvml.nvmlDeviceGetComputeRunningProcesses(handle), [])
    out["processes"] = [{"pid": p.pid, "used_mib": mib(p.usedGpuMemory)} for p in processes]
    try:
        rows = pynvml.nvmlDeviceGetProcessUtilization(handle, last_seen.get(id(handle), 0))
        out["process_util"] = [{"pid": r.pid, "sm": r.smUtil, "mem": r.memUtil} for r in rows]
        if rows:
            last_seen[id(handle)] = max(r.timeStamp for r in rows)
    except Exception as exc:  # NVMLError_NotFound before any process has a CUDA context
        out["process_util_error"] = error_name(exc)
    return out


def main():
    interval, count = 1.0, None
    args = sys.argv[1:]
    for flag, value in zip(args[::2], args[1::2]):
        if flag == "--interval":
            interval = max(0.01, float(value))
        elif flag == "--count":
            count = int(value)
    try:
        import pynvml
        pynvml.nvmlInit()
    except Exception as exc:
        print(json.dumps({"error": "NVML cannot start: %s" % error_name(exc)}), flush=True)
        return
    stop = threading.Event()
    # torchsmith closes our stdin to stop us; reading it in a thread notices.
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    try:
        found = devices(pynvml)
        print(json.dumps({"driver": attempt(lambda: text(pynvml.nvmlSystemGetDriverVersion())),
                          "devices": [describe(pynvml, h, k, p) for k, h, p in found]}), flush=True)
        last_seen, taken = {}, 0
        while not stop.is_set() and (count is None or taken < count):
            started = time.time()
            line = {"t": round(started, 3), "devices": {}}
            for key, handle, _parent in found:
                line["devices"][key] = sample(pynvml, handle, last_seen)
            print(json.dumps(line), flush=True)
            taken += 1
            stop.wait(max(0.0, interval - (time.time() - started)))
    except Exception as exc:
        print(json.dumps({"error": "NVML query failed: %s" % error_name(exc)}), flush=True)
    finally:
        attempt(pynvml.nvmlShutdown)


if __name__ == "__main__":
    main()
