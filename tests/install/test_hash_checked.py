"""The parts of a hash-checked uv step that read text and files (the step itself runs in
tests/robustness/test_config_injection.py and test_install_tampered.py with real uv)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

import pytest
from tests.support.pkgindex import IndexServer

from torchsmith.errors import InstallError
from torchsmith.host import CommandResult
from torchsmith.host.live import LiveHost
from torchsmith.install.hash_checked import (
    _locked_hashes,
    dry_run_pins,
    hash_checked,
    installed_files,
)
from torchsmith.install.steps import StepFiles
from torchsmith.install.uv_dry_run import read_dry_run

# uv 0.13.9's `uv pip install --dry-run` (stderr), replacing torch and adding torchvision.
DRY_RUN = """Using Python 3.11.7 environment at: /tmp/v
Resolved 2 packages in 17ms
Would download 2 packages
Would uninstall 1 package
Would install 2 packages
 - torch==2.6.0+cpu
 + torch==2.7.1+cpu
 + Torch_Vision==0.22.1+cpu
"""


# uv 0.13.9's real `uv pip install --dry-run -r r.txt` against the tests' local index (stderr; stdout
# was empty): tqdm==4.67.1 into an empty venv, then the same once it is installed.
REAL_WOULD_INSTALL = """Using Python 3.11.7 environment at: /tmp/unify-n2yz25lt/v
Resolved 1 package in 8ms
Would download 1 package
Would install 1 package
 + tqdm==4.67.1
"""
REAL_NOTHING = """Using Python 3.11.7 environment at: /tmp/unify-n2yz25lt/v
Checked 1 package in 0.84ms
Would make no changes
"""
# What a uv that words its dry run otherwise might print: none of it may run unchecked.
UNREADABLE = {
    "reworded": "Installing: torch 2.7.1+cpu\n",
    "silent": "",
    # uv marks a reinstall " ~ name==version": one of the two packages counted is not a " + " line
    "one line unread": "Would install 2 packages\n + torch==2.7.1+cpu\n ~ torchvision==0.22.1+cpu\n",
    "a direct URL": "Would install 1 package\n + torch @ https://idx/torch-2.7.1-py3-none-any.whl\n",
    "no changes, said in passing": "warning: a later release would make no changes here\n"
                                   "Would make no changes to the lock\n",
    "coloured, a direct URL": "Would install 1 package\n + \x1b[1mtorch\x1b[0m @ file:///w.whl\n",
}


def test_uv_s_real_dry_run_outputs_are_read_whole() -> None:
    assert dry_run_pins(REAL_WOULD_INSTALL) == {"tqdm": "4.67.1"}
    assert dry_run_pins(DRY_RUN) == {"torch": "2.7.1+cpu", "torch-vision": "0.22.1+cpu"}
    assert dry_run_pins(REAL_NOTHING) == {}


@pytest.mark.parametrize("said", UNREADABLE.values(), ids=list(UNREADABLE))
def test_a_dry_run_that_cannot_be_read_whole_refuses_in_one_line(tmp_path: Path, said: str) -> None:
    assert dry_run_pins(said) is None
    host = _Answering(CommandResult(["uv"], returncode=0, stderr=said))
    argv = ["uv", "pip", "install", "-r", str(tmp_path / "r.txt")]
    with pytest.raises(InstallError) as raised:
        hash_checked(host, argv, {}, timeout=5.0, index_url="http://idx/cpu/", files=StepFiles(str(tmp_path)),
                     step=1)
    assert raised.value.code == "install-provenance"
    assert "\n" not in raised.value.message and "--dry-run" in raised.value.message
    assert "--installer pip" in (raised.value.hint or "")
    assert host.ran == [[*argv, "--dry-run"]]  # only the dry run ran: nothing was installed


class _Answering(LiveHost):
    """A host whose every command prints one recorded output, and which remembers what it ran."""

    def __init__(self, answer: CommandResult) -> None:
        super().__init__(environ={})
        self.answer = answer
        self.ran: List[List[str]] = []

    def run(self, argv: Sequence[str], timeout: float = 5.0,
            env: Optional[Mapping[str, Optional[str]]] = None, stdin: Optional[str] = None) -> CommandResult:
        self.ran.append(list(argv))
        return self.answer


@pytest.mark.slow
def test_real_uv_s_dry_run_is_checked_and_its_nothing_to_do_recognised(
        package_index: IndexServer, installer_env: Dict[str, str], uv_bin: str, tmp_path: Path) -> None:
    venv = tmp_path / "v"
    made = [uv_bin, "venv", "-q", "--python", sys.executable, str(venv)]
    subprocess.run(made, env=installer_env, check=True)
    requirements = tmp_path / "r.txt"
    requirements.write_text("tqdm==4.67.1\n")
    index = package_index.index_url("pypi")
    argv = [uv_bin, "pip", "install", "--python", str(venv / "bin" / "python"), "--index-url", index,
            "-r", str(requirements)]
    host = LiveHost(environ=installer_env)
    files = StepFiles(str(tmp_path))
    hashed, listed, dry = hash_checked(host, argv, {}, timeout=120.0, index_url=index, files=files, step=1)
    assert dry.ok and "--require-hashes" in hashed and [d for _u, d in listed["tqdm"]]
    assert host.run(hashed, timeout=120.0).ok
    assert set(installed_files(str(venv), listed)) == {"tqdm"}
    # Installed: uv's own "nothing to do" is read as that, and the plain command is kept.
    again, listed, dry = hash_checked(host, argv, {}, timeout=120.0, index_url=index, files=files, step=2)
    assert "Would make no changes" in dry.stderr and (again, listed) == (argv, {})


def test_what_the_dry_run_would_change_names_removals_too() -> None:  # guard check reads those
    assert read_dry_run(DRY_RUN) == {"torch": ("2.6.0+cpu", "2.7.1+cpu"),
                                     "torch-vision": (None, "0.22.1+cpu")}
    assert read_dry_run(REAL_NOTHING) == {}


def test_the_installed_wheel_is_the_listed_file_with_its_tags(tmp_path: Path) -> None:
    info = tmp_path / "lib" / "python3.11" / "site-packages" / "torch-2.7.1+cpu.dist-info"
    info.mkdir(parents=True)
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nTag: cp311-cp311-manylinux_2_28_x86_64\n")
    base = "https://download.pytorch.org/whl/cpu/torch-2.7.1%2Bcpu-"
    listed = {"torch": [(base + "cp310-cp310-manylinux_2_28_x86_64.whl", "a" * 64),
                        (base + "cp311-cp311-manylinux_2_28_x86_64.whl", "b" * 64),
                        (base + "cp311-cp311-manylinux_2_28_aarch64.whl", "c" * 64)]}
    assert installed_files(str(tmp_path), listed) == {"torch": listed["torch"][1]}
    assert installed_files(str(tmp_path), {"numpy": listed["torch"]}) == {}


def test_a_lock_files_hashes_are_read_per_name(tmp_path: Path) -> None:
    lock = tmp_path / "r.txt"
    lock.write_text(f"Torch==2.7.1+cpu --hash=sha256:{'A' * 64} --hash=sha256:{'b' * 64}\nfilelock==3.0\n")
    assert _locked_hashes(str(lock)) == {"torch": {"a" * 64, "b" * 64}}
    assert _locked_hashes(str(tmp_path / "missing.txt")) == {}


def test_a_dry_run_worded_otherwise_stops_the_step_before_anything_changes(tmp_path: Path) -> None:
    """A uv whose summary no longer reads ` + name==version` must not install unchecked."""
    from torchsmith.errors import InstallError
    from torchsmith.host import CommandResult
    from torchsmith.host.live import LiveHost
    from torchsmith.install.hash_checked import hash_checked
    from torchsmith.install.steps import StepFiles

    class Worded(LiveHost):
        def run(self, argv: object, timeout: float = 5.0, env: object = None) -> CommandResult:
            return CommandResult(list(argv), returncode=0, stderr="Installing: torch 2.7.1+cpu\n")  # type: ignore[call-overload]

    argv = ["uv", "pip", "install", "-r", str(tmp_path / "r.txt")]
    try:
        hash_checked(Worded(), argv, {}, timeout=5.0, index_url="http://idx/cpu/",
                     files=StepFiles(str(tmp_path)), step=1)
    except InstallError as exc:
        assert exc.code == "install-provenance" and "--dry-run" in exc.message
    else:
        raise AssertionError("installed unchecked")
    nothing = CommandResult(argv, returncode=0, stderr="Checked 1 package in 0.76ms\nWould make no changes\n")

    class Nothing(LiveHost):
        def run(self, argv: object, timeout: float = 5.0, env: object = None) -> CommandResult:
            return nothing

    assert hash_checked(Nothing(), argv, {}, timeout=5.0, index_url="http://idx/cpu/",
                        files=StepFiles(str(tmp_path)), step=1)[:2] == (argv, {})


@pytest.mark.parametrize("said", UNREADABLE.values(), ids=list(UNREADABLE))
def test_guard_check_never_reads_an_unreadable_dry_run_as_no_change(said: str) -> None:
    from torchsmith.errors import TorchsmithError
    from torchsmith.install.check import _uv_dry_run
    from torchsmith.install.target import Target

    host = _Answering(CommandResult(["uv"], returncode=0, stderr=said))
    target = Target(python="/env/bin/python", prefix="/env", kind="venv", python_version="3.11.7")
    with pytest.raises(TorchsmithError) as raised:
        _uv_dry_run(host, target, ["torch"], {"UV_CONSTRAINT": None})
    assert raised.value.code == "installer-output-unreadable"
    assert _uv_dry_run(_Answering(CommandResult(["uv"], returncode=0, stderr=REAL_NOTHING)), target,
                       ["torch"], {"UV_CONSTRAINT": None}) == ({}, "")
