"""The guard's files: pip.conf and activate hooks go on and off cleanly; status reads them back."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.support.envtools import tree_digest

from torchsmith.errors import TorchsmithError
from torchsmith.install.guard import GUARD_FILE, guard_off, guard_on, guard_status, write_guard_file

ACTIVATE = """# This file must be used with "source bin/activate"
deactivate () {
    unset VIRTUAL_ENV
}
deactivate nondestructive
VIRTUAL_ENV="/env"
export VIRTUAL_ENV
"""


def _prefix(tmp_path: Path) -> Path:
    prefix = tmp_path / "env"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "activate").write_text(ACTIVATE)
    (prefix / "bin" / "activate.fish").write_text("function deactivate\nend\n")
    return prefix


def test_on_off_round_trip_leaves_the_files_as_they_were(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path)
    write_guard_file(str(prefix), {"torch": "2.6.0+cu126", "torchvision": "0.21.0+cu126"}, "test")
    before = tree_digest(prefix)
    status = guard_on(str(prefix))
    guard = str(prefix / GUARD_FILE)
    assert status.on and status.pins == {"torch": "2.6.0+cu126", "torchvision": "0.21.0+cu126"}
    assert (prefix / "pip.conf").read_text() == f"[install]\nconstraint = {guard}\n"
    assert sorted(os.path.basename(s) for s in status.uv_hooks) == ["activate", "activate.fish"]
    guard_on(str(prefix))  # twice is once
    assert (prefix / "bin" / "activate").read_text().count("UV_CONSTRAINT=") == 1
    status = guard_off(str(prefix))
    assert not status.on and not status.uv_hooks and status.constraints_file == guard
    assert tree_digest(prefix) == before


def test_existing_pip_settings_are_kept(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path)
    write_guard_file(str(prefix), {"torch": "2.6.0"}, "test")
    (prefix / "pip.conf").write_text("[global]\nindex-url = https://mirror.local/simple\n"
                                     "[install]\nconstraint = /etc/site-pins.txt\n")
    guard_on(str(prefix))
    text = (prefix / "pip.conf").read_text()
    assert "index-url = https://mirror.local/simple" in text
    assert f"constraint = /etc/site-pins.txt {prefix / GUARD_FILE}" in text
    guard_off(str(prefix))
    text = (prefix / "pip.conf").read_text()
    assert "constraint = /etc/site-pins.txt\n" in text and GUARD_FILE not in text


def test_activate_exports_the_constraint_and_deactivate_drops_it(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path)
    write_guard_file(str(prefix), {"torch": "2.6.0"}, "test")
    guard_on(str(prefix))
    script = (f". {prefix}/bin/activate; echo \"on=$UV_CONSTRAINT\"; deactivate; "
              "echo \"off=${UV_CONSTRAINT:-}\"")
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert out == [f"on={prefix / GUARD_FILE}", "off="]


def test_on_without_a_guard_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TorchsmithError) as caught:
        guard_on(str(_prefix(tmp_path)))
    assert caught.value.code == "no-guard"
    assert guard_status(str(tmp_path / "env")).constraints_file is None


def test_comments_odd_bytes_and_a_missing_final_newline_come_back_byte_identical(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path)
    (prefix / "bin" / "activate").write_text(ACTIVATE.rstrip("\n"))  # no final newline
    conf = (b"# my mirror\n[global]\nindex-url = https://mirror.local/simple  ; keep\n\n"
            b"[install]\n; caf\xe9 (latin-1)\nconstraint =\n[install]\nno-cache-dir = true\n")
    (prefix / "pip.conf").write_bytes(conf)  # not UTF-8, and a section twice
    write_guard_file(str(prefix), {"torch": "2.6.0"}, "test")
    before = tree_digest(prefix)
    assert guard_on(str(prefix)).on
    assert f"constraint = {prefix / GUARD_FILE}\n" in (prefix / "pip.conf").read_bytes().decode("latin-1")
    assert not guard_off(str(prefix)).on
    assert (prefix / "pip.conf").read_bytes() == conf and tree_digest(prefix) == before


def test_a_symlinked_pip_conf_is_never_written_through(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path)
    own = tmp_path / "home-pip.conf"
    own.write_text("[global]\ntimeout = 60\n")
    (prefix / "pip.conf").symlink_to(own)
    write_guard_file(str(prefix), {"torch": "2.6.0"}, "test")
    assert guard_on(str(prefix)).on
    assert own.read_text() == "[global]\ntimeout = 60\n"  # the user's own file, untouched
    conf = prefix / "pip.conf"
    assert not conf.is_symlink() and "timeout = 60" in conf.read_text() and GUARD_FILE in conf.read_text()
    assert not guard_off(str(prefix)).on
    assert conf.is_symlink() and os.readlink(conf) == str(own)
    assert own.read_text() == "[global]\ntimeout = 60\n"


def test_an_edit_made_while_on_survives_off(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path)
    write_guard_file(str(prefix), {"torch": "2.6.0"}, "test")
    guard_on(str(prefix))
    conf = prefix / "pip.conf"
    conf.write_text(conf.read_text() + "[global]\ntimeout = 5\n")
    guard_off(str(prefix))
    assert conf.read_text() == "[install]\n[global]\ntimeout = 5\n"


def test_a_path_with_a_space_is_named_by_its_file_url(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path / "my envs")
    write_guard_file(str(prefix), {"torch": "2.6.0"}, "test")
    url = (prefix / GUARD_FILE).as_uri()
    assert "%20" in url and guard_on(str(prefix)).on
    assert (prefix / "pip.conf").read_text() == f"[install]\nconstraint = {url}\n"
    script = f'. "{prefix}/bin/activate"; echo "on=$UV_CONSTRAINT"'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert out == [f"on={url}"]
    assert not guard_off(str(prefix)).on and not (prefix / "pip.conf").exists()
    # What an older torchsmith wrote (the plain path, which pip splits in two) is seen and removed.
    (prefix / "pip.conf").write_text(f"[install]\nconstraint = {prefix / GUARD_FILE} /etc/pins.txt\n")
    assert guard_status(str(prefix)).pip_hook
    guard_off(str(prefix))
    assert (prefix / "pip.conf").read_text() == "[install]\nconstraint = /etc/pins.txt\n"
