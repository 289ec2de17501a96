"""Gather host profiles from the nodes of a Slurm cluster: ``srun`` one probe per node.

Slurm does the work; this module builds the commands, runs them through a Host (with a
timeout) and reads back one profile per node. ``srun --label`` prefixes every output line
with its task number, so the interleaved output of many nodes can be taken apart; each task
first prints its node name, so a node that fails still has a name in the report.
"""

from __future__ import annotations

import json
import re
from dataclasses import field
from typing import Dict, List, Optional, Sequence, Tuple

from torchsmith.errors import ProfileError, TorchsmithError
from torchsmith.host import Host
from torchsmith.machine import Machine
from torchsmith.records import dataclass

__all__ = ["DEFAULT_PROBE", "GatherResult", "gather_profiles", "list_nodes", "parse_labelled"]

DEFAULT_PROBE = ("torchsmith", "probe", "--json")
_MARK = "@@torchsmith-node"
# A node in one of these states takes a job now; anything else (down, drain, a trailing "*"
# for "not responding") would leave srun pending until the timeout.
_USABLE = ("idle", "mix", "alloc", "comp")
_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")


@dataclass
class GatherResult:
    profiles: List[Tuple[str, Machine]] = field(default_factory=list)
    unreachable: List[Tuple[str, str]] = field(default_factory=list)  # (node, why)
    commands: List[List[str]] = field(default_factory=list)


def list_nodes(host: Host, partitions: Sequence[str], timeout: float) -> List[Tuple[str, str, str]]:
    """(node, partition, state) from ``sinfo``, one row per node and partition."""
    argv = ["sinfo", "--noheader", "--Node", "--format=%N|%P|%t"]
    if partitions:
        argv.append("--partition=" + ",".join(partitions))
    result = host.run(argv, timeout)
    if result.not_found:
        raise TorchsmithError("sinfo not found: this machine is not a Slurm login node",
                              code="slurm-not-found",
                              hint="run on a login node, or pass profiles: torchsmith fleet *.json")
    if not result.ok:
        raise TorchsmithError(f"cannot list Slurm nodes: {result.problem()}", code="slurm-failed")
    rows: List[Tuple[str, str, str]] = []
    for line in result.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 3 or not parts[0]:
            continue
        node, partition, state = parts
        rows.append((node, partition.rstrip("*"), state))
    if not rows:
        where = f" in partition {', '.join(partitions)}" if partitions else ""
        raise TorchsmithError(f"Slurm lists no nodes{where}", code="slurm-no-nodes")
    return rows


def parse_labelled(stdout: str) -> Dict[str, str]:
    """node name -> everything its task printed after the name, from ``srun --label`` output."""
    per_task: Dict[int, List[str]] = {}
    for line in stdout.splitlines():
        match = _LABEL.match(line)
        if match:
            per_task.setdefault(int(match.group(1)), []).append(match.group(2))
    out: Dict[str, str] = {}
    for lines in per_task.values():
        if lines and lines[0].startswith(_MARK):
            out[lines[0][len(_MARK):].strip()] = "\n".join(lines[1:])
    return out


def _profile(text: str) -> Machine:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        first = text.strip().splitlines()[0][:120] if text.strip() else "nothing"
        raise ProfileError(f"printed no JSON profile ({first!r})") from exc
    if isinstance(data, dict) and "data" in data and "kind" not in data:
        data = data["data"]
    return Machine.from_json(data)


def _srun_argv(nodes: Sequence[str], partition: str, timeout: float,
               probe: Sequence[str]) -> List[str]:
    seconds = str(max(1, int(timeout)))
    return [
        "srun", f"--nodes={len(nodes)}", "--ntasks-per-node=1", f"--nodelist={','.join(nodes)}",
        f"--partition={partition}", "--label", "--job-name=torchsmith-probe",
        f"--immediate={seconds}",  # give up when the nodes cannot be allocated in time
        f"--wait={seconds}",  # a node that hangs is killed this long after the first one answers
        "--kill-on-bad-exit=0",
        "sh", "-c", f'echo "{_MARK} $SLURMD_NODENAME"; exec "$@"', "sh", *probe,
    ]


def gather_profiles(host: Host, partitions: Sequence[str] = (), timeout: float = 60.0,
                    probe: Sequence[str] = DEFAULT_PROBE) -> GatherResult:
    """Probe every usable node of the partitions (all partitions when none are given)."""
    result = GatherResult()
    by_partition: Dict[str, List[str]] = {}
    seen: Dict[str, str] = {}
    for node, partition, state in list_nodes(host, partitions, timeout):
        if node in seen:
            continue
        seen[node] = state
        if state.endswith("*") or not state.startswith(_USABLE):
            result.unreachable.append((node, f"Slurm reports it {state}; not probed"))
            continue
        by_partition.setdefault(partition, []).append(node)
    for partition, nodes in by_partition.items():
        job = _Job(host, result, partition, timeout, probe)
        outputs, failure = _probe_together(job, nodes)
        if not outputs and len(nodes) > 1:
            # Nothing at all usually means the allocation failed: one dead node that Slurm still
            # calls idle holds the whole job. Probe node by node so the others still answer.
            outputs, failures = _probe_one_by_one(job, nodes)
        else:
            failures = dict.fromkeys(nodes, failure)
        for node in nodes:
            text = outputs.get(node)
            if text is None or not text.strip():  # never started, or killed before it printed
                result.unreachable.append((node, f"did not answer ({failures.get(node) or 'no output'})"))
                continue
            try:
                result.profiles.append((node, _profile(text)))
            except ProfileError as exc:
                result.unreachable.append((node, exc.message))
    return result


@dataclass(frozen=True)
class _Job:
    host: Host
    result: GatherResult
    partition: str
    timeout: float
    probe: Sequence[str]


def _probe_together(job: _Job, nodes: Sequence[str]) -> Tuple[Dict[str, str], Optional[str]]:
    argv = _srun_argv(nodes, job.partition, job.timeout, job.probe)
    job.result.commands.append(argv)
    ran = job.host.run(argv, job.timeout * 2 + 15)
    return parse_labelled(ran.stdout), None if ran.ok else ran.problem()


def _probe_one_by_one(job: _Job, nodes: Sequence[str]
                      ) -> Tuple[Dict[str, str], Dict[str, Optional[str]]]:
    from concurrent.futures import ThreadPoolExecutor

    outputs: Dict[str, str] = {}
    failures: Dict[str, Optional[str]] = {}
    with ThreadPoolExecutor(max_workers=min(16, len(nodes))) as pool:
        answers = list(pool.map(
            lambda node: _probe_together(job, [node]), nodes))
    for node, (output, failure) in zip(nodes, answers):
        outputs.update(output)
        failures[node] = failure
    return outputs, failures
