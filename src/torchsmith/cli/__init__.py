"""Command line: ``torchsmith [COMMAND] ...``.

Each command lives in its own module with ``add_arguments(parser)`` and
``run(args, ctx) -> Result``. Only the module of the command being run is imported, so
``torchsmith --version`` and ``probe`` stay fast.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from torchsmith import __version__

if TYPE_CHECKING:
    import argparse

__all__ = ["COMMANDS", "main"]

# name -> (module, one-line help). The order is the order of `torchsmith --help`.
COMMANDS: Tuple[Tuple[str, str, str], ...] = (
    ("summary", "torchsmith.cli.summary", "this machine, this environment, the install to use (default)"),
    ("probe", "torchsmith.cli.probe", "describe this machine's GPUs, driver, OS and Python"),
    ("plan", "torchsmith.cli.plan", "the best working torch stack for a machine, and why"),
    ("matrix", "torchsmith.cli.matrix", "recent torch releases × variants: which run here, and why not"),
    ("install", "torchsmith.cli.install", "install the plan into a venv, verify it, roll back on failure"),
    ("guard", "torchsmith.cli.guard", "keep a working torch from being replaced by later installs"),
    ("doctor", "torchsmith.cli.doctor", "what is wrong with this environment, and the fix"),
    ("explain", "torchsmith.cli.explain", "the cause and fix of an error message or log"),
    ("kb", "torchsmith.cli.kb", "the compatibility data: info, show, validate, refresh"),
    ("fleet", "torchsmith.cli.fleet", "plan for many nodes of a cluster at once"),
    ("build-env", "torchsmith.cli.build_env", "preflight and environment for building PyTorch from source"),
)


def _command_table() -> str:
    width = max(len(name) for name, _, _ in COMMANDS)
    return "\n".join(f"  {name.ljust(width)}  {text}" for name, _, text in COMMANDS)


def _top_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="torchsmith",
        description="A PyTorch that works on your machine, and exactly why when it doesn't.",
        epilog="commands:\n" + _command_table() + "\n\nRun `torchsmith COMMAND --help` for more.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"torchsmith {__version__}")
    return parser


def build_parser(name: str) -> Tuple[argparse.ArgumentParser, object]:
    """The parser of one command, and its module."""
    import argparse
    import importlib

    for command, module_name, text in COMMANDS:
        if command == name:
            module = importlib.import_module(module_name)
            parser = argparse.ArgumentParser(
                prog=f"torchsmith {name}",
                description=(module.__doc__ or text).strip(),
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
            module.add_arguments(parser)
            return parser, module
    raise KeyError(name)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args_list: List[str] = list(sys.argv[1:] if argv is None else argv)
    if args_list == ["--version"]:  # answered before anything else is imported
        sys.stdout.write(f"torchsmith {__version__}\n")
        return 0
    from torchsmith.errors import TorchsmithError, UsageError
    from torchsmith.output import ExitCode, Result, emit

    names = {name for name, _, _ in COMMANDS}
    if args_list and args_list[0] in ("-h", "--help", "--version", "help"):
        if args_list[0] == "help" and len(args_list) > 1 and args_list[1] in names:
            args_list = [args_list[1], "--help"]
        else:
            top = _top_parser()
            try:
                top.parse_args(["--help"] if args_list[0] == "help" else args_list)
            except SystemExit as stop:
                return int(stop.code or 0)
            return 0
    name = "summary"
    if args_list and not args_list[0].startswith("-"):
        if args_list[0] not in names:
            sys.stderr.write(
                f"error[usage]: unknown command {args_list[0]!r}\n"
                f"  hint: one of: {', '.join(sorted(names))}\n"
            )
            return int(ExitCode.USAGE)
        name = args_list.pop(0)
    parser, module = build_parser(name)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as stop:
        return int(stop.code) if isinstance(stop.code, int) else int(ExitCode.USAGE)
    from torchsmith.cli.common import Context

    as_json = bool(getattr(args, "json", False))
    ctx = Context(args)
    try:
        result = module.run(args, ctx)  # type: ignore[attr-defined]
    except TorchsmithError as exc:
        code = ExitCode.USAGE if isinstance(exc, UsageError) or exc.code == "usage" else ExitCode.FAILURE
        result = Result(command=name, status="error", exit_code=code, errors=[exc.to_json()])
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return int(ExitCode.INTERRUPTED)
    if result.kb_version is None:
        result.kb_version = ctx.kb_version_if_loaded()
    for warning in ctx.warnings:
        if warning not in result.warnings:
            result.warnings.append(warning)
    try:
        emit(result, as_json)
    except BrokenPipeError:  # `torchsmith plan | head`
        return int(result.exit_code)
    return int(result.exit_code)
