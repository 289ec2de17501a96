"""Every command's human output at 80 columns: piped (in process) and on a real terminal (tmux).

A line may pass 80 columns only when it is one unbreakable word (a URL, a quoted command
argument); on the terminal, capture-pane -J joins what the terminal wrapped, so output that
relied on the terminal to wrap it fails here too.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from torchsmith.cli import main
from torchsmith.output import Caution, strip_sources

HOSTS = Path(__file__).resolve().parent / "hosts"
H100 = str(HOSTS / "linux-x86_64-h100-drv535.json")
RTX5090 = str(HOSTS / "linux-x86_64-rtx5090-drv570.json")
KERNEL_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device"

COMMANDS: List[List[str]] = [
    ["summary", "--host", H100],
    ["probe", "--host", H100],
    ["plan", "--host", H100],
    ["plan", "--host", H100, "-v"],
    ["plan", "torch==1.13.1", "--python", "3.12", "--host", H100],
    ["matrix", "--host", H100, "--all"],
    ["install", "--dry-run", "--host", H100],
    ["explain", "--no-probe", KERNEL_IMAGE],
    ["doctor", "--quick"],
    ["kb", "info"],
    ["kb", "show", "cuda"],
    ["kb", "show", "releases"],
    ["fleet", H100, RTX5090],
    ["build-env", "--cuda", "--host", H100],
    ["guard", "status", "--python", sys.executable],
    ["explain", "--no-probe", "ImportError: libcudnn.so.9: cannot open shared object file"],
]


def _one_word(line: str) -> bool:
    """A URL, or one quoted shell argument (``"import torch; print(...)"``): nothing to break."""
    try:
        return len(shlex.split(line)) <= 1
    except ValueError:
        return len(line.split()) <= 1


def _too_wide(text: str) -> List[str]:
    return [line for line in text.splitlines() if len(line) > 80 and not _one_word(line)]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(a[:2]) for a in COMMANDS])
def test_piped_output_fits_80_columns(argv: List[str], capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCHSMITH_COLUMNS", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    code = main(argv)
    captured = capsys.readouterr()
    assert code in (0, 3, 4), captured.err
    assert captured.out.strip()
    assert "\x1b[" not in captured.out  # no colour into a pipe
    shown, _, script = captured.out.partition("#!/usr/bin/env bash\n")  # a script is printed as it is
    assert _too_wide(shown) == []
    if script:
        subprocess.run(["bash", "-n"], input=script, text=True, check=True)  # still a script
    assert _too_wide(captured.err) == []
    if "-v" not in argv:
        assert "warning:" not in captured.err  # notes with -v; a caution is part of the answer


# The answer-first commands: the first line is the answer, then at most five lines of why.
ANSWER_FIRST = {
    "plan": (["plan", "--host", H100], r"Install torch \S+ \(cu\d+\) for linux-x86_64, Python 3\.10 \(pip\)"),
    "plan blocked": (["plan", "torch==1.13.1", "--python", "3.12", "--host", H100],
                     r"No working torch stack for linux-x86_64, Python 3\.12\.$"),
    "summary": (["summary", "--host", H100], r"Install torch \S+ \(cu\d+\) for linux-x86_64, Python 3\.10"),
    "install": (["install", "--dry-run", "--host", H100], r"Install torch \S+ \(cu\d+\) .*\(uv|pip\):$"),
    "doctor": (["doctor", "--quick"], r"[✓!✗] "),
}
LINES = {"plan": 20, "plan blocked": 25, "summary": 16, "install": 20, "doctor": 16}


_WARNING = re.compile(r"^warning: ", re.M)  # as stderr says one (a doctor verdict names "1 warning:")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _why(lines: List[str]) -> List[str]:
    if "Why:" not in lines:
        return []
    after = lines[lines.index("Why:") + 1:]
    return after[:next((i for i, line in enumerate(after) if not line.startswith(" ")), len(after))]


def _notes(argv: List[str], capsys: pytest.CaptureFixture[str]) -> List[str]:
    """The warnings the JSON carries that are not part of the answer (in the Python objects)."""
    from torchsmith import output

    seen: List[str] = []
    real = output.emit

    def keep(result: output.Result, *args: object, **kwargs: object) -> None:
        seen.extend(result.warnings)
        real(result, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(output, "emit", keep)
        main([*argv, "--json"])
    assert len(json.loads(capsys.readouterr().out)["warnings"]) == len(seen)  # JSON carries them all
    return list(dict.fromkeys(w for w in seen if not isinstance(w, Caution)))


@pytest.mark.parametrize("name", list(ANSWER_FIRST))
def test_piped_answer_first(name: str, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """First line the answer, at most five lines of why, no warning without -v but a line saying
    how many notes were hidden; -v shows every one, and --json always carries them."""
    monkeypatch.delenv("TORCHSMITH_COLUMNS", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    argv, first = ANSWER_FIRST[name]
    notes = _notes(argv, capsys)
    code = main(argv)
    captured = capsys.readouterr()
    assert code in (0, 3, 4), captured.err
    lines = captured.out.splitlines()
    assert re.match(first, lines[0]), captured.out
    assert len(_why(lines)) <= 5 and len(lines) <= LINES[name], captured.out
    assert "warning:" not in captured.err and "[source:" not in captured.out
    for note in notes:
        assert _flat(strip_sources(note))[:60] not in _flat(captured.out + captured.err)
    hint = f"{len(notes)} note{'s' if len(notes) != 1 else ''} hidden; -v shows"
    assert (hint in captured.err) is bool(notes), captured.err
    assert main([*argv, "-v"]) in (0, 3, 4)
    verbose = capsys.readouterr()
    assert "hidden; -v shows" not in verbose.err
    for note in notes:
        assert _flat(note)[:60] in _flat(verbose.out + verbose.err)


def test_a_caution_is_part_of_the_answer(capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver older than the GPU: the CPU build is the answer, and why is said with it (not
    hidden, not repeated on stderr)."""
    monkeypatch.delenv("TORCHSMITH_COLUMNS", raising=False)
    argv = ["plan", "--gpu", "12.0:RTX 5090", "--driver", "535.54.03", "--platform", "linux-x86_64",
            "--python", "3.12"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert re.match(r"Install torch \S+ \(cpu\)", lines[0])
    why = _why(lines)
    assert why[0].startswith("  ! driver 535.54.03 is older than sm_120")
    assert "no CUDA build of torch can use these GPUs with driver 535.54.03" in _flat("\n".join(why))
    assert "warning:" not in captured.err and "older than sm_120" not in captured.err


@pytest.fixture(scope="module")
def tmux() -> Iterator[List[str]]:
    """A private tmux server (its own socket), killed afterwards."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed: the real-terminal check needs it (apt-get install tmux)")
    base = ["tmux", "-L", f"torchsmith-test-{uuid.uuid4().hex[:8]}", "-f", os.devnull]
    yield base
    subprocess.run([*base, "kill-server"], capture_output=True, check=False)


def _new_session(tmux: List[str], args: List[str], env: Dict[str, str], cwd: Path) -> None:
    """Start the pane. A fresh tmux server now and then dies while starting ("server exited
    unexpectedly", seen once in CI with two test workers): that is tmux, not us, so try again."""
    for attempt in range(3):
        started = subprocess.run([*tmux, "new-session", "-d", "-s", *args], env=env, cwd=str(cwd),
                                 capture_output=True, text=True, check=False)
        if started.returncode == 0 or "server exited unexpectedly" not in started.stderr or attempt == 2:
            break
        time.sleep(0.5)
    assert started.returncode == 0, started.stderr


def _on_terminal(tmux: List[str], argv: List[str], tmp_path: Path) -> str:
    """The pane after the command ran in an 80-column terminal (lines the terminal wrapped joined)."""
    unset = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TORCHSMITH_COLUMNS")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    done = f"done-{uuid.uuid4().hex[:8]}"
    rc_file = tmp_path / "rc"
    command = (f"{shlex.quote(sys.executable)} -m torchsmith {' '.join(shlex.quote(a) for a in argv)}; "
               f"echo $? > {shlex.quote(str(rc_file))}; {' '.join(tmux)} wait-for -S {done}; sleep 60")
    session = uuid.uuid4().hex[:8]
    _new_session(tmux, [session, "-x", "80", "-y", "400", command], env, tmp_path)
    try:
        subprocess.run([*tmux, "wait-for", done], check=True, timeout=120)
        pane = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-S", "-", "-t", session],
                              check=True, capture_output=True, text=True).stdout
        colour = subprocess.run([*tmux, "capture-pane", "-p", "-e", "-t", session],
                                check=True, capture_output=True, text=True).stdout
    finally:
        subprocess.run([*tmux, "kill-session", "-t", session], capture_output=True, check=False)
    assert int(rc_file.read_text()) in (0, 3, 4), pane
    return pane + ("\n[colour]" if "\x1b[" in colour else "")


TERMINAL = [["plan", "--host", H100], ["matrix", "--host", H100], ["explain", "--no-probe", KERNEL_IMAGE],
            ["kb", "show", "gpus"], ["summary", "--host", H100], ["doctor", "--quick"],
            ["probe", "--host", H100], ["install", "--dry-run", "--host", H100], ["kb", "info"],
            ["fleet", H100, RTX5090], ["build-env", "--cuda", "--host", H100],
            ["guard", "status", "--python", sys.executable]]


@pytest.mark.slow
@pytest.mark.parametrize("argv", TERMINAL, ids=[" ".join(a[:2]) for a in TERMINAL])
def test_terminal_output_fits_80_columns(argv: List[str], tmux: List[str], tmp_path: Path) -> None:
    pane = _on_terminal(tmux, argv, tmp_path)
    assert "Traceback" not in pane
    shown = pane.partition("#!/usr/bin/env bash\n")[0]  # a script is printed as it is
    assert _too_wide(shown) == []
    assert not _WARNING.search(shown)  # notes with -v; a caution is part of the answer
    if argv[0] in ("plan", "matrix", "explain") or argv[:2] == ["kb", "show"]:  # coloured on a terminal
        assert pane.endswith("[colour]")


@pytest.mark.slow
def test_no_color_and_color_never_are_plain_on_a_terminal(tmux: List[str], tmp_path: Path) -> None:
    assert not _on_terminal(tmux, ["plan", "--host", H100, "--color", "never"], tmp_path).endswith("[colour]")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ANSWER_FIRST))
def test_terminal_answer_first(name: str, tmux: List[str], tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """On a real 80-column terminal (stdout and stderr on one screen): the answer on the first
    line, no warning without -v, and the hint when notes were hidden."""
    argv, first = ANSWER_FIRST[name]
    notes = _notes(argv, capsys)
    pane = _on_terminal(tmux, argv, tmp_path)
    lines = pane.splitlines()
    assert re.match(first, lines[0]), pane
    assert len(_why(lines)) <= 5
    assert not _WARNING.search(pane) and "[source:" not in pane
    assert ("hidden; -v shows" in pane) is bool(notes), pane


def test_an_exported_file_is_printed_as_it_is(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """`export` prints files to save: never wrapped to the terminal (a wrapped comment or pin
    would no longer be a requirements file)."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("export reads a venv or conda prefix; these tests run outside one")
    monkeypatch.delenv("TORCHSMITH_COLUMNS", raising=False)
    monkeypatch.setenv("COLUMNS", "40")
    assert main(["export", "--python", sys.executable, "--json"]) == 0
    files = json.loads(capsys.readouterr().out)["data"]["text"]
    assert main(["export", "--python", sys.executable]) == 0
    shown = capsys.readouterr().out
    for name, text in files.items():  # (the JSON's keys are sorted; the files come in their order)
        assert f"# ---- {name} ----\n{text}" in shown


def test_the_last_why_line_agrees_in_number() -> None:
    """``... 1 more: `-v` shows it and its source``, not "their sources"."""
    from torchsmith.cli.layout import why_lines

    reasons = [f"reason {i} [source: https://example.org/{i}]" for i in range(6)]
    assert why_lines(reasons, 80, 0)[-1] == "  ... 2 more: `-v` shows them and their sources"
    assert why_lines(reasons, 80, 0, more="this machine")[-1].endswith("them and this machine")
    assert why_lines([*reasons[:4], "y " * 60], 80, 0)[-1] == "  ... 1 more: `-v` shows it and its source"
