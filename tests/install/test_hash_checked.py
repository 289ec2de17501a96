"""The parts of a hash-checked uv step that read text and files (the step itself runs in
tests/robustness/test_config_injection.py and test_install_tampered.py with real uv)."""

from __future__ import annotations

from pathlib import Path

from torchsmith.install.hash_checked import _locked_hashes, installed_files, would_install

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


def test_what_the_dry_run_would_install() -> None:
    assert would_install(DRY_RUN) == {"torch": "2.7.1+cpu", "torch-vision": "0.22.1+cpu"}
    assert would_install("Checked 1 package in 0.76ms\nWould make no changes\n") == {}


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
