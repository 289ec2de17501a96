"""Command line: ``torchsmith [COMMAND] ...``.

Each command lives in its own module with ``add_arguments(parser)`` and
``run(args, ctx) -> Result``. Only the module of the command being run is imported, so
``torchsmith --version`` and ``probe`` stay fast.
"""

from __future__ import annotations

import gc
import re
import sys

from torchsmith import TYPE_CHECKING, __version__

if TYPE_CHECKING:
    import argparse
    from typing import List, NoReturn, Optional, Sequence, Tuple, Type

__all__ = ["COMMANDS", "main"]

# name -> (module, one-line help). The order is the order of `torchsmith --help`.
COMMANDS: Tuple[Tuple[str, str, str], ...] = (
    ("summary", "torchsmith.cli.summary", "this machine, this environment, the install to use (default)"),
    ("probe", "torchsmith.cli.probe", "describe this machine's GPUs, driver, OS and Python"),
    ("plan", "torchsmith.cli.plan", "the best working torch stack for a machine, and why"),
    ("matrix", "torchsmith.cli.matrix", "recent torch releases × variants: which run here, and why not"),
    ("install", "torchsmith.cli.install", "install the plan into a venv, verify it, roll back on failure"),
    ("guard", "torchsmith.cli.guard", "keep a working torch from being replaced by later installs"),
    ("export", "torchsmith.cli.export", "the environment as it stands, as files that make it again"),
    ("doctor", "torchsmith.cli.doctor", "what is wrong with this environment, and the fix"),
    ("watch", "torchsmith.cli.watch", "how much of its GPUs your own job uses (NVML), and what to do"),
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
        formatter_class=_formatter_class(),
    )
    parser.add_argument("--version", action="version", version=f"torchsmith {__version__}")
    return parser


class _ArgumentsRejected(Exception):
    """argparse refused the command line; raised instead of its exit so --json can answer."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message


def _formatter_class() -> Type[argparse.RawDescriptionHelpFormatter]:
    import argparse

    class Formatter(argparse.RawDescriptionHelpFormatter):
        """argparse's, given the width shutil.get_terminal_size would give: argparse builds one to
        check each option it is given, and would import shutil (with bz2 and lzma) to ask."""

        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: Optional[int] = None) -> None:
            super().__init__(prog, indent_increment, max_help_position,
                             _help_width() if width is None else width)

    return Formatter


def _help_width() -> int:
    """COLUMNS, else the terminal's columns, else 80; less 2, as argparse takes it."""
    import os

    from torchsmith.host.live import process_environ

    columns = process_environ().get("COLUMNS", "")
    if not (columns.isdigit() and int(columns) > 0):
        try:
            columns = str(os.get_terminal_size(sys.__stdout__.fileno()).columns)  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = "80"
    return (int(columns) or 80) - 2


def _parser_class() -> type:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise _ArgumentsRejected(self, message)

    return Parser


def parse_command_line(parser: argparse.ArgumentParser, words: Sequence[str]) -> argparse.Namespace:
    """Options and arguments in any order, as pip, uv and git take them (``plan torch
    --python 3.12 torchvision``); a parser with sub-commands or a REMAINDER parses as written."""
    import argparse

    positional_kinds = {action.nargs for action in parser._actions if not action.option_strings}
    if positional_kinds & {argparse.PARSER, argparse.REMAINDER}:
        return parser.parse_args(words)
    return parser.parse_intermixed_args(words)


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    """The flags every command takes, anywhere on its command line (read by :func:`take_output_flags`)."""
    group = parser.add_argument_group("output (any command, anywhere on the line)")
    group.add_argument("-q", "--quiet", action="store_true",
                       help="results and errors only: no notes, no progress (a warning that "
                            "decides whether the command is safe still shows)")
    group.add_argument("-v", "--verbose", action="count", default=0,
                       help="also the reasons with their sources, what was turned down, every note "
                            "(warnings that do not change the answer)")
    group.add_argument("--color", choices=COLOR_CHOICES, default="auto",
                       help="colour: auto (a terminal, unless NO_COLOR), always or never")
    group.add_argument("-V", "--version", action="version", version=f"torchsmith {__version__}")


def build_parser(name: str) -> Tuple[argparse.ArgumentParser, object]:
    """The parser of one command, and its module."""
    import importlib

    for command, module_name, text in COMMANDS:
        if command == name:
            module = importlib.import_module(module_name)
            parser = _parser_class()(
                prog=f"torchsmith {name}",
                description=(module.__doc__ or text).strip(),
                formatter_class=_formatter_class(),
            )
            module.add_arguments(parser)
            _add_output_options(parser)
            return parser, module
    raise KeyError(name)


COLOR_CHOICES = ("auto", "always", "never")
_VERBOSE = re.compile(r"^-v+$")


class OutputFlags:
    """``-q``, ``-v``, ``--color`` and ``-V``, taken out of the line wherever they stand (before
    ``--``), so ``torchsmith -v plan`` and ``torchsmith plan torch -v`` mean the same."""

    def __init__(self) -> None:
        self.quiet = False
        self.verbose = 0
        self.color = "auto"
        self.version = False
        self.problem = ""  # a --color value that is none of COLOR_CHOICES


def take_output_flags(words: List[str]) -> Tuple[List[str], OutputFlags]:
    flags = OutputFlags()
    kept: List[str] = []
    rest = iter(words)
    for word in rest:
        if word == "--":
            kept.append(word)
            kept.extend(rest)
            break
        if word in ("-q", "--quiet"):
            flags.quiet = True
        elif word == "--verbose" or _VERBOSE.match(word):
            flags.verbose += 1 if word == "--verbose" else len(word) - 1
        elif word in ("-V", "--version"):
            flags.version = True
        elif word == "--color" or word.startswith("--color="):
            value = word.split("=", 1)[1] if "=" in word else next(rest, "")
            if value not in COLOR_CHOICES:
                flags.problem = f"--color takes one of {', '.join(COLOR_CHOICES)}, not {value!r}"
            flags.color = value
        else:
            kept.append(word)
    return kept, flags


def _wants_json(args_list: Sequence[str]) -> bool:
    words = list(args_list)
    return "--json" in (words[:words.index("--")] if "--" in words else words)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command. Whatever happens, the answer is the command's output, or one line on
    stderr (the JSON envelope under --json) and a documented exit code: never a traceback."""
    args_list: List[str] = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None:  # started with `>&-`: refuse before acting, as ls and cat do
        _write_err("error[output-closed]: standard output is closed: nothing could be printed\n")
        return 1
    program = argv is None  # the process is this command (not a test calling main)
    if program:  # collecting while modules load only walks what stays loaded: see _run_command
        gc.disable()
    try:
        _tolerant_streams()
        return _main(args_list)
    except KeyboardInterrupt:  # Ctrl-C anywhere, start-up included
        _write_err("interrupted\n")
        return 130
    except Exception as exc:  # a bug: say where in one line, the traceback only when asked
        from torchsmith.host.live import process_environ

        if process_environ().get("TORCHSMITH_DEBUG"):
            raise
        return _internal_error(exc, _wants_json(args_list))
    finally:
        if program:  # all that is left is exit: no collecting the whole heap on the way out
            gc.freeze()


def _tolerant_streams() -> None:
    """A string the terminal cannot encode (a lone surrogate from a JSON escape, "×" under an
    ASCII locale) is shown escaped, rather than stopping the command half-way through."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass


def _write_err(text: str) -> None:
    from torchsmith.output import printable

    try:
        sys.stderr.write(printable(text))
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _internal_error(exc: Exception, as_json: bool) -> int:
    """One line naming the exception type and where it was raised; its message is left out, as
    it could quote anything (a secret in a URL, megabytes of input)."""
    import traceback

    from torchsmith.output import ExitCode, Result, emit

    frames = traceback.extract_tb(exc.__traceback__)
    where = next((f"{f.filename.rsplit('torchsmith', 1)[-1].lstrip('/')}:{f.lineno}"
                  for f in reversed(frames) if "torchsmith" in f.filename), "?")
    error = {"code": "internal-error", "context": [],
             "message": f"torchsmith stopped on an unexpected {type(exc).__name__} (at {where})",
             "hint": "this is a torchsmith bug: run again with TORCHSMITH_DEBUG=1 for the "
                     "traceback, and report it"}
    result = Result(command="torchsmith", status="error", exit_code=ExitCode.INTERNAL, errors=[error])
    try:
        emit(result, as_json)
    except (OSError, ValueError):
        pass
    return int(ExitCode.INTERNAL)


def _usage_error(message: str, name: str, as_json: bool, hint: str = "") -> int:
    """One ``error[usage]`` line on stderr (the envelope under --json), never argparse's block."""
    from torchsmith.output import ExitCode, Result, emit

    hint = hint or f"torchsmith {name} --help"
    if not as_json:
        _write_err(f"error[usage]: {message} (see `{hint}`)\n")
        return int(ExitCode.USAGE)
    error = {"code": "usage", "message": message, "context": [], "hint": hint}
    emit(Result(command=name, status="error", exit_code=ExitCode.USAGE, errors=[error]), True)
    return int(ExitCode.USAGE)


def _main(args_list: List[str]) -> int:
    if args_list in (["--version"], ["-V"]):  # answered before anything else is imported
        sys.stdout.write(f"torchsmith {__version__}\n")
        return 0
    args_list, flags = take_output_flags(args_list)
    if flags.version and not any(w in ("-h", "--help") for w in args_list):
        sys.stdout.write(f"torchsmith {__version__}\n")
        return 0
    from torchsmith.output import ExitCode

    names = {name for name, _, _ in COMMANDS}
    if args_list and args_list[0] in ("-h", "--help", "help"):
        if args_list[0] == "help" and len(args_list) > 1 and args_list[1] in names:
            args_list = [args_list[1], "--help"]
        else:
            _top_parser().print_help(sys.stdout)
            return 0
    name = "summary"
    if args_list and not args_list[0].startswith("-"):
        if args_list[0] not in names:
            return _usage_error(f"unknown command {args_list[0]!r}", args_list[0], _wants_json(args_list),
                                hint=f"one of: {', '.join(n for n, _, _ in COMMANDS)}")
        name = args_list.pop(0)
    if flags.problem:
        return _usage_error(flags.problem, name, _wants_json(args_list))
    parser, module = build_parser(name)
    try:
        args = parse_command_line(parser, args_list)
    except _ArgumentsRejected as rejected:
        return _usage_error(rejected.message, name, _wants_json(args_list),
                            hint=f"{rejected.parser.prog} --help")
    except SystemExit as stop:  # --help
        return int(stop.code) if isinstance(stop.code, int) else int(ExitCode.USAGE)
    _merge_output_flags(flags, args)
    return _run_command(name, module, args, flags, _wants_json(args_list))


def _merge_output_flags(flags: OutputFlags, args: argparse.Namespace) -> None:
    """What argparse read itself (``-vq`` combined) adds to what was taken out before it; the
    command sees the result as ``args.quiet``, ``args.verbose``, ``args.color``."""
    flags.quiet = flags.quiet or bool(getattr(args, "quiet", False))
    flags.verbose += int(getattr(args, "verbose", 0) or 0)
    if flags.color == "auto":
        flags.color = getattr(args, "color", "auto") or "auto"
    args.quiet, args.verbose, args.color = flags.quiet, flags.verbose, flags.color


def _run_command(name: str, module: object, args: argparse.Namespace, flags: OutputFlags,
                 json_written: bool) -> int:
    from torchsmith.cli.common import Context
    from torchsmith.errors import TorchsmithError, UsageError
    from torchsmith.output import ExitCode, Presentation, Result, emit

    # --json wherever it was written (even where the command refuses it) gets its answer in JSON.
    as_json = bool(getattr(args, "json", False)) or json_written
    ctx = Context(args)
    if not gc.isenabled():  # the command may run long (watch): collect again, but not the imports
        gc.freeze()
        gc.enable()
    try:
        result = module.run(args, ctx)  # type: ignore[attr-defined]
    except TorchsmithError as exc:
        code = ExitCode.USAGE if isinstance(exc, UsageError) or exc.code == "usage" else ExitCode.FAILURE
        result = Result(command=name, status="error", exit_code=code, errors=[exc.to_json()])
    if result.kb_version is None:
        result.kb_version = ctx.kb_version_if_loaded()
    for warning in ctx.warnings:
        if warning not in result.warnings:
            result.warnings.append(warning)
    presentation = Presentation(quiet=flags.quiet, verbose=flags.verbose, color=flags.color)
    try:
        emit(result, as_json, presentation=presentation)
    except BrokenPipeError:  # `torchsmith plan | head`
        return int(result.exit_code)
    return int(result.exit_code)
