"""The rendered Slurm jobs, submitted with sbatch to the real test cluster, train for real.

Once per module: this machine's CPU torch 2.13.0 wheel is served as a local PyTorch index (its
dependencies come from the local PyPI mirror), and a real `torchsmith install` writes the lock a
user would copy next to the jobs. Then `plan --format slurm --out DIR` writes both jobs, and each
job builds its own environment from that lock with this checkout's torchsmith and runs a small
training script: one node, and DDP over gloo on two nodes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest
from tests.cluster.slurm_cluster import SlurmCluster
from tests.support.fixtures import isolated_environ
from tests.support.pkgindex import build_wheel, serve_index
from tests.support.render import slurm_scripts

from torchsmith.plan.model import PackagePin, Plan
from torchsmith.render.slurm import SlurmOptions

pytestmark = pytest.mark.slow

WHEEL = os.environ.get(
    "TORCHSMITH_TEST_TORCH_WHEEL", "/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
DEPS_INDEX = os.environ.get("TORCHSMITH_TEST_DEPS_INDEX", "file:///opt/pypi/simple")
BIN = os.path.dirname(sys.executable)  # this checkout's torchsmith, as the jobs find it on PATH

TRAIN = '''\
import json, os
import torch
import torch.distributed as dist

world = int(os.environ.get("WORLD_SIZE", "1"))
if world > 1:
    dist.init_process_group("gloo")
torch.manual_seed(0)
x = torch.randn(256, 8)
y = x @ torch.randn(8, 1)
rank = dist.get_rank() if world > 1 else 0
x, y = x[rank::world], y[rank::world]  # each rank its own shard
model = torch.nn.Linear(8, 1)
if world > 1:
    model = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(60):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = [round(v, 6) for v in torch.nn.utils.parameters_to_vector(model.parameters()).tolist()]
print("RESULT " + json.dumps({"rank": rank, "world_size": world, "weights": weights,
                              "first": losses[0], "last": losses[-1], "torch": torch.__version__,
                              "node": os.environ.get("SLURMD_NODENAME")}), flush=True)
if world > 1:
    dist.destroy_process_group()
    # Leave without interpreter finalization: there gloo's worker threads can still abort the
    # process ("terminate called without an active exception", pytorch/pytorch#179291), which
    # failed a third of these jobs on torch 2.13 after both ranks had finished.
    os._exit(0)
'''


def _torch_requirements() -> List[str]:
    with zipfile.ZipFile(WHEEL) as wheel:
        name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = wheel.read(name).decode("utf-8")
    return [line.split(":", 1)[1].strip() for line in metadata.splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line]


def _mirror_cpu_index(folder: Path, env: Dict[str, str]) -> None:
    """download.pytorch.org/whl/cpu in small: the torch wheel and its dependencies' wheels."""
    folder.mkdir(parents=True)
    os.symlink(WHEEL, folder / os.path.basename(WHEEL))
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary", ":all:", "--dest",
                    str(folder), "--index-url", DEPS_INDEX, *_torch_requirements()],
                   env=env, check=True, timeout=300)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def job_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[Dict[str, str], Path]]:
    """The submitter's environment (sbatch passes it on) and a lock from a real install."""
    if sys.version_info[:2] != (3, 11) or not os.path.exists(WHEEL):
        pytest.skip(f"needs Python 3.11 and the CPU torch wheel at {WHEEL} (TORCHSMITH_TEST_TORCH_WHEEL)")
    if DEPS_INDEX.startswith("file://") and not os.path.isdir(DEPS_INDEX[len("file://"):]):
        pytest.skip(f"no local index for torch's dependencies at {DEPS_INDEX}")
    root = tmp_path_factory.mktemp("slurm-jobs")
    env = isolated_environ(root / "cache", dict(os.environ))
    cpu_index = root / "index" / "pytorch" / "cpu"
    _mirror_cpu_index(cpu_index, env)
    with serve_index(root / "index") as server:
        env.update({
            "PATH": BIN + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
            "PIP_INDEX_URL": DEPS_INDEX, "UV_INDEX_URL": DEPS_INDEX,  # the user's configured index
            "TORCHSMITH_TORCH_INDEX": server.url + "/pytorch",
            "TMPDIR": str(root),
            # The test nodes share one host whose node names do not resolve: override the
            # scontrol-derived address, and take a free port instead of 29500.
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()), "GLOO_SOCKET_IFNAME": "lo",
        })
        base = root / "base-env"
        done = subprocess.run(
            [os.path.join(BIN, "torchsmith"), "install", "torch==2.13.0", "--no-gpu", "--venv", str(base),
             "--yes"], env=env, capture_output=True, text=True, timeout=900, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        yield env, base / "torchsmith.lock.json"


def _wait(cluster: SlurmCluster, job: str, timeout: float = 900) -> str:
    deadline = time.monotonic() + timeout
    state = ""
    while time.monotonic() < deadline:
        out = cluster.run(["scontrol", "-o", "show", "job", job]).stdout
        fields = dict(f.split("=", 1) for f in out.split() if "=" in f)
        state = fields.get("JobState", "")
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
            return state
        time.sleep(1)
    cluster.run(["scancel", job])
    return f"still {state} after {timeout:.0f}s"


def _results(text: str) -> List[Dict[str, object]]:
    """Every ``RESULT {json}`` in a job's output. Workers of one node share the output file, so two
    results can land on one line: each is read where it starts, not line by line."""
    decoder = json.JSONDecoder()
    found: List[Dict[str, object]] = []
    at = text.find("RESULT ")
    while at >= 0:
        value, end = decoder.raw_decode(text, at + len("RESULT "))
        found.append(value)
        at = text.find("RESULT ", end)
    return found


def test_rendered_jobs_install_with_torchsmith_and_train_on_one_and_two_nodes(
        slurm_cluster: SlurmCluster, job_env: Tuple[Dict[str, str], Path], tmp_path: Path) -> None:
    env, lock = job_env
    jobs = tmp_path / "jobs"
    plan = subprocess.run(
        [os.path.join(BIN, "torchsmith"), "plan", "torch==2.13.0", "--no-gpu", "--python", "3.11",
         "--format", "slurm", "--out", str(jobs), "--cpus-per-task", "1", "--mem", "1"],
        env=env, capture_output=True, text=True, timeout=120, check=False)
    assert plan.returncode == 0, plan.stderr
    assert sorted(os.listdir(jobs)) == ["train-ddp.sbatch", "train.sbatch"]
    shutil.copy(lock, jobs / "torchsmith.lock.json")  # as the user would, from their install
    (jobs / "train.py").write_text(TRAIN)
    submitted = {}
    for name in ("train.sbatch", "train-ddp.sbatch"):
        out = subprocess.run(["sbatch", "--parsable", name], cwd=jobs, env={**env, **slurm_cluster.env,
                             "PATH": env["PATH"]}, capture_output=True, text=True, timeout=30, check=False)
        assert out.returncode == 0, out.stderr
        submitted[name] = out.stdout.strip().split(";")[0]
    states = {name: _wait(slurm_cluster, job) for name, job in submitted.items()}
    logs = {name: (jobs / f"torch-{'ddp' if 'ddp' in name else 'cpu'}-{job}.out").read_text()
            for name, job in submitted.items()}
    assert states == {"train.sbatch": "COMPLETED", "train-ddp.sbatch": "COMPLETED"}, logs

    single = _results(logs["train.sbatch"])
    assert len(single) == 1 and single[0]["world_size"] == 1, logs["train.sbatch"]
    assert str(single[0]["torch"]).startswith("2.13.0")
    assert float(single[0]["last"]) < float(single[0]["first"]) / 10  # type: ignore[arg-type]

    ddp = _results(logs["train-ddp.sbatch"])
    assert sorted(r["rank"] for r in ddp) == [0, 1], logs["train-ddp.sbatch"]  # type: ignore[type-var]
    assert {r["world_size"] for r in ddp} == {2}
    assert len({r["node"] for r in ddp}) == 2  # one rank per Slurm node
    assert all(float(r["last"]) < float(r["first"]) / 10 for r in ddp)  # type: ignore[arg-type]
    # Different shards, same weights at the end: DDP averaged the gradients over gloo.
    assert ddp[0]["weights"] == ddp[1]["weights"]
    assert ddp[0]["first"] != ddp[1]["first"]
    # Each job's environment is its own, where the job put it (not ./.venv of the submit dir).
    assert not (jobs / ".venv").exists()
    assert (jobs / f"torchsmith-env-{submitted['train-ddp.sbatch']}" / "bin" / "torchrun").exists()
    assert (Path(env["TMPDIR"]) / f"torchsmith-env-{submitted['train.sbatch']}" / "bin" / "python").exists()


def test_the_wheelhouse_job_builds_its_env_offline_and_runs(slurm_cluster: SlurmCluster,
                                                            tmp_path: Path) -> None:
    """The site route: virtualenv --no-download (else venv) and pip --no-index from a wheelhouse."""
    wheelhouse = tmp_path / "wheels"
    build_wheel(wheelhouse, "torch", "2.5.1")  # a stand-in torch: this job is about the route
    plan = Plan(status="ok", platform="linux-x86_64", python="3.11", accelerator="cpu", variant="cpu",
                packages=(PackagePin("torch", "2.5.1", "cpu"),))
    options = SlurmOptions(wheelhouse=str(wheelhouse), cpus_per_task=1, mem_gib=1)
    (tmp_path / "job.sbatch").write_text(slurm_scripts(plan, None, options)["train.sbatch"])
    (tmp_path / "train.py").write_text("import sys, torch\nprint('trained with torch', torch.__version__, "
                                       "sys.argv[1:])\n")
    env = {k: v for k, v in slurm_cluster.env.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    env.update({"PIP_CONFIG_FILE": os.devnull, "TMPDIR": str(tmp_path)})  # nothing but the wheelhouse
    out = subprocess.run(["sbatch", "--parsable", "job.sbatch", "--epochs", "1"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 0, out.stderr
    job = out.stdout.strip().split(";")[0]
    state = _wait(slurm_cluster, job, timeout=300)
    log = (tmp_path / f"torch-cpu-{job}.out").read_text()
    assert state == "COMPLETED", log
    assert "trained with torch 2.5.1 ['--epochs', '1']" in log
    assert (tmp_path / f"torchsmith-env-{job}" / "bin" / "python").exists()


# A site-style script, as clusters' own pages write them: its rank from Slurm's variables.
SITE_STYLE = '''\
import json, os
import torch
import torch.distributed as dist

rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
address = "tcp://%s:%s" % (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"])
dist.init_process_group("gloo", init_method=address, rank=rank, world_size=world)
total = torch.tensor([rank])
dist.all_reduce(total)
print("RESULT " + json.dumps({"rank": rank, "world_size": world, "sum": int(total),
                              "local_rank": int(os.environ["LOCAL_RANK"]),
                              "node": os.environ.get("SLURMD_NODENAME")}), flush=True)
dist.destroy_process_group()
'''


def test_ddp_launchers_give_every_worker_its_own_rank_with_two_workers_per_node(
        slurm_cluster: SlurmCluster, job_env: Tuple[Dict[str, str], Path], tmp_path: Path) -> None:
    """2 nodes x 2 workers (standing in for GPUs): torchrun with a RANK-reading script, and the srun
    launcher with a script that reads SLURM_PROCID; both end with ranks 0-3 on two nodes."""
    env, lock = job_env
    cases = {"torchrun": TRAIN, "srun": SITE_STYLE}
    submitted = {}
    for launcher, script in cases.items():
        jobs = tmp_path / launcher
        plan = subprocess.run(
            [os.path.join(BIN, "torchsmith"), "plan", "torch==2.13.0", "--no-gpu", "--python", "3.11",
             "--format", "slurm-ddp", "--out", str(jobs), "--cpus-per-task", "1", "--mem", "1",
             "--launcher", launcher, "--workers-per-node", "2"],
            env=env, capture_output=True, text=True, timeout=120, check=False)
        assert plan.returncode == 0, plan.stderr
        shutil.copy(lock, jobs / "torchsmith.lock.json")
        (jobs / "train.py").write_text(script)
        job_env_vars = {**env, **slurm_cluster.env, "PATH": env["PATH"], "MASTER_PORT": str(_free_port())}
        out = subprocess.run(["sbatch", "--parsable", "train-ddp.sbatch"], cwd=jobs, env=job_env_vars,
                             capture_output=True, text=True, timeout=30, check=False)
        assert out.returncode == 0, out.stderr
        submitted[launcher] = (jobs, out.stdout.strip().split(";")[0])
    for launcher, (jobs, job) in submitted.items():
        state = _wait(slurm_cluster, job)
        log = (jobs / f"torch-ddp-{job}.out").read_text()
        assert state == "COMPLETED", log
        results = _results(log)
        assert sorted(int(str(r["rank"])) for r in results) == [0, 1, 2, 3], log
        assert {r["world_size"] for r in results} == {4}
        assert len({r["node"] for r in results}) == 2
        if launcher == "srun":
            assert {r["sum"] for r in results} == {6}  # all four joined one process group
            assert sorted(int(str(r["local_rank"])) for r in results) == [0, 0, 1, 1]


def test_a_lagging_wheelhouse_gets_what_it_has_pinned_and_the_job_runs(slurm_cluster: SlurmCluster,
                                                                       tmp_path: Path) -> None:
    """The plan wants torch 2.6.0; the site's wheelhouse has only 2.5.1 (a local label, as sites
    build them): listed where the job is written, the job pins 2.5.1 and runs."""
    wheelhouse = tmp_path / "wheels"
    build_wheel(wheelhouse, "torch", "2.5.1+site")
    plan = Plan(status="ok", platform="linux-x86_64", python="3.11", accelerator="cpu", variant="cpu",
                packages=(PackagePin("torch", "2.6.0", "cpu"),))
    listed = tuple(os.listdir(wheelhouse))
    options = SlurmOptions(wheelhouse=str(wheelhouse), cpus_per_task=1, mem_gib=1, wheelhouse_files=listed)
    script = slurm_scripts(plan, None, options)["train.sbatch"]
    assert "the wheelhouse has 2.5.1, not the planned 2.6.0" in script
    (tmp_path / "job.sbatch").write_text(script)
    (tmp_path / "train.py").write_text("import torch\nprint('trained with torch', torch.__version__)\n")
    env = {k: v for k, v in slurm_cluster.env.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    env.update({"PIP_CONFIG_FILE": os.devnull, "TMPDIR": str(tmp_path)})
    out = subprocess.run(["sbatch", "--parsable", "job.sbatch"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 0, out.stderr
    job = out.stdout.strip().split(";")[0]
    state = _wait(slurm_cluster, job, timeout=300)
    log = (tmp_path / f"torch-cpu-{job}.out").read_text()
    assert state == "COMPLETED", log
    assert "trained with torch 2.5.1+site" in log
