"""fleet --slurm: profiles gathered by srun, from a recorded cluster and from a real one."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from typing import Any, Dict, List, Optional

import pytest
from tests.cluster.profiles import A100, node
from tests.cluster.slurm_cluster import SlurmCluster

from torchsmith.cli import main
from torchsmith.errors import TorchsmithError
from torchsmith.fleet.slurm import _srun_argv, gather_profiles, parse_labelled
from torchsmith.host import command_key
from torchsmith.host.recorded import RecordedHost

PROBE = ("torchsmith", "probe", "--json")
SINFO = ["sinfo", "--noheader", "--Node", "--format=%N|%P|%t"]


def _labelled(task: int, node_name: str, text: str) -> List[str]:
    lines = [f"@@torchsmith-node {node_name}", *text.splitlines()]
    return [f"{task}: {line}" for line in lines]


def _capture(commands: Dict[str, Dict[str, Any]]) -> RecordedHost:
    return RecordedHost({
        "schema": 1,
        "platform": {"system": "Linux", "machine": "x86_64", "release": "6.1", "python_version": "3.11.7",
                     "python_implementation": "CPython", "python_executable": "/usr/bin/python3",
                     "python_prefix": "/usr", "python_base_prefix": "/usr"},
        "commands": commands,
    })


def _ok(stdout: str, returncode: int = 0, stderr: str = "") -> Dict[str, Any]:
    return {"returncode": returncode, "stdout": stdout, "stderr": stderr}


def test_parse_labelled_takes_interleaved_tasks_apart() -> None:
    first = json.dumps({"a": 1}, indent=2).splitlines()
    second = json.dumps({"b": 2}, indent=2).splitlines()
    lines = ["0: @@torchsmith-node n1", "1: @@torchsmith-node n2"]
    for a, b in zip(first, second):  # srun interleaves the tasks' lines
        lines.extend([f"1: {b}", f"0: {a}"])
    lines.append("10: not a task that said its name")
    out = parse_labelled("\n".join(lines))
    assert json.loads(out["n1"]) == {"a": 1} and json.loads(out["n2"]) == {"b": 2}
    assert len(out) == 2


def test_gather_reads_profiles_and_reports_down_and_broken_nodes() -> None:
    good = json.dumps({"schema": 1, "data": node(A100).to_json()}, indent=2)
    sinfo = "n1|gpu*|idle\nn2|gpu*|mix\nn3|gpu*|down*\nn4|gpu*|idle\nn5|gpu*|idle\nn1|debug|idle\n"
    srun = _srun_argv(["n1", "n2", "n4", "n5"], "gpu", 30, PROBE)
    stdout = "\n".join(_labelled(0, "n1", good) + _labelled(1, "n2", good)
                       + _labelled(2, "n4", "Traceback (most recent call last):"))
    host = _capture({command_key(SINFO): _ok(sinfo),
                     command_key(srun): _ok(stdout, 1, "srun: error: n5: task 3: Exited with exit code 1")})
    result = gather_profiles(host, (), 30, PROBE)
    assert [name for name, _ in result.profiles] == ["n1", "n2"]
    assert result.profiles[0][1].nvidia is not None
    why = dict(result.unreachable)
    assert why["n3"] == "Slurm reports it down*; not probed"
    assert why["n4"].startswith("printed no JSON profile")
    assert why["n5"].startswith("did not answer (srun exited with 1: srun: error: n5")
    assert result.commands == [srun]


def test_gather_falls_back_to_one_srun_per_node_when_the_allocation_fails() -> None:
    good = node(A100).to_json()
    together = _srun_argv(["n1", "n2"], "gpu", 5, PROBE)
    queued = "srun: job 7 queued and waiting for resources"
    answer = "\n".join(_labelled(0, "n1", json.dumps(good)))
    commands = {
        command_key([*SINFO, "--partition=gpu"]): _ok("n1|gpu|idle\nn2|gpu|idle\n"),
        command_key(together): _ok("", 1, "srun: Unable to allocate resources: node configuration"),
        command_key(_srun_argv(["n1"], "gpu", 5, PROBE)): _ok(answer),
        command_key(_srun_argv(["n2"], "gpu", 5, PROBE)): _ok("", 1, queued),
    }
    result = gather_profiles(_capture(commands), ["gpu"], 5, PROBE)
    assert [name for name, _ in result.profiles] == ["n1"]
    assert result.unreachable == [("n2", f"did not answer (srun exited with 1: {queued})")]


@pytest.mark.parametrize("answer, code", [
    ({"not_found": True}, "slurm-not-found"),
    ({"returncode": 1, "stderr": "slurm_load_partitions: Unable to contact controller"}, "slurm-failed"),
    ({"returncode": 0, "stdout": "garbage without bars\n"}, "slurm-no-nodes"),
])
def test_sinfo_problems_are_one_line_errors(answer: Dict[str, Any], code: str) -> None:
    with pytest.raises(TorchsmithError) as info:
        gather_profiles(_capture({command_key(SINFO): answer}), (), 5, PROBE)
    assert info.value.code == code


# --- a real Slurm cluster --------------------------------------------------------------------

def _probe_command(hang_on: Optional[str] = None) -> str:
    probe = f"{shlex.quote(sys.executable)} -m torchsmith probe --json"
    if hang_on is None:
        return probe
    script = '[ "$SLURMD_NODENAME" = ' + hang_on + " ] && sleep 60; exec " + probe
    return "sh -c " + shlex.quote(script)


@pytest.fixture
def slurm_env(slurm_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> SlurmCluster:
    monkeypatch.setenv("SLURM_CONF", slurm_cluster.conf)
    return slurm_cluster


@pytest.mark.slow
def test_fleet_gathers_every_node_of_a_real_cluster(slurm_env: SlurmCluster, tmp_path: Any,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fleet", "--slurm", "--partition", slurm_env.partition, "--timeout", "30",
                 "--probe-command", _probe_command(), "--save-profiles", str(tmp_path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    data = doc["data"]
    assert data["nodes"] == 3 and data["unreachable"] == []
    assert sorted(n for t in data["node_types"] for n in t["nodes"]) == ["node1", "node2", "node3"]
    assert len(data["node_types"]) == 1  # three slurmds on one machine: one node type
    assert sorted(os.listdir(tmp_path)) == ["node1.json", "node2.json", "node3.json"]
    saved = json.loads((tmp_path / "node2.json").read_text())
    assert saved["scheduler"]["variables"]["SLURMD_NODENAME"] == "node2"


@pytest.mark.slow
def test_fleet_reports_a_drained_and_a_hanging_node(slurm_env: SlurmCluster,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    drained = slurm_env.run(["scontrol", "update", "nodename=node3", "state=drain", "reason=test"])
    assert drained.returncode == 0, drained.stderr
    try:
        code = main(["fleet", "--slurm", "--timeout", "3", "--probe-command", _probe_command("node2")])
    finally:
        slurm_env.run(["scontrol", "update", "nodename=node3", "state=resume"])
    captured = capsys.readouterr()
    assert code == 0
    assert "1 node(s), 1 node type(s)" in captured.out
    assert "Did not answer (2):" in captured.out
    # "drng" (draining) while a job of an earlier test still runs there, "drain" once it is idle
    assert re.search(r"node3: Slurm reports it (drain|drng)", captured.out), captured.out
    assert "node2: did not answer" in captured.out
    assert "hidden; -v shows" in captured.err  # the warning behind that line: -v


@pytest.mark.slow
def test_fleet_without_any_answer_is_an_error(slurm_env: SlurmCluster,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", "--slurm", "--timeout", "5", "--probe-command", "false"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error[host-profile-invalid]: no node answered")
    assert "node1: did not answer" in err
