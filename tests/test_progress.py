"""Progress goes to a terminal's stderr only, and never under -q."""

from __future__ import annotations

import argparse
import io
import json
import sys
import threading
from typing import Any

import pytest

from torchsmith.cli.progress import Waiting, waiting


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_the_spinner_and_its_label() -> None:
    stream = _Terminal()
    with Waiting("importing torch in /env/bin/python", stream, delay=0.0) as wait:
        assert wait.shown.wait(10)
        wait.update("verify: torch on cuda")
    assert "importing torch in /env/bin/python" in stream.getvalue()


def test_a_pipe_sees_nothing() -> None:
    stream = io.StringIO()
    with Waiting("importing torch", stream, delay=0.0) as wait:
        assert not wait.enabled
    assert stream.getvalue() == ""


def test_a_short_wait_shows_nothing() -> None:
    stream = _Terminal()
    with Waiting("quick", stream, delay=3600.0) as wait:
        pass
    assert not wait.shown.is_set() and stream.getvalue() == ""


def test_quiet_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert isinstance(waiting(argparse.Namespace(quiet=False), "x"), Waiting)
    assert not isinstance(waiting(argparse.Namespace(quiet=True), "x"), Waiting)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not isinstance(waiting(argparse.Namespace(quiet=False), "x"), Waiting)


@pytest.mark.parametrize("terminal", [True, False])
def test_a_slow_probe_shows_progress_on_a_terminal_only(terminal: bool, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A hung mount or a slow nvidia-smi: the probe says it is probing (stderr, a terminal only)."""
    import torchsmith.probe
    from torchsmith.cli import main, progress

    real = torchsmith.probe.probe
    shown = threading.Event()

    def slow_probe(*args: Any, **kwargs: Any) -> Any:
        if terminal:
            shown.wait(10)  # until the spinner is up
        return real(*args, **kwargs)

    monkeypatch.setattr(torchsmith.probe, "probe", slow_probe)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    stream = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    original_show = progress.Waiting._show

    def show(self: progress.Waiting) -> None:
        original_show(self)
        shown.set()

    monkeypatch.setattr(progress.Waiting, "_show", show)
    assert main(["probe", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["command"] == "probe"  # stdout untouched
    assert ("probing this machine" in stream.getvalue()) is terminal


def test_labels_are_redacted() -> None:
    stream = _Terminal()
    with Waiting("reading https://bob:s3cret@mirror.example/simple", stream, delay=0.0) as wait:
        assert wait.shown.wait(10)
    assert "s3cret" not in stream.getvalue()


def test_one_spinner_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wait inside another (the probe within the doctor's torch import) shows no second one."""
    monkeypatch.setattr(sys, "stderr", _Terminal())
    args = argparse.Namespace(quiet=False)
    with waiting(args, "outer") as outer:
        assert isinstance(outer, Waiting)
        assert not isinstance(waiting(args, "inner"), Waiting)
    assert isinstance(waiting(args, "after"), Waiting)
