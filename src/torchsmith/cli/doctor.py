"""What is wrong with a Python environment's torch on this machine, and the exact fix.

Inspects the current interpreter (or --python PATH) in child processes with a timeout: first
without importing torch (packages, build, libraries), then importing it and running a matmul and
a convolution on every device (skip that with --quick). Exit code 0 when healthy, 4 when errors
are found (see docs/doctor.md).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.errors import UsageError
from torchsmith.machine import Machine
from torchsmith.output import Caution, ExitCode, Result, use_color

if TYPE_CHECKING:
    from torchsmith.doctor.model import Finding
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


def _machine(ctx: Context, report: Callable[[], Dict[str, Any]]) -> Machine:
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
    if choice.own:  # no environment found: torchsmith's own stands in, and install leaves it alone
        diagnosis.findings = [_into_a_new_venv(f) for f in diagnosis.findings]
    data = {**diagnosis.to_json(), "target": dict(choice.to_json()), "recovered": recovered}
    healthy = diagnosis.healthy

    def human(out: IO[str]) -> None:
        verbose = int(getattr(args, "verbose", 0) or 0)
        out.write("\n".join(answer_first(data, use_color(out, ctx.environ), verbose)) + "\n")

    return Result(command="doctor", data=data, human=human, warnings=[Caution(line) for line in recovered],
                  status="ok" if healthy else "problems",
                  exit_code=ExitCode.OK if healthy else ExitCode.PROBLEMS_FOUND)


def _into_a_new_venv(finding: Finding) -> Finding:
    """No torch where torchsmith itself runs: the fix is a venv of its own, as the README says
    (installing into torchsmith's own interpreter is what `install` refuses without --python)."""
    if finding.code != "no-torch":
        return finding
    import dataclasses

    from torchsmith.install.target_choice import DEFAULT_VENV

    return dataclasses.replace(finding, fix=(f"torchsmith install --venv {DEFAULT_VENV}-torch",),
                               note="no environment was found (none is active, and torchsmith's own is "
                                    "not one): torch goes into a new venv")


def answer_first(data: Dict[str, Any], color: bool, verbose: int) -> List[str]:
    """The verdict and the fix to run first, then at most five lines of why (the facts behind
    the worst finding); with ``verbose`` every finding, its facts with their sources, and its fix."""
    from torchsmith.cli.layout import why_lines, wrap_command
    from torchsmith.output import paint, terminal_columns

    width = terminal_columns()
    findings = data["findings"]
    first = findings[0] if findings and findings[0]["severity"] != "info" else None
    lines = [paint(_verdict(data, first), "1;32" if first is None else _MARKS[first["severity"]][1], color)]
    for command in first["fix"] if first else ():
        lines.extend(paint(line, "1", color) for line in wrap_command(command, width))
    if not verbose:  # else the details open with it
        lines.append(f"Environment: {_environment(data)}")
    if first is not None and not verbose:
        facts = [fact["text"] for fact in first["facts"]] + ([first["note"]] if first.get("note") else [])
        lines.append("Why:")
        lines.extend(why_lines(facts, width, verbose, more="every finding"))
    others = [f for f in findings if f is not first]
    if others and not verbose:
        lines.extend(textwrap.wrap("Also: " + ", ".join(f"{f['severity']}[{f['code']}]" for f in others)
                                   + " (`-v` shows each with its facts and fix)", width,
                                   subsequent_indent="  ", break_on_hyphens=False))
    if verbose:
        lines.append("")
        lines.extend(_details(data, color))
    if data["environment"].get("inspected") == "static" and data["environment"].get("torch"):
        lines.append("Quick check: torch was not imported (drop --quick to exercise the devices).")
    return lines


def _verdict(data: Dict[str, Any], first: Optional[Dict[str, Any]]) -> str:
    """``✗ 2 errors, 1 warning (exit code 4); fix the first one first: TITLE:``, shorter for one."""
    if first is None:
        return "✓ Healthy: nothing to fix."
    tally = [(sum(1 for f in data["findings"] if f["severity"] == word), word)
             for word in ("error", "warning")]
    counts = ", ".join(f"{n} {word}{'s' if n != 1 else ''}" for n, word in tally if n)
    code = "" if data["healthy"] else f" (exit code {int(ExitCode.PROBLEMS_FOUND)})"
    which = "" if sum(n for n, _ in tally) == 1 else (
        "; the first" if data["healthy"] else "; fix the first one first")
    end = ":" if first["fix"] else "."
    return f"{_MARKS[first['severity']][0]} {counts}{code}{which}: {first['title']}{end}"


def _environment(data: Dict[str, Any]) -> str:
    env = data["environment"]
    found = f"; {data['target']['source']}" if data.get("target") else ""
    line = f"{env['python']} (Python {env['python_version']}, {env['kind']}{found})"
    torch = env.get("torch")
    return f"{line} · torch {torch['version']} · {_build(torch)}" if torch else f"{line} · no torch"


def _build(torch: Dict[str, Any]) -> str:
    return (f"CUDA {torch['cuda']} build" if torch["accelerator"] == "cuda"
            else f"ROCm {torch['hip']} build" if torch["accelerator"] == "rocm"
            else f"{torch['accelerator'].upper()} build")


def _details(data: Dict[str, Any], color: bool) -> List[str]:
    """The environment in two lines, then every finding with its facts (and where each was read)."""
    env = data["environment"]
    paint = (lambda text, code: f"\033[{code}m{text}\033[0m") if color else (lambda text, code: text)
    found = f"; {data['target']['source']}" if data.get("target") else ""
    lines = [f"torchsmith doctor: {env['python']} (Python {env['python_version']}, {env['kind']}{found})"]
    torch = env.get("torch")
    if torch:
        line = f"  torch {torch['version']} · {_build(torch)} · {torch.get('path')}"
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
    return lines
