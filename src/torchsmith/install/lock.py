"""The lock: exactly what an install put in place, reproducible elsewhere.

One JSON document (``torchsmith.lock.json``)::

    {"lock_version": 1, "torchsmith": "0.1.0", "kb_version": "...", "python": "3.11",
     "platform": "linux-x86_64", "variant": "cu126", "accelerator": "cuda",
     "packages": [{"name": "torch", "version": "2.6.0+cu126",
                   "index": "https://download.pytorch.org/whl/cu126",  # null: your configured index
                   "find_links": null, "hashes": ["sha256:..."]}, ...]}

``index`` set means the package must come from that index alone. Hashes come from pip's
installation report, or (uv) from ``uv pip compile --generate-hashes`` against the same index.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.utils import canonicalize_name

from torchsmith import __version__
from torchsmith.errors import InstallError, load_json_file
from torchsmith.install.steps import Group
from torchsmith.records import dataclass
from torchsmith.redact import redact, strip_credentials

__all__ = ["LOCK_VERSION", "Lock", "LockedPackage", "hashes_from_pip_report", "parse_compiled_hashes",
           "read_lock"]

LOCK_VERSION = 1
_SHA256 = re.compile(r"^sha256:[0-9a-f]{64}$")


@dataclass(frozen=True)
class LockedPackage:
    name: str
    version: str  # with its local label: "2.6.0+cu126"
    index: Optional[str] = None  # None: the user's configured index
    find_links: Optional[str] = None
    hashes: Tuple[str, ...] = ()  # "sha256:<hex>"
    url: Optional[str] = None  # the file fetched, as checked against its index's listing

    def requirement_line(self) -> str:
        hashes = "".join(f" --hash={h}" for h in self.hashes)
        return f"{self.name}=={self.version}{hashes}"


@dataclass
class Lock:
    packages: List[LockedPackage]
    python: str = ""
    platform: str = ""
    variant: Optional[str] = None
    accelerator: str = ""
    kb_version: str = ""
    warnings: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {
            "lock_version": LOCK_VERSION,
            "torchsmith": __version__,
            "kb_version": self.kb_version,
            "python": self.python,
            "platform": self.platform,
            "variant": self.variant,
            "accelerator": self.accelerator,
            "packages": [
                {"name": p.name, "version": p.version, "index": storable_url(p.index),
                 "find_links": storable_url(p.find_links), "hashes": list(p.hashes),
                 **({"url": storable_url(p.url)} if p.url else {})}
                for p in sorted(self.packages, key=lambda p: p.name)
            ],
        }

    def write(self, path: str) -> None:
        tmp = f"{path}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(self.to_json(), handle, indent=2, sort_keys=True)
            handle.write("\n")
        os.replace(tmp, path)

    def groups(self, torch_index_base: Optional[str] = None) -> List[Group]:
        """Install groups reproducing the lock: one per source, the whole closure, no resolving."""
        by_source: Dict[Tuple[Optional[str], Optional[str]], List[LockedPackage]] = {}
        for package in self.packages:
            index = _on_base(package.index, torch_index_base) if package.index else None
            by_source.setdefault((index, package.find_links), []).append(package)
        unhashed = sorted(p.name for p in self.packages if not p.hashes)
        if unhashed:
            # One file without a hash would switch off --require-hashes for its whole group.
            raise InstallError(f"the lock records no hash for {', '.join(unhashed)}: it cannot verify "
                               "every file, so it is not used", code="lock-unverifiable",
                               hint="make a new lock with `torchsmith install` where hashes can be read")
        groups: List[Group] = []
        # Pinned indexes first, then find-links pages, then the user's index: as the plan installs.
        for (index, links), packages in sorted(by_source.items(),
                                               key=lambda kv: (kv[0][0] is None, kv[0][1] is None)):
            where = index or links or "your configured index"
            groups.append(Group(
                f"{', '.join(p.name for p in packages)} from {where} (locked)",
                tuple(p.requirement_line() for p in packages),
                index_url=index, find_links=links, pinned=index is not None,
                no_deps=True, require_hashes=True,
            ))
        return groups


def storable_url(url: Optional[str]) -> Optional[str]:
    """A lock names its sources without credentials: those stay in the user's netrc, keyring
    or ``--torch-index``."""
    return redact(strip_credentials(url)) if url else url


def _on_base(index: str, base: Optional[str]) -> str:
    """``index`` moved onto ``base`` (``--torch-index``): a PyTorch URL onto the mirror, and a
    mirror URL stored without its credentials back onto the credentialed mirror."""
    from torchsmith.plan.resolve import torch_index_url

    mapped = torch_index_url(index, base) or index
    if mapped != index or not base:
        return mapped
    for stored in {(storable_url(base) or "").rstrip("/"), strip_credentials(base).rstrip("/")}:
        if stored and (index == stored or index.startswith(stored + "/")):
            return base.rstrip("/") + index[len(stored):]
    return index


def read_lock(path: str) -> Lock:
    data = load_json_file(path, "the lock", InstallError, code="lock-invalid")
    if not isinstance(data, dict) or data.get("lock_version") != LOCK_VERSION:
        raise InstallError(f"{path} is not a torchsmith lock (lock_version {LOCK_VERSION} expected)",
                           code="lock-invalid",
                           hint="use the torchsmith.lock.json that `torchsmith install` wrote")
    packages: List[LockedPackage] = []
    try:
        for entry in data["packages"]:
            hashes = tuple(str(h) for h in entry.get("hashes") or ())
            if any(not _SHA256.match(h) for h in hashes):
                raise ValueError(f"{entry.get('name')}: hashes must be sha256:<64 hex digits>")
            packages.append(LockedPackage(
                name=canonicalize_name(str(entry["name"])), version=str(entry["version"]),
                index=entry.get("index"), find_links=entry.get("find_links"), hashes=hashes,
                url=str(entry["url"]) if entry.get("url") else None))
    except (KeyError, TypeError, ValueError) as exc:
        raise InstallError(f"the lock {path} has an unusable package entry: {exc}",
                           code="lock-invalid") from exc
    if not packages:
        raise InstallError(f"the lock {path} lists no packages", code="lock-invalid")
    return Lock(packages=packages, python=str(data.get("python", "")), platform=str(data.get("platform", "")),
                variant=data.get("variant"), accelerator=str(data.get("accelerator", "")),
                kb_version=str(data.get("kb_version", "")))


def report_downloads(text: str) -> Dict[str, Tuple[str, str]]:
    """canonical name -> (URL or "", sha256 hex or "") of every file a ``pip install --report``
    lists: what pip says it fetched."""
    out: Dict[str, Tuple[str, str]] = {}
    try:
        data = json.loads(text)
    except ValueError:
        return out
    for item in (data.get("install") or ()) if isinstance(data, dict) else ():
        try:
            name = canonicalize_name(item["metadata"]["name"])
            info = item.get("download_info") or {}
            archive = info.get("archive_info") or {}
            digest = (archive.get("hashes") or {}).get("sha256")
            if not digest and str(archive.get("hash", "")).startswith("sha256="):
                digest = str(archive["hash"]).split("=", 1)[1]
            url = str(info.get("url") or "")
        except (AttributeError, KeyError, TypeError):
            continue
        out[name] = (url, str(digest or ""))
    return out


def hashes_from_pip_report(text: str) -> Dict[str, Tuple[str, ...]]:
    """canonical name -> ("sha256:...",) for every download in a ``pip install --report``."""
    return {name: (f"sha256:{digest}",) for name, (_url, digest) in report_downloads(text).items() if digest}


def parse_compiled_hashes(text: str) -> Dict[str, Tuple[str, ...]]:
    """canonical name -> hashes from ``uv pip compile --generate-hashes`` output."""
    out: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for raw in text.splitlines():
        line = raw.strip().rstrip("\\").strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("--hash="):
            if current:
                out.setdefault(current, []).append(line[len("--hash="):])
            continue
        head = line.split(";", 1)[0].split("==", 1)
        current = canonicalize_name(head[0].split("[", 1)[0].strip()) if len(head) == 2 else None
        for part in line.split()[1:]:
            if part.startswith("--hash=") and current:
                out.setdefault(current, []).append(part[len("--hash="):])
    return {name: tuple(hashes) for name, hashes in out.items()}


def locked_packages(versions: Mapping[str, str], sources: Mapping[str, Tuple[Optional[str], Optional[str]]],
                    hashes: Mapping[str, Sequence[str]],
                    urls: Optional[Mapping[str, str]] = None) -> List[LockedPackage]:
    return [LockedPackage(name, versions[name], sources.get(name, (None, None))[0],
                          sources.get(name, (None, None))[1], tuple(hashes.get(name, ())),
                          (urls or {}).get(name))
            for name in sorted(versions)]
