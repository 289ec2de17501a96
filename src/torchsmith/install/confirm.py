"""The installer's own resolver confirms a whole plan, in a dry run, before anything installs.

``uv pip compile`` (uv resolves for a described machine: ``--python-platform``,
``--python-version``), else ``pip install --dry-run``, is given every pin and requirement of the
plan's install steps, with the plan's PyTorch indexes and find-links pages and the user's own
configuration (uv reads its own; an index configured only for pip is passed on, so both installers
look at the same index). Nothing is installed or downloaded but metadata. Through the Host, within
one deadline. A refusal is read by :mod:`torchsmith.plan.conflict_words` and said in plain words.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from torchsmith.host import CommandResult, Host
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.steps import exact_pin, install_steps, requirement
from torchsmith.records import dataclass
from torchsmith.redact import redact

if TYPE_CHECKING:  # the refusal's reader (packaging's parsers) is imported only for a refusal
    from torchsmith.plan.conflict_words import Need, Pair, Pairing

# pip's configured (extra index URLs, find-links): kb.pipsources.pip_sources.
PipSources = Tuple[Tuple[str, ...], Tuple[str, ...]]

__all__ = ["CONFIRM_SECONDS", "Confirmation", "confirm_plan", "skip_reason"]


CONFIRM_SECONDS = 60.0  # the whole dry run, however many indexes it reads

# uv's target names for our platforms (https://docs.astral.sh/uv/reference/cli/#uv-pip-compile--python-platform).


_UV_TARGETS = {"linux-x86_64": "x86_64", "wsl-x86_64": "x86_64", "linux-aarch64": "aarch64",
               "windows-x86_64": "x86_64-pc-windows-msvc", "windows-arm64": "aarch64-pc-windows-msvc",
               "macos-arm64": "aarch64-apple-darwin", "macos-x86_64": "x86_64-apple-darwin"}


# pip's --platform tags for a described machine of another platform (pip does not widen them).
_PIP_PLATFORMS = {"linux-x86_64": ("manylinux2014_x86_64", "manylinux_2_28_x86_64", "linux_x86_64"),
                  "wsl-x86_64": ("manylinux2014_x86_64", "manylinux_2_28_x86_64", "linux_x86_64"),
                  "linux-aarch64": ("manylinux2014_aarch64", "manylinux_2_28_aarch64", "linux_aarch64"),
                  "windows-x86_64": ("win_amd64",), "windows-arm64": ("win_arm64",),
                  "macos-arm64": ("macosx_11_0_arm64", "macosx_14_0_arm64"),
                  "macos-x86_64": ("macosx_10_15_x86_64", "macosx_11_0_x86_64")}


@dataclass(frozen=True)


class Confirmation:
    """What the resolver said of the whole plan (``plan --json``: ``data.confirmation``)."""

    status: str  # "confirmed" | "conflict" | "not-confirmed" | "skipped"
    reason: str = ""  # why it was skipped or could not confirm; the first conflict line
    by: str = ""  # "uv pip compile" | "pip install --dry-run"
    command: Tuple[str, ...] = ()
    lines: Tuple[str, ...] = ()  # a conflict, in plain words
    needs: Tuple[Need, ...] = ()
    resolved: Tuple[Tuple[str, str], ...] = ()  # what the resolver chose: (name, version)
    unchecked: Tuple[str, ...] = ()  # pins not given to it (built from source against torch)
    seconds: float = 0.0
    pairs: Tuple[Pair, ...] = ()  # per clashing package, its release that pairs with the planned torch

    def to_json(self) -> Dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "by": self.by,
                "command": [redact(a) for a in self.command], "conflict": list(self.lines),
                "needs": [{"package": n.who, "version": n.who_version, "requires": n.what + n.spec,
                           **({"markers": n.markers} if n.markers else {})} for n in self.needs],
                "pairs": [{"package": p.package, "torch": p.torch, "version": p.version or None,
                           "source": p.source} for p in self.pairs],
                "resolved": dict(self.resolved), "unchecked": list(self.unchecked),
                "seconds": round(self.seconds, 3)}


def skip_reason(mode: str, request: Request, reached: bool) -> str:
    """"" when the dry run should run; else why not. ``mode``: "always" | "never" | "auto";
    ``reached``: the configured index answered the live metadata read."""
    if mode == "always":
        return ""
    if mode == "never":
        return "not asked for (--no-confirm)"
    if not request.published and not request.unread:
        return ("every requested package is planned from torchsmith's shipped data; --confirm runs "
                "the installer's resolver on the whole plan anyway")
    if not reached:
        why = request.unread[0][1] if request.unread else "the index was not read"
        return f"the configured index could not be used: {why}"
    return ""


def confirm_plan(host: Host, plan: Plan, request: Request, *, glibc: str = "",
                 index: Optional[Tuple[str, str]] = None, timeout: float = CONFIRM_SECONDS,
                 pairing: Optional[Pairing] = None, pip_sources: PipSources = ((), ())) -> Confirmation:
    """Dry-run the whole plan through uv (else pip); ``index``: (url, where) of the index the user
    configured, when only pip's configuration names it, and ``pip_sources``: pip's configured
    (extra index URLs, find-links), given to uv, which does not read pip's configuration (pip does)."""
    if not plan.ok:
        return Confirmation("skipped", "the plan found no working stack: nothing to confirm")
    given = _inputs(plan, request)
    from torchsmith.install.installers.uv import find_uv

    uv = find_uv(host)
    start = time.monotonic()
    if uv is not None:
        argv = _uv_argv(uv, given, glibc=glibc, index=index, python=host.platform().python_executable,
                        pip_sources=pip_sources)
        env = {} if "UV_HTTP_RETRIES" in host.environ() else {"UV_HTTP_RETRIES": "1"}
        result = host.run(argv, timeout=timeout, env=env, stdin="".join(f"{line}\n" for line in given.lines))
        by = "uv pip compile"
    else:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="torchsmith-confirm-") as scratch:
            argv = _pip_argv(host, given, scratch)
            result = host.run(argv, timeout=timeout)
        by = "pip install --dry-run"
    said = _Said(by, tuple(argv), given.unchecked, time.monotonic() - start, timeout)
    return _outcome(result, said, plan, pairing)


@dataclass(frozen=True)


class _Inputs:
    """What the resolver is given: the plan's install steps as one request."""

    plan: Plan
    request: Request
    lines: Tuple[str, ...]  # requirement lines
    indexes: Tuple[str, ...]  # PyTorch-style indexes (ranked first)
    links: Tuple[str, ...]  # find-links pages
    unchecked: Tuple[str, ...]  # pins left out (built from source against the installed torch)


@dataclass(frozen=True)


class _Said:
    by: str
    argv: Tuple[str, ...]
    unchecked: Tuple[str, ...]
    seconds: float
    timeout: float


def _inputs(plan: Plan, request: Request) -> _Inputs:
    lines: List[str] = []
    indexes: List[str] = []
    links: List[str] = []
    unchecked: List[str] = []
    for step in install_steps(plan):
        if step.source == "source-build":  # built against the installed torch, no isolation
            unchecked.extend(f"{p.name} {p.version} (built from source)" for p in step.pins)
            continue
        if step.source == "index" and step.url:
            indexes.append(step.url)
        if step.source == "find-links" and step.url:
            links.append(step.url)
        lines.extend(requirement(p) if p.wheel_url else exact_pin(p) for p in step.pins)
        lines.extend(step.unplanned)
    return _Inputs(plan, request, tuple(dict.fromkeys(lines)), tuple(indexes), tuple(links), tuple(unchecked))


def _uv_platform(platform: str, glibc: str) -> Optional[str]:
    target = _UV_TARGETS.get(platform)
    if target in ("x86_64", "aarch64"):
        parts = glibc.split(".")
        if len(parts) >= 2 and parts[0] == "2" and parts[1].isdigit() and int(parts[1]) >= 17:
            return f"{target}-manylinux_2_{parts[1]}"
        return f"{target}-unknown-linux-gnu"
    return target


def _uv_argv(uv: str, given: _Inputs, *, glibc: str, index: Optional[Tuple[str, str]], python: str,
             pip_sources: PipSources = ((), ())) -> List[str]:
    plan, request = given.plan, given.request
    argv = [uv, "pip", "compile", "-", "--no-header", "--no-annotate", "--color", "never", "--no-progress"]
    # The interpreter running torchsmith builds any source distribution's metadata; the target's
    # Python is only described, so uv must not download one for it.
    argv += ["--python", python, "--no-python-downloads"]
    if plan.python:
        argv += ["--python-version", plan.python.rstrip("t")]
    target = _uv_platform(plan.platform, glibc)
    if target:
        argv += ["--python-platform", target]
    if index is not None:
        argv += ["--default-index", index[0]]
    for url in given.indexes:  # ranked before the default, as install's uv steps do (first-index)
        argv += ["--index", url]
    extra, links = pip_sources
    for url in extra:  # after the planned indexes: uv ranks --index before --extra-index-url
        argv += ["--extra-index-url", url]
    for url in (*given.links, *links):
        argv += ["--find-links", url]
    if request.allow_prerelease:
        argv += ["--prerelease", "allow"]
    if request.only_binary:
        argv += ["--only-binary", ":all:"]
    return argv


def _pip_argv(host: Host, given: _Inputs, scratch: str) -> List[str]:
    plan, request = given.plan, given.request
    info = host.platform()
    argv = [info.python_executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-input",
            "--disable-pip-version-check", "--progress-bar", "off"]
    system = {"Linux": "linux", "Windows": "windows", "Darwin": "macos"}.get(info.system, info.system)
    here = f"{system}-{info.machine.lower().replace('amd64', 'x86_64')}"
    same_python = plan.python.rstrip("t") == ".".join(info.python_version.split(".")[:2])
    if not same_python or plan.platform.replace("wsl-", "linux-") != here:
        # Another machine: pip resolves for its tags, from wheels only, into a scratch --target.
        argv += ["--target", os.path.join(scratch, "target"), "--python-version", plan.python.rstrip("t"),
                 "--only-binary", ":all:"]
        if plan.platform.replace("wsl-", "linux-") != here:
            for tag in _PIP_PLATFORMS.get(plan.platform, ()):
                argv += ["--platform", tag]
    for url in given.indexes:
        argv += ["--extra-index-url", url]
    for url in given.links:
        argv += ["--find-links", url]
    if request.allow_prerelease:
        argv.append("--pre")
    if request.only_binary and "--only-binary" not in argv:
        argv += ["--only-binary", ":all:"]
    return [*argv, *given.lines]


def _outcome(result: CommandResult, said: _Said, plan: Plan, pairing: Optional[Pairing]) -> Confirmation:
    from torchsmith.plan.conflict_words import clashes, conflict_lines, pairs, parse_failure, unreachable_line

    by = said.by

    def answer(status: str, reason: str, **more: Any) -> Confirmation:
        return Confirmation(status, reason, by=by, command=said.argv, unchecked=said.unchecked,
                            seconds=said.seconds, **more)

    if result.not_found:
        return answer("not-confirmed", f"{by} could not be started ({result.problem()})")
    if result.timed_out:
        return answer("not-confirmed", f"{by} did not finish within {said.timeout:g} s and was stopped "
                      "(--confirm-timeout sets the limit)")
    text = f"{result.stderr}\n{result.stdout}"
    if result.ok:
        return answer("confirmed", f"{by} resolved the whole request with the planned pins",
                      resolved=_resolved(result.stdout, by))
    offline = unreachable_line(text)
    if offline:
        return answer("not-confirmed", f"the index could not be reached: {offline}")
    failure = parse_failure(text)
    planned = {p.name: f"{p.version}{p.local_version or ''}" for p in plan.packages if p.version}
    lines = conflict_lines(failure, planned, by, pairing)
    if not lines:
        return answer("not-confirmed", f"{by} failed: {result.problem()}")
    if failure.missing and not clashes(failure, planned):
        # Something is on none of the indexes it was given (an index only pip's configuration
        # adds, say): not a conflict of the plan's own.
        return answer("not-confirmed", "; ".join(lines), lines=tuple(lines), needs=failure.needs)
    return answer("conflict", lines[0], lines=tuple(lines), needs=failure.needs,
                  pairs=tuple(pairs(failure, planned, pairing)))


def _resolved(stdout: str, by: str) -> Tuple[Tuple[str, str], ...]:
    """(name, version) from uv's compiled list or pip's "Would install a-1 b-2"."""
    found: List[Tuple[str, str]] = []
    for line in stdout.splitlines():
        text = line.split("#", 1)[0].strip()
        if by.startswith("uv") and "==" in text and not text.startswith("-"):
            name, _, version = text.partition("==")
            found.append((name.strip().split("[", 1)[0], version.split(";", 1)[0].strip()))
        elif text.startswith("Would install "):
            for item in text[len("Would install "):].split():
                name, _, version = item.rpartition("-")
                found.append((name, version))
    return tuple(found)
