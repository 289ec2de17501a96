"""How a container the text starts was given its /dev/shm, and whether a process was killed inside
a container image build. Pure.

``docker run`` gives a container a /dev/shm of 64 MB unless ``--shm-size`` sets another size or
``--ipc=host`` shares the host's (Docker's reference, docker container run: "--shm-size: Size of
/dev/shm ... default 64MB"; https://docs.docker.com/reference/cli/docker/container/run/); a Compose
service sets it with ``shm_size`` or ``ipc: host`` (https://docs.docker.com/reference/compose-file/services/).
``df`` (coreutils) shows the size a /dev/shm mount has: its -h form prints sizes with a K/M/G suffix.
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = ["docker_shm", "image_build_kill", "ran_after_build"]

# A docker run command, its continuation lines (a trailing backslash) included.
_DOCKER_RUN = re.compile(r"\bdocker run\b(?P<args>(?:[^\n\\]|\\(?!\n)|\\\n)*)")
_SHM_SET = re.compile(r"--shm-size\b|--ipc(?:=|\s+)host\b")
# Compose sets it per service (shm_size:, ipc: host; the Compose file reference)
_COMPOSE_SHM_SET = re.compile(r"^\s*(?:shm_size|ipc)\s*:\s*['\"]?(?:host\b|\d)", re.MULTILINE)
# A run that only checks the GPU (the NVIDIA Container Toolkit's sample workload) is not the workload.
_GPU_CHECK = re.compile(r"\snvidia-smi(?:\s+-L)?\s*$")
# df -h's row of /dev/shm: Filesystem, Size, Used, Avail, Use%, Mounted on
_DF_SHM = re.compile(r"^\S+\s+(?P<size>\d+(?:[.,]\d+)?)(?P<unit>[KMG])i?\s+\S+\s+\S+\s+\d+%\s+"
                     r"/dev/shm[ \t]*$", re.MULTILINE)
_DOCKER_DEFAULT_SHM_MIB = 64.0


def _df_shm_mib(text: str) -> Optional[float]:
    """The size of /dev/shm df -h rows show, in MiB; None where none does, or where rows disagree
    about Docker's default (64 MB before and 16 GB after a --shm-size: which one failed?)."""
    rows = list(_DF_SHM.finditer(text)) if "/dev/shm" in text else []
    sizes = [float(row.group("size").replace(",", ".")) * 1024.0 ** ("KMG".index(row.group("unit")) - 1)
             for row in rows]
    if not sizes or len({size <= _DOCKER_DEFAULT_SHM_MIB for size in sizes}) > 1:
        return None
    return sizes[0]


def docker_shm(text: str) -> Optional[str]:
    """``"default"`` when every ``docker run`` the text shows leaves /dev/shm at Docker's 64 MB,
    ``"small"`` when df shows a /dev/shm of that size or smaller; ``"set"`` when a run sets it (or a
    Compose file does) or df shows a larger one; None when the text shows none, or only a run of
    nvidia-smi that checks the GPU."""
    shown = _df_shm_mib(text)
    if shown is not None:  # what the mount is, whatever a command line asked for
        return "small" if shown <= _DOCKER_DEFAULT_SHM_MIB else "set"
    if "docker run" not in text:
        return None
    runs = [match.group("args") for match in _DOCKER_RUN.finditer(text)]
    if any(_SHM_SET.search(args) for args in runs) or _COMPOSE_SHM_SET.search(text):
        return "set"
    workloads = [args for args in runs if not _GPU_CHECK.search(args)]
    return "default" if workloads else None


# The builder's own report of a build step that exited with 137 (128 + SIGKILL): the classic builder's
# "The command '...' returned a non-zero code: 137" (moby/moby builder/dockerfile/internals.go, the
# message in dispatchRun/run), BuildKit's 'process "..." did not complete successfully: exit code: 137'
# (moby/buildkit solver/llbsolver/ops/exec.go, ExecOp.Exec).
# Buildah (podman build) reports the step and the runtime's "exit status 137" (containers/buildah
# imagebuildah/stage_executor.go: "building at STEP"); kaniko wraps Go's exit error of the step's
# shell (GoogleContainerTools/kaniko pkg/commands/run.go, waitAndCleanupProcess: "waiting for process
# to exit"), which reads "signal: killed" where the shell itself was killed.
_BUILD_STEP_KILLED = re.compile(r"returned a non-zero code: 137\b"
                                r"|did not complete successfully: exit code:? 137\b"
                                r"|building at STEP[^\n]{0,400}exit status 137\b"
                                r"|waiting for process to exit: (?:exit status 137\b|signal: killed\b)")
# The text builds an image: the command, or the words ("building the docker image")
_IMAGE_BUILD = re.compile(r"\b(?:docker|podman)(?: buildx| image)? build\b"
                          r"|\bbuild(?:s|ing)? (?:(?:a|the|my|our|this) )?(?:docker|container|podman)"
                          r" image\b", re.IGNORECASE)
# A process killed with SIGKILL, as the shell (bash's "Killed"), gcc's driver and nvcc print it
_KILLED = re.compile(r"signal terminated program|^\s*Killed\s*$|died due to signal 9|\bKilled \(program",
                     re.MULTILINE)
# A cancelled build kills its running step with SIGKILL too (BuildKit on a cancelled context)
_CANCELLED = re.compile(r"\bcancel(?:l?ed|l?ing|lation)\b", re.IGNORECASE)


def image_build_kill(text: str) -> Optional[str]:
    """How the text shows a process killed (SIGKILL) inside a container image build step, or None:
    there no terminal, job time limit or supervisor sends that signal to a step, and a cancelled
    build says so; what is left is the kernel's (or the Docker Desktop VM's) out-of-memory killer."""
    if not ("137" in text or "illed" in text or "signal" in text) or _CANCELLED.search(text):
        return None
    if _BUILD_STEP_KILLED.search(text):
        return ("an image build's step exited with code 137 (SIGKILL), which inside a build only the "
                "out-of-memory killer sends")
    if _killed_during_build(text):
        return ("it was killed (SIGKILL) inside a container image build, where only the out-of-memory "
                "killer sends that")
    return None


# The build ended (the classic builder's and BuildKit's last lines), or a container is run or entered:
# a kill after that is no build step's
_BUILD_OVER = re.compile(r"Successfully (?:built|tagged)\b|naming to \S+ done|writing image sha256"
                         r"|\b(?:docker|podman|nerdctl)(?: container)? (?:run|exec|start)\b"
                         r"|\b(?:docker[ -])?compose (?:run|up|exec)\b")


def _killed_during_build(text: str) -> bool:
    """A SIGKILL line after the text starts an image build (its command or its words), with neither
    the build's end nor a container's run between the two."""
    kills = list(_KILLED.finditer(text))
    builds = [match.end() for match in _IMAGE_BUILD.finditer(text)] if kills else []
    for kill in kills:
        started = [at for at in builds if at <= kill.start()]
        if started and not _BUILD_OVER.search(text, started[-1], kill.start()):
            return True
    return False


def ran_after_build(text: str) -> Optional[str]:
    """The image build the text starts is shown to end (Successfully built/tagged, naming to ... done)
    or to be followed by a container run that is not a GPU check: what fails after that is no build
    step's. None where the text builds nothing, or shows neither."""
    builds = [match.end() for match in _IMAGE_BUILD.finditer(text)] if "build" in text else []
    if not builds:
        return None
    after = text[builds[-1]:]
    ended = re.search(r"Successfully (?:built|tagged)\b|naming to \S+ done|writing image sha256", after)
    if ended:
        return ended.group(0)
    for run in _DOCKER_RUN.finditer(after):
        if not _GPU_CHECK.search(run.group("args")):
            return "docker run" + run.group("args")[:80]
    return None

