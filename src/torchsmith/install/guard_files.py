"""The files ``guard on`` changes, changed so that ``guard off`` gives them back byte for byte.

Before its first change to a file (``pip.conf``, an activate script) ``guard on`` saves the
file's bytes, or that it was absent, or the symlink it was, in ``torchsmith-guard-saved.json``
beside the guard file, with the digest of what it wrote. ``guard off`` puts the saved bytes back
when the file still holds exactly what the guard wrote; a file edited since then keeps the edit
and loses only the guard's lines. A symlinked ``pip.conf`` is never written through: the guard
writes a file in the link's place and ``guard off`` puts the link back. Every write goes to a
temporary file first, then replaces the old one in one rename.

pip splits ``[install] constraint`` on whitespace, and uv splits ``UV_CONSTRAINT`` likewise, so
a guard file whose path holds a space is named by its ``file:`` URL, which both read.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pathlib
import re
from typing import Dict, List, Optional

__all__ = ["SAVED_FILE", "constraint_reference", "names_guard", "pip_conf_with", "pip_conf_without",
           "read_bytes", "restore", "save_original", "without_guard", "write_atomic"]

SAVED_FILE = "torchsmith-guard-saved.json"
_MAX_BYTES = 1 << 20
_SECTION = re.compile(r"^[ \t]*\[([^\]\r\n]*)\][ \t]*$", re.M)
_CONSTRAINT = re.compile(r"^([ \t]*constraint[ \t]*[=:])([^\r\n]*)$", re.M)


def constraint_reference(guard: str) -> str:
    """How pip's configuration and ``UV_CONSTRAINT`` name the guard file."""
    if any(char.isspace() for char in guard):
        return pathlib.Path(guard).as_uri()
    return guard


def _forms(guard: str) -> List[str]:
    return sorted({guard, constraint_reference(guard), pathlib.Path(guard).as_uri()}, key=len, reverse=True)


def without_guard(value: str, guard: str) -> Optional[str]:
    """``value`` (a whitespace-separated list) without the guard file; None when it names none.
    A path with a space written plainly by an older torchsmith counts too."""
    found = False
    for form in _forms(guard):
        pattern = re.compile(r"(?<!\S)" + re.escape(form) + r"(?!\S)")
        if pattern.search(value):
            found = True
            value = pattern.sub(" ", value)
    return " ".join(value.split()) if found else None


def names_guard(value: str, guard: str) -> bool:
    return without_guard(value, guard) is not None


def read_bytes(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as handle:
            return handle.read(_MAX_BYTES)
    except OSError:
        return None


def write_atomic(path: str, data: bytes) -> None:
    """Replace ``path`` (a symlink itself, never its target) in one rename."""
    tmp = f"{path}.torchsmith-tmp"
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    if os.path.isfile(path) and not os.path.islink(path):
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)  # the file keeps its permissions
    os.replace(tmp, path)


def _saved_path(prefix: str) -> str:
    return os.path.join(prefix, SAVED_FILE)


def _load(prefix: str) -> Dict[str, Dict[str, Optional[str]]]:
    data = read_bytes(_saved_path(prefix))
    try:
        loaded = json.loads(data.decode("utf-8")) if data else {}
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _store(prefix: str, saved: Dict[str, Dict[str, Optional[str]]]) -> None:
    if saved:
        write_atomic(_saved_path(prefix), json.dumps(saved, indent=1, sort_keys=True).encode("utf-8"))
    elif os.path.lexists(_saved_path(prefix)):
        os.remove(_saved_path(prefix))


def save_original(prefix: str, path: str, written: bytes) -> None:
    """Remember ``path`` as it is now (unless already remembered) and the bytes about to be written."""
    saved = _load(prefix)
    key = os.path.relpath(path, prefix)
    entry = saved.get(key)
    if entry is None:
        link = os.readlink(path) if os.path.islink(path) else None
        data = None if link is not None or not os.path.exists(path) else read_bytes(path)
        entry = {"link": link, "bytes": base64.b64encode(data).decode("ascii") if data is not None else None}
    entry["written"] = hashlib.sha256(written).hexdigest()
    saved[key] = entry
    _store(prefix, saved)


def restore(prefix: str, path: str) -> bool:
    """Put ``path`` back as saved when it still holds what the guard wrote; whether it did."""
    saved = _load(prefix)
    key = os.path.relpath(path, prefix)
    entry = saved.pop(key, None)
    if entry is None:
        return False
    current = None if os.path.islink(path) else read_bytes(path)
    done = current is not None and hashlib.sha256(current).hexdigest() == entry.get("written")
    if done:
        if entry.get("link") is not None:
            tmp = f"{path}.torchsmith-tmp"
            if os.path.lexists(tmp):
                os.remove(tmp)
            os.symlink(str(entry["link"]), tmp)
            os.replace(tmp, path)
        elif entry.get("bytes") is not None:
            write_atomic(path, base64.b64decode(str(entry["bytes"])))
        else:
            os.remove(path)
    _store(prefix, saved)
    return done


def pip_conf_with(text: str, reference: str) -> str:
    """``text`` (a pip.conf) with the guard file added to ``[install] constraint``."""
    newline = "\r\n" if "\r\n" in text else "\n"
    sections = list(_SECTION.finditer(text))
    for number, header in enumerate(sections):
        if header.group(1).strip() != "install":
            continue
        end = sections[number + 1].start() if number + 1 < len(sections) else len(text)
        option = _CONSTRAINT.search(text, header.end(), end)
        if option:
            value = option.group(2).rstrip(" \t")
            joined = f"{value} {reference}" if value.strip() else f" {reference}"
            return text[:option.start(2)] + joined + text[option.end(2):]
        return text[:header.end()] + f"{newline}constraint = {reference}" + text[header.end():]
    lead = "" if not text or text.endswith(("\n", "\r")) else newline
    return f"{text}{lead}[install]{newline}constraint = {reference}{newline}"


def pip_conf_without(text: str, guard: str) -> str:
    """``text`` with the guard file taken out of every ``constraint`` line (an emptied line goes)."""
    def drop(match: re.Match[str]) -> str:
        rest = without_guard(match.group(2), guard)
        if rest is None:
            return match.group(0)
        return f"{match.group(1)} {rest}" if rest else "\0"

    kept = _CONSTRAINT.sub(drop, text)
    return re.sub(r"\0(\r?\n)?", "", kept)
