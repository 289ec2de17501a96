"""Host.run(env=...): installers run with a controlled environment, the parent's is untouched."""

from __future__ import annotations

import os
import sys

from torchsmith.host.live import LiveHost


def test_env_sets_and_removes_variables_for_the_child_only() -> None:
    host = LiveHost({"PATH": os.environ.get("PATH", ""), "PIP_EXTRA_INDEX_URL": "http://evil/",
                     "KEEP": "1"})
    code = ("import os; g = os.environ.get; "
            "print(g('PIP_EXTRA_INDEX_URL'), g('NEW'), g('KEEP'))")
    result = host.run([sys.executable, "-c", code], timeout=30,
                      env={"PIP_EXTRA_INDEX_URL": None, "NEW": "x"})
    assert result.ok, result.problem()
    assert result.stdout.split() == ["None", "x", "1"]
    assert host.environ()["PIP_EXTRA_INDEX_URL"] == "http://evil/"
    plain = host.run([sys.executable, "-c", code], timeout=30)
    assert plain.stdout.split() == ["http://evil/", "None", "1"]
