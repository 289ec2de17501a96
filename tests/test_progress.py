"""Progress goes to a terminal's stderr only, and never under -q."""

from __future__ import annotations

import argparse
import io

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


def test_quiet_turns_it_off() -> None:
    assert not waiting(argparse.Namespace(quiet=True), "x").enabled


def test_labels_are_redacted() -> None:
    stream = _Terminal()
    with Waiting("reading https://bob:s3cret@mirror.example/simple", stream, delay=0.0) as wait:
        assert wait.shown.wait(10)
    assert "s3cret" not in stream.getvalue()
