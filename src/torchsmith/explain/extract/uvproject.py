"""How a uv project chose its torch build, read from the commands and configuration a text shows.
Pure.

- ``uv run`` syncs the project environment before it runs the command, with the default extras
  and groups unless given others (``--extra``, ``--group``, ``--all-extras``; ``--no-sync`` skips
  it: https://docs.astral.sh/uv/concepts/projects/run/, /sync/). After ``uv sync --extra cuda``, a
  bare ``uv run`` followed by uv's own "Uninstalled N packages" replaced what the extra selected.
- A PEP 508 marker's ``platform_machine`` is Python's ``platform.machine()``, which is ``AMD64`` on
  64-bit Windows (https://docs.python.org/3/library/platform.html#platform.machine,
  https://peps.python.org/pep-0508/#environment-markers): a source gated on
  ``platform_machine == 'x86_64'`` never applies there.
"""

from __future__ import annotations

import re
from typing import List, Optional

from torchsmith.explain.extract.model import InstallerError

__all__ = ["run_resynced_without_extra", "source_marker_misses_windows"]

_UV_COMMAND = re.compile(r"^[^\n]{0,200}?\buv(?:\.exe)? (?P<sub>sync|run)\b(?P<args>[^\n]*)$", re.MULTILINE)
_SELECTION = re.compile(r"--(?:extra|group|only-group)[ =](?P<name>[\w.-]+)|--all-extras\b|--all-groups\b")
_UNINSTALLED = re.compile(r"^\s*Uninstalled \d+ packages? in\b", re.MULTILINE)
_RUN_SOURCES = ("https://docs.astral.sh/uv/concepts/projects/run/",
                "https://docs.astral.sh/uv/concepts/projects/sync/")
_AFTER_LINES = 4  # uv's own lines right after the `uv run` command: its sync's summary


def run_resynced_without_extra(text: str) -> List[InstallerError]:
    """``uv sync`` with an extra or group, then a ``uv run`` without it that uninstalled packages."""
    if "uv" not in text or "Uninstalled" not in text:
        return []
    selected: Optional[str] = None
    for command in _UV_COMMAND.finditer(text):
        args = command.group("args")
        chosen = _SELECTION.search(args)
        if command.group("sub") == "sync":
            selected = chosen.group(0) if chosen else selected
            continue
        if selected is None or chosen is not None or "--no-sync" in args:
            continue
        after = "\n".join(text[command.end():].lstrip("\n").split("\n")[:_AFTER_LINES])
        if not _UNINSTALLED.search(after):
            continue
        meaning = (f"the environment was synced with {selected}, and `uv run{args.rstrip()}` gives no extra "
                   f"or group: uv run syncs the project to its default set first, and uninstalled what "
                   f"{selected} had installed (uv's 'Uninstalled' line right after it)")
        return [InstallerError("uv", "run-resynced", command.group(0).strip()[:240], meaning, selected,
                               _RUN_SOURCES)]
    return []


_X86_MARKER = re.compile(r"^[^\n]{0,300}platform_machine\s*==\s*['\"]x86_64['\"][^\n]{0,300}", re.MULTILINE)
_AMD64_MARKER = re.compile(r"platform_machine\s*(?:==|in)\s*['\"][^'\"\n]{0,40}AMD64", re.IGNORECASE)
_LINUX_ONLY = re.compile(r"(?:sys_platform\s*==\s*['\"](?:linux|darwin)|platform_system\s*==\s*['\"]"
                         r"(?:Linux|Darwin))")
# a marker that selects Windows itself: another source entry then covers it
_WINDOWS_MARKER = re.compile(r"sys_platform\s*==\s*['\"]win32|platform_system\s*==\s*['\"]Windows"
                             r"|os_name\s*==\s*['\"]nt")
_UV_CONFIG = re.compile(r"tool\.uv\.sources|\[\[tool\.uv\.index\]\]|\bindex\s*=\s*['\"]")
# 64-bit Windows as Python itself reports it: platform.machine()'s 'AMD64', sys.version's
# "(AMD64)] on win32", a win_amd64 wheel tag.
_WINDOWS_AMD64 = re.compile(r"platform\.machine\(\)\s*\n?\s*'AMD64'|\(AMD64\)\] on win32|\bwin_amd64\b")
_MARKER_SOURCES = ("https://docs.python.org/3/library/platform.html#platform.machine",
                   "https://peps.python.org/pep-0508/#environment-markers",
                   "https://docs.astral.sh/uv/concepts/indexes/#pinning-a-package-to-an-index")


def source_marker_misses_windows(text: str) -> List[InstallerError]:
    """A uv source or index gated on platform_machine == 'x86_64' alone, where the text shows 64-bit
    Windows (whose platform_machine is AMD64) and no marker names AMD64 or selects Windows itself
    (sys_platform == 'win32': another entry covers Windows)."""
    if "x86_64" not in text or "AMD64" not in text or _AMD64_MARKER.search(text):
        return []
    if _WINDOWS_MARKER.search(text):
        return []
    marker = _X86_MARKER.search(text)
    if marker is None or _LINUX_ONLY.search(marker.group(0)) or not _UV_CONFIG.search(text):
        return []
    windows = _WINDOWS_AMD64.search(text)
    if windows is None:
        return []
    meaning = ("a uv source/index is gated on platform_machine == 'x86_64', and on 64-bit Windows "
               f"platform_machine is 'AMD64' (the text shows it: {' '.join(windows.group(0).split())}), so "
               "the marker is false there and Windows takes torch from whatever source applies otherwise "
               "(PyPI's Windows torch is the CPU-only build)")
    return [InstallerError("uv", "marker-misses-windows", marker.group(0).strip()[:240], meaning, "torch",
                           _MARKER_SOURCES)]
