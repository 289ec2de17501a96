"""The best working torch stack for a machine, explained, for every installer.

  torchsmith plan                               torch torchvision torchaudio for this machine
  torchsmith plan "torch<2.2" "torchvision==0.16.*"
  torchsmith plan xformers --python .venv/bin/python   keep the installed torch
  torchsmith plan -r requirements.txt --gpu 6.1 --driver 580.65.06   for another machine
  torchsmith plan --format pyproject            a file for uv (see --format choices)
  torchsmith plan whisperx --confirm            also check the whole plan with uv's resolver
  torchsmith plan --format slurm --out jobs/ --account def-lab --module python/3.11
                                                train.sbatch and train-ddp.sbatch in jobs/

Exit status 3 when nothing works on this host (the reasons and rejections say why).
"""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.errors import RequirementError, TorchsmithError, UsageError
from torchsmith.output import ExitCode, Result
from torchsmith.plan.model import Plan, Request
from torchsmith.records import replace
from torchsmith.render._common import SlurmOptions

if TYPE_CHECKING:
    from torchsmith.install.target_choice import TargetChoice
    from torchsmith.kb import KnowledgeBase

INSTALLERS = ("pip", "uv", "conda", "pixi")
TORCH_INDEX_ENV = "TORCHSMITH_TORCH_INDEX"


def add_request_options(parser: argparse.ArgumentParser,
                        installers: Tuple[str, ...] = INSTALLERS,
                        installer_help: str = "the installer the commands are for (default: pip)",
                        ) -> None:
    """The request flags `plan` shares with `install` (which runs only some installers)."""
    parser.add_argument("requirements", nargs="*", metavar="REQUIREMENT",
                        help="what to install, as pip requirements (default: torch torchvision torchaudio)")
    parser.add_argument("-r", "--requirement", dest="requirement_files", action="append", default=[],
                        metavar="FILE", help="read requirements from a pip requirements file")
    parser.add_argument("--project", metavar="PYPROJECT",
                        help="read [project].dependencies from a pyproject.toml")
    parser.add_argument("--installer", choices=installers, default=None, help=installer_help)
    parser.add_argument("--torch-index", metavar="URL",
                        help=f"a mirror of the PyTorch wheel index (also ${TORCH_INDEX_ENV})")
    parser.add_argument("--pre", action="store_true", help="allow pre-releases")
    parser.add_argument("--variants", action="store_true",
                        help="also say what a wheel-variant installer (uv's preview wheel-variants) "
                             "would take on this machine, where that differs from the plan")
    parser.add_argument("--fresh", action="store_true",
                        help="plan a new environment: ignore what is installed in the target Python")
    parser.add_argument("--only-binary", metavar=":all:", choices=[":all:"],
                        help="as pip and uv: no source builds; a package without a fitting wheel is a "
                        "no-solution naming its nearest release with wheels")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_request_options(parser)
    parser.add_argument("--format", dest="fmt", metavar="FMT",
                        help="print the plan as: pip, requirements, uv, pyproject, conda, pixi, jetson, "
                        "dockerfile, slurm, slurm-ddp, libtorch")
    parser.add_argument("--out", metavar="DIR",
                        help="write the --format files into DIR (one file per artifact) instead of printing")
    slurm = parser.add_argument_group("slurm (--format slurm / slurm-ddp: the site's conventions)")
    slurm.add_argument("--account", metavar="NAME", help="#SBATCH --account")
    slurm.add_argument("--partition", metavar="NAME", help="#SBATCH --partition")
    slurm.add_argument("--module", dest="modules", action="append", default=[], metavar="NAME",
                       help="`module load NAME` first in the job (repeatable: python/3.11, cuda/12.4)")
    slurm.add_argument("--wheelhouse", metavar="DIR",
                       help="build the job's venv with virtualenv --no-download and pip --no-index "
                       "--find-links DIR (no torchsmith or internet on the compute node)")
    slurm.add_argument("--cpus-per-task", type=int, metavar="N",
                       help="CPUs per task (default: the probed node's; an assumption when flags "
                       "describe another machine)")
    slurm.add_argument("--mem", type=int, metavar="GIB",
                       help="memory per node in GiB (default: 1.25x the GPUs' memory; CPU jobs 2 per CPU, "
                       "at least 8)")
    slurm.add_argument("--cpu-job", action="store_true", help="a job without GPUs (small models)")
    slurm.add_argument("--launcher", choices=("torchrun", "srun"),
                       help="slurm-ddp: torchrun per node (the script reads RANK/LOCAL_RANK/WORLD_SIZE; "
                       "default), or srun, one task per GPU (scripts reading SLURM_PROCID work too)")
    slurm.add_argument("--workers-per-node", type=int, metavar="N",
                       help="slurm-ddp: workers per node (default: the node's GPUs, 1 on CPU)")
    from torchsmith.cli.plan_confirm import add_confirm_options

    add_confirm_options(parser)
    add_json_option(parser)
    add_host_options(parser)


def requirements_from_args(args: argparse.Namespace,
                           origins: Optional[Dict[str, str]] = None) -> Tuple[Tuple[str, ...], bool]:
    from torchsmith.plan.api import requested

    return requested(args.requirements or (), args.requirement_files or (), getattr(args, "project", None),
                     origins)


def installed_packages(args: argparse.Namespace, ctx: Context,
                       python: Optional[str] = None) -> Tuple[Tuple[str, str], ...]:
    """What the environment found by the one rule has (``python``: the one an install acts on);
    none when none was found (an install would make a new one), none for a described machine."""
    if getattr(args, "fresh", False) or ctx.described():
        return ()
    python = python or ctx.environment_python()
    if python is None:
        return ()
    from torchsmith.plan.installed import read_installed

    return read_installed(ctx.host(), python, ctx.warnings)


def build_request(args: argparse.Namespace, ctx: Context, python: Optional[str] = None) -> Request:
    origins: Dict[str, str] = {}
    requirements, stated = requirements_from_args(args, origins)
    return Request(
        requirements=requirements,
        explicit=stated,
        origins=tuple(sorted(origins.items())),
        installer=args.installer or "pip",
        installed=installed_packages(args, ctx, python),
        allow_prerelease=bool(getattr(args, "pre", False)),
        torch_index_base=getattr(args, "torch_index", None) or ctx.environ.get(TORCH_INDEX_ENV) or None,
        only_binary=getattr(args, "only_binary", None) == ":all:",
    )


def with_published(request: Request, ctx: Context) -> Request:
    """The request plus the published metadata of the packages no shipped data covers, read
    from the user's configured index (or why it could not be read)."""
    from torchsmith.plan.published import names_to_read

    names = names_to_read(request, ctx.kb())
    if not names:
        return request
    from torchsmith.kb.metaread import read_unknown
    from torchsmith.kb.refresh import configured_indexes

    host = ctx.host()
    indexes = configured_indexes(host.environ(), host.read_text)
    from torchsmith.cli.progress import waiting

    with waiting(ctx.args, f"reading the published metadata of {', '.join(names)}"):
        records, unread = read_unknown(names, (), host.fetch_url, indexes)
        if records:  # what they depend on may pin torch too (whisperx -> pyannote-audio -> torch)
            from torchsmith.kb.metaread import follow_dependencies
            from torchsmith.plan.published import covered_names

            records += follow_dependencies(records, covered_names(ctx.kb()), host.fetch_url, indexes)
    return replace(request, published=records, unread=unread)


def requirement_error(command: str, exc: TorchsmithError) -> Result:
    """Garbage in a requirement is a usage error (exit 2), shown as one line."""
    return Result(command=command, status="error", exit_code=ExitCode.USAGE, errors=[exc.to_json()])


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.plan.api import make_plan

    try:
        request = build_request(args, ctx)
    except RequirementError as exc:
        return requirement_error("plan", exc)
    request = with_published(request, ctx)
    machine = ctx.machine()
    if ctx.overrides().jetson and not ctx.python_version() and not getattr(args, "host", None) \
            and "jetson" in machine.overridden and not ctx.environment_python():
        # A Jetson described from another machine: its Python is the JetPack's, not ours.
        from torchsmith.described_machine import forget_local_python

        machine = forget_local_python(machine)
    plan, request = make_plan(machine, request, ctx.kb(), read=ctx.constraint_reader(),
                              described=ctx.described_by_flags(),
                              profile=bool(getattr(args, "host", None)) and ctx.described())
    if getattr(args, "variants", False):

        from torchsmith.plan.variant_pick import predict_variants

        prediction = predict_variants(plan, machine, ctx.kb())
        if prediction is not None:  # the variant install as another way, and where it goes wrong
            taken = prediction.label or "the CPU (null) variant"
            caveat = (prediction.caveat,) if prediction.caveat else ()
            choice = (f"with a wheel-variant installer: {prediction.command} (it takes {taken} here)"
                      if prediction.command else f"no wheel-variant install: {prediction.reason}")
            plan = replace(plan, warnings=plan.warnings + prediction.advice + caveat,
                                       choices=(*plan.choices, choice))
    if getattr(args, "out", None) and not getattr(args, "fmt", None):
        raise UsageError("--out needs --format", hint="e.g. --format slurm --out jobs/")
    from torchsmith.cli.plan_confirm import confirmed

    plan, confirmation = confirmed(args, ctx, plan, request, machine)
    return plan_result("plan", args, plan, request, kb=ctx.kb(), environment=ctx.environment(),
                       list_dir=ctx.host().list_dir, confirmation=confirmation)


def plan_result(command: str, args: argparse.Namespace, plan: Plan, request: Request, *,
                kb: KnowledgeBase, environment: Optional[TargetChoice] = None,
                list_dir: Optional[Callable[[str], Optional[List[str]]]] = None,
                confirmation: Optional[Dict[str, Any]] = None) -> Result:
    """The plan as one result: described for people, as JSON, or in the asked format;
    ``environment``: the one it is for, named in the header and the JSON."""
    from torchsmith.cli.door_commands import with_machine_flags
    from torchsmith.render.output import PlanSettings, plan_output

    fmt: Optional[str] = getattr(args, "fmt", None)
    settings = PlanSettings(fmt=fmt, out=getattr(args, "out", None),
                            as_json=bool(getattr(args, "json", False)),
                            options=slurm_options(args, list_dir) if fmt in ("slurm", "slurm-ddp") else None)
    output = plan_output(with_machine_flags(plan, args), kb, settings)
    plan = output.plan
    data = output.data
    if environment is not None:
        data = {**data, "environment": dict(environment.to_json())}
    if confirmation is not None:  # what the installer's resolver said of the whole plan
        data = {**data, "confirmation": confirmation}

    def human(out: IO[str]) -> None:
        if output.text is not None:
            out.write(output.text if output.text.endswith("\n") else output.text + "\n")
            return
        from torchsmith.cli.plan_text import describe  # people's form only: not under --json

        describe(plan, output.commands, request.installer, out, verbose=getattr(args, "verbose", 0),
                 environment=environment.label() if environment is not None else "")

    # A warning the printed file already carries is not said again on stderr.
    warnings = [w for w in plan.warnings if output.text is None or f"# warning: {w}" not in output.text]
    return Result(command=command, data=data, status="ok" if plan.ok else "no-solution",
                  exit_code=ExitCode.OK if plan.ok else ExitCode.NO_SOLUTION, warnings=warnings,
                  preformatted=output.text is not None, cautions_shown=output.text is None,
                  kb_version=plan.kb_version or None, human=human)


def slurm_options(args: argparse.Namespace,
                  list_dir: Optional[Callable[[str], Optional[List[str]]]] = None) -> SlurmOptions:
    """The site conventions; a wheelhouse reachable from here is listed, so the job pins what it has."""
    cpus = getattr(args, "cpus_per_task", None)
    mem = getattr(args, "mem", None)
    for flag, value in (("--cpus-per-task", cpus), ("--mem", mem)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be 1 or more, not {value}")
    return SlurmOptions(account=getattr(args, "account", None), partition=getattr(args, "partition", None),
                        modules=tuple(getattr(args, "modules", None) or ()),
                        wheelhouse=getattr(args, "wheelhouse", None), cpus_per_task=cpus, mem_gib=mem,
                        cpu_job=bool(getattr(args, "cpu_job", False)),
                        launcher=getattr(args, "launcher", None) or "torchrun",
                        workers_per_node=_at_least_one("--workers-per-node",
                                                       getattr(args, "workers_per_node", None)),
                        wheelhouse_files=_wheelhouse_files(getattr(args, "wheelhouse", None), list_dir))


def _wheelhouse_files(folder: Optional[str], list_dir: Optional[Callable[[str], Optional[List[str]]]],
                      ) -> Optional[Tuple[str, ...]]:
    if not folder or list_dir is None:
        return None
    names = list_dir(folder)
    return None if names is None else tuple(n for n in names if n.endswith(".whl"))


def _at_least_one(flag: str, value: Optional[int]) -> Optional[int]:
    if value is not None and value < 1:
        raise UsageError(f"{flag} must be 1 or more, not {value}")
    return value
