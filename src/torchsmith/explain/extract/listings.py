"""What pip's listing of the torch versions it could see proves about the index it read. Pure.

pip's "(from versions: ...)" names every version of the package that the indexes and links pages it
read offer a file of for this interpreter (``src/pip/_internal/index/package_finder.py``, the
candidates left after the link evaluator; ``resolution/resolvelib/factory.py`` prints them), each as
the file names it: a local version label (``2.5.1+cu121``) is part of the version. PyPI lists no
local labels; each of PyTorch's per-variant indexes (``download.pytorch.org/whl/cu121``) lists its
own variant's builds under that label. A listing whose every entry carries one label is therefore
that variant's index (or a mirror of it) and nothing else, and the release data says which torch
releases were ever published for that variant.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from torchsmith.compat import VARIANT_TOKEN
from torchsmith.explain.extract.model import InstallerError
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.kb.model import TorchRelease
    from torchsmith.refusal import Refusal

__all__ = ["build_missing_on_listed_platform", "default_build_listed_unlabelled", "listed_variant",
           "listing_facts", "placeholder_unexpanded", "published_build_not_listed",
           "uv_variant_index_lacks_release", "variant_index_lacks_release"]

_LABELLED = re.compile(r"(?P<version>\d+\.\d+\.\d+)\+(?P<variant>" + VARIANT_TOKEN + r")")
_SOURCES = ("https://github.com/pypa/pip/blob/24.0/src/pip/_internal/index/package_finder.py",
            "https://github.com/pypa/pip/blob/24.0/src/pip/_internal/resolution/resolvelib/factory.py",
            "https://download.pytorch.org/whl/torch/")


def listed_variant(listed: Sequence[str]) -> Optional[str]:
    """The one variant label every listed version carries (None: a plain version, or several)."""
    labels = set()
    for entry in listed:
        match = _LABELLED.fullmatch(entry.strip())
        if match is None:
            return None
        labels.add(match.group("variant"))
    return labels.pop() if len(labels) == 1 else None


def _allowed(spec: str, versions: Sequence[str]) -> List[str]:
    """The releases (no pre-releases) that ``spec`` allows; [] for a specifier packaging rejects."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import Version

    try:
        wanted = SpecifierSet(spec)
    except InvalidSpecifier:
        return []
    return [v for v in versions if wanted.contains(Version(v), prereleases=False)]


def _dropped(allowed: Sequence[str], read: Sequence[str]) -> bool:
    """Whether the releases whose variant list is still incomplete (``uncertain``: the newest) come
    only after one whose list is complete: a variant missing from that one had been dropped before
    them (PyTorch drops a CUDA variant for a newer one; the data holds no variant that came back)."""
    first = read[0]
    return all(version_tuple(v) > version_tuple(first) for v in allowed if v not in read)


def _never_built(spec: str, variant: str, kb: KnowledgeBase) -> Optional[str]:
    """Why no torch release ``spec`` allows was published for ``variant`` (None: one was, or the
    data cannot tell)."""
    releases = {release.version: release for release in kb.releases}
    allowed = sorted(_allowed(spec, list(releases)), key=version_tuple)
    read = [v for v in allowed if not releases[v].uncertain]
    if not read or any(releases[v].variant(variant) for v in allowed) or not _dropped(allowed, read):
        return None
    built = sorted((v for v, r in releases.items() if r.variant(variant)), key=version_tuple)
    span = f"its builds are torch {built[0]} to {built[-1]}" if built else "no torch release has it"
    return (f"none of the torch releases torch{spec} allows ({read[0]} to {read[-1]}) was published for "
            f"{variant}: {span}")


# uv's refusal when the versions it found stop short of the range asked for
# (crates/uv-resolver/src/pubgrub/report.rs): "Because only torch<=2.5.1+cu121 is available and you
# require torch>=2.7" (or "your project depends on torch>=2.7"), wrapped over lines as uv prints it.
_UV_ONLY = re.compile(r"\bonly\s+torch(?:<=|==)(?P<version>\d+\.\d+\.\d+)\+(?P<variant>" + VARIANT_TOKEN
                      + r")\s+(?:is|are)\s+available\s+and\s+"
                      r"(?:you\s+require|[\w\s'.=<>!~-]{1,80}?\s+depends\s+on)"
                      r"\s+torch(?P<spec>(?:[<>=!~]=?\s*\d[\w.]*,?)+)")
_UV_SOURCES = ("https://github.com/astral-sh/uv/blob/main/crates/uv-resolver/src/pubgrub/report.rs",
               "https://download.pytorch.org/whl/torch/")


def uv_variant_index_lacks_release(text: str, kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """uv found torch builds of one variant only, up to X+variant (a label: PyPI has none, so it read
    that variant's index for torch), and no release the requirement allows was ever published for
    that variant."""
    said = _UV_ONLY.search(text) if kb is not None and "available" in text else None
    if said is None or kb is None:
        return []
    spec, variant = said.group("spec").rstrip(","), said.group("variant")
    why = _never_built(spec, variant, kb)
    if why is None:
        return []
    meaning = (f"uv found torch up to {said.group('version')}+{variant} only, a {variant} build (PyPI has no "
               f"+label), so the index it read for torch is PyTorch's {variant} index; {why}")
    return [InstallerError("index", "build-unpublished", f"torch{spec} from the {variant} index", meaning,
                           "torch", _UV_SOURCES)]


def variant_index_lacks_release(refusal: Refusal, kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """pip found no torch for a requirement, and listed only builds of one variant: it read that
    variant's index alone, and no torch release the requirement allows was ever published for that
    variant (the data's variant lists, read from the PyTorch indexes). Not where a release it allows
    has that variant (then the interpreter or the platform lacks its wheel), nor where the data lists
    only some builds of one of them (an ``uncertain`` release)."""
    if kb is None:
        return []
    from torchsmith.refusal.model import split_requirement

    releases = {release.version: release for release in kb.releases}
    for missing in refusal.unavailable:
        name, spec, _ = split_requirement(missing.said)
        variant = listed_variant(missing.listed) if missing.installer == "pip" and name == "torch" else None
        asked = re.search(r"\+(?P<variant>[\w.]+)", spec)
        if variant is None or not spec or (asked is not None and asked.group("variant") != variant):
            continue
        allowed = sorted(_allowed(re.sub(r"\+[\w.]+", "", spec), list(releases)), key=version_tuple)
        read = [v for v in allowed if not releases[v].uncertain]
        if not read or any(releases[v].variant(variant) for v in allowed) or not _dropped(allowed, read):
            continue
        built = sorted((v for v, r in releases.items() if r.variant(variant)), key=version_tuple)
        span = f"its builds are torch {built[0]} to {built[-1]}" if built else "no torch release has it"
        why = (f"pip listed only {variant} builds, so the index it read is PyTorch's {variant} index (PyPI "
               f"lists no +label, and each per-variant index lists its own); none of the torch releases "
               f"torch{spec} allows ({read[0]} to {read[-1]}) was published for {variant}: {span}")
        return [InstallerError("index", "build-unpublished", f"torch{spec} from the {variant} index", why,
                               "torch", _SOURCES)]
    return []


_PIN = re.compile(r"===?(?P<version>\d+\.\d+\.\d+)\+(?P<variant>" + VARIANT_TOKEN + r")")


def _torch_pin(said: str) -> Optional[re.Match[str]]:
    """The release and variant of a requirement ``torch==X+variant`` as a resolver said it (markers
    and a trailing ';' aside)."""
    from torchsmith.refusal.model import split_requirement

    name, spec, _ = split_requirement(said)
    return _PIN.fullmatch(spec) if name == "torch" else None


def _lacks_platforms(release: TorchRelease, variant: str, platforms: Sequence[str]) -> bool:
    """Whether the data says ``variant`` of ``release`` has no wheel for any of ``platforms``. A
    variant whose platforms were not all read (``uncertain``) counts only where a variant of the same
    kind that was read lacks them too (cu117 of the same release: PyTorch builds a release's CUDA
    variants for the same platforms)."""
    build = release.variant(variant)
    if build is None or set(build.platforms) & set(platforms):
        return False
    if not build.uncertain:
        return True
    return any(other.kind == build.kind and not other.uncertain and not set(other.platforms) & set(platforms)
               for other in release.variants)


_PlainListing = Tuple["re.Match[str]", Optional["TorchRelease"], Set[str], Dict[str, "TorchRelease"]]


def _plain_listings(refusal: Refusal, kb: KnowledgeBase) -> Iterator[_PlainListing]:
    """(the pin, its release, the listed releases the data knows, every release by version) for each
    ``torch==X+variant`` pip found none of while it listed plain releases only (no +label build)."""
    known = {release.version: release for release in kb.releases}
    for missing in refusal.unavailable:
        pin = _torch_pin(missing.said)
        listed = {v for v in missing.listed if v in known}
        if missing.installer != "pip" or pin is None or not listed or any("+" in v for v in missing.listed):
            continue
        yield pin, known.get(pin.group("version")), listed, known


def build_missing_on_listed_platform(refusal: Refusal, kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """pip found no ``torch==X+variant``, and listed plain torch releases that are exactly those with
    wheels for one platform (and a Python): that platform is the interpreter's (pip lists only files
    it can install, ``indexes.listing_python`` reads the same), and the data says torch X was never
    built for that variant on it (no CUDA wheel for linux-aarch64 before 2.x, none for macOS), so no
    index has it for this machine."""
    if kb is None:
        return []
    from torchsmith.explain.extract.indexes import _listing_fits

    for pin, release, listed, known in _plain_listings(refusal, kb):
        newest = max(listed, key=version_tuple)
        platforms = sorted({platform for platform, _ in _listing_fits(listed, newest, known)})
        if release is None or not platforms or not _lacks_platforms(release, pin.group("variant"), platforms):
            continue
        build = release.variant(pin.group("variant"))
        where = ", ".join(build.platforms) if build is not None else ""
        why = (f"the torch releases pip could see ({min(listed, key=version_tuple)} to {newest}) are exactly "
               f"those with {' or '.join(platforms)} wheels, so pip runs there; torch "
               f"{release.version}+{pin.group('variant')} was built for {where} only")
        asked = f"torch=={release.version}+{pin.group('variant')} on {' or '.join(platforms)}"
        return [InstallerError("index", "build-unpublished", asked, why, "torch", _SOURCES)]
    return []


# PyTorch published a release's default CUDA build (PyPI's on Linux) unlabelled up to torch 1.8.0
# (whl/cu102/torch-1.8.0-cp37-cp37m-linux_x86_64.whl, whl/cu101/torch-1.4.0-...) and labelled from
# 1.8.1 on (whl/cu102/torch-1.8.1%2Bcu102-cp37-cp37m-linux_x86_64.whl), as the index's file names show.
_LAST_UNLABELLED_DEFAULT = "1.8.0"
_PAGE_SOURCES = ("https://download.pytorch.org/whl/torch_stable.html",
                 "https://download.pytorch.org/whl/cu102/torch-1.8.0-cp37-cp37m-linux_x86_64.whl",
                 "https://download.pytorch.org/whl/cu102/torch-1.8.1%2Bcu102-cp37-cp37m-linux_x86_64.whl",
                 "https://github.com/pypa/pip/blob/24.0/src/pip/_internal/index/package_finder.py")


def default_build_listed_unlabelled(refusal: Refusal, kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """pip found no ``torch==X+cuXXX`` where cuXXX is release X's default CUDA build (the one PyPI
    serves for Linux x86_64 unlabelled), and its listing holds labelled builds of X (so it read a
    PyTorch page, not PyPI alone) and a plain X, but no X+cuXXX: PyTorch published a release's
    default CUDA build without a local label, as PyPI's (whl/cu102/torch-1.8.0-cp37-cp37m-linux_x86_64
    .whl on torch_stable.html; labelled from 1.8.1 on), so the pin's label matches no file and the
    plain X is that build. Not where the listing labels a release's default CUDA build."""
    if kb is None:
        return []
    from torchsmith.explain.extract.indexes import _labels_defaults

    known = {release.version: release for release in kb.releases}
    for missing in refusal.unavailable:
        pin = _torch_pin(missing.said)
        release = known.get(pin.group("version")) if pin is not None else None
        if missing.installer != "pip" or pin is None or release is None:
            continue
        version, variant = pin.group("version"), pin.group("variant")
        labels = {entry.partition("+")[2] for entry in missing.listed if entry.startswith(version + "+")}
        if release.pypi_default.get("linux-x86_64") != variant or version not in missing.listed \
                or not labels or variant in labels \
                or version_tuple(version) > version_tuple(_LAST_UNLABELLED_DEFAULT):
            continue
        if _labels_defaults(missing.listed, ["linux-x86_64"], known):
            continue  # this index labels some release's default build (the per-variant indexes now do)
        why = (f"pip listed torch {version} plain beside its {', '.join(sorted(labels))} builds, so it read "
               f"a PyTorch page, and {variant} is torch {version}'s default CUDA build, which PyTorch "
               f"published without a +{variant} label (as PyPI's): =={version}+{variant} names no file, "
               f"the plain {version} there is that build")
        return [InstallerError("pip", "label-absent", f"torch=={version}+{variant}", why, "torch",
                               _PAGE_SOURCES)]
    return []


# pip expands ${NAME} in a requirements file from the environment (NAME of capitals, digits and _)
# and leaves it as written where the variable is unset or empty (req/req_file.py, expand_env_variables);
# a $ is no character of a PEP 440 version, so a requirement echoed with one matches no release.
_PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")
_EXPAND_SOURCES = ("https://github.com/pypa/pip/blob/24.0/src/pip/_internal/req/req_file.py",
                   "https://packaging.python.org/en/latest/specifications/version-specifiers/")


def placeholder_unexpanded(refusal: Refusal) -> List[InstallerError]:
    """pip found no version of a requirement it echoes with a shell-style variable still in it."""
    for missing in refusal.unavailable:
        found = _PLACEHOLDER.search(missing.said) if "$" in missing.said else None
        if missing.installer != "pip" or found is None:
            continue
        braced = found.group(0).startswith("${")
        capitals = re.fullmatch(r"\$\{[A-Z0-9_]+\}", found.group(0)) is not None  # req_file's _ENV_VAR_RE
        how = ("pip replaces ${NAME} with the environment variable only where it is set and not empty"
               if capitals else "pip expands only ${NAME} of capitals, digits and _, never this one"
               if braced else "pip expands only the ${NAME} form, never a bare $NAME")
        meaning = (f"the requirement reached pip as {missing.said}, with {found.group(0)} unexpanded "
                   f"({how}), and no version holds a $: no release matches it")
        return [InstallerError("pip", "placeholder-unexpanded", missing.said, meaning, None, _EXPAND_SOURCES)]
    return []


def published_build_not_listed(text: str, refusal: Refusal,
                               kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """pip found no ``torch==X+variant`` and listed plain releases only (no index it read lists any
    +label build for this interpreter, as every PyTorch per-variant index does), which are exactly
    the releases with wheels for one platform and Python; the data says X+variant has a wheel for
    that platform and Python. Had pip read that variant's index it would have found it: the index
    was not given. Not where the text names a PyTorch index or page at all (then it was given, in
    some form: another cause), nor for the platform's PyPI default build, which the index may carry
    without its label (whl/cpu/torch-2.3.1-cp310-cp310-manylinux_2_17_aarch64...whl)."""
    if kb is None or "download.pytorch.org" in text:
        return []
    from torchsmith.explain.extract.indexes import _listing_fits

    for pin, release, listed, known in _plain_listings(refusal, kb):
        build = release.variant(pin.group("variant")) if release is not None else None
        fits = _listing_fits(listed, max(listed, key=version_tuple), known)
        if release is None or build is None or build.uncertain or not fits:
            continue
        if not all(p in build.platforms and py in release.python.get(p, ()) for p, py in fits):
            continue
        if any(release.pypi_default.get(p) == build.name for p, _ in fits):
            continue  # a platform's default build may sit on the index unlabelled (whl/cpu's aarch64 2.3.1)
        where = " or ".join(f"{p} with Python {py}" for p, py in fits)
        return [index_not_read(f"torch=={release.version}+{build.name}", build.name,
                               f"pip listed plain torch releases only ({min(listed, key=version_tuple)} to "
                               f"{max(listed, key=version_tuple)}), exactly those with wheels for {where}",
                               _SOURCES)]
    return []


def index_not_read(asked: str, variant: str, what_pip_showed: str, sources: Sequence[str]) -> InstallerError:
    """pip found none of ``asked``, a +label build that download.pytorch.org/whl/<variant> publishes
    for the interpreter ``what_pip_showed`` proves: that index was not among the ones pip read."""
    why = (f"{what_pip_showed}, and {asked} is published for it on download.pytorch.org/whl/{variant}: "
           f"pip would have found it there, so that index was not among the ones it read")
    return InstallerError("pip", "index-not-given", asked, why, "torch", tuple(sources))


def listing_facts(text: str, refusal: Refusal, kb: Optional[KnowledgeBase]) -> List[InstallerError]:
    """What every reader above proves of the requirements pip (or another installer) found none of."""
    return (variant_index_lacks_release(refusal, kb) + uv_variant_index_lacks_release(text, kb)
            + build_missing_on_listed_platform(refusal, kb)
            + default_build_listed_unlabelled(refusal, kb) + placeholder_unexpanded(refusal)
            + published_build_not_listed(text, refusal, kb))
