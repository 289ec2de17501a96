"""Print the driver and GPUs as NVML sees them, as JSON. Run in a child process: a wedged driver
hangs NVML. Standard library only, through NVML's C API (nvml.h), so the child can start with
``python -I -S``: importing the pynvml binding alone costs more than the whole query."""
import ctypes
import json
import os
import sys

# nvml.h's buffer sizes.
DRIVER_VERSION_SIZE = 80
NAME_SIZE = 96
UUID_SIZE = 96


class PciInfo(ctypes.Structure):
    """nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it."""
    _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", ctypes.c_uint), ("bus", ctypes.c_uint),
                ("device", ctypes.c_uint), ("pciDeviceId", ctypes.c_uint),
                ("pciSubSystemId", ctypes.c_uint), ("busId", ctypes.c_char * 32)]


class Memory(ctypes.Structure):
    """nvmlMemory_t."""
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class NvmlError(Exception):
    pass


def candidates():
    if sys.platform == "win32":
        # Where NVIDIA's Windows drivers install it: System32 (DCH), else the NVSMI folder.
        return [os.path.join(os.environ.get("WINDIR", "C:/Windows"), "System32", "nvml.dll"),
                os.path.join(os.environ.get("PROGRAMFILES", "C:/Program Files"),
                             "NVIDIA Corporation", "NVSMI", "nvml.dll")]
    return ["libnvidia-ml.so.1", "/usr/lib/wsl/lib/libnvidia-ml.so.1"]


def load():
    for name in candidates():
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def checked(lib):
    lib.nvmlErrorString.restype = ctypes.c_char_p

    def call(name, *args):
        status = getattr(lib, name)(*args)
        if status != 0:
            message = lib.nvmlErrorString(status)
            raise NvmlError(message.decode(errors="replace") if message else "NVML error %d" % status)
    return call


def text(buffer):
    return buffer.value.decode(errors="replace")


def gpu(call, index):
    handle = ctypes.c_void_p()
    call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle))
    name = ctypes.create_string_buffer(NAME_SIZE)
    call("nvmlDeviceGetName", handle, name, ctypes.c_uint(NAME_SIZE))
    row = {"index": index, "name": text(name)}

    def capability():
        major, minor = ctypes.c_int(), ctypes.c_int()
        call("nvmlDeviceGetCudaComputeCapability", handle, ctypes.byref(major), ctypes.byref(minor))
        return "%d.%d" % (major.value, minor.value)

    def memory():
        info = Memory()
        call("nvmlDeviceGetMemoryInfo", handle, ctypes.byref(info))
        return int(info.total // (1024 * 1024))

    def uuid():
        buffer = ctypes.create_string_buffer(UUID_SIZE)
        call("nvmlDeviceGetUUID", handle, buffer, ctypes.c_uint(UUID_SIZE))
        return text(buffer)

    def bus_id():
        info = PciInfo()
        call("nvmlDeviceGetPciInfo_v3", handle, ctypes.byref(info))
        return info.busId.decode(errors="replace")

    def mig_mode():
        current, pending = ctypes.c_uint(), ctypes.c_uint()
        call("nvmlDeviceGetMigMode", handle, ctypes.byref(current), ctypes.byref(pending))
        return "Enabled" if current.value else "Disabled"

    for key, read in (("compute_capability", capability), ("memory_mib", memory), ("uuid", uuid),
                      ("bus_id", bus_id), ("mig_mode", mig_mode)):
        try:
            row[key] = read()
        except (NvmlError, AttributeError):  # an old driver without the call, or a refusal
            row[key] = None
    return row


def main():
    lib = load()
    if lib is None:
        print(json.dumps({"error": "nvmlInit failed: NVML Shared Library Not Found"}))
        return
    call = checked(lib)
    try:
        call("nvmlInit_v2")
    except (NvmlError, AttributeError) as exc:
        print(json.dumps({"error": "nvmlInit failed: %s" % exc}))
        return
    out = {"gpus": []}
    try:
        version = ctypes.create_string_buffer(DRIVER_VERSION_SIZE)
        call("nvmlSystemGetDriverVersion", version, ctypes.c_uint(DRIVER_VERSION_SIZE))
        out["driver_version"] = text(version)
        cuda = ctypes.c_int()
        try:
            call("nvmlSystemGetCudaDriverVersion_v2", ctypes.byref(cuda))
        except (NvmlError, AttributeError):
            call("nvmlSystemGetCudaDriverVersion", ctypes.byref(cuda))
        out["cuda_driver_version"] = cuda.value
        count = ctypes.c_uint()
        call("nvmlDeviceGetCount_v2", ctypes.byref(count))
        for index in range(count.value):
            out["gpus"].append(gpu(call, index))
    except (NvmlError, AttributeError) as exc:
        out["error"] = "NVML query failed: %s" % exc
    finally:
        try:
            lib.nvmlShutdown()
        except AttributeError:
            pass
    print(json.dumps(out))


if __name__ == "__main__":
    main()
    sys.stdout.flush()
