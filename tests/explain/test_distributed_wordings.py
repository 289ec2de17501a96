"""Distributed-training failures read in their tools' own wording (NCCL's init checks, FSDP's
flattening, DDP's reducer, the notebook launchers, accelerate's P2P refusal, RCCL's warnings),
each with the neighbouring text that must not be read the same way."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain import find_signatures
from torchsmith.explain.extract.services import services
from torchsmith.explain.matcher import Explanation, explain_report
from torchsmith.explain.messages import unwrap


def _facts(text: str, signature_id: str) -> Dict[str, Any]:
    return next(f.facts for f in find_signatures(text, CATALOG) if f.signature.id == signature_id)


def _explanations(text: str) -> List[Explanation]:
    return explain_report(text, CATALOG, kb=KB).explanations


def test_nccls_duplicate_gpu_check_names_ranks_sharing_one_gpu() -> None:
    # NCCL src/init.cc: WARN("Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx")
    warn = ("node1:176:194 [0] init.cc:573 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on"
            " CUDA device 1cb00000\n")
    assert stated(warn) == ["ranks-share-one-gpu"]
    assert _facts(warn, "ranks-share-one-gpu")["bus_id"] == "1cb00000"
    # torch's DistBackendError carries NCCL's last error on the line after "Last error:"
    chained = ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, invalid usage\n"
               "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
               "Last error:\nDuplicate GPU detected : rank 7 and rank 3 both on CUDA device c7000\n")
    assert "ranks-share-one-gpu" in stated(chained)
    assert "ranks-share-one-gpu" not in stated("Detected 8 GPUs; rank 0 uses CUDA device 0\n")


def test_fsdp_uniform_dtype_refusals_name_mixed_parameter_dtypes() -> None:
    new = "ValueError: Must flatten tensors with uniform dtype but got torch.bfloat16 and torch.float32\n"
    old = "ValueError: `FlatParameter` requires uniform dtype but got torch.float16 and torch.float32\n"
    assert stated(new) == ["fsdp-mixed-param-dtypes"]
    assert stated(old) == ["fsdp-mixed-param-dtypes"]
    assert _facts(new, "fsdp-mixed-param-dtypes")["other_dtype"] == "torch.float32"
    # FSDP2 (fully_shard) checks each parameter group's original dtypes
    mixed = "{torch.float32, torch.bfloat16}\n"
    assert stated("AssertionError: FSDP expects uniform original parameter dtype but got " + mixed) == [
        "fsdp-mixed-param-dtypes"]
    assert stated("AssertionError: FSDP expects uniform reduce dtype but got " + mixed) == []
    # FSDP's other flattening checks are other causes
    for other in ("ValueError: Must flatten tensors with uniform `requires_grad` when"
                  " `use_orig_params=False`\n",
                  "ValueError: Must flatten tensors on the same device but got both cuda:0 and cpu\n"):
        assert "fsdp-mixed-param-dtypes" not in stated(other)


def test_ddps_prior_reduction_error_names_unused_parameters() -> None:
    text = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new"
            " one. This error indicates that your module has parameters that were not used in producing"
            " loss.\n"
            "Parameter indices which did not receive grad for rank 0: 2 217 394\n")
    assert stated(text) == ["ddp-unused-parameters"]
    assert _facts(text, "ddp-unused-parameters")["param_indices"].split() == ["2", "217", "394"]
    # Lightning replaces the reducer's message with its own (lightning/pytorch/strategies/ddp.py)
    lightning = ("RuntimeError: It looks like your LightningModule has parameters that were not used in"
                 " producing the loss returned by training_step. If this is intentional, you must enable the"
                 " detection of unused parameters in DDP\n")
    assert stated(lightning) == ["ddp-unused-parameters"]
    # the reducer's other check (a parameter marked ready twice) is another cause
    assert stated("RuntimeError: Expected to mark a variable ready only once.\n") == []


def test_fork_after_cuda_init_is_read_from_torch_accelerate_and_lightning() -> None:
    texts = [
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing,"
        " you must use the 'spawn' start method\n",
        "ValueError: To launch a multi-GPU training from your notebook, you need to avoid running any"
        " instruction using `torch.cuda` in any cell. Restart your notebook and make sure no cells use any"
        " CUDA function.\n",
        "RuntimeError: CUDA has been initialized before the `notebook_launcher` could create a forked"
        " subprocess. This likely stems from an outside import causing issues once the `notebook_launcher()`"
        " is called.\n",
        "RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually"
        " call `torch.cuda.*` functions, have moved the model to the device, or allocated memory on the GPU"
        " any other way?\n",
    ]
    for text in texts:
        assert stated(text) == ["cuda-initialized-before-fork"], text
    # accelerate's other notebook refusal (an Accelerator made outside the function) is not a fork of CUDA
    accelerator = ("ValueError: To launch a multi-GPU training from your notebook, the `Accelerator` should"
                   " only be initialized inside your training function.\n")
    assert "cuda-initialized-before-fork" not in stated(accelerator)


def test_accelerates_rtx_40xx_refusal_names_p2p_and_rccls_warning_is_a_family() -> None:
    refusal = ("NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via"
               " P2P or IB. Please set `NCCL_P2P_DISABLE=\"1\"` and `NCCL_IB_DISABLE=\"1\" or use `accelerate"
               " launch` which will do this automatically.\n")
    older = ("NotImplementedError: Using RTX 3090 or 4000 series doesn't support faster communication"
             " broadband via P2P or IB.\n")
    assert stated(refusal) == ["gpu-p2p-unsupported-or-broken"]
    assert stated(older) == ["gpu-p2p-unsupported-or-broken"]
    warn = ('node:402:402 [0] /src/rccl/hipify/src/init.cc:179 NCCL WARN Missing "iommu=pt" from kernel'
            " command line which can lead to system instablity or hang!\n")
    report = _explanations(warn)
    assert [e.signature.id for e in report] == ["nccl-p2p-acs"]
    assert report[0].candidates, "the warning alone proves no hang: a family"
    # printed on every RCCL start: beside another failure it yields to that failure
    assert stated(warn + "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB\n") == [
        "cuda-out-of-memory"]


def test_a_message_written_as_adjacent_string_literals_is_read_as_python_joins_it() -> None:
    # a traceback shows the raising source line; Python joins adjacent literals into one message
    one_line = ('  File "train.py", line 88, in main\n'
                '    raise RuntimeError("Distributed package doesn\'t have NCCL " "built in")\n')
    over_lines = ('    raise RuntimeError(\n'
                  '        "Distributed package doesn\'t have NCCL "\n'
                  '        f"built in"\n'
                  '    )\n')
    for text in (one_line, over_lines):
        assert stated(text) == ["nccl-unavailable-on-platform"], text
    found = find_signatures(over_lines, CATALOG)
    assert [(f.signature.id, f.line) for f in found] == [("nccl-unavailable-on-platform", 2)]
    joined = unwrap('print("a", "b"); x = "left" \'right\'\n').text
    assert '"a", "b"' in joined and '"left" \'right\'' in joined  # separate arguments, other quotes


def test_systemctl_status_of_a_fabric_manager_that_is_down_names_it() -> None:
    status = ("● nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
              "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset:"
              " enabled)\n"
              "     Active: {state} since Mon 2024-07-01 14:43:57 UTC; 5s ago\n")
    failed = status.format(state="failed (Result: exit-code)")
    assert services(failed) == {"nvidia-fabricmanager.service": "failed (Result: exit-code)"}
    report = _explanations(failed)
    assert [e.signature.id for e in report] == ["fabric-manager-not-running"]
    assert "failed (Result: exit-code)" in report[0].cause
    assert stated(status.format(state="inactive (dead)")) == ["fabric-manager-not-running"]
    # running, or another unit down: not this cause
    assert stated(status.format(state="active (running)")) == []
    other = failed.replace("nvidia-fabricmanager", "nvidia-persistenced")
    assert "fabric-manager-not-running" not in stated(other)


def test_colabs_own_refusals_name_a_hosted_gpu_it_could_not_assign() -> None:
    for text in ("Failed to assign a backend\nNo backend with GPU available. Would you like to use a runtime"
                 " with no accelerator?\n",
                 "You cannot currently connect to a GPU due to usage limits in Colab.\n"):
        assert stated(text) == ["hosted-gpu-unavailable"], text
    assert _facts("No backend with TPU available.\n", "hosted-gpu-unavailable")["accelerator"] == "TPU"
    # the runtime type left at None is another cause: torch simply sees no CUDA there
    assert "hosted-gpu-unavailable" not in stated("Colab: torch.cuda.is_available() returns False\n")


def test_the_trainers_accelerate_check_is_a_family_of_missing_or_older() -> None:
    text = ("ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`: Please run"
            " `pip install transformers[torch]` or `pip install 'accelerate>=0.26.0'`\n")
    report = _explanations(text)
    assert [e.signature.id for e in report] == ["trainer-needs-accelerate"]
    assert len(report[0].candidates) == 2 and "0.26.0" in report[0].cause
    assert stated("Using the `Trainer` with `PyTorch`\n") == []


def test_lightnings_device_check_is_a_family_of_why_fewer_gpus_are_visible() -> None:
    old = "MisconfigurationException: You requested GPUs: [0, 1]\n But your machine only has: [0]\n"
    quoted = ("MisconfigurationException('You requested gpu: [0, 1, 2, 3]\\n But your machine only has:"
              " [0]')\n")
    for text in (old, quoted):
        report = _explanations(text)
        assert [e.signature.id for e in report] == ["requested-gpus-not-visible"], text
        assert report[0].candidates
    assert _facts(quoted, "requested-gpus-not-visible")["requested"] == "0, 1, 2, 3"
    assert stated("You requested 4 GPUs and got them\n") == []


def test_a_watchdog_timeout_is_a_family_that_yields_to_what_explains_it() -> None:
    timeout = ("[rank3]:[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout:"
               " WorkNCCL(SeqNum=4967570, OpType=ALLREDUCE, NumelIn=73728, NumelOut=73728,"
               " Timeout(ms)=1800000) ran for 1800542 milliseconds before timing out.\n")
    report = _explanations(timeout)
    assert [e.signature.id for e in report] == ["nccl-collective-timeout"]
    assert len(report[0].candidates) == 4 and "ALLREDUCE" in report[0].cause
    older = ("[E ProcessGroupNCCL.cpp:566] [Rank 1] Caught collective operation timeout:"
             " WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1806401 milliseconds before timing"
             " out.\n")
    assert stated(older) == ["nccl-collective-timeout"]
    # another rank ran out of memory: that is the failure, the timeout its consequence
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert stated(oom + timeout) == ["cuda-out-of-memory"]
    assert stated("collective operation finished before its timeout\n") == []


def test_an_unset_rendezvous_variable_names_a_script_started_without_a_launcher() -> None:
    for variable in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        text = ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment"
                f" variable {variable} expected, but not set\n")
        assert stated(text) == ["rendezvous-env-vars-not-set"], variable
        assert _facts(text, "rendezvous-env-vars-not-set")["variable"] == variable
    # torchelastic's own helper says the same of other variables: not the env:// rendezvous
    assert stated("ValueError: Environment variable TORCHELASTIC_RUN_ID expected, but not set\n") == []


def test_deepspeeds_ssh_check_is_a_family_of_why_login_failed() -> None:
    refusal = ("RuntimeError: Using hostfile at /job/hostfile but host=node-1 was not reachable via ssh."
               " If you are running with a single node please remove /job/hostfile or setup passwordless"
               " ssh.\n")
    check = ("subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no -p 2222 10.0.0.2"
             " hostname' returned non-zero exit status 255.\n")
    listed = ("subprocess.CalledProcessError: Command '['ssh', '-o', 'PasswordAuthentication=no', 'node-2',"
              " 'hostname']' returned non-zero exit status 255.\n")
    for text, host in ((refusal, "node-1"), (check, "10.0.0.2"), (listed, "node-2")):
        report = _explanations(text)
        assert [e.signature.id for e in report] == ["passwordless-ssh-not-set-up"], text
        assert report[0].candidates and _facts(text, "passwordless-ssh-not-set-up")["host"] == host
    assert stated("Command 'ssh node-1 hostname' returned non-zero exit status 255.\n") == []


def test_a_distributed_hang_in_words_is_a_family_that_yields_to_any_error() -> None:
    for text in ("[BUG] Deadlock in distribution with multiple 4090\n",
                 "all pytorch lightning code will hang when using more than 1 GPU.\n",
                 "Both ranks report Init COMPLETE, but execution hangs on the first collective operation.\n",
                 "NCCL all_reduce got stuck on rank 3\n"):
        report = _explanations(text)
        assert [e.signature.id for e in report] == ["distributed-hang"], text
        assert len(report[0].candidates) == 4
    # one process's hang is the one-process family's; a figure of speech is neither
    for other in ("my code hangs when loading images\n", "the training hangs at the end of the epoch\n"):
        assert stated(other) == ["process-hangs"], other
    assert stated("The model is stuck in a local minimum\n") == []
    # an error in the same text explains it
    duplicate = ("DDP hangs at start\nNCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA"
                 " device 1000\n")
    assert stated(duplicate) == ["ranks-share-one-gpu"]


@pytest.mark.parametrize("beside", [
    # the GPUs shown are parts no NVSwitch baseboard carries: Fabric Manager fails for want of NVSwitches
    "|   0  NVIDIA A40                     Off | 00000000:17:00.0 Off |                    0 |\n"
    "|   1  NVIDIA A40                     Off | 00000000:65:00.0 Off |                    0 |\n",
    # CUDA said something else (an NVSwitch system with Fabric Manager down says "system not ready")
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n",
    # CUDA ran work: it was not waiting for Fabric Manager
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n",
])
def test_a_fabric_manager_unit_down_is_not_the_cause_where_the_text_shows_otherwise(beside: str) -> None:
    down = ("● nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
            "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset:"
            " enabled)\n"
            "     Active: failed (Result: exit-code) since Mon 2024-07-01 14:43:57 UTC; 5s ago\n")
    assert "fabric-manager-not-running" not in stated(down + beside)
    # CUDA's own "system not yet initialized" beside it: the cause
    assert "fabric-manager-not-running" in stated(down + "Error 802: system not yet initialized\n")
