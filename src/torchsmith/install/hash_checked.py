"""A pinned step of an installer that reports nothing of what it fetched (uv: no ``--report``),
made to install only files the pinned index itself lists, and to say which.

1. The step's own command with ``--dry-run`` says what it would install (`` + name==version``
   lines on stderr, as many as its ``Would install N packages`` line counts; or uv's ``Would make
   no changes``) and changes nothing. Output read otherwise (a uv that words it anew) stops the
   step (``install-provenance``): it never runs unchecked. Packages already installed that
   satisfy the request stay as they are: no upgrade the plain step would not make.
2. Each of those versions' files, and their sha256, are read from the pinned index's PEP 503
   project page (:func:`~torchsmith.install.provenance.listed_files`). A version it does not list,
   or lists without a sha256, stops the install (``install-provenance``) before anything changed.
3. The step runs on exactly those pins, each with its listed hashes, ``--no-deps
   --require-hashes``: uv's hash-checking mode refuses any file whose sha256 is not one given
   (https://docs.astral.sh/uv/reference/cli/#uv-pip-install--require-hashes; uv's
   ``HashCheckingMode::Require``: "every requirement must ... have a hash").
4. Afterwards the installed wheel's tags (its ``dist-info/WHEEL``) pick the listed file it was:
   the lock records that URL and sha256, as it does from pip's report.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from torchsmith.errors import FetchError, InstallError
from torchsmith.host import CommandResult, Host
from torchsmith.install.guard_hold import dist_paths
from torchsmith.install.provenance import listed_files
from torchsmith.install.steps import StepFiles
from torchsmith.install.uv_dry_run import read_dry_run, strip_colour
from torchsmith.redact import redact

__all__ = ["Listed", "dry_run_pins", "hash_checked", "installed_files", "refusal"]

Listed = Dict[str, List[Tuple[str, str]]]  # canonical name -> [(URL, sha256)] of the version to install
_PAGE_BYTES = 8 * 1024 * 1024
_PAGE_SECONDS = 30.0


def dry_run_pins(text: str) -> Optional[Dict[str, str]]:
    """name -> version of what a ``uv pip install --dry-run`` would install; None when its output
    cannot be read whole (uv_dry_run)."""
    changes = read_dry_run(text)
    if changes is None:
        return None
    return {name: added for name, (_removed, added) in changes.items() if added}


def hash_checked(host: Host, argv: Sequence[str], env: Mapping[str, Optional[str]], *, timeout: float,
                 index_url: str, files: StepFiles, step: int) -> Tuple[List[str], Listed, CommandResult]:
    """The step's command turned hash-checked, what each pin may be, and the dry run's result
    (not ``ok``: the step would fail; the caller reports it)."""
    dry = host.run([*argv, "--dry-run"], timeout=timeout, env=env)
    if not dry.ok:  # it would fail: the caller reports that, and nothing runs
        return list(argv), {}, dry
    said = strip_colour(dry.stderr + dry.stdout)
    pins = dry_run_pins(said)
    if pins is None:  # a uv that words it otherwise: never install what could not be checked
        raise InstallError("could not read what uv would install from its --dry-run, so its files "
                           "cannot be checked against the torch index", code="install-provenance",
                           context=[line[:300] for line in said.strip().splitlines()[-4:]],
                           hint="nothing was installed; use --installer pip, whose report says it")
    if not pins:  # uv would make no changes: nothing to fetch
        return list(argv), {}, dry
    out = list(argv)
    at = out.index("-r")
    locked = _locked_hashes(out[at + 1])  # a lock install: its own hashes, which the listing must hold
    listed: Listed = {}
    for name, version in sorted(pins.items()):
        found = _listed(host, index_url, name, version)
        listed[name] = [(url, digest) for url, digest in found if digest in locked.get(name, {digest})]
        if not listed[name]:
            raise InstallError(f"the lock's sha256 for {name} {version} is not one {redact(index_url)} lists",
                               code="install-provenance", hint="nothing was installed")
    lines = [f"{name}=={pins[name]} " + " ".join(f"--hash=sha256:{digest}" for _url, digest in listed[name])
             for name in sorted(pins)]
    out[at + 1] = files.write(f"step{step}-hashed.txt", lines)
    out += [flag for flag in ("--no-deps", "--require-hashes") if flag not in out]
    return out, listed, dry


def _locked_hashes(requirements: str) -> Dict[str, Set[str]]:
    """name -> the sha256 digests a requirements file's lines give (``--hash=sha256:...``)."""
    out: Dict[str, Set[str]] = {}
    try:
        with open(requirements, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return out
    for line in lines:
        digests = re.findall(r"--hash=sha256:([0-9a-fA-F]{64})", line)
        name = re.split(r"[=<>!~;\[ ]", line.strip(), maxsplit=1)[0]
        if digests and name:
            out.setdefault(str(canonicalize_name(name)), set()).update(d.lower() for d in digests)
    return out


def _listed(host: Host, index_url: str, name: str, version: str) -> List[Tuple[str, str]]:
    page = f"{index_url.rstrip('/')}/{name}/"
    try:
        listing = listed_files(page, host.fetch_url(page, _PAGE_SECONDS, _PAGE_BYTES))
    except FetchError as exc:
        raise InstallError(f"could not read {redact(page)} to check the files of {name} {version}: {exc}",
                           code="install-provenance") from None
    found = [(url, digest) for url, digest in listing.items() if _names(url) == (name, version)]
    if not found or any(not digest for _url, digest in found):
        what = "does not list" if not found else "lists without a sha256"
        raise InstallError(f"{redact(page)} {what} {name} {version}, which the torch step would install",
                           code="install-provenance",
                           hint="nothing was installed; check the --torch-index mirror")
    return [(url, str(digest)) for url, digest in found]


def _names(url: str) -> Tuple[str, str]:
    filename = urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1])
    try:
        name, version, _build, _tags = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return "", ""
    return str(name), str(version)


def installed_files(prefix: str, listed: Listed) -> Dict[str, Tuple[str, str]]:
    """name -> (URL, sha256) of the listed file each installed wheel is, found by its tags."""
    out: Dict[str, Tuple[str, str]] = {}
    for name, path in dist_paths(prefix).items():
        if name not in listed:
            continue
        tags = _wheel_tags(os.path.join(path, "WHEEL"))
        matching = [(url, digest) for url, digest in listed[name] if _tags(url) == tags]
        if len(matching) == 1:
            out[name] = matching[0]
    return out


def _wheel_tags(path: str) -> FrozenSet[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(64 * 1024)
    except OSError:
        return frozenset()
    return frozenset(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:"))


def _tags(url: str) -> FrozenSet[str]:
    filename = urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1])
    try:
        return frozenset(str(tag) for tag in parse_wheel_filename(filename)[3])
    except InvalidWheelFilename:
        return frozenset()


def refusal(result: CommandResult, installer: str, label: str, index_url: str) -> Optional[InstallError]:
    """The error for a pinned step the installer refused over a file's hash, if it was that (uv:
    "Hash mismatch"; pip checks the listing's hash too: "do not match the hashes")."""
    text = (result.stderr + result.stdout).lower()
    if "hash mismatch" not in text and "do not match the hashes" not in text:
        return None
    return InstallError(f"{installer} refused a file of {label}: its sha256 is not the one "
                        f"{redact(index_url)} lists",
                        code="install-provenance",
                        context=[line[:300] for line in result.stderr.strip().splitlines()[-4:]],
                        hint="the file changed on its way, or came from elsewhere; the environment was "
                             "put back")
