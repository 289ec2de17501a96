"""`probe --json` and `plan --json --host` stay fast by what they load: none of these modules.

What a command imports decides most of its start (bench/bench_probe.py and bench_plan.py time
it, as ratios against the interpreter's own start). Each command runs in a fresh interpreter,
as `python -m torchsmith` does, and the modules it loaded are read at its end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Set

import pytest

HOSTS = Path(__file__).parent / "hosts"

# Heavy, and needed by none of these commands: metadata readers, network and TLS, the
# requirement grammar (packaging.tags pulls in logging), rich, and the rooms of other commands.
NEVER = (
    "email", "importlib.metadata", "urllib.request", "http.client", "ssl", "logging", "asyncio",
    "rich", "tomllib", "tomli", "html", "urllib.parse", "packaging.requirements",
    "packaging.specifiers", "packaging.markers", "packaging.tags", "torchsmith.explain",
    "torchsmith.doctor", "torchsmith.install.runner", "torchsmith.install.lock", "torchsmith.fleet",
    "torchsmith.kb.metaread", "torchsmith.kb.refresh",
)
# The probe only describes the machine: no data, no planner, no renderer (with --json, no text).
NOT_IN_PROBE = ("torchsmith.kb", "torchsmith.plan", "torchsmith.render", "torchsmith.install.check",
                "torchsmith.report",  # the text form's lines
                # records make their standard fields when first asked for: a probe never asks
                "dataclasses", "inspect",
                "torchsmith.compat",  # (asked for a GPU's sm_ name: this machine has none)
                "queue",  # the hung-mount guard hands its reads over through locks
                "typing",  # its names are imported `if TYPE_CHECKING:` (see torchsmith/__init__.py)
                # (Linux CPython's platform facts are read where the platform module reads them)
                *(("platform",) if sys.platform == "linux" and sys.implementation.name == "cpython" else ()),
                # (free-threaded builds, the one thing asked of sysconfig, exist from 3.13 on)
                *(("sysconfig",) if sys.version_info < (3, 13) else ()))
# A described machine (a profile or a capture) is read, never asked: no command is run, no file
# is read through the live host (no hung-mount guard thread), no terminal is asked its width.
NOT_IN_DESCRIBED = ("subprocess", "torchsmith.host.guard",
                    "dataclasses",  # (no record's standard fields are asked for)
                    # (3.13's warnings, which packaging.version loads, imports inspect itself)
                    *(("inspect",) if sys.version_info < (3, 13) else ()),
                    # (Python 3.8's argparse imports shutil, whose bz2 imports threading)
                    *(("shutil", "threading") if sys.version_info >= (3, 9) else ()))
# A profile is read as it is: nothing is probed.
NOT_FROM_A_PROFILE = ("torchsmith.probe.nvidia", "torchsmith.probe.jetson", "torchsmith.probe.system",
                      "torchsmith.host.budget")

_LOADED = """
import json, runpy, sys
sys.argv = ["torchsmith", *sys.argv[2:]]
try:
    runpy.run_module("torchsmith", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
with open(OUT, "w") as handle:
    json.dump(sorted(sys.modules), handle)
"""


def _loaded(tmp_path: Path, words: List[str]) -> Set[str]:
    out = tmp_path / "modules.json"
    code = _LOADED.replace("OUT", repr(str(out)))
    done = subprocess.run([sys.executable, "-c", code, "-", *words], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"}, check=False)
    assert out.exists(), done.stderr
    assert json.loads(done.stdout)  # the command answered, in JSON
    return set(json.loads(out.read_text(encoding="utf-8")))


def _heavy(loaded: Set[str], names: tuple) -> List[str]:
    return sorted(m for m in loaded if any(m == n or m.startswith(n + ".") for n in names))


def test_probe_json_loads_nothing_heavy(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path, ["probe", "--json"])
    assert "torchsmith.probe" in loaded and "torchsmith.machine" in loaded
    assert _heavy(loaded, NEVER + NOT_IN_PROBE) == []


@pytest.mark.parametrize("host", ["linux-x86_64-h100-drv580-real.json", "real-h100/profile.json"])
def test_plan_json_on_a_described_machine_loads_nothing_heavy(tmp_path: Path, host: str) -> None:
    loaded = _loaded(tmp_path, ["plan", "--json", "--host", str(HOSTS / host)])
    assert "torchsmith.plan.resolve" in loaded and "torchsmith.kb.loader" in loaded
    assert _heavy(loaded, NEVER + NOT_IN_DESCRIBED) == []
    if host.endswith("profile.json"):
        assert _heavy(loaded, NOT_FROM_A_PROFILE) == []
