"""Describe this machine: GPUs, driver, OS, Python, toolkits. Does not import torch.

`--json` prints a host profile that every other command accepts back with `--host FILE`.
`--record DIR` also writes everything it read (files, commands and their output) to
DIR/capture.json, for bug reports and test fixtures.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import IO

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.output import Result
from torchsmith.report import machine_lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser)
    parser.add_argument("--record", metavar="DIR",
                        help="write the raw outputs read (capture.json) and the profile to DIR")
    add_host_options(parser)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    if args.record:
        from torchsmith.host.live import LiveHost
        from torchsmith.host.recorded import RecordingHost
        from torchsmith.overrides import apply_overrides
        from torchsmith.probe import probe
        from torchsmith.redact import redact_data

        recorder = RecordingHost(LiveHost(ctx.environ))
        machine = apply_overrides(probe(recorder, python=ctx.python_path()), ctx.overrides())
        os.makedirs(args.record, exist_ok=True)
        with open(os.path.join(args.record, "capture.json"), "w", encoding="utf-8") as handle:
            json.dump(redact_data(recorder.capture(description="torchsmith probe --record")), handle,
                      indent=2, sort_keys=True)
        with open(os.path.join(args.record, "profile.json"), "w", encoding="utf-8") as handle:
            json.dump(redact_data(machine.to_json()), handle, indent=2, sort_keys=True)
    else:
        machine = ctx.machine()

    def human(out: IO[str]) -> None:
        out.write("\n".join(machine_lines(machine)) + "\n")
        if args.record:
            out.write(f"Recorded to {args.record}/capture.json and {args.record}/profile.json\n")

    return Result(command="probe", data=machine.to_json(), human=human)
