"""The environment as it stands, exported so it can be made again (``torchsmith export``).

Read, not planned: every Python distribution the environment holds and, in a conda environment,
every conda package with its channel (``snippets/env_contents.py``, run by the environment's own
interpreter). Where each pip package came from is taken from the environment's
``torchsmith.lock.json`` when there is one, else from its version's local label (``+cu126``:
the PyTorch index of that variant, from the data). The pip pins are written as requirements files
split per index (:func:`torchsmith.render.requirement_files`), the conda packages as an
``environment.yml``, and ``recreate.sh`` runs them in order.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from torchsmith import __version__
from torchsmith.errors import TorchsmithError
from torchsmith.host import Host
from torchsmith.plan.index import torch_index_url
from torchsmith.plan.model import PackagePin, Plan
from torchsmith.records import dataclass
from torchsmith.render.pip import requirement_files

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["CondaRecord", "Installed", "Standing", "conda_channels", "conda_meta_records", "export_files",
           "read_standing"]

SNIPPET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "snippets",
                       "env_contents.py")
LOCK_NAME = "torchsmith.lock.json"
# Installed with every environment: the recreated one has its own.
_TOOLING = frozenset({"pip", "setuptools", "wheel", "distribute"})


@dataclass(frozen=True)
class Installed:
    name: str
    version: str
    installer: Optional[str]  # "pip", "uv", "conda" (conda's own packages of Python code)
    url: Optional[str] = None  # direct_url.json: a wheel URL, a local file or checkout
    editable: bool = False


@dataclass(frozen=True)
class CondaRecord:
    name: str
    version: str
    build: str
    channel: str  # "conda-forge", "pytorch", or the channel URL

    @property
    def spec(self) -> str:
        return f"{self.name}={self.version}={self.build}"


@dataclass(frozen=True)
class Standing:
    """What one environment holds right now."""

    prefix: str
    python: str  # "3.11.7"
    conda: bool
    distributions: Tuple[Installed, ...]
    conda_packages: Tuple[CondaRecord, ...]
    locked: Dict[str, Dict[str, Any]]  # name -> the lock's entry (index, find_links)


def read_standing(host: Host, python: str, timeout: float = 60.0) -> Standing:
    """Run the listing snippet with ``python`` and read the environment's lock, if any."""
    result = host.run([python, SNIPPET], timeout)
    data = _last_json(result.stdout) if result.ok else None
    if data is None:
        raise TorchsmithError(f"cannot list the environment of {python}: "
                              + (result.problem() if not result.ok else "no usable JSON"),
                              code="python-not-inspectable",
                              hint="pass the environment's interpreter with --python PATH")
    prefix = str(data.get("prefix") or "")
    dists = tuple(Installed(str(d["name"]), str(d["version"]), d.get("installer"), d.get("url"),
                            bool(d.get("editable"))) for d in data.get("distributions") or ())
    conda = tuple(CondaRecord(str(r["name"]), str(r.get("version") or ""), str(r.get("build") or ""),
                              _channel_name(str(r.get("channel") or "")))
                  for r in data.get("conda_packages") or ())
    return Standing(prefix, str(data.get("python") or ""), bool(data.get("conda")),
                    tuple(sorted(dists, key=lambda d: d.name)),
                    tuple(sorted(conda, key=lambda r: r.name)), _locked(host, prefix))


def _last_json(text: str) -> Optional[Dict[str, Any]]:
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def _locked(host: Host, prefix: str) -> Dict[str, Dict[str, Any]]:
    text = host.read_text(os.path.join(prefix, LOCK_NAME)) if prefix else None
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    packages = data.get("packages") if isinstance(data, dict) else None
    return {str(p["name"]): p for p in packages or () if isinstance(p, dict) and p.get("name")}


def conda_meta_records(prefix: str) -> List[CondaRecord]:
    """The conda packages of the environment at ``prefix`` ($PREFIX/conda-meta/*.json), by name."""
    meta = os.path.join(prefix, "conda-meta")
    try:
        entries = sorted(os.listdir(meta))
    except OSError:
        return []
    records = []
    for entry in entries:
        if not entry.endswith(".json"):
            continue
        try:
            with open(os.path.join(meta, entry), encoding="utf-8") as handle:
                record = json.load(handle)
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("name"):
            records.append(CondaRecord(str(record["name"]), str(record.get("version") or ""),
                                       str(record.get("build") or ""),
                                       _channel_name(str(record.get("channel") or ""))))
    return sorted(records, key=lambda r: r.name)


def conda_channels(records: Sequence[CondaRecord]) -> List[str]:
    """The channels the packages came from, the one most came from first."""
    counts: Dict[str, int] = {}
    for record in records:
        if record.channel:
            counts[record.channel] = counts.get(record.channel, 0) + 1
    return sorted(counts, key=lambda c: (-counts[c], c))


def _channel_name(channel: str) -> str:
    """``https://conda.anaconda.org/conda-forge/linux-64`` -> ``conda-forge``; other URLs stay."""
    tail = channel.rstrip("/").rsplit("/", 2)
    if channel.startswith("https://conda.anaconda.org/") and len(tail) == 3:
        return tail[1] if "-" in tail[2] or tail[2] == "noarch" else tail[2]
    return channel


def _pip_pins(standing: Standing, kb: KnowledgeBase, torch_index: Optional[str]) -> Tuple[
        List[PackagePin], List[str]]:
    """The pip-installed distributions as pins with their sources, and comments for what cannot
    be pinned from an index (local builds, editable checkouts)."""
    pins: List[PackagePin] = []
    notes: List[str] = []
    for dist in standing.distributions:
        if dist.installer == "conda" or dist.name in _TOOLING:
            continue
        if dist.editable or (dist.url and not dist.url.startswith(("http://", "https://"))):
            notes.append(f"{dist.name} {dist.version} was installed from {dist.url or 'a local path'}"
                         + (" (editable)" if dist.editable else "") + ": not pinned, install it the same way")
            continue
        public, _, local = dist.version.partition("+")
        entry = standing.locked.get(dist.name) or {}
        index = entry.get("index") or (_variant_index(kb, local, torch_index) if local else None)
        pins.append(PackagePin(dist.name, public, local or None, index_url=index,
                               wheel_url=dist.url if dist.url else None,
                               find_links=entry.get("find_links"),
                               local_version=f"+{local}" if local else None))
    return pins, notes


def _variant_index(kb: KnowledgeBase, local: str, torch_index: Optional[str]) -> Optional[str]:
    """The PyTorch index that serves builds labelled ``+<local>`` (``cu126``), from the data."""
    for release in kb.releases:
        for build in release.variants:
            if build.name == local:
                return torch_index_url(build.index_url, torch_index)
    return None


def export_files(standing: Standing, kb: KnowledgeBase, torch_index: Optional[str] = None,
                 name: str = "") -> Dict[str, str]:
    """``{file name: text}``: ``environment.yml`` (conda envs), the requirements files, and
    ``recreate.sh`` that makes the environment again from them, in order."""
    pins, notes = _pip_pins(standing, kb, torch_index)
    python = ".".join(standing.python.split(".")[:2])
    plan = Plan(status="ok", packages=tuple(pins), python=python, kb_version=kb.kb_version)
    files: Dict[str, str] = {}
    requirement_names: List[str] = []
    if pins:
        requirements = requirement_files(plan)
        files.update(requirements)
        requirement_names = list(requirements)
    env_name = name or os.path.basename(standing.prefix.rstrip("/")) or "env"
    if standing.conda:
        files["environment.yml"] = _environment_yml(standing, env_name, notes)
    files["recreate.sh"] = _recreate_script(standing, env_name, requirement_names, notes)
    return files


def _environment_yml(standing: Standing, name: str, notes: Sequence[str]) -> str:
    channels = conda_channels(standing.conda_packages)
    lines = [f"# The conda packages of {standing.prefix} as they stand (torchsmith export {__version__}).",
             "# pip's packages are in the requirements files: recreate.sh installs them after this.",
             *(f"# {note}" for note in notes),
             f"name: {name}", "channels:", *(f"  - {c}" for c in channels), "  - nodefaults",
             "dependencies:"]
    lines.extend(f"  - {json.dumps(r.spec)}" for r in standing.conda_packages)
    return "\n".join(lines) + "\n"


def _recreate_script(standing: Standing, name: str, requirements: Sequence[str],
                     notes: Sequence[str]) -> str:
    python = ".".join(standing.python.split(".")[:2])
    lines = ["#!/usr/bin/env bash",
             f"# Make {standing.prefix} again, as it stood (torchsmith export {__version__}).",
             "# Usage: bash recreate.sh [NEW_ENV]   (run in the folder holding these files)",
             *(f"# {note}" for note in notes), "set -euo pipefail", 'cd "$(dirname "$0")"']
    if standing.conda:
        lines += [f'ENV_NAME="${{1:-{name}}}"',
                  "# Solving with channel priority as it was: the builds pinned here are conda-forge's.",
                  'conda env create --yes --name "$ENV_NAME" --file environment.yml',
                  'PYTHON=(conda run --name "$ENV_NAME" python)']
    else:
        lines += [f'ENV_DIR="${{1:-{name}-recreated}}"',
                  f'python{python} -m venv "$ENV_DIR" 2>/dev/null || python3 -m venv "$ENV_DIR"',
                  'PYTHON=("$ENV_DIR/bin/python")']
    # Each file after the one before: the PyTorch index's pins first, then the rest holding them.
    lines.extend(f'"${{PYTHON[@]}}" -m pip install -r {req}' for req in requirements)
    return "\n".join(lines) + "\n"
