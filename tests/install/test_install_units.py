"""install's pure parts: install groups and commands, locks, pip/uv output parsing, snapshots."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.support.envtools import tree_digest

from torchsmith.errors import InstallError, UsageError
from torchsmith.install.check import parse_user_command
from torchsmith.install.installers import Installer, command, installer_kind
from torchsmith.install.lock import (
    Lock,
    LockedPackage,
    hashes_from_pip_report,
    parse_compiled_hashes,
    read_lock,
)
from torchsmith.install.snapshot import Snapshot
from torchsmith.install.steps import Group, StepFiles, groups_from_plan
from torchsmith.install.target import Target
from torchsmith.install.uv_dry_run import read_dry_run
from torchsmith.plan.model import PackagePin, Plan

CU126 = "https://download.pytorch.org/whl/cu126"


def _plan() -> Plan:
    return Plan(status="ok", variant="cu126", accelerator="cuda", packages=(
        PackagePin("torch", "2.6.0", "cu126", CU126, local_version="+cu126"),
        PackagePin("torchvision", "0.21.0", "cu126", CU126, local_version="+cu126"),
        PackagePin("mmcv", "2.2.0", "cu126", find_links="https://download.openmmlab.com/mmcv/dist/cu126/torch2.6/index.html"),
        PackagePin("einops", "0.8.0"),
    ))


def test_plan_groups_keep_each_package_on_its_own_source() -> None:
    groups, warnings = groups_from_plan(_plan())
    assert [g.requirements for g in groups] == [
        ("torch==2.6.0+cu126", "torchvision==0.21.0+cu126"), ("mmcv==2.2.0",), ("einops==0.8.0",)]
    assert groups[0].index_url == CU126 and groups[0].pinned
    assert groups[1].find_links and not groups[1].pinned and groups[1].index_url is None
    assert groups[2].index_url is None and groups[2].find_links is None and not groups[2].pinned
    assert warnings == []


def test_source_builds_come_last_and_build_against_the_installed_torch(tmp_path: Path) -> None:
    plan = Plan(status="ok", packages=(
        PackagePin("torch", "2.6.0", "cpu", "https://download.pytorch.org/whl/cpu", local_version="+cpu"),
        PackagePin("mmcv", "2.2.0", "source"),
    ))
    groups, _ = groups_from_plan(plan)
    assert [g.requirements for g in groups] == [("torch==2.6.0+cpu",), ("mmcv==2.2.0",)]
    build = groups[-1]
    assert build.no_build_isolation and build.index_url is None and not build.pinned
    argv, _env, _report = command(Installer("uv", ("uv", "pip", "install")), build, StepFiles(str(tmp_path)),
                                  2, constraints="/c.txt")
    assert "--no-build-isolation" in argv and argv[argv.index("-c") + 1] == "/c.txt"


def test_pinned_pip_step_switches_off_every_other_source(tmp_path: Path) -> None:
    files = StepFiles(str(tmp_path))
    group = Group("torch", ("torch==2.6.0+cu126",), index_url=CU126, pinned=True)
    argv, env, report = command(Installer("pip", ("py", "-m", "pip", "install")), group, files, 1,
                                constraints=str(tmp_path / "c.txt"))
    assert argv[argv.index("--index-url") + 1] == CU126
    assert "--extra-index-url" not in argv and "-c" not in argv  # no inherited pins for the torch step
    assert env == {}
    # No config file, and of the user's PIP_* settings only the network ones.
    user = {"PIP_EXTRA_INDEX_URL": "http://evil/", "PIP_REQUIREMENT": "/r.txt", "PIP_PROXY": "http://proxy:3128",
            "PIP_CERT": "/ca.pem", "PIP_CONFIG_FILE": "/u.conf", "PIP_PYTHON": "/other/python", "HOME": "/h"}
    assert installer_kind("pip").isolated_env(user) == {"PIP_EXTRA_INDEX_URL": None, "PIP_REQUIREMENT": None,
                                                        "PIP_PYTHON": None, "PIP_CONFIG_FILE": os.devnull}
    assert report and argv[argv.index("--report") + 1] == report
    assert Path(argv[argv.index("-r") + 1]).read_text() == "torch==2.6.0+cu126\n"


def test_default_index_step_is_constrained_and_keeps_user_config(tmp_path: Path) -> None:
    files = StepFiles(str(tmp_path))
    group = Group("einops", ("einops==0.8.0",))
    argv, env, report = command(Installer("uv", ("uv", "pip", "install", "--python", "p")), group, files, 2,
                                constraints="/c.txt")
    assert argv[argv.index("-c") + 1] == "/c.txt"
    assert "--index-url" not in argv and "--no-config" not in argv
    assert env == {} and report is None


def test_pinned_uv_step_ignores_uv_config_and_index_variables(tmp_path: Path) -> None:
    group = Group("torch", ("torch==2.6.0+cu126",), index_url=CU126, pinned=True)
    argv, env, _ = command(Installer("uv", ("uv", "pip", "install")), group, StepFiles(str(tmp_path)), 1)
    assert "--no-config" in argv and argv[argv.index("--index-strategy") + 1] == "first-index" and env == {}
    dropped = ("UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_DEFAULT_INDEX", "UV_CONSTRAINT",
               "UV_OVERRIDE", "UV_CONFIG_FILE")
    user = dict.fromkeys((*dropped, "UV_CACHE_DIR", "UV_NATIVE_TLS", "PATH"), "x")
    assert installer_kind("uv").isolated_env(user) == {**dict.fromkeys(dropped), "UV_NO_CONFIG": "1"}


def test_lock_round_trip_and_reproduction_groups(tmp_path: Path) -> None:
    lock = Lock(packages=[
        LockedPackage("torch", "2.6.0+cu126", CU126, hashes=("sha256:" + "a" * 64,)),
        LockedPackage("torchtriton", "3.3.1", CU126, hashes=("sha256:" + "b" * 64,)),
        LockedPackage("einops", "0.8.0", None, hashes=("sha256:" + "c" * 64,)),
        LockedPackage("tqdm", "4.67.1", None),
    ], python="3.11", platform="linux-x86_64", variant="cu126", accelerator="cuda")
    path = str(tmp_path / "lock.json")
    lock.write(path)
    again = read_lock(path)
    assert again.to_json()["packages"] == lock.to_json()["packages"]
    # One package without a hash would leave its whole group unchecked: the lock is refused.
    with pytest.raises(InstallError) as caught:
        again.groups()
    assert caught.value.code == "lock-unverifiable" and "tqdm" in str(caught.value)
    assert "einops" not in str(caught.value) and "\n" not in str(caught.value)
    again.packages = [p if p.hashes else LockedPackage(p.name, p.version, hashes=("sha256:" + "d" * 64,))
                      for p in again.packages]
    groups = again.groups()
    assert [g.index_url for g in groups] == [CU126, None]
    torch_group, rest = groups
    assert torch_group.pinned and torch_group.no_deps and torch_group.require_hashes
    assert torch_group.requirements[0] == f"torch==2.6.0+cu126 --hash=sha256:{'a' * 64}"
    assert rest.require_hashes and all("--hash=sha256:" in line for line in rest.requirements)
    mirrored = again.groups(torch_index_base="http://mirror.local/torch")
    assert mirrored[0].index_url == "http://mirror.local/torch/cu126"


@pytest.mark.parametrize("content", [
    "not json", "[]", '{"lock_version": 99, "packages": []}', '{"lock_version": 1, "packages": []}',
    '{"lock_version": 1, "packages": [{"name": "torch"}]}',
    '{"lock_version": 1, "packages": [{"name": "torch", "version": "2.6.0", "hashes": ["md5:x"]}]}',
    '{"lock_version": 1, "packages": [{"name": "torch", "version": "2.6.0", "hashes": ["sha256:00"]}]}',
])
def test_bad_locks_are_one_line_errors(tmp_path: Path, content: str) -> None:
    path = tmp_path / "lock.json"
    path.write_text(content)
    with pytest.raises(InstallError) as caught:
        read_lock(str(path))
    assert caught.value.code == "lock-invalid" and "\n" not in str(caught.value)


def test_missing_lock_file_is_a_lock_error(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="cannot read the lock"):
        read_lock(str(tmp_path / "absent.json"))


def test_hashes_from_pip_report() -> None:
    report = {"install": [
        {"metadata": {"name": "Torch", "version": "2.6.0+cu126"},
         "download_info": {"url": "http://x/torch.whl", "archive_info": {"hashes": {"sha256": "ab" * 32}}}},
        {"metadata": {"name": "old", "version": "1"},
         "download_info": {"archive_info": {"hash": "sha256=" + "cd" * 32}}},
        {"metadata": {"name": "local", "version": "1"}, "download_info": {"dir_info": {}}},
        {"garbage": True},
    ]}
    assert hashes_from_pip_report(json.dumps(report)) == {
        "torch": ("sha256:" + "ab" * 32,), "old": ("sha256:" + "cd" * 32,)}
    assert hashes_from_pip_report("{truncated") == {}


def test_parse_compiled_hashes() -> None:
    text = ("torch==2.6.0+cu126 \\\n    --hash=sha256:aaa \\\n    --hash=sha256:bbb\n"
            "Jinja2==3.1.4 --hash=sha256:ccc\n# comment\n")
    assert parse_compiled_hashes(text) == {"torch": ("sha256:aaa", "sha256:bbb"), "jinja2": ("sha256:ccc",)}


@pytest.mark.parametrize(("argv", "expected"), [
    (["pip", "install", "xformers"], ("pip", ["xformers"])),
    (["--", "pip3", "install", "-U", "ftfy"], ("pip", ["-U", "ftfy"])),
    (["/venv/bin/python3.11", "-m", "pip", "install", "a"], ("pip", ["a"])),
    (["uv", "pip", "install", "ftfy>=6.3"], ("uv", ["ftfy>=6.3"])),
])
def test_user_commands_are_understood(argv: list, expected: tuple) -> None:
    assert parse_user_command(argv) == expected


@pytest.mark.parametrize("argv", [
    [], ["pip", "uninstall", "torch"], ["conda", "install", "x"], ["uv", "add", "x"]])
def test_other_commands_are_usage_errors(argv: list) -> None:
    with pytest.raises(UsageError):
        parse_user_command(argv)


def test_read_dry_run() -> None:
    text = ("Resolved 3 packages in 5ms\nWould download 2 packages\nWould uninstall 1 package\n"
            "Would install 2 packages\n - torch==2.6.0+cu126\n + torch==2.7.1\n + xformers==0.0.31\n")
    assert read_dry_run(text) == {"torch": ("2.6.0+cu126", "2.7.1"), "xformers": (None, "0.0.31")}
    # an uninstall it counts but does not list, or a summary it lacks: unreadable, not "no change"
    assert read_dry_run(text.replace(" - torch==2.6.0+cu126\n", "")) is None
    assert read_dry_run(" + torch==2.7.1\n") is None


def _tree(root: Path) -> None:
    (root / "bin").mkdir(parents=True)
    (root / "lib" / "site-packages" / "torch").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "bin" / "python").symlink_to("/usr/bin/python3")
    (root / "bin" / "tool").write_text("#!/bin/sh\n")
    os.chmod(root / "bin" / "tool", 0o755)
    (root / "lib" / "site-packages" / "torch" / "__init__.py").write_text("x = 1\n")
    (root / "lib" / "site-packages" / "torch" / "big.so").write_bytes(os.urandom(600 * 1024))
    (root / "lib" / "site-packages" / "readonly.txt").write_text("r\n")
    os.chmod(root / "lib" / "site-packages" / "readonly.txt", 0o444)


def test_snapshot_restores_the_tree_byte_for_byte(tmp_path: Path) -> None:
    env = tmp_path / "env"
    _tree(env)
    before = tree_digest(env)
    snapshot = Snapshot(str(env), str(tmp_path / ".snapshot"))
    snapshot.take()
    site = env / "lib" / "site-packages"
    # What installers do: replace files (unlink + write), remove, add, write caches.
    (site / "torch" / "big.so").unlink()
    (site / "torch" / "big.so").write_bytes(b"new build")
    (site / "torch" / "__init__.py").write_text("x = 2\n")  # even an in-place write of a small file
    (site / "readonly.txt").unlink()
    (site / "torch" / "__pycache__").mkdir()
    (site / "torch" / "__pycache__" / "x.pyc").write_bytes(b"pyc")
    (env / "bin" / "tool").chmod(0o700)
    (env / "pip.conf").write_text("[install]\n")
    assert tree_digest(env) != before
    snapshot.restore()
    assert tree_digest(env) == before
    assert os.listdir(tmp_path) == ["env"]  # the snapshot is gone


def test_snapshot_discard_leaves_the_changes(tmp_path: Path) -> None:
    env = tmp_path / "env"
    _tree(env)
    snapshot = Snapshot(str(env), str(tmp_path / ".snapshot"))
    snapshot.take()
    (env / "new.txt").write_text("kept")
    snapshot.discard()
    assert (env / "new.txt").read_text() == "kept"
    assert sorted(os.listdir(tmp_path)) == ["env"]


def _prefix_with_pip(tmp_path: Path, pip_version: str) -> Target:
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    (site / f"pip-{pip_version}.dist-info").mkdir(parents=True)
    return Target(python=str(tmp_path / "env" / "bin" / "python"), prefix=str(tmp_path / "env"),
                  kind="venv", python_version="3.11.7")


def test_a_recent_pip_in_the_target_runs_itself(tmp_path: Path) -> None:
    from torchsmith.host.live import LiveHost
    from torchsmith.install.installers.pip import pip_command

    target = _prefix_with_pip(tmp_path, "23.2.1")
    assert pip_command(LiveHost(), target) == ([target.python, "-m", "pip"], True)


def test_an_old_pip_in_the_target_is_replaced_by_ours_when_we_have_one(tmp_path: Path) -> None:
    import importlib.util
    import sys

    from torchsmith.host.live import LiveHost
    from torchsmith.install.installers.pip import pip_command

    if importlib.util.find_spec("pip") is None:
        pytest.skip("no pip next to the tests")
    target = _prefix_with_pip(tmp_path, "20.0.2")
    argv, reports = pip_command(LiveHost(), target)
    assert argv == [sys.executable, "-m", "pip", "--python", target.python] and reports


def test_without_report_support_no_report_is_asked_for(tmp_path: Path) -> None:
    group = Group("x", ("x==1",))
    argv, _env, report = command(Installer("pip", ("py", "-m", "pip", "install"), reports=False), group,
                                 StepFiles(str(tmp_path)), 1)
    assert report is None and "--report" not in argv


def test_excluded_entries_are_not_copied_and_survive_a_restore(tmp_path: Path) -> None:
    env = tmp_path / "base"
    _tree(env)
    (env / "envs" / "other" / "bin").mkdir(parents=True)
    (env / "envs" / "other" / "bin" / "python").write_text("another environment")
    (env / "pkgs").mkdir()
    before = tree_digest(env)
    snapshot = Snapshot(str(env), str(tmp_path / ".snapshot"), exclude=("pkgs", "envs"))
    snapshot.take()
    assert snapshot.path and not os.path.exists(os.path.join(snapshot.path, "envs"))
    (env / "lib" / "site-packages" / "torch" / "__init__.py").write_text("x = 2\n")
    snapshot.restore()
    assert tree_digest(env) == before


def test_a_snapshot_interrupted_half_way_is_never_restored(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    env = tmp_path / "env"
    _tree(env)
    before = tree_digest(env)
    copies = []
    real_copy = shutil.copy2

    def copy_then_ctrl_c(src: str, dst: str, **kwargs: object) -> object:
        copies.append(src)
        if len(copies) == 2:
            raise KeyboardInterrupt
        return real_copy(src, dst, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "copy2", copy_then_ctrl_c)
    snapshot = Snapshot(str(env), str(tmp_path / ".snapshot"))
    with pytest.raises(KeyboardInterrupt):
        snapshot.take()
    assert snapshot.path is None
    snapshot.restore()  # nothing to restore: the environment stays as it is
    assert tree_digest(env) == before
    assert os.listdir(tmp_path) == ["env"]
