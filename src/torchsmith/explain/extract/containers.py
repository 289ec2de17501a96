"""How a container the text starts was given its /dev/shm. Pure.

``docker run`` gives a container a /dev/shm of 64 MB unless ``--shm-size`` sets another size or
``--ipc=host`` shares the host's (Docker's reference, docker container run: "--shm-size: Size of
/dev/shm ... default 64MB"; https://docs.docker.com/reference/cli/docker/container/run/).
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = ["docker_shm"]

# A docker run command, its continuation lines (a trailing backslash) included.
_DOCKER_RUN = re.compile(r"\bdocker run\b(?P<args>(?:[^\n\\]|\\(?!\n)|\\\n)*)")
_SHM_SET = re.compile(r"--shm-size\b|--ipc(?:=|\s+)host\b")


def docker_shm(text: str) -> Optional[str]:
    """``"default"`` when every ``docker run`` the text shows leaves /dev/shm at Docker's 64 MB,
    ``"set"`` when one sets it; None when the text shows none."""
    if "docker run" not in text:
        return None
    runs = [match.group("args") for match in _DOCKER_RUN.finditer(text)]
    if not runs:
        return None
    return "set" if any(_SHM_SET.search(args) for args in runs) else "default"
