"""The extra sources pip is configured with: ``extra-index-url`` and ``find-links``.

uv reads neither pip's configuration files nor ``PIP_*`` variables (astral-sh/uv#1450), so a
resolver run through uv on pip's behalf is given them in uv's own spelling
(``--extra-index-url``, ``--find-links``). Read as pip reads them
(https://pip.pypa.io/en/stable/topics/configuration/): files in pip's order, a later file
overriding an earlier one, ``[install]`` over ``[global]``, and an environment variable over
every file; a value is a whitespace-separated list.
"""

from __future__ import annotations

import configparser
from typing import Callable, Dict, Mapping, Optional, Tuple

from torchsmith.kb.refresh import pip_config_files

__all__ = ["pip_sources"]

_OPTIONS = {"extra-index-url": "PIP_EXTRA_INDEX_URL", "find-links": "PIP_FIND_LINKS"}


def pip_sources(environ: Mapping[str, str], read: Callable[[str], Optional[str]]
                ) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """(extra index URLs, find-links locations) pip would use here; files read with ``read``."""
    found: Dict[str, str] = {}
    for path in pip_config_files(environ):
        parser = configparser.RawConfigParser()
        try:
            parser.read_string(read(path) or "", source=path)
        except configparser.Error:
            continue
        for option in _OPTIONS:
            for section in ("global", "install"):  # the command's section wins over global
                if parser.has_option(section, option):
                    found[option] = parser.get(section, option)
    for option, variable in _OPTIONS.items():
        if environ.get(variable):
            found[option] = environ[variable]
    extra, links = (tuple(dict.fromkeys(found.get(o, "").split())) for o in _OPTIONS)
    return extra, links
