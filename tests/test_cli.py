"""The command line's contract: exit codes, the JSON envelope, errors without tracebacks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torchsmith import __version__
from torchsmith.cli import COMMANDS, main
from torchsmith.output import ExitCode

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_exit_codes_are_documented_exactly() -> None:
    table = (DOCS / "reference" / "exit-codes.md").read_text()
    documented = {int(code): name for code, name in re.findall(r"^\| (\d+) \| (\w+) \|", table, re.M)}
    assert documented == {int(code): code.name for code in ExitCode}
    assert len(set(documented)) == len(ExitCode)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"torchsmith {__version__}"


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name, _, _ in COMMANDS:
        assert f"  {name} " in out


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == ExitCode.USAGE
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_bad_flag_value_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["probe", "--gpu", "banana", "--json"])
    captured = capsys.readouterr()
    envelope = json.loads(captured.out)
    assert code == ExitCode.USAGE == envelope["exit_code"]
    assert envelope["status"] == "error"
    assert envelope["errors"][0]["code"] == "usage"
    assert "banana" in envelope["errors"][0]["message"]


def test_probe_json_is_one_envelope_with_the_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--json", "--gpu", "8.6:RTX 3090", "--driver", "550.54.14"]) == 0
    envelope = json.loads(capsys.readouterr().out)
    assert set(envelope) == {"schema", "torchsmith", "kb_version", "command", "status",
                             "exit_code", "data", "warnings", "errors"}
    assert envelope["command"] == "probe" and envelope["status"] == "ok"
    profile = envelope["data"]
    assert profile["kind"] == "torchsmith.host-profile"
    assert profile["nvidia"]["driver_version"] == "550.54.14"
    assert profile["nvidia"]["gpus"][0]["compute_capability"] == "8.6"


def test_a_saved_profile_comes_back_with_host(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--json", "--gpu", "12.0:RTX 5090", "--platform", "windows-x86_64"]) == 0
    saved = tmp_path / "host.json"
    saved.write_text(capsys.readouterr().out)
    assert main(["probe", "--json", "--host", str(saved)]) == 0
    again = json.loads(capsys.readouterr().out)["data"]
    assert again["os"]["system"] == "windows"
    assert again["nvidia"]["gpus"][0]["name"] == "RTX 5090"


def test_a_broken_profile_is_an_error_not_a_traceback(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "host.json"
    bad.write_text('{"kind": "torchsmith.host-profile", "schema": 1, "nvidia": 5}')
    assert main(["probe", "--host", str(bad)]) == ExitCode.FAILURE
    err = capsys.readouterr().err
    assert err.startswith("error[host-profile-invalid]: host profile is malformed")
    assert "Traceback" not in err


def test_probe_human_output_names_the_stated_facts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--gpu", "6.1:GeForce GTX 1080", "--driver", "535.104.05"]) == 0
    out = capsys.readouterr().out
    assert "GeForce GTX 1080 (sm_61)" in out
    assert "NVIDIA 535.104.05" in out
    assert "given by you, not probed" in out


@pytest.mark.slow
def test_console_entry_points_run_as_a_user_would(tmp_path: Path) -> None:
    for argv in ([sys.executable, "-m", "torchsmith", "--version"],):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"torchsmith {__version__}"
    done = subprocess.run([sys.executable, "-m", "torchsmith"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    # The answer first (the install, or nothing to install), then the environment it judged.
    first = done.stdout.splitlines()[0]
    assert first.startswith(("Install torch ", "Nothing to install: ")), done.stdout
    assert re.search(rf"^Environment: {re.escape(sys.executable)}", done.stdout, re.M), done.stdout
    if first.startswith("Install"):
        assert re.search(r"^  \$ python -m pip install .*torch==\d+\.\d+", done.stdout, re.M), done.stdout


def test_no_arguments_gives_machine_verdict_and_recommendation(
        capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--gpu", "6.1:GeForce GTX 1080", "--driver", "580.65.06", "--platform", "linux-x86_64",
            "--python", "3.12"]
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0
    answer, why = out.split("\nWhy:\n", 1)
    # Pascal is only in the cu126 builds (no sm_6x in cu128+): the command comes first.
    assert answer.startswith("Install torch ") and "(cu126)" in answer.splitlines()[0]
    assert "+cu126" in answer and "--index-url" in answer
    assert len(why.splitlines()) <= 5 + 1  # at most five lines of why, then where to read more
    assert "GeForce GTX 1080 (sm_61)" not in out  # the machine in full: -v
    assert main([*argv, "-v"]) == 0
    verbose = capsys.readouterr().out
    assert "GeForce GTX 1080 (sm_61)" in verbose.split("This machine:", 1)[1]
    # The quick verdict names the interpreter it looked at: this one (no environment is activated).
    assert re.search(rf"^  .*{re.escape(sys.executable)}", verbose, re.M), verbose


def test_summary_json_carries_all_three_parts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", "--json", "--no-gpu", "--platform", "macos-arm64", "--python", "3.12"]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert data["machine"]["os"]["system"] == "macos"
    assert data["doctor"] and data["plan"]["status"] == "ok"
    assert data["plan"]["packages"][0]["name"] == "torch"


def test_kb_dir_replaces_the_packaged_data_for_any_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "manifest.json").write_text("{broken")
    code = main(["plan", "--kb", str(tmp_path), "--no-gpu", "--platform", "linux-x86_64",
                 "--python", "3.11"])
    assert code == ExitCode.FAILURE
    assert capsys.readouterr().err.startswith("error[kb-invalid]: ")


@pytest.mark.slow
def test_the_active_environment_is_the_one_described(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # torchsmith installed in its own venv still looks at the venv the user activated.
    other = tmp_path / "project-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(other)], check=True, timeout=120)
    monkeypatch.setenv("VIRTUAL_ENV", str(other))
    assert main(["probe", "--json"]) == 0
    python = json.loads(capsys.readouterr().out)["data"]["python"]
    assert python["prefix"] == str(other)
    assert python["virtualenv"] == str(other)
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # torchsmith's own environment
    assert main(["probe", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["data"]["python"]["executable"] == sys.executable


def test_plan_for_a_free_threaded_python(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--json", "--python", "3.13t", "--gpu", "8.9", "--driver", "570.124.06",
                 "--platform", "linux-x86_64"]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert data["host"]["python"] == "3.13t"
    assert data["packages"][0]["name"] == "torch"


def test_plan_warns_when_the_users_config_adds_package_sources(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from torchsmith.machine import EnvInfo, Machine, OsInfo, PythonInfo

    base = Machine(os=OsInfo(system="linux", arch="x86_64"), python=PythonInfo(version="3.11.7"))
    leaky = base.to_json()
    leaky["env"]["index_settings"] = {"pip /etc/pip.conf [global] extra-index-url": "https://mirror/simple"}
    for profile, expect in ((leaky, True), (base.to_json(), False)):
        path = tmp_path / "host.json"
        path.write_text(json.dumps(profile))
        assert main(["plan", "--json", "--host", str(path)]) == 0
        warnings = json.loads(capsys.readouterr().out)["data"]["warnings"]
        assert any("extra-index-url" in w and "PIP_EXTRA_INDEX_URL=" in w for w in warnings) is expect
    assert EnvInfo().index_settings == {}


def test_summary_says_nothing_to_install_when_the_environment_has_the_answer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.doctor.envs import write_dist, write_torch

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    python = str(tmp_path / "env" / "bin" / "python")
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    assert main(["summary", "--python", python]) == 0
    before = capsys.readouterr().out
    assert before.startswith("Install torch ")
    assert main(["plan", "--python", python, "--json"]) == 0
    pins = {p["name"]: p["version"] + (p["local_version"] or "")
            for p in json.loads(capsys.readouterr().out)["data"]["packages"]}
    write_torch(site, pins["torch"])
    for name, version in pins.items():
        if name != "torch":
            write_dist(site, name, version, requires=[f"torch=={pins['torch'].split('+')[0]}"])
    assert main(["summary", "--python", python]) == 0
    after = capsys.readouterr().out
    assert after.startswith("Nothing to install: this environment has torch "), after
    assert "$ " not in after  # no command to run


def test_a_working_older_torch_is_not_replaced_silently(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A healthy environment with another torch than the plan's: the summary leads with the
    environment (as doctor does), offers the plan's stack second; plan, the summary and install
    all caution that the command replaces the torch the environment has."""
    from tests.doctor.envs import write_torch

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    python = str(tmp_path / "env" / "bin" / "python")
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    assert main(["plan", "--python", python, "--json"]) == 0
    torch = next(p for p in json.loads(capsys.readouterr().out)["data"]["packages"] if p["name"] == "torch")
    major, minor = torch["version"].split(".")[:2]
    older = f"{major}.{int(minor) - 1}.0{torch['local_version'] or ''}"
    write_torch(site, older)
    caution = f"the installed torch {older} is replaced by {torch['version']}{torch['local_version'] or ''}"
    assert main(["summary", "--python", python]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"torch {older} in this environment works: nothing to do.", lines
    assert lines[1].startswith(f"Or replace it with torch {torch['version']} "), lines
    assert lines[2].startswith("  $ python -m pip install ")  # the command plan gives, second
    assert any(line.startswith(f"  ! {caution}") for line in lines), lines
    for argv in (["plan", "--python", python, "--json"],
                 ["install", "--dry-run", "--python", python, "--json"]):
        main(argv)
        warnings = json.loads(capsys.readouterr().out)["warnings"]
        assert any(w.startswith(caution) for w in warnings), (argv, warnings)
    # The planned torch itself: nothing replaced, no caution.
    write_torch(site, torch["version"] + (torch["local_version"] or ""))
    assert main(["plan", "--python", python, "--json"]) == 0
    assert not any("is replaced by" in w for w in json.loads(capsys.readouterr().out)["warnings"])


def test_doctor_with_no_environment_found_fixes_into_a_new_venv(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """No active env, no ./.venv: the doctor reads torchsmith's own interpreter, but its fix for a
    missing torch is a new venv (install refuses torchsmith's own without --python), not a pip
    command into torchsmith's own environment."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed where torchsmith runs: no no-torch finding to fix")
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    main(["doctor", "--quick", "--json"])
    data = json.loads(capsys.readouterr().out)["data"]
    assert data["target"]["source"].startswith("torchsmith's own interpreter")
    finding = next(f for f in data["findings"] if f["code"] == "no-torch")
    assert finding["fix"] == ["torchsmith install --venv .venv-torch"]
    # Named by --python, torchsmith's own is the environment meant: the fix installs into it.
    main(["doctor", "--quick", "--json", "--python", sys.executable])
    data = json.loads(capsys.readouterr().out)["data"]
    fix = next(f for f in data["findings"] if f["code"] == "no-torch")["fix"]
    assert any(sys.executable in line for line in fix)


def test_kb_show_without_a_table_names_the_tables(capsys: pytest.CaptureFixture[str]) -> None:
    """`kb show` alone: one usage error whose hint lists the tables (argparse's said only
    "the following arguments are required: TABLE")."""
    from torchsmith.kb.model import TABLE_FILES

    assert main(["kb", "show"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error[usage]: kb show needs the TABLE") and all(t in err for t in TABLE_FILES)
