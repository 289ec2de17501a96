"""The doctor's checks: pure functions of an environment report, the host profile and the data.

Each ``check_*(report, machine, kb) -> Optional[Finding]`` reads the JSON of the inspection
snippets (``report``; its ``dynamic`` key holds what importing torch showed, or None with
``--quick``) and returns at most one finding. Codes are documented in docs/findings.md. The
checks live in themed modules beside this one; this module runs them in order.
"""

from __future__ import annotations

from typing import List, Tuple

from torchsmith.doctor.checks.common import Check, Report
from torchsmith.doctor.checks.driver import check_driver_too_old
from torchsmith.doctor.checks.environment import (
    check_companion_abi_mismatch,
    check_companion_build_unread,
    check_conda_mutex_cpu,
    check_cuda_wheels_mismatch,
    check_gpus_hidden,
    check_guard,
    check_install_interrupted,
    check_library_path_overlap,
    check_library_shadowed,
    check_libstdcxx_too_old,
    check_two_torch_installs,
)
from torchsmith.doctor.checks.gpu import (
    check_arch_not_compiled,
    check_cpu_build_on_gpu_host,
    check_cuda_unavailable,
    check_device_ops_fail,
    check_gpu_build_on_cpu_host,
    check_gpu_detection_failed,
    check_mps,
    check_nccl,
    check_tf32,
    check_wrong_gpu_build,
)
from torchsmith.doctor.checks.torch_import import (
    check_no_torch,
    check_torch_import_fails,
    check_torch_import_hangs,
)
from torchsmith.doctor.checks.variant import check_variant_install
from torchsmith.doctor.fixes import KbSource
from torchsmith.doctor.model import Fact, Finding
from torchsmith.machine import Machine

__all__ = ["CHECKS", "Check", "check_gpu_build_on_cpu_host", "check_gpu_detection_failed",
           "run_checks"]

# Worst problems first where severities tie: import failures explain most of what follows.
CHECKS: Tuple[Check, ...] = (
    check_install_interrupted,
    check_no_torch,
    check_gpu_detection_failed,
    check_torch_import_hangs,
    check_torch_import_fails,
    check_two_torch_installs,
    check_cpu_build_on_gpu_host,
    check_wrong_gpu_build,
    check_driver_too_old,
    check_arch_not_compiled,
    check_variant_install,
    check_gpus_hidden,
    check_cuda_unavailable,
    check_device_ops_fail,
    check_conda_mutex_cpu,
    check_companion_abi_mismatch,
    check_companion_build_unread,
    check_cuda_wheels_mismatch,
    check_libstdcxx_too_old,
    check_library_shadowed,
    check_library_path_overlap,
    check_nccl,
    check_mps,
    check_gpu_build_on_cpu_host,
    check_guard,
    check_tf32,
)


def run_checks(report: Report, machine: Machine, kb: KbSource) -> List[Finding]:
    """Every finding, worst first (stable within a severity)."""
    findings = []
    for check in CHECKS:
        try:
            finding = check(report, machine, kb)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            # A report garbled by an odd environment must not end the whole diagnosis.
            finding = Finding("doctor-check-failed", "warning",
                              f"{check.__name__} could not read the environment report: {exc!r}",
                              (Fact(f"{type(exc).__name__}: {exc}", "torchsmith doctor"),))
        if finding is not None:
            findings.append(finding)
    return sorted(findings, key=lambda f: f.rank)
