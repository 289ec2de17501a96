"""run_install in process, with a Host whose installer is scripted (the real verify snippet and
file system underneath): rollback on a full disk or a timeout, guard and lock contents."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence

import pytest
from tests.support.envtools import tree_digest
from tests.support.faketorch import fake_torch_files

from torchsmith.errors import InstallError
from torchsmith.host import CommandResult, Host
from torchsmith.host.live import LiveHost
from torchsmith.install.installers import INSTALLERS, Installer, InstallerKind, StepCommand, find_installer
from torchsmith.install.installers.base import Hashes, Source
from torchsmith.install.lock import Lock
from torchsmith.install.runner import InstallJob, run_install
from torchsmith.install.steps import Group, StepFiles
from torchsmith.install.target import Target, inspect_target, site_packages

Script = Callable[[List[str]], CommandResult]


class ScriptedInstallerHost(LiveHost):
    """The live machine, except that ``fake-installer`` commands run ``script`` instead."""

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script
        self.installer_calls: List[List[str]] = []

    def run(self, argv: Sequence[str], timeout: float = 5.0,
            env: Optional[Mapping[str, Optional[str]]] = None) -> CommandResult:
        if argv and argv[0] == "fake-installer":
            self.installer_calls.append(list(argv))
            return self.script(list(argv))
        return super().run(argv, timeout, env)


def _dist(site: Path, name: str, version: str, requires: Sequence[str] = (),
          files: Optional[Dict[str, str]] = None) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n\nlong description: Requires-Dist: nope\n")
    for rel, text in (files or {}).items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def target(tmp_path: Path) -> Target:
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return inspect_target(LiveHost(), str(venv / "bin" / "python"))


def _site(target: Target) -> Path:
    return Path(site_packages(LiveHost(), target)[0])


def _job(target: Target, groups: List[Group]) -> InstallJob:
    return InstallJob(target=target, installer=Installer("pip", ("fake-installer", "install")),
                      groups=groups, expect="cpu", lock=Lock(packages=[], variant="cpu"))


TORCH = Group("torch", ("torch==2.6.0+cpu",), index_url="http://idx/cpu", pinned=True)
REST = Group("mmcv", ("mmcv==2.2.0",))


def test_a_full_disk_mid_install_restores_the_environment(target: Target) -> None:
    site = _site(target)
    _dist(site, "oldpkg", "1.0", files={"oldpkg/__init__.py": "x = 1\n"})
    before = tree_digest(Path(target.prefix))

    def installer(argv: List[str]) -> CommandResult:
        _dist(site, "torch", "2.6.0+cpu", files=fake_torch_files("2.6.0+cpu", None, []))
        (site / "oldpkg" / "__init__.py").unlink()
        return CommandResult(argv, returncode=1,
                             stderr="ERROR: Could not install packages due to an OSError: "
                                    "[Errno 28] No space left on device\n")

    with pytest.raises(InstallError) as caught:
        run_install(ScriptedInstallerHost(installer), _job(target, [TORCH, REST]))
    error = caught.value
    assert error.code == "installer-failed" and "pip failed installing torch" in error.message
    assert "free disk space" in (error.hint or "")
    assert error.context[-1] == f"{target.prefix} was restored exactly as it was"
    assert tree_digest(Path(target.prefix)) == before


def test_a_resolvers_refusal_is_said_in_the_words_plan_confirm_uses(target: Target) -> None:
    """pip's refusal (the form of tests/explain/corpus/torch-pin-conflict--1.txt) on the second step."""
    refusal = ("ERROR: Cannot install mmcv==2.2.0 and torch==2.6.0+cpu because these package versions have "
               "conflicting dependencies.\n\nThe conflict is caused by:\n"
               "    The user requested torch==2.6.0+cpu\n"
               "    mmcv 2.2.0 depends on torch==2.4.0\n\nERROR: ResolutionImpossible: for help visit "
               "https://pip.pypa.io/en/latest/topics/dependency-resolution/\n")

    def installer(argv: List[str]) -> CommandResult:
        if "torch==2.6.0+cpu" in Path(argv[argv.index("-r") + 1]).read_text().split("\n")[0]:
            return CommandResult(argv, returncode=0)
        return CommandResult(argv, returncode=1, stdout=refusal)

    job = _job(target, [TORCH, REST])
    job.pairing = lambda name, torch, within: ("2.1.0", "a test table") if name == "mmcv" else None
    with pytest.raises(InstallError) as caught:
        run_install(ScriptedInstallerHost(installer), job)
    assert caught.value.message.startswith(
        "pip refused the whole request: mmcv 2.2.0 requires torch==2.4.0, but the plan installs torch "
        "2.6.0+cpu; the newest mmcv that pairs with torch 2.6.0 is mmcv==2.1.0 [source: a test table]. "
        "(installing mmcv")


def test_an_installer_that_hangs_is_stopped_and_undone(target: Target) -> None:
    before = tree_digest(Path(target.prefix))

    def installer(argv: List[str]) -> CommandResult:
        _dist(_site(target), "torch", "2.6.0+cpu")
        return CommandResult(argv, timed_out=True)

    with pytest.raises(InstallError, match="did not finish installing torch in 3600 s"):
        run_install(ScriptedInstallerHost(installer), _job(target, [TORCH]))
    assert tree_digest(Path(target.prefix)) == before


def test_success_writes_guard_and_lock_from_what_was_installed(target: Target) -> None:
    site = _site(target)

    def installer(argv: List[str]) -> CommandResult:
        requirements = Path(argv[argv.index("-r") + 1]).read_text()
        if "torch==" in requirements:
            _dist(site, "torch", "2.6.0+cpu", ["torchtriton>=3.2", 'pytest; extra == "test"'],
                  fake_torch_files("2.6.0+cpu", None, []))
            _dist(site, "torchtriton", "3.2.0")
            report = Path(argv[argv.index("--report") + 1])
            report.write_text(json.dumps({"install": [
                {"metadata": {"name": "torch", "version": "2.6.0+cpu"},
                 "download_info": {"archive_info": {"hashes": {"sha256": "a" * 64}}}}]}))
        else:
            # The rest is constrained to what the PyTorch step installed.
            constraints = Path(argv[argv.index("-c") + 1]).read_text().split()
            assert constraints == ["torch==2.6.0+cpu", "torchtriton==3.2.0"]
            _dist(site, "mmcv", "2.2.0", ["torch<2.7,>=2.6", "einops"])
            _dist(site, "einops", "0.8.0")
        return CommandResult(argv, returncode=0)

    host = ScriptedInstallerHost(installer)
    outcome = run_install(host, _job(target, [TORCH, REST]))
    assert len(host.installer_calls) == 2
    assert outcome.verify["ok"] and outcome.changed["torch"] == (None, "2.6.0+cpu")
    guard = (Path(target.prefix) / "torchsmith-guard.txt").read_text()
    # torch and what came with it from the PyTorch index, and mmcv, which pins torch below 2.7.
    assert [line for line in guard.splitlines() if not line.startswith("#")] == [
        "mmcv==2.2.0", "torch==2.6.0+cpu", "torchtriton==3.2.0"]
    lock = json.loads(Path(outcome.lock_path or "").read_text())
    by_name = {p["name"]: p for p in lock["packages"]}
    assert set(by_name) == {"torch", "torchtriton", "mmcv", "einops"}  # pytest: only an extra
    assert by_name["torchtriton"]["index"] == "http://idx/cpu" and by_name["einops"]["index"] is None
    assert by_name["torch"]["hashes"] == ["sha256:" + "a" * 64]
    assert any("no hash recorded for einops, mmcv, torchtriton" in w for w in outcome.warnings)
    assert (Path(target.prefix) / "pip.conf").is_file()


class _ThirdInstaller(InstallerKind):
    """An installer kind the runner has never heard of (as conda or pixi would be): its own
    command line, no step reports, hashes read after the install."""

    name = "third"
    hashes_after_install = True

    def present(self, host: Host) -> bool:
        return True

    def find(self, host: Host, target: Target) -> Installer:
        return Installer(self.name, ("fake-installer", "add", "--into", target.prefix), reports=False)

    def command(self, installer: Installer, group: Group, files: StepFiles, step: int,
                constraints: Optional[str] = None) -> StepCommand:
        return StepCommand([*installer.base, *group.requirements], {}, None)

    def lock_hashes(self, host: Host, installer: Installer, target: Target, files: StepFiles,
                    pins: Dict[Source, List[str]]) -> Hashes:
        return {line.split("==")[0]: ("sha256:" + "b" * 64,) for lines in pins.values() for line in lines}


def test_a_new_installer_kind_is_one_class_and_one_registry_line(target: Target,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(INSTALLERS, "third", _ThirdInstaller())
    site = _site(target)

    def installer(argv: List[str]) -> CommandResult:
        assert argv[:3] == ["fake-installer", "add", "--into"] and argv[-1] == "torch==2.6.0+cpu"
        _dist(site, "torch", "2.6.0+cpu", files=fake_torch_files("2.6.0+cpu", None, []))
        return CommandResult(argv, returncode=0)

    host = ScriptedInstallerHost(installer)
    job = InstallJob(target=target, installer=find_installer(host, "third", target), groups=[TORCH],
                     expect="cpu", lock=Lock(packages=[], variant="cpu"))
    outcome = run_install(host, job)
    assert outcome.installer == "third" and len(host.installer_calls) == 1
    lock = json.loads(Path(outcome.lock_path or "").read_text())
    assert [(p["name"], p["hashes"]) for p in lock["packages"]] == [("torch", ["sha256:" + "b" * 64])]
    assert "hashes" in outcome.seconds and not outcome.warnings
