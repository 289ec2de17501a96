"""What people see: commands as written, one-line usage errors, flags where they type them."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import List

import pytest

from torchsmith import __version__
from torchsmith.cli import main
from torchsmith.cli.explain import fix_lines
from torchsmith.output import ExitCode, use_color

CPU_TEXT = "AssertionError: Torch not compiled with CUDA enabled"


def test_explain_never_recases_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--no-probe", "--json", CPU_TEXT]) == 0
    fix = json.loads(capsys.readouterr().out)["data"]["matches"][0]["fix"]
    assert "pip uninstall -y torch torchvision torchaudio" in fix
    assert not any(step.startswith(("Pip ", "Python -c")) for step in fix)
    assert main(["explain", "--no-probe", CPU_TEXT]) == 0
    assert "$ pip uninstall -y torch torchvision torchaudio\n" in capsys.readouterr().out


def test_fix_lines_tell_commands_from_prose() -> None:
    assert fix_lines([
        "nvidia-smi: the 'CUDA Version' in its header is the newest runtime",
        "ldd --version",
        'TORCH_CUDA_ARCH_LIST="8.9" pip install --no-build-isolation x',
        "torch 1.15.0 is not among the torch releases in torchsmith's data",
        "Upgrade the NVIDIA driver, or",
        "install a torch built for CUDA 12.4 or older: pip install torch",
        "pip list | grep nvidia-cudnn (the cuDNN wheel torch depends on)",
        'python -c "import torch; print(torch.cuda.get_arch_list())"',
    ]) == [
        "$ nvidia-smi  # the 'CUDA Version' in its header is the newest runtime",
        "$ ldd --version",
        '$ TORCH_CUDA_ARCH_LIST="8.9" pip install --no-build-isolation x',
        "- torch 1.15.0 is not among the torch releases in torchsmith's data",
        "- Upgrade the NVIDIA driver, or",
        "- install a torch built for CUDA 12.4 or older: pip install torch",
        "$ pip list | grep nvidia-cudnn  # the cuDNN wheel torch depends on",
        '$ python -c "import torch; print(torch.cuda.get_arch_list())"',
    ]


def test_a_fix_with_a_remark_inside_it_is_prose_not_a_command_to_paste() -> None:
    """A shell reads an unquoted ``(`` inside a line as a syntax error and ``<variant>`` as a
    redirection: such a step is said in words; ``$(...)``, a trailing ``(remark)``, a quoted ``<``
    and ``2>&1`` stay commands."""
    assert fix_lines([
        "pip list | grep -i torch (in conda also conda list | grep -i torch): two copies break it",
        "export LD_LIBRARY_PATH=$(python -c 'import os') ",
        "nvidia-smi (the driver's CUDA)",
        "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/<variant>",
        "pip install 'setuptools<70' 2>&1 | tail -1",
    ]) == [
        "- pip list | grep -i torch (in conda also conda list | grep -i torch): two copies break it",
        "$ export LD_LIBRARY_PATH=$(python -c 'import os') ",
        "$ nvidia-smi  # the driver's CUDA",
        "- pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/<variant>",
        "$ pip install 'setuptools<70' 2>&1 | tail -1",
    ]


def test_citations_survive_redaction(capsys: pytest.CaptureFixture[str]) -> None:
    """torch 2.1's rows cite pytorch/builder at a commit: the link stays whole, bracket and all."""
    argv = ["plan", "torch==2.1.0", "--gpu", "8.6", "--driver", "535.104.05", "--platform",
            "linux-x86_64", "--python", "3.10", "-v"]
    main(argv)
    text = capsys.readouterr().out
    assert "/tree/***" not in text
    assert re.search(r"github\.com/pytorch/builder/tree/[0-9a-f]{40}\]", text)


def _plan_flags() -> List[str]:
    return ["--gpu", "9.0", "--driver", "580.65.06", "--platform", "linux-x86_64"]


def test_options_and_requirements_intermix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "torch", "--python", "3.12", "torchvision", "--json", *_plan_flags()]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert {p["name"] for p in data["packages"]} == {"torch", "torchvision"}
    assert data["host"]["python"] == "3.12"


@pytest.mark.parametrize("argv", [["guard", "on", "--help"], ["guard", "check", "--help"]])
def test_subcommand_options_anywhere(argv: List[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("usage: torchsmith guard")


def test_guard_status_json_after_the_action(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["guard", "status", "--json", "--python", str(tmp_path / "nothing" / "bin" / "python")])
    envelope = json.loads(capsys.readouterr().out)
    assert envelope["command"] == "guard"
    assert "must come before" not in json.dumps(envelope)


def test_a_usage_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--no-such-flag"]) == ExitCode.USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("error[usage]: unrecognized arguments: --no-such-flag")
    assert main(["plan", "--no-such-flag", "--json"]) == ExitCode.USAGE
    envelope = json.loads(capsys.readouterr().out)
    assert envelope["errors"][0]["code"] == "usage"


def test_format_with_json_puts_the_files_in_the_envelope(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--format", "dockerfile", "--json", *_plan_flags()]) == 0
    rendered = json.loads(capsys.readouterr().out)["data"]["rendered"]
    assert rendered["format"] == "dockerfile"
    assert rendered["files"]["Dockerfile"].startswith("#")
    assert "FROM " in rendered["files"]["Dockerfile"]


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_an_unknown_format_is_an_error(json_flag: List[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--format", "nosuch", *json_flag, *_plan_flags()]) == ExitCode.USAGE
    captured = capsys.readouterr()
    assert "unknown format 'nosuch'" in (captured.out + captured.err)


@pytest.mark.parametrize("argv", [["-V"], ["plan", "-V"], ["-V", "kb", "info"]])
def test_short_version(argv: List[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    assert capsys.readouterr().out == f"torchsmith {__version__}\n"


def test_quiet_drops_warnings_not_results(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--gpu", "9.0", "--driver", "580.65.06", "--platform", "linux-x86_64", "--python", "3.12"]
    main(["-v", *argv])
    loud = capsys.readouterr()
    assert "warning:" in loud.err
    main(argv)
    plain = capsys.readouterr()
    assert "warning:" not in plain.err and "hidden; -v shows" in plain.err
    main(["-q", *argv])
    quiet = capsys.readouterr()
    assert quiet.out == plain.out
    assert quiet.err == ""


def test_combined_short_flags(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--gpu", "9.0", "--driver", "580.65.06", "--platform", "linux-x86_64", "--python", "3.12"]
    main([*argv, "-vq"])
    captured = capsys.readouterr()
    assert "[source:" in captured.out and "warning:" not in captured.err


def test_color_flag_beats_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color(_stream("always")) is True
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert use_color(_stream("never")) is False
    assert use_color(_stream("auto")) is True
    monkeypatch.delenv("FORCE_COLOR")
    assert use_color(_stream("auto")) is False  # not a terminal


def test_an_unknown_color_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "info", "--color", "purple"]) == ExitCode.USAGE
    assert capsys.readouterr().err.startswith("error[usage]: --color takes one of auto, always, never")


def test_doctor_help_offers_only_what_doctor_takes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--help"]) == 0
    out = capsys.readouterr().out
    option = next(line for line in out.splitlines() if line.strip().startswith("--python"))
    assert option.split()[:2] == ["--python", "PATH"] and "X.Y" not in option


def _stream(choice: str) -> io.StringIO:
    stream = io.StringIO()
    stream.color_choice = choice  # type: ignore[attr-defined]
    return stream


def _leaky_host(tmp_path: Path) -> str:
    from torchsmith.machine import Machine, OsInfo, PythonInfo

    profile = Machine(os=OsInfo(system="linux", arch="x86_64"), python=PythonInfo(version="3.11.7")).to_json()
    profile["env"]["index_settings"] = {"pip /etc/pip.conf [global] extra-index-url": "https://mirror/simple"}
    path = tmp_path / "host.json"
    path.write_text(json.dumps(profile))
    return str(path)


@pytest.mark.parametrize(("fmt", "applies"), [("pip", True), ("requirements", True), ("dockerfile", False),
                                               ("conda", False), ("pixi", False), ("pyproject", False)])
def test_the_pip_config_warning_only_where_that_pip_runs(fmt: str, applies: bool, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--host", _leaky_host(tmp_path), "--format", fmt]) == 0
    captured = capsys.readouterr()
    said = "your pip/uv configuration"
    assert (said in captured.out) is applies
    assert said not in captured.err  # a note: -v shows it
    # Said once: in the file where it applies, else (-v) on stderr.
    assert main(["plan", "--host", _leaky_host(tmp_path), "--format", fmt, "-v"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count(said) + captured.err.count(said) == 1


def test_plan_answer_first_at_80_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCHSMITH_COLUMNS", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["plan", *_plan_flags(), "--python", "3.12"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Install torch ") and lines[1].startswith("  $ python -m pip install")
    assert all(len(line) <= 80 for line in lines)
    after = lines[lines.index("Why:") + 1:]
    why = after[:next((i for i, line in enumerate(after) if not line.startswith(" ")), len(after))]
    assert 1 <= len(why) <= 5
    assert "[source:" not in "\n".join(lines)
    assert main(["plan", *_plan_flags(), "--python", "3.12", "-v"]) == 0
    verbose = capsys.readouterr().out
    assert "[source:" in verbose and "Packages:" in verbose


@pytest.mark.parametrize("argv", [["plan"], ["install", "--dry-run"]])
def test_a_plan_that_works_is_never_called_no_solution(argv: List[str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    venv = ["--venv", str(tmp_path / "venv")] if argv[0] == "install" else []
    assert main([*argv, *venv, "--gpu", "8.6", "--driver", "570.86.10", "--python", "3.12"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("Install torch")  # the answer first; the environment under it
    assert "No working torch stack" not in shown
    blocked = ["plan", "--gpu", "8.6", "--driver", "570.86.10", "--python", "3.12", "torch==1.0.0"]
    assert main(blocked) == ExitCode.NO_SOLUTION
    assert "No working torch stack" in capsys.readouterr().out


def test_an_unpinned_torch_is_titled_without_a_blank_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--platform", "windows-x86_64", "--rocm-gfx", "gfx1100", "--python", "3.12"]) == 0
    title = capsys.readouterr().out.splitlines()[0]
    assert title.startswith("Install torch (") and "  " not in title


@pytest.mark.parametrize(("quiet", "verbose", "expected"), [
    (False, 0, ["warning: the installed torch must change", "1 note hidden; -v shows it"]),
    (False, 1, ["warning: the installed torch must change", "warning: built from source"]),
    (True, 0, ["warning: the installed torch must change"]),  # -q keeps what decides safety
])
def test_notes_with_v_cautions_always(quiet: bool, verbose: int, expected: List[str]) -> None:
    import io

    from torchsmith.output import Caution, Presentation, Result, emit

    result = Result(command="plan", warnings=[Caution("the installed torch must change"), "built from source",
                                              "built from source"])
    out, err = io.StringIO(), io.StringIO()
    emit(result, False, out, err, Presentation(quiet=quiet, verbose=verbose))
    assert err.getvalue().splitlines() == expected
    # Shown with the answer: not again on stderr.
    result.cautions_shown = True
    err = io.StringIO()
    emit(result, False, out, err, Presentation(quiet=quiet, verbose=verbose))
    assert err.getvalue().splitlines() == [line for line in expected if "installed torch" not in line]
    emit(result, True, out, err)
    assert json.loads(out.getvalue())["warnings"] == ["the installed torch must change", "built from source",
                                                      "built from source"]
