"""How much of its GPUs your own job uses, measured through NVML while it runs.

    torchsmith watch -- python train.py --epochs 3     run it and watch it
    torchsmith watch --pid 4242                        watch a running process (and its children)
    torchsmith watch --slurm-job 123456                a Slurm job's processes on this node; from a
                                                       login node: srun --jobid 123456 --overlap
                                                       torchsmith watch --slurm-job 123456

About once a second: the job's SM utilisation (NVML's per-process figure) and its GPU memory
against the total, as a live line on a terminal, then a summary. When the job keeps a GPU mostly
idle, it says so with the numbers and the options: a MIG slice or a smaller GPU, more work in
each step, MPS, or CPUs. NVML runs in a child process (snippets/nvml_watch.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import IO, Any, Dict, List, Optional, Set, cast

from torchsmith.cli.common import Context, add_json_option
from torchsmith.doctor.gpu_use import Watch, gpu_indexes_of_slurm_job, pids_of_slurm_job
from torchsmith.errors import TorchsmithError, UsageError
from torchsmith.host import Host, JobHost, LineStream, Spawned
from torchsmith.output import ExitCode, Result

_SNIPPET = "nvml_watch.py"
_FIRST_LINE_TIMEOUT = 20.0  # nvmlInit on a node with 8 GPUs and no persistence mode takes seconds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--pid", type=int, metavar="PID", help="watch this running process and its children")
    which.add_argument("--slurm-job", metavar="ID", help="watch this Slurm job's processes on this node")
    parser.add_argument("--interval", type=float, default=1.0, metavar="SECONDS",
                        help="seconds between samples (default 1)")
    parser.add_argument("--seconds", type=float, default=None, metavar="SECONDS",
                        help="stop watching after this long (the job goes on)")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                        help="the job to run and watch")


class _Target:
    """What is watched: its processes now, and whether it is over."""

    def __init__(self, host: JobHost, label: str, roots: List[int], slurm_job: Optional[str] = None,
                 spawned: Optional[Spawned] = None) -> None:
        self.host, self.label, self.roots = host, label, roots
        self.slurm_job, self.spawned = slurm_job, spawned
        self.exit_status: Optional[int] = None

    def pids(self) -> Set[int]:
        if self.slurm_job is not None:
            result = self.host.run(["scontrol", "listpids", self.slurm_job], 10.0)
            self.roots = pids_of_slurm_job(result.stdout) if result.ok else []
        return descendants(self.host, self.roots)

    def over(self) -> bool:
        if self.spawned is not None:
            self.exit_status = self.spawned.wait(0)
            return self.exit_status is not None
        return not any(self.host.pid_alive(pid) for pid in self.roots)


def descendants(host: Host, roots: List[int]) -> Set[int]:
    """``roots`` and every process below them (their ppid chains, from /proc/PID/stat)."""
    found = set(roots)
    children: Dict[int, List[int]] = {}
    for name in host.list_dir("/proc") or ():
        if not name.isdigit():
            continue
        stat = host.read_text(f"/proc/{name}/stat") or ""
        fields = stat.rpartition(")")[2].split()  # the command name may hold spaces and parentheses
        if len(fields) > 1 and fields[1].isdigit():
            children.setdefault(int(fields[1]), []).append(int(name))
    queue = list(roots)
    while queue:
        for child in children.get(queue.pop(), ()):
            if child not in found:
                found.add(child)
                queue.append(child)
    return found


def _target(host: JobHost, args: argparse.Namespace) -> _Target:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command  # the user's own -- stay
    chosen = [bool(command), args.pid is not None, args.slurm_job is not None]
    if sum(chosen) != 1:
        raise UsageError("give one job to watch: `-- COMMAND ...`, --pid PID or --slurm-job ID")
    if args.pid is not None:
        if not host.pid_alive(args.pid):
            raise TorchsmithError(f"no process {args.pid} here", code="no-such-process",
                                  hint="inside a container, give the PID as seen in the container")
        return _Target(host, f"process {args.pid}", [args.pid])
    if args.slurm_job is not None:
        return _slurm_target(host, str(args.slurm_job))
    spawned = host.spawn(command)
    if spawned is None:
        raise TorchsmithError(f"cannot start {command[0]}", code="command-not-found",
                              hint="check the command's name and PATH")
    return _Target(host, " ".join(command)[:80], [spawned.pid], spawned=spawned)


def _slurm_target(host: JobHost, job: str) -> _Target:
    result = host.run(["scontrol", "listpids", job], 10.0)
    pids = pids_of_slurm_job(result.stdout) if result.ok else []
    if not pids:
        reason = result.problem() if not result.ok else "no process of it runs on this node"
        raise TorchsmithError(f"Slurm job {job}: {reason}", code="slurm-job-not-here",
                              hint=f"run it on the job's node: srun --jobid {job} --overlap "
                                   f"torchsmith watch --slurm-job {job}")
    return _Target(host, f"Slurm job {job}", pids, slurm_job=job)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    if args.interval <= 0 or (args.seconds is not None and args.seconds <= 0):
        raise UsageError("--interval and --seconds must be positive")
    host = ctx.host()
    if not hasattr(host, "spawn"):
        raise UsageError("watch measures this machine: --host describes another one")
    job_host = cast(JobHost, host)
    target = _target(job_host, args)
    watch = Watch(target.label)
    if target.slurm_job is not None:
        shown = job_host.run(["scontrol", "show", "job", "-d", target.slurm_job], 10.0)
        environ = job_host.environ()
        node = environ.get("SLURMD_NODENAME") or environ.get("HOSTNAME") or ""
        watch.allocated = gpu_indexes_of_slurm_job(shown.stdout, node) if shown.ok else None
    live = sys.stderr if sys.stderr.isatty() and not args.json else None
    sampler = job_host.stream([sys.executable, _snippet(), "--interval", f"{args.interval:g}"])
    try:
        follow(watch, target, sampler, interval=args.interval, seconds=args.seconds, live=live)
    finally:
        sampler.close()
    return _result(watch, target)


def _snippet() -> str:
    from torchsmith.doctor.inspect import snippet_path

    return snippet_path(_SNIPPET)


def follow(watch: Watch, target: _Target, sampler: LineStream, *, interval: float,
           seconds: Optional[float], live: Optional[IO[str]]) -> None:
    """Fold the sampler's lines into ``watch`` until the job ends (or ``seconds`` pass)."""
    started = time.monotonic()
    first = True
    try:
        while not target.over() and (seconds is None or time.monotonic() - started < seconds):
            if watch.error is not None or sampler.ended:
                if target.spawned is not None:
                    target.spawned.wait(interval)
                else:
                    time.sleep(interval)
                continue
            line = _parse(sampler.read_line(_FIRST_LINE_TIMEOUT if first else interval * 3))
            if line is None:
                continue
            if "error" in line:
                watch.error = str(line["error"])
            elif first:
                watch.header(line)
                first = False
            else:
                _add(watch, target, line)
                if live is not None:
                    _live_line(live, watch, time.monotonic() - started)
    except KeyboardInterrupt:  # the job got the same Ctrl-C from the terminal: let it finish
        if target.spawned is not None:
            target.spawned.interrupt()
            target.exit_status = target.spawned.wait(30)
    if first and watch.error is None:  # a job shorter than NVML's start: still say why none came
        line = _parse(sampler.read_line(5.0))
        watch.error = str(line["error"]) if line and "error" in line else None
    if live is not None:
        live.write("\n")
    if target.spawned is not None and target.exit_status is None:
        target.exit_status = target.spawned.wait(None)  # --seconds ran out: the job still ends here


def _parse(text: Optional[str]) -> Optional[Dict[str, Any]]:
    if not text or not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _add(watch: Watch, target: _Target, line: Dict[str, Any]) -> None:
    devices = line.get("devices") if isinstance(line.get("devices"), dict) else {}
    nvml_pids = {p.get("pid") for d in (devices or {}).values() if isinstance(d, dict)
                 for p in d.get("processes") or () if isinstance(p, dict)}
    alive = {p for p in nvml_pids if isinstance(p, int) and target.host.pid_alive(p)}
    watch.add(line, target.pids(), alive)


def _live_line(out: IO[str], watch: Watch, elapsed: float) -> None:
    parts = []
    for use in watch.used():
        data = use.to_json()
        busy = use.busy[-1] if use.busy else None
        mem = use.job_mib[-1] if use.job_mib else None
        parts.append(f"GPU {use.key}: busy {busy if busy is not None else '?'}% · "
                     f"{mem if mem is not None else '?'}/{data['memory_mib_total'] or '?'} MiB")
    out.write(f"\r  {elapsed:5.0f} s  " + ("  ".join(parts) or "no GPU use by the job yet") + "\033[K")
    out.flush()


def _result(watch: Watch, target: _Target) -> Result:
    data = watch.to_json()
    data["exit_status"] = target.exit_status

    def human(out: IO[str]) -> None:
        out.write("\n".join(summary_lines(data)) + "\n")

    failed = target.spawned is not None and target.exit_status not in (0, None)
    warnings = [f"NVML gave no samples: {watch.error}"] if watch.error else []
    return Result(command="watch", data=data, human=human, status="failed" if failed else "ok",
                  exit_code=ExitCode.FAILURE if failed else ExitCode.OK, warnings=warnings)


def summary_lines(data: Dict[str, Any]) -> List[str]:
    lines = [f"torchsmith watch: {data['target']}: {data['samples']} sample(s)"
             + (f", driver {data['driver']}" if data.get("driver") else "")]
    if data.get("error"):
        lines.append(f"  NVML gave no samples: {data['error']}")
    for device in data["devices"]:
        lines.append(f"  GPU {device['device']} {device['name']}: busy {device['busy_percent_mean']}% on "
                     f"average, at most {device['busy_percent_max']}% ({device['busy_source']}); memory at "
                     f"most {device['memory_mib_peak']} of {device['memory_mib_total']} MiB, "
                     f"{device['seconds']} s")
    if not data["devices"] and not data.get("error"):
        lines.append("  the job had no process on any GPU NVML sees")
    verdict = data.get("verdict")
    if verdict:
        lines += ["", f"! warning[{verdict['code']}] {verdict['title']}"]
        lines += [f"    · {fact['text']}  [{fact['source']}]" for fact in verdict["facts"]]
        lines.append(f"    {verdict['note']}")
        lines.append("    options:")
        lines += [f"      - {option}" for option in verdict["options"]]
    if data.get("exit_status") is not None:
        lines.append(f"the job exited with {data['exit_status']}")
    return lines

