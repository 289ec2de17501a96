"""Not NVML: the recorded H100 host's NVML answers (tests/hosts/real-h100/nvml-job-samples.json),
one recorded sample per call of nvmlDeviceGetUtilizationRates, the last repeated.

The recorded job's PID (480) is given to the process whose command line holds the text in
$FAKE_NVML_JOB_MARKER (and not "torchsmith"), so that a job the tests start is the one NVML "sees"."""
from __future__ import annotations

import json
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_DATA = os.path.join(_HERE, "..", "..", "hosts", "real-h100", "nvml-job-samples.json")
with open(_DATA) as _f:
    _RECORDED = json.load(_f)
_state = {"index": -1}


class NVMLError(Exception):
    def __init__(self, text):
        Exception.__init__(self, text)
        self.text = text

    def __str__(self):
        return self.text


class _Row:
    def __init__(self, **fields):
        self.__dict__.update(fields)


def _job_pid():
    marker = os.environ.get("FAKE_NVML_JOB_MARKER")
    if not marker:
        return _RECORDED["job_pid"]
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    line = f.read()
                if marker.encode() in line and b"torchsmith" not in line:  # the job, not watch
                    return int(name)
            except OSError:
                pass
    return -1


def _sample():
    return _RECORDED["samples"][max(0, min(_state["index"], len(_RECORDED["samples"]) - 1))]


def _pid(recorded):
    return _job_pid() if recorded == _RECORDED["job_pid"] else recorded


def nvmlInit():
    if os.environ.get("FAKE_NVML_FAIL"):
        raise NVMLError("Driver Not Loaded")


def nvmlShutdown():
    pass


def nvmlSystemGetDriverVersion():
    return _RECORDED["driver"]


def nvmlDeviceGetCount():
    return 1


def nvmlDeviceGetHandleByIndex(index):
    return f"gpu{index}"


def nvmlDeviceGetName(handle):
    return "NVIDIA H100 80GB HBM3"


def nvmlDeviceGetUUID(handle):
    return "GPU-00000000-0000-0000-0000-000000000000"


def nvmlDeviceGetMigMode(handle):
    return list(_sample()["mig_mode"])


def nvmlDeviceGetUtilizationRates(handle):
    _state["index"] += 1
    util = _sample()["device_util"]
    return _Row(gpu=util["gpu"], memory=util["memory"])


def nvmlDeviceGetMemoryInfo(handle):
    memory = _sample()["memory_mib"]
    mib = 1024 * 1024
    return _Row(used=memory["used"] * mib, total=memory["total"] * mib,
                free=(memory["total"] - memory["used"]) * mib)


def nvmlDeviceGetComputeRunningProcesses(handle):
    return [_Row(pid=_pid(p["pid"]), usedGpuMemory=p["used_mib"] * 1024 * 1024)
            for p in _sample()["compute_processes"]]


def nvmlDeviceGetProcessUtilization(handle, last_seen):
    sample = _sample()
    if "process_util_error" in sample:
        raise NVMLError(sample["process_util_error"])
    return [_Row(pid=_pid(r["pid"]), smUtil=r["sm"], memUtil=r["mem"], encUtil=0, decUtil=0,
                 timeStamp=r["ts"]) for r in sample["process_util"]]
