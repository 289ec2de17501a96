"""What is wrong with a Python environment's torch on this machine, and the exact fix.

Inspects the current interpreter (or --python PATH) in child processes with a timeout: first
without importing torch (packages, build, libraries), then importing it and running a matmul and
a convolution on every device (skip that with --quick). Exit code 0 when healthy, 4 when errors
are found (see docs/doctor.md).
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.errors import UsageError
from torchsmith.machine import Machine
from torchsmith.output import ExitCode, Result, use_color

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

_MARKS = {"error": ("✗", "31"), "warning": ("!", "33"), "info": ("i", "36")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser)
    parser.add_argument("--quick", action="store_true",
                        help="do not import torch: packages, build and libraries only (fast)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="give up on `import torch` after this long (default 90)")
    parser.add_argument("--python", metavar="PATH",
                        help="the interpreter of the environment to examine (default: the active one)")
    add_host_options(parser, python_flag=False)


def _kb(ctx: Context) -> Optional[KnowledgeBase]:
    """The data, when this build has it: fixes then come from the plan, else from generic commands."""
    try:
        return ctx.kb()
    except Exception:  # missing or corrupted data must not stop the diagnosis
        return None


def _machine(ctx: Context, report: Dict[str, Any]) -> Machine:
    """``--host`` or the described machine; else this one, with the inspected interpreter."""
    if getattr(ctx.args, "host", None) or not ctx.environment_python():
        return ctx.machine()
    from torchsmith.doctor import probed_with

    return probed_with(ctx.host(), report, ctx.overrides())


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.doctor import examine
    from torchsmith.doctor.inspect import DYNAMIC_TIMEOUT

    timeout = DYNAMIC_TIMEOUT if args.timeout is None else args.timeout
    if timeout <= 0:
        raise UsageError(f"--timeout must be positive, not {timeout:g}")
    choice = ctx.target(interpreter_for="doctor")
    python = choice.python or sys.executable
    from torchsmith.install.transaction import recover_if_stopped

    recovered = recover_if_stopped(python, "doctor")  # what a kill -9 left half-changed, first
    from torchsmith.cli.progress import waiting

    what = f"reading {python}" if args.quick else f"importing torch in {python} and testing each device"
    with waiting(args, f"doctor: {what}"):
        diagnosis = examine(ctx.host(), python, lambda report: _machine(ctx, report), lambda: _kb(ctx),
                            quick=args.quick, timeout=timeout)
    data = {**diagnosis.to_json(), "target": dict(choice.to_json()), "recovered": recovered}
    healthy = diagnosis.healthy

    def human(out: IO[str]) -> None:
        out.write("\n".join(_human_lines(data, use_color(out, ctx.environ))) + "\n")

    return Result(command="doctor", data=data, human=human, warnings=recovered,
                  status="ok" if healthy else "problems",
                  exit_code=ExitCode.OK if healthy else ExitCode.PROBLEMS_FOUND)


def _human_lines(data: Dict[str, Any], color: bool) -> List[str]:
    env = data["environment"]
    paint = (lambda text, code: f"\033[{code}m{text}\033[0m") if color else (lambda text, code: text)
    found = f"; {data['target']['source']}" if data.get("target") else ""
    lines = [f"torchsmith doctor: {env['python']} (Python {env['python_version']}, {env['kind']}{found})"]
    torch = env.get("torch")
    if torch:
        build = (f"CUDA {torch['cuda']} build" if torch["accelerator"] == "cuda"
                 else f"ROCm {torch['hip']} build" if torch["accelerator"] == "rocm"
                 else f"{torch['accelerator'].upper()} build")
        line = f"  torch {torch['version']} · {build} · {torch.get('path')}"
        imported = env.get("import") or {}
        if imported.get("status") == "ok":
            line += f" · imports in {imported.get('import_seconds')} s"
        lines.append(line)
        for companion in env.get("companions") or ():
            lines.append(f"  {companion['name']} {companion['version']}"
                         + (f" (built for torch {companion['built_for_torch']})"
                            if companion.get("built_for_torch") else ""))
        cuda = env.get("cuda") or {}
        for device in cuda.get("devices") or ():
            lines.append(f"  GPU {device.get('index')} {device.get('name')} sm_"
                         f"{str(device.get('capability', '?')).replace('.', '')}")
    else:
        lines.append("  no torch installed")
    findings = data["findings"]
    fixes_shown: Dict[Tuple[str, ...], str] = {}
    for finding in findings:
        mark, code = _MARKS.get(finding["severity"], ("?", "0"))
        lines.append("")
        lines.append(paint(f"{mark} {finding['severity']}[{finding['code']}] {finding['title']}", code))
        previous = None
        for fact in finding["facts"]:
            # A source is named once for the facts read from it in a row (a traceback's lines).
            source = f"  [{fact['source']}]" if fact["source"] != previous else ""
            lines.append(f"    · {fact['text']}{source}")
            previous = fact["source"]
        if finding.get("note"):
            lines.append(f"    {finding['note']}")
        fix = tuple(finding["fix"])
        if fix in fixes_shown:
            lines.append(f"    fix: the same as for {fixes_shown[fix]} above")
        elif fix:
            fixes_shown[fix] = finding["code"]
            lines.append("    fix:")
            lines.extend(f"      $ {command}" for command in fix)
    errors = sum(1 for f in findings if f["severity"] == "error")
    warnings = sum(1 for f in findings if f["severity"] == "warning")
    lines.append("")
    if data["healthy"]:
        extra = f" ({warnings} warning(s))" if warnings else ""
        lines.append(paint(f"Healthy{extra}.", "32"))
    else:
        lines.append(paint(f"{errors} error(s), {warnings} warning(s): fix the first one first "
                           f"(exit code {int(ExitCode.PROBLEMS_FOUND)}).", "31"))
    if env.get("inspected") == "static":
        lines.append("Quick check: torch was not imported (drop --quick to exercise the devices).")
    return lines
