"""plan --format slurm / slurm-ddp: what the job scripts say, and linted.

The scripts submitted with sbatch to a real Slurm cluster (real torch, and the wheelhouse route):
test_slurm_jobs_real.py (slow).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict

import pytest
from tests.cluster.profiles import A100, node
from tests.support.render import render, render_files, slurm_scripts
from tests.support.shell import assert_scripts_pass

from torchsmith.cli import main
from torchsmith.kb import load_kb
from torchsmith.plan.model import PackagePin, Plan, Request
from torchsmith.plan.resolve import DEFAULT_REQUIREMENTS, resolve
from torchsmith.render.slurm import DDP_NAME, SINGLE_NAME, SlurmOptions


@pytest.fixture(scope="module")
def kb() -> Any:
    return load_kb(None)


def _gpu_plan(kb: Any) -> Plan:
    plan = resolve(node(A100, count=4, cpus=64), Request(requirements=DEFAULT_REQUIREMENTS), kb)
    assert plan.ok
    return plan


def _cpu_plan() -> Plan:
    return Plan(status="ok", platform="linux-x86_64", python="3.11", accelerator="cpu", variant="cpu",
                packages=(PackagePin("torch", "2.5.1", "cpu"),))


def _shellcheck(paths: Dict[str, str], tmp_path: Path) -> None:
    for name, text in paths.items():
        (tmp_path / name).write_text(text)
    assert_scripts_pass(*(tmp_path / name for name in paths))


def test_two_files_each_one_script_installing_non_interactively_into_env_dir(kb: Any, tmp_path: Path) -> None:
    machine = node(A100, count=4, cpus=64)
    scripts = slurm_scripts(_gpu_plan(kb), machine)
    assert sorted(scripts) == [DDP_NAME, SINGLE_NAME]
    for text in scripts.values():
        assert text.startswith("#!/bin/bash\n#SBATCH ") and text.count("#!") == 1
        assert 'torchsmith install --lock "$LOCK" --venv "$ENV_DIR" --yes' in text
        assert "LOCK=${TORCHSMITH_LOCK:-torchsmith.lock.json}" in text
        assert "command -v torchsmith >/dev/null ||" in text and '[ -f "$LOCK" ] ||' in text
        assert ".venv" not in text
    single, ddp = scripts[SINGLE_NAME], scripts[DDP_NAME]
    assert '"$ENV_DIR/bin/python" "$TRAIN" "$@"' in single
    assert "#SBATCH --gpus-per-node=1" in single and "#SBATCH --cpus-per-task=16" in single
    assert "#SBATCH --gpus-per-node=4" in ddp and "#SBATCH --cpus-per-task=64" in ddp
    assert "--nproc-per-node 4" in ddp and '"$ENV_DIR/bin/torchrun"' in ddp
    # DDP: node-local $SLURM_TMPDIR -> one build per node; shared storage -> one build, before srun.
    assert 'if [ -n "${SLURM_TMPDIR:-}" ]' in ddp and "srun --ntasks-per-node=1" in ddp
    assert "torch.backends.cuda.matmul.allow_tf32" in ddp and "rank 0" in ddp
    _shellcheck(scripts, tmp_path)


def test_the_example_module_line_names_the_plans_python_and_cuda(kb: Any) -> None:
    """No site modules given: the commented example matches the plan (its Python, its CUDA
    major.minor), never a fixed python/3.11 cuda/12.4."""
    import dataclasses

    gpu = dataclasses.replace(_gpu_plan(kb), python="3.10")
    cuda = gpu.variant[2:-1] + "." + gpu.variant[-1]  # cu126 -> 12.6
    for plan, modules in ((gpu, f"python/3.10 cuda/{cuda}"), (_cpu_plan(), "python/3.11")):
        for text in slurm_scripts(plan, node(A100, count=4, cpus=64)).values():
            assert f"\n# module load {modules}   # the site's modules" in text, text


def test_site_conventions_and_a_cpu_job(kb: Any, tmp_path: Path) -> None:
    options = SlurmOptions(account="def-lab", partition="cpu", modules=("StdEnv/2023", "python/3.11"),
                           wheelhouse="/cvmfs/wheels", cpus_per_task=4, cpu_job=True, mem_gib=6)
    scripts = slurm_scripts(_gpu_plan(kb), node(A100, count=4, cpus=64), options)
    for text in scripts.values():
        assert "#SBATCH --account=def-lab" in text and "#SBATCH --partition=cpu" in text
        assert "module load StdEnv/2023 python/3.11" in text
        assert text.index("module load") < text.index("\nset -u\n")  # Lmod reads unset variables
        assert "--gpus-per-node" not in text and "#SBATCH --cpus-per-task=4" in text
        assert "#SBATCH --mem=6G" in text
        assert 'virtualenv --no-download "$ENV_DIR"' in text
        assert '--no-index --find-links "$WHEELHOUSE"' in text and "torch==" in text
        assert "torchsmith install" not in text  # no torchsmith needed on the compute node
        assert "plan --no-gpu" in text  # the CPU job of a GPU plan says how to get smaller wheels
    _shellcheck(scripts, tmp_path)


def test_cpu_counts_are_never_silently_this_machines_when_flags_describe_another(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--platform", "linux-x86_64", "--python", "3.11", "--gpu", "8.0:A100",
            "--driver", "550.54.14", "--format", "slurm"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "#SBATCH --cpus-per-task=8" in text and "# Assumed 8 CPUs per task (8 per GPU)" in text
    assert "pass --cpus-per-task N" in text
    assert main([*args, "--cpus-per-task", "12"]) == 0
    text = capsys.readouterr().out
    assert "#SBATCH --cpus-per-task=12" in text and "Assumed" not in text
    # A probed (or --host) node's cores are its own.
    probed = slurm_scripts(_cpu_plan(), node(None, cpus=32))[SINGLE_NAME]
    assert "Assumed" not in probed


def test_out_writes_one_file_per_artifact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["plan", "--platform", "linux-x86_64", "--python", "3.11", "--no-gpu", "torch"]
    for fmt, names in (("slurm", ["train-ddp.sbatch", "train.sbatch"]), ("dockerfile", ["Dockerfile"]),
                       ("conda", ["environment.yml"]), ("pip", ["install.sh"])):
        out = tmp_path / fmt
        assert main([*base, "--format", fmt, "--out", str(out), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert sorted(os.listdir(out)) == names
        assert sorted(os.path.basename(p) for p in doc["data"]["files"]) == names
    assert os.access(tmp_path / "slurm" / "train.sbatch", os.X_OK)
    assert main([*base, "--out", str(tmp_path / "x")]) == 2  # --out without --format
    assert "--out needs --format" in capsys.readouterr().err
    assert render_files(_cpu_plan(), "slurm-ddp") == slurm_scripts(_cpu_plan())
    assert render(_cpu_plan(), "slurm-ddp") == slurm_scripts(_cpu_plan())[DDP_NAME]


def test_the_ddp_job_states_its_launch_contract_and_offers_srun(kb: Any, tmp_path: Path) -> None:
    machine = node(A100, count=4, cpus=64)
    torchrun = slurm_scripts(_gpu_plan(kb), machine)[DDP_NAME]
    assert "RANK, LOCAL_RANK and WORLD_SIZE" in torchrun and "SLURM_PROCID" in torchrun
    assert "--launcher srun" in torchrun and "#SBATCH --ntasks-per-node=1" in torchrun
    srun = slurm_scripts(_gpu_plan(kb), machine, SlurmOptions(launcher="srun"))[DDP_NAME]
    assert "#SBATCH --ntasks-per-node=4" in srun and "#SBATCH --cpus-per-task=16" in srun
    assert "torchrun" not in srun.replace("torchrun per node", "")
    assert "export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID WORLD_SIZE=$SLURM_NTASKS" in srun
    _shellcheck({"srun.sbatch": srun}, tmp_path)


def test_the_wheelhouse_job_pins_what_a_listed_wheelhouse_has_or_says_how_to_list_it(kb: Any) -> None:
    plan = _gpu_plan(kb)
    torch = plan.package("torch")
    assert torch is not None
    files = ("torch-2.1.2+computecanada-cp311-cp311-linux_x86_64.whl", "not-a-wheel.txt",
             "torch-2.9.0-cp39-cp39-linux_x86_64.whl")  # another Python's: not counted
    listed = slurm_scripts(plan, node(A100), SlurmOptions(wheelhouse="/w", wheelhouse_files=files))
    text = listed[SINGLE_NAME]
    assert f"torch: the wheelhouse has 2.1.2, not the planned {torch.version}: pinned 2.1.2" in text
    assert "torch==2.1.2" in text
    unread = slurm_scripts(plan, node(A100), SlurmOptions(wheelhouse="/w"))[SINGLE_NAME]
    assert f"torch=={torch.version}" in unread and "ls \"$WHEELHOUSE\" | grep -i -e '^torch-'" in unread


def test_plan_lists_a_reachable_wheelhouse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "torch-2.3.0-cp311-cp311-linux_x86_64.whl").write_bytes(b"")
    assert main(["plan", "torch", "--no-gpu", "--python", "3.11", "--platform", "linux-x86_64",
                 "--format", "slurm", "--wheelhouse", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "the wheelhouse has 2.3.0" in out and "torch==2.3.0" in out
