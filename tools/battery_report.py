"""Run the robustness battery (tests/robustness) and print its counts.

    python tools/battery_report.py            # the fast battery, as every test run has it
    python tools/battery_report.py --slow     # also the heavy cases (every command, 100 MB inputs)

Prints tried / clean / traceback / hang / data lost / unclean, then each case that was not clean.
It runs the battery through pytest (one process, no xdist) so the cases are exactly the tests'.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slow", action="store_true", help="include the tests marked slow")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import pytest

    report = Path(tempfile.mkdtemp()) / "battery.json"
    os.environ["TORCHSMITH_BATTERY_REPORT"] = str(report)
    argv = ["-p", "no:cacheprovider", "-q", "-p", "no:xdist", str(ROOT / "tests" / "robustness")]
    if not args.slow:
        argv += ["-m", "not slow"]
    pytest.main(argv)
    counts = json.loads(report.read_text()) if report.exists() else {"tally": {}, "failures": []}
    tally = counts["tally"]
    if args.json:
        print(json.dumps(counts, indent=2, sort_keys=True))
        return 0
    print("battery:", ", ".join(f"{name} {tally.get(name, 0)}" for name in
                                ("tried", "clean", "traceback", "hang", "data-lost", "unclean")))
    for failure in counts["failures"]:
        print("  " + failure)
    return 0 if tally.get("tried", 0) == tally.get("clean", 0) else 1


if __name__ == "__main__":
    sys.exit(main())
