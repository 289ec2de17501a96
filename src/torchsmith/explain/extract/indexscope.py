"""Which indexes pip read, from its own "Looking in indexes:" line, and a requirement none of them
could have held. Pure.

pip prints ``Looking in indexes: URL, URL`` before it resolves whenever its indexes are other than
PyPI alone, and lists there every index it reads: --index-url (or pip.conf's / PIP_INDEX_URL's)
first, then each extra index (``SearchScope.get_formatted_locations``,
src/pip/_internal/models/search_scope.py). When every URL listed is a PyTorch index
(download.pytorch.org), PyPI was not read at all: --index-url replaced it. A PyTorch index
carries torch, its companions and copies of torch's own dependencies; a requirement outside those
is then found nowhere ("from versions: none").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, FrozenSet, List

from torchsmith.compat import VARIANT_TOKEN
from torchsmith.explain.extract.model import InstallerError
from torchsmith.kb.pkgmeta import canonical
from torchsmith.refusal.model import split_requirement

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.refusal import Refusal

__all__ = ["pytorch_index_alone", "uv_pytorch_index_alone"]

_LOOKING = re.compile(r"^Looking in indexes: (?P<urls>[^\n]{1,2000})$", re.MULTILINE)
_PYTORCH_URL = re.compile(r"https?://download\.pytorch\.org/whl(?:/[\w.]+){0,3}/?")
# What PyTorch publishes on its indexes beside torch's own dependencies: its packages and their
# compiled companions (https://download.pytorch.org/whl/ lists them).
_PYTORCH_PACKAGES = frozenset({"torch", "torchvision", "torchaudio", "torchtext", "torchdata", "torchrec",
                               "torchao", "torchcodec", "torchtune", "fbgemm-gpu", "executorch",
                               "triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu"})
_SOURCES = ("https://github.com/pypa/pip/blob/23.2.1/src/pip/_internal/models/search_scope.py",
            "https://download.pytorch.org/whl/")


def _torch_dependencies(kb: KnowledgeBase, urls: List[str]) -> FrozenSet[str]:
    """Every package a torch release the indexes ``urls`` serve requires (torch_requires.json),
    extras aside: the releases built for the variants the URLs name (whl/cu117, whl/nightly/cu117),
    or every release where a URL names none."""
    variants = {m.group(1) for u in urls for m in [re.search(r"/(" + VARIANT_TOKEN + r")/?$", u)] if m}
    served = {r.version for r in kb.releases if not variants or any(r.variant(v) for v in variants)}
    names = set()
    for release in kb.document("torch_requires").get("releases", ()):
        if served and release.get("version") not in served:
            continue
        for requirement in release.get("requires", ()):
            name = re.match(r"[A-Za-z0-9][\w.-]*", str(requirement))
            if name and "extra ==" not in str(requirement):
                names.add(canonical(name.group()))
    return frozenset(names)


def pytorch_index_alone(text: str, refusal: Refusal, kb: KnowledgeBase) -> List[InstallerError]:
    """pip read only PyTorch indexes and found no version at all of a requirement that is neither
    PyTorch's nor one of torch's dependencies."""
    if "Looking in indexes:" not in text or not refusal.unavailable:
        return []
    looking = _LOOKING.search(text)
    if looking is None:
        return []
    urls = [u.strip() for u in looking.group("urls").split(",") if u.strip()]
    if not urls or not all(_PYTORCH_URL.fullmatch(u) for u in urls):
        return []
    dependencies = _torch_dependencies(kb, urls)
    for missing in refusal.unavailable:
        name, _, _ = split_requirement(missing.said)
        if missing.installer != "pip" or missing.listed or not name or name in _PYTORCH_PACKAGES:
            continue
        none = re.search(r"requirement " + re.escape(missing.said) + r"[^\n]{0,300}\(from versions: none\)",
                         text)
        if none is None:
            continue
        if name in dependencies or name.startswith("nvidia-"):
            found = _torch_asked(text, missing.said, name, urls)
            if found:
                return found
            continue
        meaning = (f"pip read only {', '.join(urls)} (its 'Looking in indexes' line lists every index it "
                   f"reads), so PyPI was not read; {name} is neither a PyTorch package nor a dependency of "
                   f"the torch builds that index serves, which is all a PyTorch index carries, so pip found "
                   f"no version of it")
        return [InstallerError("pip", "pytorch-index-alone", missing.said, meaning, name, _SOURCES)]
    return []


def _torch_asked(text: str, said: str, name: str, urls: List[str]) -> List[InstallerError]:
    """torch itself asked for the dependency no index had: pip names who asked ("(from torch)",
    "Collecting X (from torch==2.4.0)"), and the PyTorch index, read alone, does not carry it."""
    asked = re.search(r"(?:requirement|Collecting) " + re.escape(said)
                      + r" \(from torch(?:[=<>!~][^)\s]*)?\)", text)
    if asked is None:
        return []
    meaning = (f"pip read only {', '.join(urls)} (its 'Looking in indexes' line), and torch itself requires "
               f"{said} ({asked.group(0)}), which that index does not carry (from versions: none): a PyTorch "
               f"index mirrors torch's own dependencies, and this one lacks {name}")
    return [InstallerError("pip", "pytorch-index-lacks-dependency", said, meaning, name, _SOURCES)]


# uv's refusal of a name no index it read had ("Because X was not found in the package registry",
# crates/uv-resolver/src/pubgrub/report.rs), and the uv command that replaced the default index (PyPI)
# with a PyTorch index: --index-url / --default-index / -i replace it, --extra-index-url / --index add.
_UV_NOT_FOUND = re.compile(r"Because (?P<name>[A-Za-z0-9][\w.-]{0,80}?)(?:[<>=!~]=?[^\s]{0,60})? was not "
                           r"found in the package registry")
_UV_COMMAND = re.compile(r"\buv(?:\.exe)? (?:pip (?:install|compile|sync)|add|sync|lock)\b[^\n]*")
_REPLACED_BY = re.compile(r"(?:--index-url|--default-index|-i)[ =](?P<url>\S+)")
_ADDED = re.compile(r"--extra-index-url|--index[ =]|--find-links|(?<![\w-])-f ")
_UV_SOURCES = ("https://docs.astral.sh/uv/reference/cli/#uv-pip-install--index-url",
               "https://github.com/astral-sh/uv/blob/main/crates/uv-resolver/src/pubgrub/report.rs",
               "https://download.pytorch.org/whl/")


def uv_pytorch_index_alone(text: str, kb: KnowledgeBase) -> List[InstallerError]:
    """uv found no package of a name that is neither PyTorch's nor torch's dependency, and the uv
    command shown replaced the default index with a PyTorch index and added none."""
    missing = _UV_NOT_FOUND.search(text) if "package registry" in text else None
    if missing is None or "could not be queried" in text:
        return []  # an index that refused uv (credentials, network) is another cause
    name = canonical(missing.group("name"))
    for command in _UV_COMMAND.finditer(text):
        replaced = _REPLACED_BY.search(command.group(0))
        if replaced is None or _ADDED.search(command.group(0)):
            continue
        url = replaced.group("url").strip("\"'")
        if not _PYTORCH_URL.fullmatch(url) or name in _PYTORCH_PACKAGES or name.startswith("nvidia-"):
            return []
        if name in _torch_dependencies(kb, [url]):
            return []  # the index should carry it: whether it lacks it or another index was meant is open
        meaning = (f"the uv command shown replaces the default index (PyPI) with {url} "
                   f"({replaced.group(0)}) and adds no other, and {name} is neither a PyTorch package nor a "
                   f"dependency of the torch builds that index serves, which is all a PyTorch index carries, "
                   f"so uv found no version of it")
        return [InstallerError("uv", "pytorch-index-alone", missing.group(0), meaning, name, _UV_SOURCES)]
    return []
