"""Print the driver and GPUs as NVML sees them, as JSON. Run in a child process."""
import json
import sys


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def main():
    try:
        import pynvml
    except ImportError as exc:
        print(json.dumps({"error": "nvidia-ml-py is not installed: %s" % exc}))
        return
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError subclasses carry the reason in str()
        print(json.dumps({"error": "nvmlInit failed: %s" % exc, "error_type": type(exc).__name__}))
        return
    out = {"gpus": []}
    try:
        out["driver_version"] = _text(pynvml.nvmlSystemGetDriverVersion())
        try:
            cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
        except Exception:
            cuda = pynvml.nvmlSystemGetCudaDriverVersion()
        out["cuda_driver_version"] = int(cuda)
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            gpu = {"index": index, "name": _text(pynvml.nvmlDeviceGetName(handle))}
            for key, call in (
                ("compute_capability", lambda h: "%d.%d" % pynvml.nvmlDeviceGetCudaComputeCapability(h)),
                ("memory_mib", lambda h: int(pynvml.nvmlDeviceGetMemoryInfo(h).total // (1024 * 1024))),
                ("uuid", lambda h: _text(pynvml.nvmlDeviceGetUUID(h))),
                ("bus_id", lambda h: _text(pynvml.nvmlDeviceGetPciInfo(h).busId)),
                ("mig_mode", lambda h: "Enabled" if pynvml.nvmlDeviceGetMigMode(h)[0] else "Disabled"),
            ):
                try:
                    gpu[key] = call(handle)
                except Exception:
                    gpu[key] = None
            out["gpus"].append(gpu)
    except Exception as exc:
        out["error"] = "NVML query failed: %s" % exc
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
    print(json.dumps(out))


if __name__ == "__main__":
    main()
    sys.stdout.flush()
