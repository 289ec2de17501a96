"""Readers of the facts that decide a cause, read in each tool's own wording (its source cited),
with the texts where the fact is absent or points elsewhere."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract


def _nccl_error(last: str) -> str:
    # torch's getNcclErrorDetailStr (torch/csrc/distributed/c10d/NCCLUtils.cpp): NCCL's interpretation,
    # then "\nLast error:\n" and ncclGetLastError(), NCCL's last WARN (src/misc/socket.cc's connect)
    return ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system "
            "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
            "error. \nLast error:\n" + last + "\n")


def test_nccls_last_error_line_is_its_own_warning_and_names_the_unreachable_peer() -> None:
    for errno in ("No route to host", "Network is unreachable", "Connection timed out"):
        text = _nccl_error(f"socketStartConnect: Connect to 10.1.2.3<40123> failed : {errno}")
        assert "nccl-network-interface" in stated(text), errno
        assert any(errno in w for w in extract(text, KB).nccl["warnings"])
    # Counter-cases: the last error is another call's (shared memory, a CUDA call): the family stays
    for other in ("Error while creating shared memory segment /dev/shm/nccl-4cX2mn (size 9637888)",
                  "Cuda failure 'out of memory'"):
        assert "nccl-network-interface" not in stated(_nccl_error(other)), other
    # a connect failure that is no NCCL error's last line (a download that failed) proves nothing of NCCL
    assert "nccl-network-interface" not in stated(
        "Last error:\nConnect to 10.1.2.3 failed : No route to host\n")
