"""Print facts about the interpreter running this file, as JSON. Any Python 2.7+/3.x."""
import json
import os
import platform
import sys

try:
    import sysconfig
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
except Exception:
    free_threaded = False

prefix = sys.prefix
base_prefix = getattr(sys, "base_prefix", getattr(sys, "real_prefix", prefix))
print(json.dumps({
    "version": platform.python_version(),
    "implementation": platform.python_implementation(),
    "free_threaded": free_threaded,
    "executable": sys.executable,
    "prefix": prefix,
    "virtualenv": prefix if prefix != base_prefix else None,
    "conda_prefix": prefix if os.path.isdir(os.path.join(prefix, "conda-meta")) else None,
    "machine": platform.machine(),
}))
