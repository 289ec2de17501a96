"""Recent torch releases × variants: which run on this machine, and the one-line reason.

The PyTorch "get started" selector, honest about the hardware: for the newest patch of each
recent series, every published variant (CUDA, ROCm, CPU, XPU) is checked against the GPUs,
driver, Python and platform of this machine (or the one described with host options).
"""

from __future__ import annotations

import argparse
from typing import IO

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.output import Result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--releases", type=int, default=8, metavar="N",
                        help="how many release series to show (default 8)")
    add_json_option(parser)
    add_host_options(parser)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.plan.resolve import matrix

    machine = ctx.machine()
    kb = ctx.kb()
    rows = matrix(machine, kb, releases=max(1, args.releases))
    data = {
        "host": {"platform": machine.platform, "python": machine.python.minor},
        "rows": [{"torch": r.torch, "variant": r.variant, "kind": r.kind, "works": r.works,
                  "code": r.code, "reason": r.reason} for r in rows],
    }

    def human(out: IO[str]) -> None:
        out.write(f"torch builds on {machine.platform}, Python {machine.python.minor}:\n")
        width = max((len(r.torch) for r in rows), default=6)
        for row in rows:
            mark = "yes" if row.works else "no "
            out.write(f"  {row.torch.ljust(width)}  {row.variant.ljust(11)} {mark}  "
                      f"{row.reason if row.works else f'[{row.code}] {row.reason}'}\n")
        if not any(r.works for r in rows):
            out.write("  nothing in these releases runs here; try `torchsmith plan` for older ones\n")

    return Result(command="matrix", data=data, human=human)
