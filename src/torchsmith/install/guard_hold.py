"""The parts of the guard that do not depend on pip reading its configuration.

*Holding* a distribution moves its ``RECORD`` aside and puts a directory of that name in its
place. Neither installer removes a distribution whose files it cannot list, and replacing a
version starts by removing it: pip reads no RECORD ("Cannot uninstall torch 2.6.0, RECORD file
not found. Hint: The package was installed by torchsmith guard ..." -- ``INSTALLER`` names the
guard), uv fails to read it ("`RECORD` file is invalid ... Is a directory"). A *missing*
RECORD would not do: uv (0.13) then removes only the metadata and installs over the old files.

*Bypasses* are the settings of an environment that switch the guard's constraints off, found
the way pip and uv read them (pip's override order: files global < user < site < the
``PIP_CONFIG_FILE`` file < ``PIP_*`` variables; within each, ``[install]`` beats ``[global]``).
"""

from __future__ import annotations

import configparser
import glob
import os
import shutil
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from torchsmith.install.guard_files import names_guard

__all__ = ["bypasses", "dist_paths", "dist_versions", "held", "hold", "release"]

_HELD_RECORD = "RECORD.torchsmith-guard"
_HELD_INSTALLER = "INSTALLER.torchsmith-guard"
INSTALLER_NOTE = "torchsmith guard (run `torchsmith guard off` to change torch)"


def _dist_infos(prefix: str) -> Iterator[Tuple[str, str, str]]:
    """(canonical name, version, path) of each ``*.dist-info`` in the prefix's site-packages."""
    patterns = (os.path.join(prefix, "lib", "python*", "site-packages"),
                os.path.join(prefix, "Lib", "site-packages"))
    for pattern in patterns:
        for directory in sorted(glob.glob(pattern)):
            try:
                entries = os.listdir(directory)
            except OSError:
                continue
            for entry in entries:
                if entry.endswith(".dist-info") and "-" in entry:
                    name, _, version = entry[:-len(".dist-info")].partition("-")
                    yield canonicalize_name(name), version, os.path.join(directory, entry)


def dist_paths(prefix: str) -> Dict[str, str]:
    """Canonical name -> the ``*.dist-info`` directory of each distribution in the prefix."""
    return {name: path for name, _version, path in _dist_infos(prefix)}


def dist_versions(prefix: str) -> Dict[str, str]:
    """Canonical name -> version of each distribution in the prefix, from the dist-info names."""
    return {name: version for name, version, _path in _dist_infos(prefix)}


def _same(a: str, b: str) -> bool:
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def hold(prefix: str, pins: Mapping[str, str]) -> List[str]:
    """Hold the installed distributions that match ``pins`` exactly; the names held."""
    wanted: Dict[str, str] = {str(canonicalize_name(n)): v for n, v in pins.items()}
    done: List[str] = []
    for name, version, path in _dist_infos(prefix):
        if name not in wanted or not _same(wanted[name], version):
            continue  # drifted: the guard holds what it verified, nothing else
        record = os.path.join(path, "RECORD")
        if os.path.isfile(record):  # a directory there: held already
            installer = os.path.join(path, "INSTALLER")
            held_installer = os.path.join(path, _HELD_INSTALLER)
            if os.path.exists(installer) and not os.path.exists(held_installer) and not _ours(installer):
                os.replace(installer, held_installer)
            _write_note(installer, INSTALLER_NOTE + "\n")
            os.replace(record, os.path.join(path, _HELD_RECORD))
        if os.path.exists(os.path.join(path, _HELD_RECORD)):  # also after a kill between these steps
            if not os.path.isdir(record):
                os.mkdir(record)  # a missing RECORD holds nothing
            if not os.path.exists(os.path.join(record, "README")):
                _write_note(os.path.join(record, "README"),
                            f"Held by {INSTALLER_NOTE}: the real RECORD is {_HELD_RECORD}.\n")
        if os.path.exists(os.path.join(path, _HELD_RECORD)):
            done.append(name)
    return sorted(done)


def _ours(installer: str) -> bool:
    try:
        with open(installer, encoding="utf-8", errors="replace") as handle:
            return handle.read(200).strip() == INSTALLER_NOTE
    except OSError:
        return False


def _write_note(path: str, text: str) -> None:
    tmp = f"{path}.torchsmith-tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def release(prefix: str) -> List[str]:
    """Give every held distribution its ``RECORD`` and ``INSTALLER`` back; the names released."""
    done: List[str] = []
    for name, _version, path in _dist_infos(prefix):
        kept = os.path.join(path, _HELD_RECORD)
        installer = os.path.join(path, "INSTALLER")
        held_installer = os.path.join(path, _HELD_INSTALLER)
        if not (os.path.exists(kept) or os.path.exists(held_installer) or _ours(installer)):
            continue  # not held; a release a kill stopped half-way still has an INSTALLER to give back
        record = os.path.join(path, "RECORD")
        if os.path.exists(kept):
            if os.path.isdir(record):
                shutil.rmtree(record)
            os.replace(kept, record)
        if os.path.exists(held_installer):
            os.replace(held_installer, installer)
        elif os.path.isfile(installer):  # there was none: ours goes again
            os.remove(installer)
        done.append(name)
    return sorted(done)


def held(prefix: str) -> List[str]:
    return sorted(name for name, _v, path in _dist_infos(prefix)
                  if os.path.exists(os.path.join(path, _HELD_RECORD)))


def _file_constraint(text: Optional[str]) -> Optional[str]:
    """The ``[install] constraint`` a pip configuration file sets (it beats the site file's)."""
    if not text:
        return None
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if parser.has_option("install", "constraint"):
        return parser.get("install", "constraint")
    return None


def bypasses(prefix: str, guard_file: str, environ: Mapping[str, str],
             read: Callable[[str], Optional[str]]) -> List[str]:
    """Why pip or uv would not apply the guard's constraints here: one line per setting."""
    found: List[str] = []
    config_file = environ.get("PIP_CONFIG_FILE")
    if config_file is not None and config_file in (os.devnull, "/dev/null", "nul", "NUL"):
        found.append(f"PIP_CONFIG_FILE={config_file}: pip reads no configuration file, so not "
                     f"{os.path.join(prefix, 'pip.conf')}")
    elif config_file:
        value = _file_constraint(read(config_file))
        if value is not None and not names_guard(value, guard_file):
            found.append(f"PIP_CONFIG_FILE={config_file} sets [install] constraint = {value}, which "
                         "replaces the guard's for pip")
    constraint = environ.get("PIP_CONSTRAINT")
    if constraint is not None and not names_guard(constraint, guard_file):
        found.append(f"PIP_CONSTRAINT={constraint or '(empty)'} replaces the guard's constraint for pip")
    active = environ.get("VIRTUAL_ENV") or environ.get("CONDA_PREFIX") or ""
    uv_constraint = environ.get("UV_CONSTRAINT")
    if active and os.path.realpath(active) == os.path.realpath(prefix):
        if uv_constraint is None:
            found.append("UV_CONSTRAINT is not set in this activated shell (activated before the guard "
                         "was put on?): uv does not apply the guard here")
        elif not names_guard(uv_constraint, guard_file):
            found.append(f"UV_CONSTRAINT={uv_constraint or '(empty)'} in this shell replaces the guard's "
                         "constraint for uv")
    return found
