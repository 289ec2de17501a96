"""Where packages would come from: index settings in pip, uv and conda configuration files.

Only reported, never acted on: ``install`` always passes the indexes it means explicitly. The
files are read through the Host like everything else; credentials in URLs are redacted.
"""

from __future__ import annotations

import re

from torchsmith import TYPE_CHECKING
from torchsmith.host import Host, PlatformInfo
from torchsmith.probe.system import redact_url

if TYPE_CHECKING:
    from typing import Dict, List, Tuple

__all__ = [
    "config_files",
    "detect_index_settings",
    "parse_condarc",
    "parse_pip_config",
    "parse_uv_config",
]

_PIP_KEYS = {"index-url", "extra-index-url", "find-links", "constraint", "trusted-host",
             "no-index", "only-binary"}
# Read only where a uv.toml exists: a pattern as text, compiled (and cached) by re when first used.
_UV_LINE = (r'^\s*(index-url|extra-index-url|default-index|find-links|url|torch-backend|'
            r'index-strategy|constraint-dependencies)\s*=\s*(.+?)\s*$')
_CONDA_KEYS = ("channels", "default_channels", "channel_alias", "custom_channels",
               "channel_priority")


def parse_pip_config(text: str) -> List[Tuple[str, str, str]]:
    """(section, key, value) for the index-related keys of a pip.conf / pip.ini."""
    import configparser

    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    found = []
    for section in parser.sections():
        for key, value in parser.items(section):
            name = key.replace("_", "-")
            if name in _PIP_KEYS:
                found.append((section, name, " ".join(value.split())))
    return found


def parse_uv_config(text: str) -> List[Tuple[str, str]]:
    """(key, value) for index settings of a uv.toml (a line scan: no TOML parser on 3.8)."""
    found = []
    section = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]").strip()
            continue
        match = re.match(_UV_LINE, line)
        if match:
            key = f"{section}.{match.group(1)}" if section else match.group(1)
            found.append((key, match.group(2).strip().strip('"').strip("'")))
    return found


def parse_condarc(text: str) -> List[Tuple[str, str]]:
    """(key, value) for channel settings of a .condarc (a tolerant YAML subset)."""
    found: List[Tuple[str, str]] = []
    current = ""
    items: List[str] = []
    for line in [*text.splitlines(), "end:"]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace() and not line.startswith("-"):
            if current and items:
                found.append((current, ", ".join(items)))
            key, _, value = line.partition(":")
            current, items = (key.strip(), []) if key.strip() in _CONDA_KEYS else ("", [])
            if current and value.strip():
                items.append(value.strip().strip("[]"))
        elif current:
            item = line.strip().lstrip("-").strip()
            if item:
                items.append(item)
    return found


def config_files(host: Host, plat: PlatformInfo) -> Dict[str, List[str]]:
    """The configuration files each tool reads, in the tool's own order."""
    env = host.environ()
    home = env.get("HOME") or env.get("USERPROFILE") or ""
    xdg_home = env.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else "")
    xdg_dirs = [d for d in (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":") if d]
    pip_file = env.get("PIP_CONFIG_FILE")
    # pip's own rule: PIP_CONFIG_FILE=/dev/null loads no file at all; an existing one replaces the
    # user's files (the global and site ones still apply, beneath it).
    own_pip = pip_file if pip_file and host.read_text(pip_file) is not None else None
    if plat.system == "Windows":
        appdata = env.get("APPDATA", "")
        program_data = env.get("PROGRAMDATA", "C:\\ProgramData")
        pip = [f"{program_data}\\pip\\pip.ini", *([] if own_pip else [f"{appdata}\\pip\\pip.ini"]),
               f"{plat.python_prefix}\\pip.ini"]
        uv = [f"{program_data}\\uv\\uv.toml", f"{appdata}\\uv\\uv.toml"]
    else:
        pip = [*(f"{d}/pip/pip.conf" for d in xdg_dirs), "/etc/pip.conf"]
        if home and not own_pip:
            pip += [f"{home}/.pip/pip.conf", f"{xdg_home}/pip/pip.conf"]
            if plat.system == "Darwin":
                pip.append(f"{home}/Library/Application Support/pip/pip.conf")
        pip.append(f"{plat.python_prefix}/pip.conf")
        uv = [*(f"{d}/uv/uv.toml" for d in xdg_dirs), "/etc/uv/uv.toml"]
        if xdg_home:
            uv.append(f"{xdg_home}/uv/uv.toml")
    if pip_file in ("/dev/null", "nul", "NUL"):
        pip = []
    elif own_pip:
        pip.append(own_pip)
    uv_file = env.get("UV_CONFIG_FILE")
    if env.get("UV_NO_CONFIG"):
        uv = []
    elif uv_file and uv_file not in ("/dev/null", "nul", "NUL"):
        uv = [uv_file]  # uv reads only this file then
    conda = [f"{home}/.condarc", f"{home}/.conda/.condarc"] if home else []
    for var in ("CONDA_PREFIX", "CONDARC"):
        if env.get(var):
            conda.append(env[var] if var == "CONDARC" else f"{env[var]}/.condarc")
    return {"pip": list(dict.fromkeys(pip)), "uv": list(dict.fromkeys(uv)),
            "conda": list(dict.fromkeys(conda))}


def detect_index_settings(host: Host, plat: PlatformInfo) -> Dict[str, str]:
    """``{"pip /etc/pip.conf [global] index-url": "https://mirror/simple", ...}``."""
    settings: Dict[str, str] = {}
    for tool, paths in config_files(host, plat).items():
        for path in paths:
            text = host.read_text(path)
            if not text:
                continue
            if tool == "pip":
                for section, key, value in parse_pip_config(text):
                    settings[f"pip {path} [{section}] {key}"] = redact_url(value)
            else:
                parse = parse_uv_config if tool == "uv" else parse_condarc
                for key, value in parse(text):
                    settings[f"{tool} {path} {key}"] = redact_url(value)
    return settings
