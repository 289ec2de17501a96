"""A container without the host's NVIDIA files, and NCCL without the InfiniBand device it was asked to
use, each read in the tool's own wording (the runtime's exec error, NCCL's INFO lines); each family
speaks only where the text shows the situation, never on the same words elsewhere."""

from __future__ import annotations

from tests.explain.test_signatures import KB
from tests.explain.test_signatures import stated as causes

from torchsmith.explain.extract import extract
from torchsmith.explain.readout import read_lines

CONTAINER = "container-started-without-gpu-access"
IB = "ib-devices-not-in-container"


def test_a_runtime_that_finds_no_nvidia_smi_in_the_container() -> None:
    # runc through Docker: Go's exec.Error ("exec: %q: " + ErrNotFound)
    runc = ('OCI runtime exec failed: exec failed: unable to start container process: exec: "nvidia-smi": '
            "executable file not found in $PATH: unknown\n")
    assert causes(runc) == [CONTAINER]
    # crun (podman): its own wording with backquotes
    crun = "Error: crun: executable file `nvidia-smi` not found in $PATH: No such file or directory\n"
    assert causes(crun) == [CONTAINER]


def test_no_container_no_family() -> None:
    # a Go program on the host that runs nvidia-smi, and a shell without it: no container shown
    host = 'level=warning msg="gpu probe" error=exec: "nvidia-smi": executable file not found in $PATH\n'
    assert CONTAINER not in causes(host)
    assert CONTAINER not in causes("bash: nvidia-smi: command not found\n")
    # another program missing in a container is not about the NVIDIA files
    other = ('docker: Error response from daemon: exec: "python": executable file not found in $PATH:'
             ' unknown\n')
    assert CONTAINER not in causes(other)


_NO_IB = "node1:100:200 [0] NCCL INFO NET/IB : No device found.\n"


def test_nccl_finds_no_ib_device_where_the_run_asks_for_ib() -> None:
    # NCCL's own line for a setting read from the environment
    env = _NO_IB + "node1:100:200 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n"
    assert causes(env) == [IB]
    read = extract(env, KB)
    assert read.nccl["settings"] == {"NCCL_IB_DISABLE": "0"}
    assert "NCCL found no InfiniBand device it can use (NET/IB : No device found)" in read_lines(read)
    # a list of HCAs, or the transport by name, asks for IB too
    assert causes("export NCCL_IB_HCA=mlx5_0,mlx5_1\n" + _NO_IB) == [IB]
    assert causes(_NO_IB + "NCCL INFO NCCL_NET set by environment to IB\n") == [IB]


def test_no_ib_device_without_asking_for_ib_is_nccls_note() -> None:
    # on a machine without IB NCCL always says so and uses sockets: not a failure
    assert IB not in causes(_NO_IB + "NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n")
    # IB switched off on purpose
    assert IB not in causes(_NO_IB + "NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n")
    # IB asked for, and found
    found = "NCCL_IB_DISABLE=0\nNCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n"
    assert IB not in causes(found)


# torch's ProcessGroupNCCL error: getNcclErrorDetailStr appends "\nLast error:\n" + ncclGetLastError(),
# NCCL's last WARN message (torch/csrc/distributed/c10d/NCCLUtils.cpp)
_NCCL_SYSTEM = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                "ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), "
                "NCCL version 2.19.3\nncclSystemError: System call (e.g. socket, malloc) or external library "
                "call failed or device error. \nLast error:\n")


def test_nccls_last_error_that_torch_appends_is_read_as_its_warning() -> None:
    # NCCL's socketStartConnect WARN (src/misc/socket.cc), shown only through torch's "Last error"
    route = _NCCL_SYSTEM + "socketStartConnect: Connect to 10.1.2.3<41235> failed : No route to host\n"
    # (nccl-system-error, the generic family of the status, stays beside it)
    assert set(causes(route)) - {"nccl-system-error"} == {"nccl-network-interface"}
    assert extract(route, KB).nccl["warnings"] == ["socketStartConnect: Connect to 10.1.2.3<41235> failed : "
                                                  "No route to host"]
    shm = _NCCL_SYSTEM + "Call to posix_fallocate failed : No space left on device\n"
    assert set(causes(shm)) - {"nccl-system-error"} == {"nccl-shared-memory"}


def test_another_last_error_leaves_nccls_system_error_a_family() -> None:
    # a CUDA failure as NCCL's last error is neither the network nor /dev/shm
    cuda = _NCCL_SYSTEM + "Cuda failure 'out of memory'\n"
    assert "nccl-network-interface" not in causes(cuda) and "nccl-shared-memory" not in causes(cuda)
    # another program's "Last error" about a connection is no NCCL socket warning
    other = "sync failed.\nLast error:\nConnect to backup.example.org failed : No route to host\n"
    assert "nccl-network-interface" not in causes(other)
    # refused by a peer on this very node (torchrun --standalone): the peer died, not the network
    refused = ("torchrun --standalone --nproc_per_node=2 train.py\n" + _NCCL_SYSTEM
               + "socketStartConnect: Connect to 127.0.0.1<40191> failed : Connection refused\n")
    assert "nccl-network-interface" not in causes(refused)
