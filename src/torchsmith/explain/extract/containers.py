"""How a container the text starts was given its /dev/shm. Pure.

``docker run`` gives a container a /dev/shm of 64 MB unless ``--shm-size`` sets another size or
``--ipc=host`` shares the host's (Docker's reference, docker container run: "--shm-size: Size of
/dev/shm ... default 64MB"; https://docs.docker.com/reference/cli/docker/container/run/); a Compose
service sets it with ``shm_size`` or ``ipc: host`` (https://docs.docker.com/reference/compose-file/services/).
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = ["docker_shm"]

# A docker run command, its continuation lines (a trailing backslash) included.
_DOCKER_RUN = re.compile(r"\bdocker run\b(?P<args>(?:[^\n\\]|\\(?!\n)|\\\n)*)")
_SHM_SET = re.compile(r"--shm-size\b|--ipc(?:=|\s+)host\b")
# Compose sets it per service (shm_size:, ipc: host; the Compose file reference)
_COMPOSE_SHM_SET = re.compile(r"^\s*(?:shm_size|ipc)\s*:\s*['\"]?(?:host\b|\d)", re.MULTILINE)
# A run that only checks the GPU (the NVIDIA Container Toolkit's sample workload) is not the workload.
_GPU_CHECK = re.compile(r"\snvidia-smi(?:\s+-L)?\s*$")


def docker_shm(text: str) -> Optional[str]:
    """``"default"`` when every ``docker run`` the text shows leaves /dev/shm at Docker's 64 MB,
    ``"set"`` when one sets it (or a Compose file does); None when the text shows none, or only
    a run of nvidia-smi that checks the GPU."""
    if "docker run" not in text:
        return None
    runs = [match.group("args") for match in _DOCKER_RUN.finditer(text)]
    if any(_SHM_SET.search(args) for args in runs) or _COMPOSE_SHM_SET.search(text):
        return "set"
    workloads = [args for args in runs if not _GPU_CHECK.search(args)]
    return "default" if workloads else None
