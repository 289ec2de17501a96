"""Every read through the Host is bounded: in size, and (for what could block) in time."""

from __future__ import annotations

import os
import stat
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from torchsmith.host import OUTPUT_LIMIT, CommandResult, bound_output
from torchsmith.host.budget import BudgetHost, probe_budget
from torchsmith.host.live import LiveHost, NotAFileError, read_bounded
from torchsmith.host.recorded import RecordedHost
from torchsmith.machine import MAX_GPUS
from torchsmith.probe import probe

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and sh scripts are POSIX")


def _in_thread(call: Any) -> List[Any]:
    """Run ``call`` in a thread; a bound (not a timing check) so a regression fails, not hangs."""
    answer: List[Any] = []
    worker = threading.Thread(target=lambda: answer.append(call()), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the read blocked"
    return answer


@posix_only
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "version"
    os.mkfifo(fifo)
    assert _in_thread(lambda: LiveHost().read_text(str(fifo))) == [None]
    with pytest.raises(NotAFileError):
        read_bounded(str(fifo), 10)


@posix_only
def test_a_device_is_refused() -> None:
    assert LiveHost().read_text("/dev/zero") is None


def test_a_directory_is_called_a_directory(tmp_path: Path) -> None:
    """`fleet DIR` (profiles/ instead of profiles/*.json): not "a FIFO, device or socket"."""
    with pytest.raises(NotAFileError, match=r"is not a regular file \(a directory\)"):
        read_bounded(str(tmp_path), 10)


def test_read_bounded_keeps_head_and_tail(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_bytes(b"A" * 100 + b"B" * 1000 + b"C" * 100)
    data, skipped = read_bounded(str(log), 100, 100)
    assert (data, skipped) == (b"A" * 100 + b"C" * 100, 1000)
    assert read_bounded(str(log), 2000) == (log.read_bytes(), 0)
    head, cut = read_bounded(str(log), 10)
    assert head == b"A" * 10 and cut > 0


@posix_only
def test_run_keeps_the_head_and_tail_of_a_flood(tmp_path: Path) -> None:
    tool = tmp_path / "flood"
    tool.write_text("#!/bin/sh\necho first\nhead -c 6000000 /dev/zero | tr '\\0' x\necho\necho last\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    result = LiveHost().run([str(tool)], timeout=60)
    assert result.returncode == 0
    assert result.stdout.startswith("first\n") and result.stdout.endswith("last\n")
    assert "bytes of output not kept" in result.stdout
    assert len(result.stdout) < 2 * OUTPUT_LIMIT + 200


def test_bound_output_cuts_the_middle_only_when_too_long() -> None:
    assert bound_output("short", 10) == "short"
    cut = bound_output("a" * 10 + "b" * 50 + "c" * 10, 10)
    assert cut.startswith("a" * 10) and cut.endswith("c" * 10) and "50 characters" in cut


def test_nested_json_is_a_value_error() -> None:
    result = CommandResult(["python"], returncode=0, stdout="[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested too deeply"):
        result.last_json()


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _capture(commands: Dict[str, Dict[str, Any]], which: Optional[Dict[str, str]] = None,
             environ: Optional[Dict[str, str]] = None) -> RecordedHost:
    platform = {"system": "Linux", "machine": "x86_64", "release": "6.1", "python_version": "3.11.7",
                "python_implementation": "CPython", "python_executable": "/usr/bin/python3",
                "python_prefix": "/usr", "python_base_prefix": "/usr", "libc": "glibc 2.36"}
    return RecordedHost({"schema": 1, "platform": platform, "commands": commands,
                         "which": which or {}, "environ": environ or {}})


def test_budget_caps_each_command_then_skips_the_rest() -> None:
    clock = _Clock()
    host = BudgetHost(_capture({"id": {"returncode": 0, "stdout": "uid=0(root)"}}), 5.0, clock)
    assert host.run(["id"], 8.0).ok
    clock.now = 6.0
    skipped = host.run(["id"], 8.0)
    assert not skipped.ok and "time budget was spent" in skipped.problem()


def test_budget_comes_from_the_environment_and_ignores_nonsense() -> None:
    assert probe_budget({"TORCHSMITH_PROBE_BUDGET": "2.5"}) == 2.5
    for bad in ("", "soon", "-1", "nan", "1e9"):
        assert probe_budget({"TORCHSMITH_PROBE_BUDGET": bad}) == 10.0


def test_a_flood_of_gpu_rows_is_capped_with_a_note() -> None:
    rows = "".join(f"{i}, NVIDIA H100, 9.0, 81559, GPU-{i}, 0:{i}, Disabled, 535.129.03\n"
                   for i in range(5000))
    key = ("nvidia-smi --query-gpu=index,name,compute_cap,memory.total,uuid,pci.bus_id,"
           "mig.mode.current,driver_version --format=csv,noheader,nounits")
    machine = probe(_capture({key: {"returncode": 0, "stdout": rows}},
                             which={"nvidia-smi": "/usr/bin/nvidia-smi"}))
    assert machine.nvidia is not None and len(machine.nvidia.gpus) == MAX_GPUS
    assert any("more than any node has" in note.problem for note in machine.notes)


def test_a_whole_probe_starts_at_most_one_read_guard_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # The hung-mount guard once started a thread per file read (54 for a probe): one now serves all.
    started: List[str] = []
    original = threading.Thread.start

    def counting(self: threading.Thread) -> None:
        started.append(self.name)
        original(self)

    monkeypatch.setattr(threading.Thread, "start", counting)
    host = LiveHost()
    probe(host)
    assert started.count("torchsmith-read") <= 1
    assert host.read_text(__file__) is not None and host.list_dir(os.path.dirname(__file__))
    assert started.count("torchsmith-read") <= 1
