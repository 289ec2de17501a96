"""One installer command of an install, and what it did; its errors in words."""

from __future__ import annotations

import os
import time
from typing import Dict, Optional, Protocol, Tuple

from torchsmith.errors import InstallError
from torchsmith.host import CommandResult, Host
from torchsmith.install import guard as guard_mod
from torchsmith.install.closure import requirement_name
from torchsmith.install.hash_checked import Listed, hash_checked, installed_files, refusal
from torchsmith.install.installers import installer_kind
from torchsmith.install.installers.base import Hashes
from torchsmith.install.job import InstallJob, InstallOutcome
from torchsmith.install.provenance import check_fetched, fetched_from_report
from torchsmith.install.steps import Group, StepFiles
from torchsmith.plan.conflict_words import conflict_lines, parse_failure

__all__ = ["StepsDone", "installer_error", "run_step"]


class StepsDone(Protocol):
    """What the steps fetched, as they went: the file of each checked package, and hashes."""

    urls: Dict[str, str]
    hashes: Hashes


def run_step(host: Host, job: InstallJob, outcome: InstallOutcome, files: StepFiles, *,
             step: Tuple[int, Group], constraints: Optional[str], done: StepsDone) -> None:
    """One installer command; what a pinned step fetched is checked against its index's listing
    before anything it installed runs (pip: its report; uv: hash-checked pins)."""
    number, group = step
    kind = installer_kind(job.installer.name)
    argv, env, report = kind.command(job.installer, group, files, number, constraints)
    env.update(_drop_guard_env(host))
    checked: Listed = {}
    if group.pinned:  # no index, requirement or constraint but torchsmith's
        env = {**kind.isolated_env(host.environ()), **env}
        if group.index_url and kind.hash_checks_pins:
            argv, checked, dry = hash_checked(host, argv, env, timeout=job.timeout, index_url=group.index_url,
                                              files=files, step=number)
            if not dry.ok:
                raise installer_error(job, group, dry)
    step_start = time.monotonic()
    result = host.run(argv, timeout=job.timeout, env=env)
    seconds = time.monotonic() - step_start
    outcome.steps.append({"label": group.label, "argv": argv, "seconds": round(seconds, 3)})
    if not result.ok:
        index = group.index_url
        refused = refusal(result, job.installer.name, group.label, index) if index else None
        raise refused or installer_error(job, group, result)
    for name, (url, digest) in installed_files(job.target.prefix, checked).items():
        done.urls[name] = url
        done.hashes[name] = (f"sha256:{digest}",)
    if report and os.path.exists(report):
        with open(report, encoding="utf-8") as handle:
            report_text = handle.read()
        done.hashes.update(kind.step_hashes(report_text))
        if group.pinned and group.index_url:  # before anything it fetched is imported
            fetched = fetched_from_report(report_text)
            check_fetched(host, group.index_url, fetched)
            done.urls.update({name: url for name, (url, _digest) in fetched.items()})


def _drop_guard_env(host: Host) -> Dict[str, Optional[str]]:
    """An activated guarded environment exports UV_CONSTRAINT; this install replaces that guard."""
    environ = host.environ()
    return {name: None for name in ("UV_CONSTRAINT", "PIP_CONSTRAINT")
            if guard_mod.GUARD_FILE in environ.get(name, "")}


def installer_error(job: InstallJob, group: Group, result: CommandResult) -> InstallError:
    name, timeout = job.installer.name, job.timeout
    tail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-6:]
    if result.timed_out:
        message = f"{name} did not finish installing {group.label} in {timeout:.0f} s and was stopped"
    elif result.returncode is not None and result.returncode < 0:
        message = f"{name} was killed (signal {-result.returncode}) while installing {group.label}"
    elif result.not_found:
        message = f"{name} could not be started: {result.argv[0]}"
    else:
        first = next((line for line in reversed(tail) if "error" in line.lower()), tail[-1] if tail else "")
        message = f"{name} failed installing {group.label}: {first.strip()[:300]}"
    text = result.stderr + result.stdout
    hint = None
    if result.timed_out:
        hint = "raise --timeout, or check the connection to the index"
    elif result.returncode is not None and result.returncode < 0:
        hint = "stopped from outside (often the out-of-memory killer: see `dmesg`); run it again"
    elif "No space left on device" in text:
        hint = "free disk space on the environment's filesystem and retry"
    elif "ResolutionImpossible" in text or "No solution found" in text or "conflict" in text.lower():
        hint = "a requirement conflicts with the planned torch; see `torchsmith plan` for a stack that fits"
        failure = parse_failure(text)
        said = conflict_lines(failure, _planned(job), name, job.pairing) if failure.needs else []
        if said:  # the words `plan --confirm` uses: who pins what, the release that pairs
            message = f"{said[0]} (installing {group.label})"
            tail = said[1:] + tail
    return InstallError(message, code="installer-failed", context=[line[:300] for line in tail], hint=hint)


def _planned(job: InstallJob) -> Dict[str, str]:
    """name -> version of every exact pin the install's groups carry (torch==2.6.0+cu126)."""
    planned: Dict[str, str] = {}
    for group in job.groups:
        for line in group.requirements:
            name, sep, version = line.partition("==")
            if sep and " " not in version.strip() and ";" not in version:
                planned.setdefault(requirement_name(name), version.strip())
    return planned
