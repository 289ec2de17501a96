"""The snippets torchsmith runs in a target interpreter (inspect_env.py, torch_check.py, ...) print
JSON; here the "interpreter" is a fake that prints each spoiled form of a real answer instead."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from tests.robustness.corpus import Spoiled, base_profile, spoilers
from tests.robustness.harness import check, run_cli

import torchsmith

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fake interpreter is an sh script")

SNIPPET = Path(torchsmith.__file__).parent / "snippets" / "inspect_env.py"


def _real_answer() -> str:
    done = subprocess.run([sys.executable, str(SNIPPET)], capture_output=True, text=True, timeout=120,
                          check=True)
    return done.stdout


SPOILED: List[Spoiled] = [s for s in spoilers(_real_answer()) if s.text is not None]


def _fake_python(directory: Path, spoiled: Spoiled) -> str:
    answer = directory / "answer"
    answer.write_text(spoiled.text or "", encoding="utf-8", errors="surrogatepass")
    body = "exec sleep 600\n" if spoiled.answer.get("timed_out") else \
        f"cat '{answer}'\nexit {spoiled.answer.get('returncode') or 0}\n"
    if spoiled.answer.get("returncode") == -9:
        body = "kill -9 $$\n"
    python = directory / "python"
    python.write_text("#!/bin/sh\n" + body)
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return str(python)


@pytest.mark.parametrize("spoiled", SPOILED, ids=lambda s: s.how)
def test_doctor_and_plan_over_a_spoiled_snippet_answer(spoiled: Spoiled, tmp_path: Path) -> None:
    python = _fake_python(tmp_path, spoiled)
    host = tmp_path / "host.json"
    host.write_text(json.dumps(base_profile()), encoding="utf-8")
    label = f"snippet answer / {spoiled.how}"
    check(run_cli(["doctor", "--json", "--python", python, "--host", str(host), "--timeout", "2"],
                  label=f"doctor: {label}"))
    if not spoiled.answer.get("timed_out"):  # plan waits up to 30 s for it: see the slow test
        check(run_cli(["plan", "--json", "--python", python, "--host", str(host)], label=f"plan: {label}"))
        check(run_cli(["guard", "--json", "status", "--python", python], label=f"guard status: {label}"))


@pytest.mark.slow
def test_plan_over_a_hung_interpreter(tmp_path: Path) -> None:
    hung = next(s for s in SPOILED if s.answer.get("timed_out"))
    python = _fake_python(tmp_path, hung)
    host = tmp_path / "host.json"
    host.write_text(json.dumps(base_profile()), encoding="utf-8")
    check(run_cli(["plan", "--json", "--python", python, "--host", str(host)],
                  label="plan: hung interpreter"))
