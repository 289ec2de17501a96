"""A real single-host Slurm cluster for the tests: munged, slurmctld and one slurmd per node name.

Everything lives in one temporary directory (config, state, logs, munge socket and key), so it
never touches a system Slurm or munge. :func:`start_cluster` raises :class:`SlurmUnavailable`
with the reason when any piece cannot start; the fixture turns that into a skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from typing import Dict, List, Optional

NODE_NAMES = ("node1", "node2", "node3")
PARTITION = "debug"


class SlurmUnavailable(Exception):
    pass


def _free_ports(count: int) -> List[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _find(name: str) -> str:
    for folder in ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"):
        path = os.path.join(folder, name)
        if os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if not found:
        raise SlurmUnavailable(f"{name} is not installed (run .ci/install-slurm)")
    return found


class SlurmCluster:
    def __init__(self, root: str) -> None:
        self.root = root
        self.conf = os.path.join(root, "slurm.conf")
        self.munge_socket = os.path.join(root, "munge", "munge.socket")
        self.processes: List[subprocess.Popen[bytes]] = []
        self.log_handles: List[object] = []
        self.env: Dict[str, str] = {}
        self.nodes = NODE_NAMES
        self.partition = PARTITION

    # --- life cycle ------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> None:
        if os.geteuid() != 0:
            raise SlurmUnavailable("the test cluster runs its daemons as root")
        munged, slurmctld, slurmd = _find("munged"), _find("slurmctld"), _find("slurmd")
        for tool in ("srun", "sinfo", "scontrol"):
            _find(tool)
        self._start_munge(munged)
        self._write_config()
        self.env = {**os.environ, "SLURM_CONF": self.conf}
        self._spawn([slurmctld, "-D", "-f", self.conf], "slurmctld.out")
        for node in self.nodes:
            self._spawn([slurmd, "-D", "-f", self.conf, "-N", node], f"slurmd-{node}.out")
        self._wait_idle(timeout)

    def stop(self) -> None:
        """slurmds first, then slurmctld, munged last, so no daemon logs a lost peer."""
        for proc in reversed(self.processes):
            _terminate(proc)
        self.processes.clear()
        for handle in self.log_handles:
            handle.close()  # type: ignore[attr-defined]
        self.log_handles.clear()

    def stop_node(self, node: str) -> None:
        """Kill one slurmd, as a node that dies: its jobs get no answer."""
        for proc in self.processes:
            if proc.args[-1] == node and proc.poll() is None:  # type: ignore[index]
                _terminate(proc, signal.SIGKILL)

    # --- helpers ---------------------------------------------------------------------
    def run(self, argv: List[str], timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout,
                              check=False)

    def logs(self) -> str:
        texts = []
        for name in sorted(os.listdir(self.root)):
            if name.endswith((".log", ".out")):
                with open(os.path.join(self.root, name), encoding="utf-8", errors="replace") as fh:
                    texts.append(f"--- {name}\n{fh.read()[-2000:]}")
        return "\n".join(texts)

    def _spawn(self, argv: List[str], log_name: str, env: Optional[Dict[str, str]] = None) -> None:
        log = open(os.path.join(self.root, log_name), "wb")  # noqa: SIM115 - closed in stop()
        self.log_handles.append(log)
        self.processes.append(subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env=env or self.env, start_new_session=True))

    def _start_munge(self, munged: str) -> None:
        folder = os.path.join(self.root, "munge")
        os.makedirs(folder, mode=0o700)
        key = os.path.join(folder, "munge.key")
        with open(key, "wb") as handle:
            handle.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self._spawn([munged, "-F", "-f", f"--socket={self.munge_socket}", f"--key-file={key}",
                     f"--pid-file={folder}/munged.pid", f"--log-file={folder}/munged.log",
                     f"--seed-file={folder}/munged.seed"], "munged.out", env=dict(os.environ))
        deadline = time.monotonic() + 10
        while not os.path.exists(self.munge_socket):
            if self.processes[-1].poll() is not None or time.monotonic() > deadline:
                raise SlurmUnavailable("munged did not start:\n" + self.logs())
            time.sleep(0.05)

    def _write_config(self) -> None:
        ports = _free_ports(1 + len(self.nodes))
        r = self.root
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(r, sub))
        for node in self.nodes:
            os.makedirs(os.path.join(r, "spool", node))
        lines = [
            "ClusterName=torchsmith-test",
            f"SlurmctldHost={socket.gethostname()}(127.0.0.1)",
            f"SlurmctldPort={ports[0]}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={r}/state",
            f"SlurmdSpoolDir={r}/spool/%n",
            f"SlurmctldPidFile={r}/slurmctld.pid",
            f"SlurmdPidFile={r}/slurmd-%n.pid",
            f"SlurmctldLogFile={r}/slurmctld.log",
            f"SlurmdLogFile={r}/slurmd-%n.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "ReturnToService=2",
            "MpiDefault=none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SlurmdTimeout=5",
            "InactiveLimit=0",
            "KillWait=2",
        ]
        for node, port in zip(self.nodes, ports[1:]):
            lines.append(f"NodeName={node} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 "
                         f"Port={port} CPUs=2 RealMemory=2048 State=UNKNOWN")  # 2 workers per node
        lines.append(f"PartitionName={PARTITION} Nodes={','.join(self.nodes)} Default=YES "
                     "MaxTime=INFINITE State=UP")
        with open(self.conf, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")

    def _wait_idle(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            for proc in self.processes:
                if proc.poll() is not None:
                    raise SlurmUnavailable(f"{proc.args[0]} exited with {proc.returncode}:\n"  # type: ignore[index]
                                           + self.logs())
            try:
                out = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], timeout=10)
            except subprocess.TimeoutExpired:
                continue
            last = out.stdout + out.stderr
            states = dict(line.split() for line in out.stdout.splitlines() if len(line.split()) == 2)
            if all(states.get(node) == "idle" for node in self.nodes):
                return
            time.sleep(0.3)
        raise SlurmUnavailable(f"nodes did not become idle in {timeout:.0f}s: {last.strip()}\n"
                               + self.logs())


def _terminate(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait(timeout=5)
