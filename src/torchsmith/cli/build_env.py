"""Preflight for building PyTorch from source, and the environment script for the build.

Checks memory, cores and disk, cmake (the range the checkout accepts) and ninja, the host
compiler against nvcc, nvcc against
the driver, the include/library order of the environment, hipcc, MAGMA and MKL; each problem
comes with its fix. --write FILE saves a script to source before the build.
"""

from __future__ import annotations

import argparse
from typing import IO

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.errors import TorchsmithError
from torchsmith.output import ExitCode, Result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kind = parser.add_mutually_exclusive_group(required=True)
    kind.add_argument("--cuda", action="store_true", help="a CUDA build")
    kind.add_argument("--rocm", action="store_true", help="a ROCm build")
    parser.add_argument("--prefix", metavar="ENV",
                        help="the conda env or venv the build runs in (default: the active one)")
    parser.add_argument("--workdir", metavar="DIR", default=".",
                        help="where the source tree and build live, for the disk check (default .)")
    parser.add_argument("--source", metavar="DIR",
                        help="the PyTorch checkout, read for the cmake range it accepts (default: --workdir)")
    parser.add_argument("--write", metavar="FILE", help="write the environment script to FILE")
    add_json_option(parser)
    add_host_options(parser)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.buildenv import build_script, preflight
    from torchsmith.redact import redact

    kind = "cuda" if args.cuda else "rocm"
    machine = ctx.machine()
    prefix = ctx.target("build-prefix").prefix  # --prefix, else the active conda env or venv
    from torchsmith.cli.progress import waiting

    with waiting(args, "build-env: checking the compilers, the toolkit and the prefix"):
        pre = preflight(ctx.host(), machine, kind, prefix=prefix, workdir=args.workdir,
                        source=args.source, kb=ctx.kb())
    script = build_script(pre)
    if args.write:
        try:
            with open(args.write, "w", encoding="utf-8") as handle:
                handle.write(redact(script))
        except OSError as exc:
            raise TorchsmithError(f"cannot write {args.write}: {exc.strerror}", code="write-failed") from exc
    errors = [f for f in pre.findings if f.severity == "error"]
    data = {
        "kind": kind,
        "prefix": pre.prefix,
        "facts": pre.facts,
        "findings": [f.to_json() for f in pre.findings],
        "exports": dict(pre.exports),
        "script": script,
        "written_to": args.write,
    }

    def human(out: IO[str]) -> None:
        from torchsmith.output import strip_sources, terminal_columns
        from torchsmith.textwidth import fit

        marks = {"ok": "ok  ", "warning": "warn", "error": "FAIL"}
        lines = [f"PyTorch source build preflight ({kind.upper()})"
                 + (f", environment {pre.prefix}" if pre.prefix else ", no environment given")]
        for f in pre.findings:
            lines.append(f"  {marks[f.severity]}  {f.message}")
            if f.fix:
                lines.append(f"        fix: {f.fix}")
        shown = "\n".join(lines) if getattr(args, "verbose", 0) else strip_sources("\n".join(lines))
        out.write(fit(shown, terminal_columns()) + "\n")  # the findings fit the terminal; the script
        if args.write:                                    # is printed as it is (it is sourced)
            out.write(f"\nEnvironment script written to {args.write}: source it, then build.\n")
        else:
            out.write("\n" + script)

    code = ExitCode.PROBLEMS_FOUND if errors else ExitCode.OK
    return Result(command="build-env", data=data, exit_code=code,
                  status="problems" if errors else "ok", human=human, preformatted=True)
