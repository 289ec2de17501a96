"""Run the inspection snippets in the target interpreter, as child processes with a timeout."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional

from torchsmith.errors import TorchsmithError
from torchsmith.host import CommandResult, Host

__all__ = ["DYNAMIC_TIMEOUT", "STATIC_TIMEOUT", "inspect_dynamic", "inspect_kernels", "inspect_static",
           "snippet_path"]

# The library holding torch's own kernels, by release and OS (split in two in some 1.x releases).
KERNEL_LIBRARIES = ("libtorch_cuda.so", "torch_cuda.dll", "libtorch_cuda_cu.so", "torch_cuda_cu.dll")


STATIC_TIMEOUT = 20.0
# A cold `import torch` with CUDA libraries on a network filesystem can take tens of seconds.
DYNAMIC_TIMEOUT = 90.0

_SNIPPETS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "snippets")


def snippet_path(name: str) -> str:
    return os.path.join(_SNIPPETS, name)


def _last_json_line(text: str) -> Optional[Dict[str, Any]]:
    for raw in reversed(text.strip().splitlines()):
        line = raw.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except (ValueError, RecursionError):
                return None
            return data if isinstance(data, dict) else None
    return None


def _tail(text: str, lines: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def inspect_static(host: Host, python: str, timeout: float = STATIC_TIMEOUT) -> Dict[str, Any]:
    """The environment's packages, torch build and libraries, read without importing torch."""
    result = host.run([python, snippet_path("inspect_env.py")], timeout)
    data = _last_json_line(result.stdout) if result.ok else None
    if data is None:
        raise TorchsmithError(
            f"cannot inspect the environment of {python}: " + (
                result.problem() if not result.ok else "its inspection printed no usable JSON"),
            code="python-not-inspectable",
            context=[line for line in _tail(result.stderr, 4).splitlines() if line],
            hint="pass an existing interpreter with --python PATH (python3.7 or newer)",
        )
    return data


def inspect_dynamic(host: Host, python: str, timeout: float = DYNAMIC_TIMEOUT) -> Dict[str, Any]:
    """Import torch in a child process and exercise every device.

    Returns ``{"status": "ok" | "failed" | "timeout", ...}``; never raises for a broken torch.
    """
    result: CommandResult = host.run([python, snippet_path("torch_check.py")], timeout)
    if result.timed_out:
        return {"status": "timeout", "timeout": timeout}
    data = _last_json_line(result.stdout)
    if data is None:
        # Killed by a signal (a segfault in a CUDA library) or no JSON at all.
        return {"status": "failed", "returncode": result.returncode,
                "error": _tail(result.stderr) or result.problem()}
    if not data.get("imported"):
        return {"status": "failed", "returncode": result.returncode,
                "error": str(data.get("error") or ""), "import_seconds": data.get("import_seconds")}
    data["status"] = "ok"
    return data


def inspect_kernels(host: Host, report: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The SASS/PTX in the installed torch's CUDA library, from its fatbin headers (no import).

    None when there is no CUDA torch; ``{"error": ...}`` when its library cannot be read.
    """
    torch = report.get("torch")
    if not isinstance(torch, dict) or not torch.get("cuda") or not torch.get("path"):
        return None
    from torchsmith.kb.fatbin import BinaryError, read_path  # only for a CUDA torch: imports the kb
    lib_dir = os.path.join(str(torch["path"]), "lib")
    names = host.list_dir(lib_dir) or []
    name = next((n for n in KERNEL_LIBRARIES if n in names), None)
    if name is None:
        return {"error": f"no {' or '.join(KERNEL_LIBRARIES[:2])} in {lib_dir}"}
    path = os.path.join(lib_dir, name)
    try:
        code = read_path(host, path)[0]
    except BinaryError as exc:
        return {"file": path, "error": str(exc)}
    sass, ptx = code.build_targets()  # torch's own list, not that of a few special kernels
    return {"file": path, "sass": sass, "ptx": ptx}
