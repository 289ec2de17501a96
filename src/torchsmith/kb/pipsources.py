"""pip's configuration as ``pip install`` reads it, and the extra sources it names.

uv reads neither pip's configuration files nor ``PIP_*`` variables (astral-sh/uv#1450), so a
resolver run through uv on pip's behalf is given them in uv's own spelling
(``--extra-index-url``, ``--find-links``). Read as pip reads them
(https://pip.pypa.io/en/stable/topics/configuration/): files in pip's order, a later file
overriding an earlier one, ``[install]`` over ``[global]``, and an environment variable over
every file; a value is a whitespace-separated list.
"""

from __future__ import annotations

import configparser
import os
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Tuple

__all__ = ["pip_config_files", "pip_file_options", "pip_sources"]

_OPTIONS = {"extra-index-url": "PIP_EXTRA_INDEX_URL", "find-links": "PIP_FIND_LINKS"}


def pip_config_files(env: Mapping[str, str], read: Callable[[str], Optional[str]]) -> List[str]:
    """pip's configuration files, in the order pip reads them (a later one wins): the global
    ones, the user's unless ``PIP_CONFIG_FILE`` names a file that exists, the environment's own,
    then ``PIP_CONFIG_FILE`` itself; ``PIP_CONFIG_FILE=/dev/null`` loads none (pip's
    ``Configuration.iter_config_files``)."""
    own = env.get("PIP_CONFIG_FILE")
    if own == os.devnull:
        return []
    own_exists = bool(own) and read(own or "") is not None
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    dirs = (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep)
    files = [os.path.join(d, "pip", "pip.conf") for d in dirs] + ["/etc/pip.conf"]
    if not own_exists:
        files += [os.path.join(home, ".pip", "pip.conf"), os.path.join(xdg, "pip", "pip.conf")]
    if env.get("VIRTUAL_ENV"):
        files.append(os.path.join(env["VIRTUAL_ENV"], "pip.conf"))
    if own_exists:
        files.append(own or "")
    return files


def pip_file_options(environ: Mapping[str, str], read: Callable[[str], Optional[str]],
                     options: Iterable[str]) -> Dict[str, Tuple[str, str]]:
    """option -> (value, file) as pip install takes them from its files: a later file wins, and
    within a file ``[install]`` wins over ``[global]``. Unreadable files are passed over."""
    wanted = tuple(options)
    found: Dict[str, Tuple[str, str]] = {}
    for path in pip_config_files(environ, read):
        parser = configparser.RawConfigParser()
        try:
            parser.read_string(read(path) or "", source=path)
        except configparser.Error:
            continue
        for option in wanted:
            for section in ("install", "global"):
                if parser.has_option(section, option):
                    found[option] = (parser.get(section, option).strip(), path)
                    break
    return found


def pip_sources(environ: Mapping[str, str], read: Callable[[str], Optional[str]]
                ) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """(extra index URLs, find-links locations) pip would use here; files read with ``read``."""
    found = {option: value for option, (value, _) in pip_file_options(environ, read, _OPTIONS).items()}
    for option, variable in _OPTIONS.items():
        if environ.get(variable):
            found[option] = environ[variable]
    extra, links = (tuple(dict.fromkeys(found.get(o, "").split())) for o in _OPTIONS)
    return extra, links
