"""Print libcuda's cuDriverGetVersion() as JSON. Run in a child process: a broken driver can hang."""
import ctypes
import json
import sys

CANDIDATES = {
    "linux": ["libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1", "/usr/lib64/libcuda.so.1",
              "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib/aarch64-linux-gnu/libcuda.so.1"],
    "win32": ["nvcuda.dll"],
}


def main():
    names = CANDIDATES.get("win32" if sys.platform == "win32" else "linux")
    errors = []
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError as exc:
            errors.append("%s: %s" % (name, exc))
            continue
        version = ctypes.c_int(0)
        # cuDriverGetVersion needs no cuInit, so it answers even when no device is visible.
        status = lib.cuDriverGetVersion(ctypes.byref(version))
        if status != 0:
            print(json.dumps({"error": "cuDriverGetVersion returned %d" % status, "library": name}))
            return
        print(json.dumps({"version": version.value, "library": name}))
        return
    print(json.dumps({"error": "libcuda not found", "tried": errors[:3]}))


if __name__ == "__main__":
    main()
