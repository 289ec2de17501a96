"""``guard on``/``off`` killed at every file operation: the next command finishes the switch.

A kill cannot be caught, so each switch writes a journal first; whatever the kill left, the next
``guard`` command (here: :func:`finish_interrupted`, which ``guard on``/``off``/``status`` and
install call first) replays the switch, and the files end exactly as an uninterrupted switch
leaves them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Dict, Tuple

import pytest
from tests.support.envtools import tree_digest

from torchsmith.install import guard
from torchsmith.install.guard import finish_interrupted, guard_off, guard_on, guard_status, write_guard_file

OPERATIONS = ("replace", "mkdir", "remove", "symlink", "rmdir")


class _Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, no handler sees it."""


def _template(root: Path) -> Path:
    prefix = root / "env"
    site = prefix / "lib" / "python3.11" / "site-packages"
    info = site / "torch-2.6.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0\n")
    (info / "RECORD").write_text("torch/__init__.py,,\n")
    (info / "INSTALLER").write_text("uv\n")
    (prefix / "bin").mkdir()
    (prefix / "bin" / "activate").write_text("deactivate () {\n    unset VIRTUAL_ENV\n}\nexport VIRTUAL_ENV")
    (prefix / "pip.conf").write_text("# mine\n[global]\ntimeout = 9\n")
    write_guard_file(str(prefix), {"torch": "2.6.0"}, "test")
    return prefix


def _killing_at(number: int, monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    count = [0]

    def wrap(real: Callable[..., object]) -> Callable[..., object]:
        def operation(*args: object, **kwargs: object) -> object:
            count[0] += 1
            if count[0] == number:
                raise _Killed
            return real(*args, **kwargs)
        return operation

    for name in OPERATIONS:
        monkeypatch.setattr(os, name, wrap(getattr(os, name)))
    monkeypatch.setattr(shutil, "rmtree", wrap(shutil.rmtree))
    return lambda: count[0]


@pytest.mark.parametrize("switch", ["on", "off"])
def test_a_switch_killed_at_any_file_operation_is_finished_by_the_next_command(
        switch: str, tmp_path: Path) -> None:
    prefix = _template(tmp_path / "at")  # one path throughout: the guard's files name it
    original = tree_digest(prefix)
    guard_on(str(prefix))
    guarded = tree_digest(prefix)
    start: Dict[str, Tuple[Dict[str, Tuple[str, int, str]], Dict[str, Tuple[str, int, str]]]] = {
        "on": (original, guarded), "off": (guarded, original)}
    if switch == "on":
        guard_off(str(prefix))
    assert tree_digest(prefix) == start[switch][0]
    pristine = tmp_path / "pristine"
    shutil.copytree(prefix, pristine, symlinks=True)
    number = 1
    while True:
        shutil.rmtree(prefix)
        shutil.copytree(pristine, prefix, symlinks=True)
        with pytest.MonkeyPatch.context() as patch:
            operations = _killing_at(number, patch)
            try:
                (guard_on if switch == "on" else guard_off)(str(prefix))
                killed = False
            except _Killed:
                killed = True
            ran = operations()
        end = start[switch][1]
        if killed:
            interrupted = guard_status(str(prefix)).interrupted
            assert not guard_status(str(prefix)).on or interrupted is None
            assert finish_interrupted(str(prefix)) == interrupted
            if interrupted is None:  # killed before its journal was written: nothing changed
                end = start[switch][0]
            else:
                assert interrupted == switch
        assert guard_status(str(prefix)).interrupted is None
        assert tree_digest(prefix) == end, f"killed at file operation {number} of {ran}"
        if not killed:
            break
        number += 1
    assert number > 5  # the switch really has that many steps to be killed between
    assert guard.JOURNAL_FILE not in os.listdir(prefix)
