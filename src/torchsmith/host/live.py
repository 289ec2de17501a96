"""The live Host: the one module that runs commands and reads the real machine."""

from __future__ import annotations

import os
import platform
import shutil
import signal
import subprocess
import sys
import sysconfig
from typing import IO, List, Mapping, Optional, Sequence

from torchsmith.host import CommandResult, PlatformInfo

__all__ = ["LiveHost"]

_READ_LIMIT = 4 * 1024 * 1024  # no file torchsmith reads is legitimately larger


class LiveHost:
    def __init__(self, environ: Optional[Mapping[str, str]] = None) -> None:
        self._environ = dict(os.environ if environ is None else environ)

    def read_text(self, path: str) -> Optional[str]:
        try:
            with open(path, "rb") as handle:
                data = handle.read(_READ_LIMIT)
        except OSError:
            return None
        return data.decode("utf-8", errors="replace")

    def open_binary(self, path: str) -> Optional[IO[bytes]]:
        try:
            return open(path, "rb")  # the caller closes it
        except OSError:
            return None

    def list_dir(self, path: str) -> Optional[List[str]]:
        try:
            return sorted(os.listdir(path))
        except OSError:
            return None

    def which(self, name: str) -> Optional[str]:
        return shutil.which(name, path=self._environ.get("PATH"))

    def run(self, argv: Sequence[str], timeout: float = 5.0,
            env: Optional[Mapping[str, Optional[str]]] = None) -> CommandResult:
        args = list(argv)
        child_env = dict(self._environ)
        for name, value in (env or {}).items():
            if value is None:
                child_env.pop(name, None)
            else:
                child_env[name] = value
        try:
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=child_env,
                # Own process group, so a hung nvidia-smi and its children can be killed whole.
                start_new_session=sys.platform != "win32",
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError):
            return CommandResult(args, not_found=True)
        except OSError as exc:
            return CommandResult(args, stderr=str(exc))
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return CommandResult(args, timed_out=True)
        except KeyboardInterrupt:
            _kill_group(proc)
            raise
        return CommandResult(
            args,
            returncode=proc.returncode,
            stdout=out.decode("utf-8", errors="replace"),
            stderr=err.decode("utf-8", errors="replace"),
        )

    def environ(self) -> Mapping[str, str]:
        return self._environ

    def platform(self) -> PlatformInfo:
        libc_name, libc_version = platform.libc_ver() if sys.platform.startswith("linux") else ("", "")
        return PlatformInfo(
            system=platform.system(),
            machine=platform.machine(),
            release=platform.release(),
            python_version=platform.python_version(),
            python_implementation=platform.python_implementation(),
            python_executable=sys.executable,
            python_prefix=sys.prefix,
            python_base_prefix=getattr(sys, "base_prefix", sys.prefix),
            python_free_threaded=bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
            python_bits=64 if sys.maxsize > 2**32 else 32,
            libc=f"{libc_name} {libc_version}".strip() if libc_name else "",
            cpu_count=os.cpu_count() or 0,
            mac_version=platform.mac_ver()[0] if sys.platform == "darwin" else "",
            windows_version=platform.version() if sys.platform == "win32" else "",
        )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        if sys.platform != "win32":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass
    try:
        proc.communicate(timeout=2)
    except (subprocess.TimeoutExpired, OSError, ValueError):
        pass
