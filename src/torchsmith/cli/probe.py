"""Describe this machine: GPUs, driver, OS, Python, toolkits. Does not import torch.

`--json` prints a host profile that every other command accepts back with `--host FILE`.
`--record DIR` also writes everything it read (files, commands and their output) to
DIR/capture.json, for bug reports and test fixtures.
"""

from __future__ import annotations

import argparse
import json
import os

from torchsmith import TYPE_CHECKING
from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.errors import TorchsmithError, UsageError
from torchsmith.output import Result

if TYPE_CHECKING:
    from typing import IO


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser)
    parser.add_argument("--record", metavar="DIR",
                        help="write the raw outputs read (capture.json) and the profile to DIR")
    add_host_options(parser)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    if args.record:
        _check_record_dir(args.record)
        from torchsmith.host.recorded import RecordingHost
        from torchsmith.overrides import apply_overrides
        from torchsmith.probe import probe
        from torchsmith.redact import redact_data

        recorder = RecordingHost(ctx.host())
        from torchsmith.cli.common import require_inspected

        probed = probe(recorder, python=ctx.python_path())
        require_inspected(probed, ctx.python_path())
        machine = apply_overrides(probed, ctx.overrides())
        try:
            os.makedirs(args.record, exist_ok=True)
            with open(os.path.join(args.record, "capture.json"), "w", encoding="utf-8") as handle:
                json.dump(redact_data(recorder.capture(description="torchsmith probe --record")),
                          handle, indent=2, sort_keys=True)
            with open(os.path.join(args.record, "profile.json"), "w", encoding="utf-8") as handle:
                json.dump(redact_data(machine.to_json()), handle, indent=2, sort_keys=True)
        except OSError as exc:
            raise TorchsmithError(f"cannot write to {args.record}: {exc.strerror or exc}",
                                  code="output-unwritable") from exc
    else:
        machine = ctx.machine()

    def human(out: IO[str]) -> None:
        from torchsmith.report import machine_lines  # the text form only: --json needs none of it

        out.write("\n".join(machine_lines(machine)) + "\n")
        out.write(f"Env      {ctx.environment().label()}\n")  # which environment, by the one rule
        if args.record:
            out.write(f"Recorded to {args.record}/capture.json and {args.record}/profile.json\n")

    return Result(command="probe", data=machine.to_json(), human=human)


def _check_record_dir(path: str) -> None:
    """Refused before probing, so a wrong --record costs no time."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"--record {path}: a file is there, not a directory",
                         hint="give a directory (it is made if absent)")
