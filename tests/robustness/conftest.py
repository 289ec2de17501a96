"""Write the battery's counts where tools/battery_report.py asks (TORCHSMITH_BATTERY_REPORT)."""

from __future__ import annotations

import json
import os

import pytest
from tests.robustness.harness import FAILURES, TALLY


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("TORCHSMITH_BATTERY_REPORT")
    if path and TALLY:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"tally": dict(TALLY), "failures": FAILURES}, handle, indent=2)
