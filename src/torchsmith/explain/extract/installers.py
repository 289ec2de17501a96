"""uv's refusal of an option newer than the uv shown (``installer_options``), pip's log of the torch
builds it prepared, and the wheel-variant installers' own messages (uv's preview ``wheel-variants``,
variantlib), read through the vocabulary in ``error_vocab.json`` (``installer_messages``: each
message's regex, kind and meaning, with the source it was read from). Pure: no I/O.

Kinds: ``no-variant`` (no variant fits the machine), ``preview-off`` (uv reads variants only with
the preview flag), ``pylock`` (pylock.toml cannot hold a variant wheel), ``provider`` (a provider
plugin failed), ``provider-skipped`` (a provider never ran), ``metadata`` (variants.json unreadable).
The text also says how uv resolved: ``your project`` means ``uv lock``/``sync`` (a universal
resolution), whose answer for variants differs from ``uv pip install``'s.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Sequence

from torchsmith.explain.extract.model import InstallerError
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["backend_too_new", "installer_errors", "option_too_new", "preview_flag", "project_resolution",
           "pypi_cpu_build",
           "torch_set_aside"]

_PREVIEW = re.compile(r"--preview-features[= ]+[\w,-]*wheel-variants|--preview(?![-\w])|UV_PREVIEW=1"
                      r"|UV_PREVIEW_FEATURES=[\w,-]*wheel-variants")
_COMMAND = re.compile(r"\buv (?:pip (?:install|compile|sync)|lock|sync|add|run|export)\b[^\n]*")


def installer_errors(text: str, rows: Sequence[Mapping[str, Any]]) -> List[InstallerError]:
    """Each variant-installer message the text holds, first occurrence per row."""
    if "variant" not in text and "Plugin invocation failed" not in text \
            and "plugin has been loaded" not in text:
        return []  # every message names variants or a provider plugin
    found: List[InstallerError] = []
    for row in rows:
        match = re.search(str(row["regex"]), text)
        if match is None:
            continue
        groups = match.groupdict()
        meaning = _why_no_variant(text) if row["kind"] == "no-variant" else str(row["meaning"])
        found.append(InstallerError(str(row["installer"]), str(row["kind"]), match.group(0).strip()[:240],
                                    meaning, groups.get("package") or groups.get("provider"),
                                    tuple(row.get("source", ()))))
    return found


def _why_no_variant(text: str) -> str:
    """Why no variant was chosen, as far as the text shows how uv was run."""
    if project_resolution(text):
        return ("uv resolved a project (uv lock / sync / add), which resolves for every machine at once "
                "and cannot choose among variants: it treats them all as unsupported; a variant install "
                "works only with `uv pip install`")
    preview = preview_flag(text)
    if preview is False:
        return ("the uv command shown has no --preview-features wheel-variants, and without it uv treats "
                "every variant wheel as unsupported")
    if preview:
        return ("none of the published variants fits what uv's variant providers report on this machine, "
                "and no null (CPU) variant was published to fall back to: e.g. a driver whose CUDA is below "
                "every label's CUDA floor, a GPU outside every label's sm list, or a non-NVIDIA GPU, whose "
                "provider uv does not run")
    return ("either the wheel-variants preview was off (uv then treats every variant wheel as unsupported) "
            "or none of the variants fits what uv's providers report here (the command is not shown)")


def preview_flag(text: str) -> Optional[bool]:
    """Whether the text's uv command enabled the wheel-variants preview (None: no command shown)."""
    if _PREVIEW.search(text) or "preview features are enabled: wheel-variants" in text:
        return True
    return False if _COMMAND.search(text) else None


def project_resolution(text: str) -> bool:
    """uv resolved a project (``uv lock``/``sync``/``add``: for every platform at once)."""
    return bool(re.search(r"your project(?:'s)? (?:depends on|requires)|\buv (?:lock|sync|add)\b", text))


# pip logs each candidate it prepares: "Collecting <req>" then the file it fetched, "Downloading|Using
# cached <url>" (network/download.py: the file name alone for PyPI's file host, the whole URL elsewhere;
# operations/prepare.py). A torch wheel's name carries its version and local build label (+cu128, %2B
# when URL-quoted).
_TORCH_FETCH = re.compile(r"^[^\n]*?\b(?:Downloading|Using cached)\s+(?P<where>\S*?/)?"
                          r"torch-(?P<version>\d[\w.]*?)"
                          r"(?:(?:\+|%2B)(?P<label>[a-z]+[\d.]*))?-cp\d", re.MULTILINE)
_GPU_LABEL = re.compile(r"cu\d{2,3}|rocm[\d.]+|xpu")
_PIP_SOURCES = ("https://github.com/pypa/pip/blob/main/src/pip/_internal/operations/prepare.py",
                "https://github.com/pypa/pip/blob/main/src/pip/_internal/network/download.py")


def torch_set_aside(text: str) -> List[InstallerError]:
    """pip's resolver prepared a torch GPU build (+cuXXX, +rocm, +xpu) and later another torch without
    that label: it set the build aside for a torch another requirement accepts, which it installs
    unless the resolution then fails (a conflict, which its own message states)."""
    if "Collecting torch" not in text or "ResolutionImpossible" in text:
        return []
    fetched = list(_TORCH_FETCH.finditer(text))
    for at, first in enumerate(fetched):
        if not _GPU_LABEL.fullmatch(first.group("label") or ""):
            continue
        later = next((m for m in fetched[at + 1:] if m.group("label") != first.group("label")), None)
        if later is None:
            return []
        build = f"{first.group('version')}+{first.group('label')}"
        other = later.group("version") + (f"+{later.group('label')}" if later.group("label") else "")
        source = (f"from {later.group('where')}" if later.group("where") else
                  "named by file alone, as pip names PyPI's files and its own wheel cache's")
        meaning = (f"pip's resolver first prepared torch {build}, then torch {other} {source} "
                   "(pip logs each candidate it prepares)")
        return [InstallerError("pip", "torch-set-aside", later.group(0).strip()[:240], meaning, build,
                               _PIP_SOURCES)]
    return []


# The wheel pip downloaded by its file name alone: PyPI's (network/download.py names only files of
# PyPI's file host so); its platform tag says which of PyPI's builds it is.
_PYPI_TORCH = re.compile(r"^[^\n]*?\bDownloading torch-(?P<version>\d+(?:\.\d+)+)-cp\d+[\w]*-[\w]+-"
                         r"(?P<platform>win_amd64|(?:many)?linux\w*_(?:x86_64|aarch64))\.whl", re.MULTILINE)
_FAILURE = re.compile(r"^\s*(?:ERROR\b|error:|Traceback \(most recent call last\)|(?:\w+\.)*[A-Z]\w*"
                      r"(?:Error|Exception)\b)", re.MULTILINE)
_PLATFORM_OF_TAG = (("win_amd64", "windows-x86_64"), ("aarch64", "linux-aarch64"), ("x86_64", "linux-x86_64"))


def pypi_cpu_build(text: str, kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """pip downloaded torch from PyPI (the file named alone, no local label) and installed it, for a
    platform where PyPI's wheel of that release is the CPU-only build (the data's ``pypi_default``).
    Only from a log that shows no failure: where one follows, that failure is what the text reports."""
    if kb is None or "Successfully installed" not in text or _FAILURE.search(text):
        return []
    for fetched in _PYPI_TORCH.finditer(text):
        version = fetched.group("version")
        if not re.search(r"^Successfully installed\b[^\n]*\btorch-" + re.escape(version) + r"(?![\w.+])",
                         text, re.MULTILINE):
            continue
        tag = fetched.group("platform")
        platform = next(name for key, name in _PLATFORM_OF_TAG if key in tag)
        release = kb.release(version)
        if release is None or release.pypi_default.get(platform) != "cpu":
            continue
        meaning = (f"pip installed torch {version} from PyPI (its wheel named by file alone, as pip names "
                   f"PyPI's files), and PyPI's torch {version} for {platform} is the CPU-only build")
        return [InstallerError("pip", "pypi-cpu-build", fetched.group(0).strip()[:240], meaning, version,
                               _PIP_SOURCES)]
    return []


# clap's refusal (clap_builder/src/error/format.rs) and the usage line it prints under it, whose words
# before the first option or placeholder are the subcommand; `uv --version` prints "uv X.Y.Z (hash date)".
_UNKNOWN_OPTION = re.compile(r"error: unexpected argument '(?P<option>--[\w-]{1,60})' found")
_USAGE = re.compile(r"^\s*Usage: uv(?:\.exe)? (?P<command>[a-z][a-z-]*(?: [a-z][a-z-]*)?)(?= [-<\[]|\s*$)",
                    re.MULTILINE)
_UV_VERSION = re.compile(r"^\W{0,6}uv (?P<version>\d+\.\d+\.\d+)(?: \([^)\n]*\))?[ \t]*$", re.MULTILINE)


def option_too_new(text: str, rows: Sequence[Mapping[str, Any]]) -> List[InstallerError]:
    """uv refused an option that the uv release the text shows predates: the data names the release
    that added it to that subcommand. Not when the subcommand or the version is not shown (the option
    may belong to another subcommand), nor for a uv as new as that release."""
    refused = _UNKNOWN_OPTION.search(text) if "unexpected argument" in text else None
    usage = _USAGE.search(text) if refused else None
    shown = _UV_VERSION.search(text) if usage else None
    if refused is None or usage is None or shown is None:
        return []
    option, command, version = refused.group("option"), usage.group("command"), shown.group("version")
    for row in rows:
        known = command in row.get("commands", ())
        if (row.get("installer"), row.get("option")) != ("uv", option) or not known:
            continue
        since = str(row["since"])
        if version_tuple(version) >= version_tuple(since):
            return []
        meaning = (f"uv {version} predates {option}, which `uv {command}` accepts from uv {since} on "
                   "(uv's changelog; the releases' own --help)")
        return [InstallerError("uv", "option-too-new", refused.group(0), meaning, option,
                               tuple(row.get("source", ())))]
    return []


# clap's refusal of a value outside an option's enum, with the values this binary knows
# (clap_builder/src/error/format.rs: "invalid value '{}' for '{}'", then "[possible values: ...]").
_INVALID_BACKEND = re.compile(r"error: invalid value '(?P<value>[\w.]{1,20})' for '--torch-backend"
                              r"(?: <[A-Z_]+>)?'\s*\n?\s*\[possible values: (?P<known>[^\]\n]{1,2000})\]")
_BACKEND_SOURCES = ("https://github.com/clap-rs/clap/blob/master/clap_builder/src/error/format.rs",
                    "https://docs.astral.sh/uv/reference/cli/#uv-pip-install--torch-backend",
                    "https://download.pytorch.org/whl/torch/")


def backend_too_new(text: str, kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """uv refused a --torch-backend value that names a variant PyTorch publishes torch for, and the
    values it lists lack it: uv learns each PyTorch index at a release, so this uv predates it."""
    refused = _INVALID_BACKEND.search(text) if kb is not None and "--torch-backend" in text else None
    if refused is None or kb is None:
        return []
    value = refused.group("value")
    known = {v.strip() for v in refused.group("known").split(",")}
    published = sorted((r.version for r in kb.releases if r.variant(value) is not None), key=version_tuple)
    if value in known or not published:
        return []
    shown = _UV_VERSION.search(text)
    uv = f"uv {shown.group('version')}" if shown else "this uv"
    meaning = (f"{uv} lists the torch backends it knows, and {value} is not among them, while PyTorch "
               f"publishes torch {published[0]} to {published[-1]} for {value}: uv adds each PyTorch index "
               f"to --torch-backend in a release, so this uv predates {value}")
    return [InstallerError("uv", "option-too-new", refused.group(0).split("\n")[0].strip(), meaning,
                           f"--torch-backend {value}", _BACKEND_SOURCES)]
