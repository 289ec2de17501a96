"""What users type and hand over: flag values, requirement strings, host profiles, locks, logs,
files where directories belong, Ctrl-C at any point. Each ends cleanly (tests/robustness/harness.py).
"""

from __future__ import annotations

import copy
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.robustness.corpus import JSON_VALUES as _JSON
from tests.robustness.corpus import base_profile
from tests.robustness.harness import battery_settings, check, run_cli

COMMANDS_WITH_HOST = ("probe", "plan", "matrix", "build-env", "install")
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_ODD = st.one_of(
    _TEXT,
    st.from_regex(r"\A[0-9.]{0,12}\Z"),
    st.from_regex(r"\A(sm_)?[0-9]{1,6}(\.[0-9]{1,6})?(:.{0,10})?\Z"),
    st.just("9" * 5000),
    st.just("3." + "1" * 5000),
    st.sampled_from(["", "-", "--", "3.12t", "3", "python", "/dev/null", "/", "-1", "1e999", "nan"]),
)


def _profile_file(directory: str, data: Any) -> str:
    path = os.path.join(directory, "host.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    return path


@pytest.fixture(scope="module")
def good_host(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _profile_file(str(tmp_path_factory.mktemp("host")), base_profile())


# --- flag values ----------------------------------------------------------------------------
_FLAGS = ("--gpu", "--driver", "--driver-cuda", "--python", "--rocm-gfx", "--rocm-version", "--jetson")


@battery_settings
@given(command=st.sampled_from(("plan", "probe", "matrix")), flag=st.sampled_from(_FLAGS), value=_ODD)
def test_any_flag_value(command: str, flag: str, value: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        host = _profile_file(tmp, base_profile())
        check(run_cli([command, "--json", "--host", host, f"{flag}={value}"],
                      label=f"{command} {flag}=<generated>"))


@battery_settings
@given(requirements=st.lists(st.one_of(_TEXT, st.from_regex(r"\Atorch[<>=!~]{1,3}[0-9a-z.*+]{0,12}\Z"),
                                       st.just("torch==2." + "9" * 5000)), min_size=1, max_size=3))
def test_any_requirement_string(requirements: List[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        host = _profile_file(tmp, base_profile())
        check(run_cli(["plan", "--json", "--host", host, "--", *requirements], label="plan <requirement>"))


@battery_settings
@given(command=st.sampled_from(("summary", "probe", "plan", "matrix", "install", "guard", "doctor",
                                "explain", "kb", "fleet", "build-env")),
       words=st.lists(st.one_of(st.sampled_from(["--bogus", "--timeout", "--releases", "--format",
                                                 "--platform", "--installer", "x", "-r"]), _TEXT),
                      min_size=1, max_size=3))
def test_argument_errors_under_json_are_the_envelope(command: str, words: List[str]) -> None:
    # Only command lines argparse refuses: a real `install` or `guard on` must not run here.
    argv = [command, "--json", "--bogus-flag", *words]
    check(run_cli(argv, label=f"{command} --json <bad arguments>"))


# --- host profiles --------------------------------------------------------------------------
def _paths(value: Any, prefix: tuple = ()) -> List[tuple]:  # type: ignore[type-arg]
    found = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            found.extend(_paths(inner, (*prefix, key)))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found.extend(_paths(inner, (*prefix, index)))
    return found


def _replace(data: Any, path: tuple, value: Any) -> Any:  # type: ignore[type-arg]
    if not path:
        return value
    copy_ = copy.deepcopy(data)
    target = copy_
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy_


_PROFILE_PATHS = _paths(base_profile())


@battery_settings
@given(where=st.sampled_from(_PROFILE_PATHS), value=_JSON,
       command=st.sampled_from(COMMANDS_WITH_HOST))
def test_a_profile_with_any_field_spoiled(where: tuple, value: Any, command: str) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        host = _profile_file(tmp, _replace(base_profile(), where, value))
        argv = [command, "--json", "--host", host]
        if command == "install":
            argv += ["--dry-run", "--venv", os.path.join(tmp, "venv")]
        if command == "build-env":
            argv.append("--cuda")
        check(run_cli(argv, label=f"{command} --host <profile with {'.'.join(map(str, where))} spoiled>"))


def _fixed_profiles() -> Dict[str, Optional[str]]:
    good = base_profile()
    return {
        "future schema": json.dumps({**good, "schema": 2}),
        "schema 0": json.dumps({**good, "schema": 0}),
        "schema as text": json.dumps({**good, "schema": "1"}),
        "another kind": json.dumps({**good, "kind": "torchsmith.capture"}),
        "the whole envelope of another command": json.dumps({"schema": 1, "data": {"plan": []}}),
        "nested 100000 deep": "[" * 100_000 + "]" * 100_000,
        "not UTF-8": "\udcff",
        "empty": "",
        "a JSON string": '"host"',
        "lone surrogates in names": json.dumps(_replace(good, ("nvidia", "gpus", 0, "name"), "\ud800x")),
        "a 20 MB profile": json.dumps({**good, "padding": "x" * 20_000_000}),
    }


@pytest.mark.parametrize("name", sorted(_fixed_profiles()))
def test_named_bad_profiles(name: str, tmp_path: Path) -> None:
    text = _fixed_profiles()[name]
    path = tmp_path / "host.json"
    path.write_bytes(b"\xff\xfe" if text == "\udcff" else (text or "").encode("utf-8", "surrogatepass"))
    for command in ("plan", "probe"):
        check(run_cli([command, "--json", "--host", str(path)], label=f"{command} --host <{name}>"))
        check(run_cli([command, "--host", str(path)], label=f"{command} --host <{name}> (human)"))


@pytest.mark.slow
def test_a_100_mb_profile(tmp_path: Path) -> None:
    path = tmp_path / "host.json"
    with path.open("w", encoding="utf-8") as handle:
        handle.write('{"kind": "torchsmith.host-profile", "schema": 1, "padding": "')
        for _ in range(100):
            handle.write("x" * 1_000_000)
        handle.write('"}')
    check(run_cli(["plan", "--json", "--host", str(path)], label="plan --host <100 MB profile>"))


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs are POSIX")
@pytest.mark.parametrize("command", ["plan", "probe", "fleet"])
def test_a_fifo_or_a_directory_as_the_profile(command: str, tmp_path: Path) -> None:
    fifo = tmp_path / "host.json"
    os.mkfifo(fifo)
    for target in (fifo, tmp_path):
        where = [str(target)] if command == "fleet" else ["--host", str(target)]
        argv = [command, "--json", *where]
        check(run_cli(argv, label=f"{command} <{'FIFO' if target == fifo else 'directory'} as profile>"))


@pytest.mark.parametrize("command", ["plan", "probe", "matrix"])
def test_python_that_is_no_interpreter_is_an_error(command: str, tmp_path: Path) -> None:
    outcome = run_cli([command, "--json", "--python", "foo"], label=f"{command} --python foo")
    check(outcome)
    assert outcome.envelope is not None and outcome.exit_code == 1
    assert outcome.envelope["errors"][0]["code"] == "python-not-inspectable"
