"""A short picture of this machine and what to do next (what `torchsmith` alone prints)."""

from __future__ import annotations

import argparse
from typing import IO

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.output import Result
from torchsmith.report import machine_lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser)
    add_host_options(parser)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    machine = ctx.machine()
    data = {"machine": machine.to_json()}

    def human(out: IO[str]) -> None:
        out.write("torchsmith: this machine\n")
        out.write("\n".join("  " + line for line in machine_lines(machine)) + "\n")
        out.write("\nNext: `torchsmith probe --json > host.json` saves this profile; "
                  "`torchsmith --help` lists every command.\n")

    return Result(command="summary", data=data, human=human)
