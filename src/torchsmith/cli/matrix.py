"""Recent torch releases × variants: which run on this machine, and the one-line reason.

The PyTorch "get started" selector, honest about the hardware: for the newest patch of each
recent series, every published variant (CUDA, ROCm, CPU, XPU) is checked against the GPUs,
driver, Python and platform of this machine (or the one described with host options).
"""

from __future__ import annotations

import argparse
import re
import textwrap
from typing import IO, TYPE_CHECKING, Any, Dict, List, Tuple

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.output import Result, paint, strip_sources, terminal_columns, use_color
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.plan.matrix import MatrixRow


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--releases", type=int, default=8, metavar="N",
                        help="how many release series to show (default 8)")
    parser.add_argument("--all", action="store_true",
                        help="also the builds that do not run here, each with the reason")
    add_json_option(parser)
    add_host_options(parser)


_KIND_ORDER = {"cuda": 0, "rocm": 1, "xpu": 2, "cpu": 3}


def _order(row: MatrixRow) -> Tuple[bool, Tuple[int, ...], int, Tuple[int, ...]]:
    """Runnable rows first; then newest torch first; within a release GPU builds before the CPU
    one, newest toolkit first (cu132 before cu126)."""
    toolkit = tuple(-int(n) for n in re.findall(r"\d+", row.variant))
    return (not row.works, tuple(-n for n in version_tuple(row.torch)), _KIND_ORDER.get(row.kind, 4),
            toolkit)


def _user_caps(ctx: Context) -> List[Tuple[str, str]]:
    """(specifier, "torch<=2.14.1 (where it is written)") for each torch constraint of this
    machine's pip/uv configuration; none for a described machine (it takes no local ones)."""
    read = ctx.constraint_reader()
    if read is None:
        return []
    from torchsmith.plan.user_constraints import read_user_constraints

    return [(c.specifier, f"{c.name}{c.specifier} ({c.where})")
            for c in read_user_constraints(ctx.machine(), read) if c.name == "torch" and not c.guard]


def _forbidden_by(caps: List[Tuple[str, str]], torch: str) -> str:
    """The first of ``caps`` that excludes this torch release, or ""."""
    if not caps:
        return ""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    for specifier, said in caps:
        try:
            if not SpecifierSet(specifier).contains(Version(torch), prereleases=True):
                return said
        except InvalidVersion:
            continue
    return ""


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.plan.resolve import matrix

    machine = ctx.machine()
    kb = ctx.kb()
    rows = sorted(matrix(machine, kb, releases=max(1, args.releases)), key=_order)
    data: Dict[str, Any] = {
        "host": {"platform": machine.platform, "python": machine.python.minor},
        "rows": [{"torch": r.torch, "variant": r.variant, "kind": r.kind, "works": r.works,
                  "code": r.code, "reason": r.reason} for r in rows],
    }
    forbids = _user_caps(ctx)
    for entry, row in zip(data["rows"], rows):
        entry["forbidden_by"] = _forbidden_by(forbids, row.torch)
    shown = rows if args.all else [r for r in rows if r.works]

    def human(out: IO[str]) -> None:
        color = use_color(out)
        out.write(paint(f"torch builds on {machine.platform}, Python {machine.python.minor}:", "1", color)
                  + "\n")
        width = max((len(r.torch) for r in shown), default=6)
        columns = terminal_columns()
        for row in shown:
            flag = "*" if _forbidden_by(forbids, row.torch) else " "
            mark = paint("yes", "32", color) + flag if row.works else paint("no", "31", color) + flag + " "
            reason = row.reason if row.works else f"[{row.code}] {row.reason}"
            if not args.verbose:
                reason = strip_sources(reason)
            head = f"  {row.torch.ljust(width)}  {row.variant.ljust(9)} {mark} "
            indent = " " * (len(row.torch.ljust(width)) + 18)
            lines = textwrap.wrap(reason, max(20, columns - len(indent)), break_on_hyphens=False,
                                  break_long_words=False) or [""]
            out.write(head + lines[0] + "".join(f"\n{indent}{line}" for line in lines[1:]) + "\n")
        caps = sorted({_forbidden_by(forbids, r.torch) for r in shown} - {""})
        if caps:  # the legend of the marker
            out.write(f"  * pip/uv would refuse it here: your constraint {'; '.join(caps)} forbids it\n")
        hidden = len(rows) - len(shown)
        if not any(r.works for r in rows):
            out.write("  nothing in these releases runs here; try `torchsmith plan` for older ones\n")
        if hidden:
            out.write(f"  ({hidden} builds that do not run here: `--all` lists them with the reason)\n")

    return Result(command="matrix", data=data, human=human)
