"""Corrupted data: knowledge-base overlays (``--kb DIR`` and the one `kb refresh` wrote), locks,
signature files, logs for ``explain``; files standing where directories belong; Ctrl-C anywhere."""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.robustness.corpus import JSON_VALUES as _JSON
from tests.robustness.corpus import base_profile
from tests.robustness.harness import battery_settings, check, run_cli

import torchsmith

PACKAGE = Path(torchsmith.__file__).parent
KB_DATA = PACKAGE / "kb" / "data"
KB_FILES = sorted(p.name for p in KB_DATA.glob("*.json"))
SIGNATURES = PACKAGE / "kb" / "data" / "signatures.json"


@pytest.fixture(scope="module")
def good_host(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("host") / "host.json"
    path.write_text(json.dumps(base_profile()), encoding="utf-8")
    return str(path)


def _wrong_types(text: str) -> str:
    data = json.loads(text)
    return json.dumps({key: "not a list" if isinstance(value, list) else [value]
                       for key, value in data.items()})


def _huge_numbers(text: str) -> str:
    return text.replace('"2.', '"2.' + "9" * 5000, 3)


# name -> what it does to a data file's text (None: the file becomes a FIFO or a directory)
CORRUPTIONS: Dict[str, Callable[[str], Any]] = {
    "truncated": lambda text: text[: len(text) // 2],
    "random bytes": lambda text: bytes(random.Random(len(text)).getrandbits(8) for _ in range(2048)),
    "wrong types": _wrong_types,
    "empty object": lambda text: "{}",
    "a JSON list": lambda text: "[]",
    "nested 100000 deep": lambda text: "[" * 100_000 + "]" * 100_000,
    "5000-digit versions": _huge_numbers,
    "a FIFO": lambda text: "fifo",
    "a directory": lambda text: "dir",
}


def _corrupt(directory: Path, name: str, how: str) -> None:
    text = (KB_DATA / name).read_text(encoding="utf-8") if (KB_DATA / name).exists() else "{}"
    result = CORRUPTIONS[how](text)
    target = directory / name
    if result == "fifo":
        if sys.platform == "win32":
            pytest.skip("FIFOs are POSIX")
        os.mkfifo(target)
    elif result == "dir":
        target.mkdir()
    elif isinstance(result, bytes):
        target.write_bytes(result)
    else:
        target.write_text(result, encoding="utf-8")


KB_CASES: List[Tuple[str, str]] = [(name, how) for name in KB_FILES for how in CORRUPTIONS]
FAST_KB = [case for number, case in enumerate(KB_CASES)
           if case[0] == "torch_releases.json" or number % len(CORRUPTIONS) == KB_FILES.index(case[0])]


def _kb_runs(overlay: Path, host: str, label: str) -> None:
    check(run_cli(["kb", "validate", str(overlay)], label=f"kb validate <{label}>"))
    check(run_cli(["plan", "--json", "--host", host, "--kb", str(overlay)], label=f"plan --kb <{label}>"))


@pytest.mark.parametrize(("name", "how"), FAST_KB)
def test_a_corrupted_overlay(name: str, how: str, tmp_path: Path, good_host: str) -> None:
    _corrupt(tmp_path, name, how)
    _kb_runs(tmp_path, good_host, f"{name} {how}")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "how"), [c for c in KB_CASES if c not in FAST_KB])
def test_every_corrupted_overlay(name: str, how: str, tmp_path: Path, good_host: str) -> None:
    _corrupt(tmp_path, name, how)
    _kb_runs(tmp_path, good_host, f"{name} {how}")


def test_a_corrupted_refresh_overlay_is_named_and_validate_says_so(tmp_path: Path, good_host: str) -> None:
    overlay = tmp_path / "cache" / "kb-overlay"
    overlay.mkdir(parents=True)
    _corrupt(overlay, "torch_releases.json", "truncated")
    env = {"TORCHSMITH_CACHE_DIR": str(tmp_path / "cache")}
    planned = run_cli(["plan", "--json", "--host", good_host], env=env,
                      label="plan <corrupt refresh overlay>")
    check(planned)
    assert planned.envelope is not None and planned.exit_code == 1
    assert str(overlay) in planned.envelope["errors"][0]["message"]
    validated = run_cli(["kb", "validate"], env=env, label="kb validate <corrupt refresh overlay>")
    check(validated)
    assert validated.exit_code == 1 and str(overlay) in validated.stderr


# --- locks ----------------------------------------------------------------------------------
def _lock() -> Dict[str, Any]:
    return {"lock_version": 1, "torchsmith": torchsmith.__version__, "kb_version": "2026.11.22",
            "python": "3.11", "platform": "linux-x86_64", "variant": "cu126", "accelerator": "cuda",
            "packages": [{"name": "torch", "version": "2.6.0+cu126", "find_links": None,
                          "index": "https://download.pytorch.org/whl/cu126",
                          "hashes": ["sha256:" + "ab" * 32]}]}


@battery_settings
@given(field=st.sampled_from(["lock_version", "packages", "python", "platform", "variant", "accelerator"]),
       value=_JSON)
def test_a_lock_with_any_field_spoiled(field: str, value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        lock, host = Path(tmp) / "lock.json", Path(tmp) / "host.json"
        lock.write_text(json.dumps({**_lock(), field: value}), encoding="utf-8")
        host.write_text(json.dumps(base_profile()), encoding="utf-8")
        check(run_cli(["install", "--lock", str(lock), "--dry-run", "--json", "--host", str(host),
                       "--venv", str(Path(tmp) / "venv")], label=f"install --lock <{field} spoiled>"))


@pytest.mark.parametrize("packages", ["abc", {"torch": 1}, [1, 2], [["torch"]], [{"name": []}], None])
def test_a_lock_whose_packages_are_not_entries(packages: Any, tmp_path: Path, good_host: str) -> None:
    lock = tmp_path / "lock.json"
    lock.write_text(json.dumps({**_lock(), "packages": packages}), encoding="utf-8")
    check(run_cli(["install", "--lock", str(lock), "--dry-run", "--venv", str(tmp_path / "v"),
                   "--host", good_host], label=f"install --lock <packages {type(packages).__name__}>"))


# --- explain --------------------------------------------------------------------------------
def _logs(tmp_path: Path) -> Dict[str, str]:
    binary = tmp_path / "binary.log"
    binary.write_bytes(bytes(random.Random(7).getrandbits(8) for _ in range(1_000_000)))
    mixed = tmp_path / "mixed.log"
    mixed.write_bytes(b"\xff\xfe\x00" * 1000 + b"\nRuntimeError: CUDA error: no kernel image is "
                      b"available for execution on the device\n" + b"\x00" * 5000)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    long_line = tmp_path / "one-line.log"
    long_line.write_bytes(b"x" * 3_000_000)
    return {"binary": str(binary), "binary with an error in it": str(mixed), "empty": str(empty),
            "one 3 MB line": str(long_line), "a directory": str(tmp_path), "absent": str(tmp_path / "no"),
            "/dev/zero": "/dev/zero", "/dev/null": "/dev/null"}


def test_explain_any_log(tmp_path: Path) -> None:
    for name, path in _logs(tmp_path).items():
        check(run_cli(["explain", "--no-probe", "--json", "--file", path], label=f"explain --file <{name}>"))
        check(run_cli(["explain", "--no-probe", "--file", path], label=f"explain --file <{name}> (human)"))


def test_explain_binary_standard_input() -> None:
    data = bytes(random.Random(3).getrandbits(8) for _ in range(500_000))
    check(run_cli(["explain", "--no-probe", "--json", "-"], stdin=data, label="explain - <binary>"))


@pytest.mark.slow
def test_explain_a_20_mb_log(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    with log.open("wb") as handle:
        handle.write(b"RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
        for _ in range(20):
            handle.write(b"noise " * 174_763)
        handle.write(b"\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    outcome = run_cli(["explain", "--no-probe", "--json", "--file", str(log)], label="explain --file <20 MB>")
    check(outcome)
    assert outcome.envelope is not None and outcome.envelope["data"]["input"]["skipped_bytes"] > 0


@pytest.mark.parametrize("how", [h for h in CORRUPTIONS if h not in ("5000-digit versions",)])
def test_a_corrupted_signature_file(how: str, tmp_path: Path) -> None:
    _corrupt(tmp_path, "signatures.json", how)
    check(run_cli(["explain", "--no-probe", "--json", "--signatures", str(tmp_path / "signatures.json"),
                   "RuntimeError: CUDA error"], label=f"explain --signatures <{how}>"))


# --- a file where a directory belongs: refused, and the file survives -------------------------
def test_files_where_directories_belong(tmp_path: Path, good_host: str) -> None:
    precious = tmp_path / "precious"
    precious.write_text("do not lose me\n")
    for argv in (["probe", "--json", "--record", str(precious), "--host", good_host],
                 ["install", "--json", "-y", "--venv", str(precious), "--host", good_host],
                 ["kb", "refresh", "--json", "--overlay", str(precious)],
                 ["kb", "validate", "--json", str(precious)],
                 ["plan", "--json", "--host", good_host, "--kb", str(precious)]):
        outcome = run_cli(argv, keep=[precious], label=f"{argv[0]} <a file where a directory belongs>")
        check(outcome)
        assert outcome.exit_code in (1, 2)


# --- Ctrl-C at any point ----------------------------------------------------------------------
@battery_settings
@given(at=st.integers(min_value=2, max_value=60_000))
def test_ctrl_c_at_any_call(at: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        host = Path(tmp) / "host.json"
        host.write_text(json.dumps(base_profile()), encoding="utf-8")
        outcome = run_cli(["plan", "--json", "--host", str(host)], interrupt_at=at,
                          label=f"plan <Ctrl-C at call {at}>")
        check(outcome)
