"""Slurm job scripts for a plan: ``slurm`` (one node) and ``slurm-ddp`` (multi-node torchrun).

Each job builds its environment inside the job, non-interactively, from the lock that
``torchsmith install`` wrote, or from a site wheelhouse with ``pip --no-index`` (compute nodes
often have no internet). :func:`slurm_scripts` returns both files for ``plan --out DIR``.
"""

from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Tuple

from torchsmith.plan.model import HostSummary, Plan
from torchsmith.records import dataclass
from torchsmith.render._common import RenderInputs, SlurmOptions, header_lines, host_of, quote, require_ok
from torchsmith.render.wheelhouse import wheelhouse_pins
from torchsmith.versions import version_tuple

__all__ = ["RENDERERS", "SlurmOptions", "render_slurm", "render_slurm_ddp", "slurm_scripts"]

LOCK_NAME = "torchsmith.lock.json"  # what `torchsmith install` writes next to the environment
SINGLE_NAME = "train.sbatch"
DDP_NAME = "train-ddp.sbatch"
DEFAULT_CPUS_PER_GPU = 8
DEFAULT_CPUS_CPU_JOB = 4


@dataclass(frozen=True)
class _Shape:
    gpus: int  # per node; 0 for a CPU job
    cpus: int  # per task (one task per node)
    mem_gib: int  # per node
    notes: Tuple[str, ...]


def _gpus_per_node(host: HostSummary) -> int:
    return len(host.nvidia_gpus) or 1


def _mem_per_gpu_gib(host: HostSummary) -> int:
    sizes = [g.memory_mib for g in host.nvidia_gpus if g.memory_mib]
    if not sizes:
        return 32
    # Host memory at least the GPU's, so a full checkpoint can be staged in RAM.
    return max(16, math.ceil(max(sizes) / 1024 * 1.25))


def _shape(plan: Plan, options: SlurmOptions, one_gpu: bool) -> _Shape:
    host = host_of(plan)
    uses_gpu = plan.accelerator in ("cuda", "rocm", "jetson") and not options.cpu_job
    gpus = (1 if one_gpu else _gpus_per_node(host)) if uses_gpu else 0
    notes: List[str] = []
    cores = host.cpu_count
    if options.cpus_per_task:
        cpus = options.cpus_per_task
    elif cores > 0:
        # The probed node's cores per GPU: data-loader workers need them; >16 per GPU rarely helps.
        per_gpu = cores // max(1, _gpus_per_node(host))
        cpus = max(2, min(16, per_gpu)) * gpus if gpus else cores
    else:
        per = DEFAULT_CPUS_PER_GPU if gpus else DEFAULT_CPUS_CPU_JOB
        cpus = per * max(1, gpus)
        notes.append(f"Assumed {cpus} CPUs per task ({per} per GPU)" if gpus else
                     f"Assumed {cpus} CPUs per task")
        notes.append("  (the compute node's cores are unknown here: pass --cpus-per-task N).")
    mem = options.mem_gib or (_mem_per_gpu_gib(host) * gpus if gpus else max(8, 2 * cpus))
    if options.cpu_job and plan.accelerator != "cpu":
        notes.append(f"CPU job: the {plan.variant} wheels run on CPU too, but `plan --no-gpu` "
                     "gives smaller CPU-only wheels.")
    return _Shape(gpus, cpus, mem, tuple(notes))


def _sbatch_lines(name: str, nodes: int, shape: _Shape, options: SlurmOptions, *, hours: int,
                  tasks: int = 1) -> List[str]:
    # srun's tasks share the node's CPUs; --cpus-per-task given by the user is per task already.
    cpus = options.cpus_per_task or max(1, shape.cpus // tasks)
    lines = ["#!/bin/bash", f"#SBATCH --job-name={name}", f"#SBATCH --nodes={nodes}",
             f"#SBATCH --ntasks-per-node={tasks}", f"#SBATCH --cpus-per-task={cpus}"]
    if shape.gpus:
        lines.append(f"#SBATCH --gpus-per-node={shape.gpus}")
    lines.append(f"#SBATCH --mem={shape.mem_gib}G")
    lines.append(f"#SBATCH --time={hours:02d}:00:00")
    if options.account:
        lines.append(f"#SBATCH --account={options.account}")
    else:
        lines.append("##SBATCH --account=YOUR-ACCOUNT   (clusters that bill by account need it)")
    if options.partition:
        lines.append(f"#SBATCH --partition={options.partition}")
    lines.append("#SBATCH --output=%x-%j.out")
    return lines


def _example_modules(plan: Plan) -> str:
    """The site modules this plan would want, by its Python and CUDA major.minor: an example."""
    from torchsmith.compat import variant_cuda

    python = plan.python.rstrip("t")
    cuda = variant_cuda(plan.variant) if plan.accelerator == "cuda" else None
    return " ".join([f"python/{python}" if python else "python", *([f"cuda/{cuda}"] if cuda else [])])


def _preamble(plan: Plan, options: SlurmOptions, env_default: str) -> List[str]:
    lines = ["set -eo pipefail"]
    if options.modules:
        lines.append("# The site's modules (Lmod scripts read unset variables: before set -u).")
        lines.append("module load " + " ".join(quote(m) for m in options.modules))
    else:
        lines.append(f"# module load {_example_modules(plan)}   # the site's modules, if it has them "
                     "(plan --module NAME)")
    lines.extend(["set -u", ""])
    if not options.wheelhouse:
        lines.append(f"LOCK=${{TORCHSMITH_LOCK:-{LOCK_NAME}}}")
    lines.extend(["TRAIN=${TRAIN:-train.py}", f"ENV_DIR=${{TORCHSMITH_ENV:-{env_default}}}"])
    if options.wheelhouse:
        lines.append(f"WHEELHOUSE=${{WHEELHOUSE:-{quote(options.wheelhouse)}}}")
        lines.append("export TRAIN ENV_DIR WHEELHOUSE")
    else:
        lines.append("export LOCK TRAIN ENV_DIR")
        lines.append('command -v torchsmith >/dev/null || { echo "torchsmith is not on PATH in this job '
                     '(load or activate it before sbatch, or plan --wheelhouse DIR)" >&2; exit 1; }')
        lines.append('[ -f "$LOCK" ] || { echo "no lock $LOCK in $PWD: copy the torchsmith.lock.json '
                     'that torchsmith install wrote" >&2; exit 1; }')
    lines.append("")
    return lines


def _build_command(plan: Plan, options: SlurmOptions) -> str:
    """Shell lines that create ``$ENV_DIR`` with the plan's stack, asking nothing."""
    if not options.wheelhouse:
        return 'torchsmith install --lock "$LOCK" --venv "$ENV_DIR" --yes'
    notes, pinned = wheelhouse_pins(plan, options.wheelhouse_files)
    pins = " ".join([*(quote(p) for p in pinned), *(quote(text) for text in plan.unplanned)])
    make = ('{ virtualenv --no-download "$ENV_DIR" 2>/dev/null || python3 -m venv "$ENV_DIR"; }')
    install = f'{make} && "$ENV_DIR/bin/python" -m pip install --no-index --find-links "$WHEELHOUSE" {pins}'
    return "\n".join([*(f"# {n}" for n in notes), install])


def _single_job(plan: Plan, options: SlurmOptions) -> str:
    shape = _shape(plan, options, one_gpu=True)
    name = "torch-gpu" if shape.gpus else "torch-cpu"
    out = _sbatch_lines(name, 1, shape, options, hours=4)
    out.extend(_head(plan, "Slurm job: one node", shape, options))
    out.extend(_preamble(plan, options, "${SLURM_TMPDIR:-${TMPDIR:-/tmp}}/torchsmith-env-$SLURM_JOB_ID"))
    out.append("# The environment is built here, on the node's local disk, from the "
               + ("wheelhouse." if options.wheelhouse else "lock."))
    out.append(_build_command(plan, options))
    out.append(f"export OMP_NUM_THREADS=${{SLURM_CPUS_PER_TASK:-{shape.cpus}}}")
    if shape.gpus:
        out.append(_TF32)
    out.append('"$ENV_DIR/bin/python" "$TRAIN" "$@"')
    return "\n".join(out) + "\n"


def _head(plan: Plan, title: str, shape: _Shape, options: SlurmOptions) -> List[str]:
    lines = header_lines(plan, title, local_installer=True)  # the job's pip reads the user's config
    lines.append("# Stack: " + " ".join(p.requirement for p in plan.packages))
    if options.wheelhouse:
        lines.append("# Installs from the site wheelhouse only (pip --no-index): no internet needed.")
    else:
        lines.append(f"# Needs torchsmith on PATH and {LOCK_NAME} (from `torchsmith install`) in the "
                     "submit directory.")
    lines.extend(f"# {note}" for note in shape.notes)
    return lines


_TF32 = """\
# TF32: on Ampere and newer GPUs, float32 matmuls and convolutions can use TF32 tensor cores
# (about 10 bits of mantissa). In the training script:
#   torch.backends.cuda.matmul.allow_tf32 = True   # matmuls (off by default since torch 1.12)
#   torch.backends.cudnn.allow_tf32 = True         # convolutions (on by default)
# or torch.set_float32_matmul_precision("high"). Leave them off when you need full fp32.
"""

_CHECKPOINT = """\
# Checkpoints: save from rank 0 only (if int(os.environ["RANK"]) == 0: torch.save(...)), then
# torch.distributed.barrier() so no rank reads a half-written file; write to shared storage.
"""

_DDP_ENV = """\
# Node-local $SLURM_TMPDIR: every node builds its own environment. Otherwise the environment is
# on shared storage: this batch step (on the first node) builds it once, before any task starts.
if [ -n "${SLURM_TMPDIR:-}" ] && [ -z "${TORCHSMITH_ENV:-}" ]; then
  # shellcheck disable=SC2016
  srun --ntasks-per-node=1 --nodes="$SLURM_JOB_NUM_NODES" bash -c 'BUILD'
else
  BUILD
fi
"""


_CONTRACT = """\
# Launch contract: the training script must take its rank from RANK, LOCAL_RANK and WORLD_SIZE
# (torch.distributed's env:// does; torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))).
"""

_TORCHRUN_CONTRACT = """\
# torchrun runs once per node and sets them for each worker it starts. Do not read
# SLURM_PROCID/SLURM_LOCALID here: they belong to the one Slurm task per node, so every worker of
# a node gets the same rank and init_process_group waits forever. For such a script:
# torchsmith plan --format slurm-ddp --launcher srun
"""

_SRUN_CONTRACT = """\
# srun starts one task per worker and each sets RANK/LOCAL_RANK/WORLD_SIZE from its
# SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS, so a script that reads either set works.
"""


def _ddp_job(plan: Plan, options: SlurmOptions) -> str:
    shape = _shape(plan, options, one_gpu=False)
    workers = options.workers_per_node or shape.gpus or 1
    srun = options.launcher == "srun"
    out = _sbatch_lines("torch-ddp", options.nodes, shape, options, hours=12, tasks=workers if srun else 1)
    out.extend(_head(plan, "Slurm job: multi-node DDP", shape, options))
    if srun:
        out.append(f"# One Slurm task per worker: {workers} per node"
                   + (", one per GPU." if shape.gpus else " (CPU: the gloo backend)."))
    else:
        out.append(f"# One torchrun per node; each starts {workers} worker(s)"
                   + (", one per GPU." if shape.gpus else " (CPU: the gloo backend)."))
    out.extend(_preamble(plan, options, "${SLURM_TMPDIR:-${SLURM_SUBMIT_DIR:-$PWD}}"
                                  "/torchsmith-env-$SLURM_JOB_ID"))
    out.append(_DDP_ENV.replace("BUILD", _build_command(plan, options)))
    out.extend([
        "# The first node hosts the rendezvous (set MASTER_ADDR where node names do not resolve).",
        'MASTER_ADDR=${MASTER_ADDR:-$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)}',
        "MASTER_PORT=${MASTER_PORT:-29500}",
        "export MASTER_ADDR MASTER_PORT",
        f"export OMP_NUM_THREADS={max(1, shape.cpus // workers)}",
        "",
        (_TF32 if shape.gpus else "") + _CHECKPOINT + _CONTRACT
        + (_SRUN_CONTRACT if srun else _TORCHRUN_CONTRACT),
        *(_srun_launch(workers) if srun else _torchrun_launch(plan, workers)),
    ])
    return "\n".join(out) + "\n"


def _torchrun_launch(plan: Plan, workers: int) -> List[str]:
    torch = plan.package("torch")
    modern = torch is None or version_tuple(torch.version) >= (2, 0)
    nproc = "--nproc-per-node" if modern else "--nproc_per_node"
    return [
        'srun --ntasks-per-node=1 --nodes="$SLURM_JOB_NUM_NODES" \\',
        '  "$ENV_DIR/bin/torchrun" \\',
        '  --nnodes "$SLURM_JOB_NUM_NODES" \\',
        f"  {nproc} {workers} \\",
        '  --rdzv-id "$SLURM_JOB_ID" --rdzv-backend c10d \\',
        '  --rdzv-endpoint "$MASTER_ADDR:$MASTER_PORT" \\',
        '  "$TRAIN" "$@"',
    ]


def _srun_launch(workers: int) -> List[str]:
    return [
        "# shellcheck disable=SC2016  # expanded by each task's bash, with its own SLURM_PROCID",
        f'srun --ntasks-per-node={workers} --nodes="$SLURM_JOB_NUM_NODES" \\',
        "  bash -c 'export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID WORLD_SIZE=$SLURM_NTASKS "
        f'LOCAL_WORLD_SIZE={workers}; exec "$ENV_DIR/bin/python" "$TRAIN" "$@"\' bash "$@"',
    ]


def slurm_scripts(plan: Plan, inputs: Optional[RenderInputs] = None) -> Dict[str, str]:
    """``{file name: script}``: the one-node job and the multi-node DDP job."""
    require_ok(plan, "slurm")
    opts = (inputs.options if inputs is not None else None) or SlurmOptions()
    return {SINGLE_NAME: _single_job(plan, opts), DDP_NAME: _ddp_job(plan, opts)}


def render_slurm(plan: Plan, inputs: Optional[RenderInputs] = None) -> str:
    return slurm_scripts(plan, inputs)[SINGLE_NAME]


def render_slurm_ddp(plan: Plan, inputs: Optional[RenderInputs] = None) -> str:
    return slurm_scripts(plan, inputs)[DDP_NAME]


RENDERERS: Dict[str, Callable[[Plan, RenderInputs], str]] = {
    "slurm": render_slurm,
    "slurm-ddp": render_slurm_ddp,
}
FILES: Dict[str, Callable[[Plan, RenderInputs], Dict[str, str]]] = {
    "slurm": slurm_scripts,
    "slurm-ddp": slurm_scripts,
}
