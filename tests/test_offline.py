"""Every command but `kb refresh` and `install` answers with no network (air-gapped clusters).

Each runs as a user would, in a child process whose every proxy points at a closed port on
this machine: any HTTP(S) request it tried would fail, and so would the command.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CLOSED = "http://127.0.0.1:9"  # discard port: nothing listens there

COMMANDS = [
    ["probe", "--json"],
    ["plan", "--gpu", "8.6", "--driver", "550.54.14", "--json"],
    ["plan", "--jetson", "35.2.1", "--python", "3.8", "--format", "jetson"],
    ["plan", "mmcv>=2.0.0,<2.2.0", "torch", "--no-gpu", "--format", "uv"],
    ["matrix", "--gpu", "12.0", "--driver", "580.65.06", "--json"],
    ["kb", "info", "--json"],
    ["kb", "validate"],
    ["explain", "RuntimeError: CUDA error: no kernel image is available for execution on the device",
     "--no-probe"],
    ["doctor", "--quick", "--json"],
    ["build-env", "--cuda", "--json"],
    [],
]


@pytest.mark.slow
@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(a[:2]) or "summary" for a in COMMANDS])
def test_works_without_a_network(argv: list) -> None:  # type: ignore[type-arg]
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    proxies = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy")
    env.update(dict.fromkeys(proxies, CLOSED))
    done = subprocess.run([sys.executable, "-m", "torchsmith", *argv], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    # doctor may find problems (4) and build-env may report blockers; neither is a network failure.
    assert done.returncode in (0, 4), done.stderr
    assert "Traceback" not in done.stderr
    for symptom in ("Connection refused", "URLError", "ProxyError", "Max retries"):
        assert symptom not in done.stdout + done.stderr
