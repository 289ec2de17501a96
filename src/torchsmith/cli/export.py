"""The environment as it stands, as files that make it again.

  torchsmith export                         the active environment (conda env or venv)
  torchsmith export --python .venv/bin/python --out saved/

Every package it holds, read (not planned): conda packages with their builds and channels into
environment.yml, pip's packages pinned exactly into requirements files split per index (the
PyTorch index's pins first), and recreate.sh, which runs them in order into a new environment.
"""

from __future__ import annotations

import argparse
from typing import IO

from torchsmith.cli.common import Context, add_json_option
from torchsmith.output import Result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--python", metavar="PATH",
                        help="the environment's interpreter (default: the active venv or conda env, "
                        "else ./.venv)")
    parser.add_argument("--out", metavar="DIR", help="write the files into DIR instead of printing them")
    parser.add_argument("--name", help="the name of the recreated environment (default: the prefix's)")
    parser.add_argument("--torch-index", metavar="URL",
                        help="a mirror of the PyTorch wheel index, for pins with a local label (+cu126)")
    add_json_option(parser)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.install.env_export import export_files, read_standing
    from torchsmith.install.target import inspect_target
    from torchsmith.install.transaction import recover_if_stopped
    from torchsmith.output import Caution
    from torchsmith.render.output import write_files

    choice = ctx.target("active-or-venv", python=args.python, interpreter_for="export")
    recovered = recover_if_stopped(choice.location or "", "export")  # never export a half-changed env
    target = inspect_target(ctx.host(), choice.location or "")
    standing = read_standing(ctx.host(), target.python)
    files = export_files(standing, ctx.kb(), args.torch_index, args.name or "")
    written = write_files(args.out, files) if args.out else []
    data = {"prefix": standing.prefix, "python": standing.python, "conda": standing.conda,
            "conda_packages": [r.spec for r in standing.conda_packages],
            "pip_packages": [f"{d.name}=={d.version}" for d in standing.distributions
                             if d.installer != "conda"],
            "files": written or sorted(files), "text": None if written else files}

    def human(out: IO[str]) -> None:
        if written:
            out.write("".join(f"wrote {path}\n" for path in written))
            return
        for name, text in files.items():
            out.write(f"# ---- {name} ----\n{text}")

    # The files are printed as they are (a wrapped line would break them), as `plan --format` does.
    return Result(command="export", data=data, human=human, preformatted=not written,
                  warnings=[Caution(line) for line in recovered])
