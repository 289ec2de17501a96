"""The last line of defence: a bug anywhere is still one line and exit 70, argument errors under
--json are the envelope, Ctrl-C is 130. Faults are injected at a chosen Python call."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Tuple

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.robustness.corpus import base_profile
from tests.robustness.harness import battery_settings, check, raise_at_call, run_cli

from torchsmith.cli import main
from torchsmith.output import ExitCode


class _Injected(RuntimeError):
    pass


def _run_with_fault(argv: Any, at: int) -> Tuple[int, str, str]:
    """main(argv) with a RuntimeError raised at torchsmith's ``at``-th call; TORCHSMITH_DEBUG unset."""
    trace = raise_at_call(at, lambda: _Injected("injected fault with a secret https://u:p@example.com"))

    out, err = io.StringIO(), io.StringIO()
    saved = os.environ.pop("TORCHSMITH_DEBUG", None)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            sys.settrace(trace)
            try:
                code = main(list(argv))
            finally:
                sys.settrace(None)
    finally:
        if saved is not None:
            os.environ["TORCHSMITH_DEBUG"] = saved
    return code, out.getvalue(), err.getvalue()


@battery_settings
@given(at=st.integers(min_value=2, max_value=40_000), as_json=st.booleans())
def test_a_fault_anywhere_is_one_line_and_exit_70(at: int, as_json: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        host = Path(tmp) / "host.json"
        host.write_text(json.dumps(base_profile()), encoding="utf-8")
        argv = ["plan", "--host", str(host), *(["--json"] if as_json else [])]
        code, out, err = _run_with_fault(argv, at)
    assert "Traceback" not in err and "u:p@" not in out + err
    assert code in {int(c) for c in ExitCode}
    if code == ExitCode.INTERNAL:
        if as_json:
            envelope = json.loads(out)
            assert envelope["exit_code"] == 70 and envelope["errors"][0]["code"] == "internal-error"
        else:
            assert err.startswith("error[internal-error]: torchsmith stopped on an unexpected _Injected")


def test_debug_shows_the_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHSMITH_DEBUG", "1")
    host = tmp_path / "host.json"
    host.write_text(json.dumps(base_profile()), encoding="utf-8")
    with pytest.raises(_Injected):
        calls = [0]

        def trace(frame: Any, event: str, arg: Any) -> None:
            if "torchsmith/plan" in frame.f_code.co_filename:
                calls[0] += 1
                if calls[0] == 5:
                    sys.settrace(None)
                    raise _Injected("boom")

        sys.settrace(trace)
        try:
            main(["plan", "--host", str(host)])
        finally:
            sys.settrace(None)


@pytest.mark.parametrize("argv", [
    ["frobnicate", "--json"],
    ["plan", "--json", "--bogus"],
    ["plan", "--json", "--platform", "amiga"],
    ["matrix", "--json", "--releases", "many"],
    ["kb", "--json", "show", "nope"],
    ["install", "--json", "--installer", "conda"],
    ["guard", "status", "--json"],
])
def test_argument_errors_under_json(argv: Any) -> None:
    outcome = run_cli(argv, label=" ".join(argv))
    check(outcome)
    assert outcome.exit_code == ExitCode.USAGE
    assert outcome.envelope is not None and outcome.envelope["errors"][0]["code"] == "usage"
    assert outcome.stderr == ""


def test_argument_errors_for_people_are_one_error_line() -> None:
    outcome = run_cli(["plan", "--bogus"], label="plan --bogus")
    check(outcome)
    assert outcome.exit_code == ExitCode.USAGE
    assert outcome.stderr.startswith("error[usage]: unrecognized arguments: --bogus")
    assert outcome.stderr.count("\n") == 1
