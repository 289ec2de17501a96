"""The torch builds a text asks an installer for, read against the releases the data knows. Pure.

A torch build is a release and a variant: ``torch==2.0.1+cu121`` names both, as does
``torch==2.10.0`` asked of ``download.pytorch.org/whl/cu131``. The data lists every release's
variants (``torch_releases.json``, read from the PyTorch indexes), so it proves two causes an
installer's "no version" does not tell apart:

- ``build-unpublished``: that release was never built for that variant (or no release was),
  so no index has it;
- ``index-not-given``: the build exists, but uv (or pixi, which resolves with uv) found *no
  version* of it: the resolver names platform-incompatible wheels otherwise ("has no wheels with
  a matching platform tag"), so the index that publishes it was not among the ones it read.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from torchsmith.compat import VARIANT_TOKEN
from torchsmith.explain.extract.model import InstallerError
from torchsmith.refusal.model import split_requirement
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.kb.model import TorchRelease, VariantBuild
    from torchsmith.refusal import Missing, Refusal

__all__ = ["build_requirement_failures", "index_facts", "listing_python"]

# torch==2.0.1+cu121, torch=1.12.1+cu121, "torch 2.0.1+cu121", uv's `torch` (v2.8.0+cu128) and
# torch{marker}==2.11.0+cpu (a forked resolution). Not wheel file names (torch-2.0.1+cu118-...).
_NAMED_BUILD = re.compile(
    r"(?<![\w.-])torch`?(?:\{[^}\n]{0,200}\})?\s{0,3}(?:===?|=|\(v|\s)\s{0,3}v?"
    r"(?P<version>\d+\.\d+\.\d+)\+(?P<variant>" + VARIANT_TOKEN + r")(?![\w.])"
)
# A PyTorch release index (not the nightly or test channels, whose variants come and go).
_INDEX = re.compile(r"download\.pytorch\.org/whl/(?P<variant>" + VARIANT_TOKEN + r")(?![\w.])")
# A CUDA index spelt with the CUDA version's dot (whl/cu12.6, whl/cuda12.4): PyTorch names its CUDA
# indexes cu + major + minor with no dot (cu126), so no such index exists.
_DOTTED_INDEX = re.compile(r"download\.pytorch\.org/whl/(?P<variant>cu(?:da)?\d{1,2}\.\d{1,2})"
                           r"(?=[/\s\"'`]|$)")
# A torch pin an installer found no version of (torchsmith.refusal reads which): its release, and
# its variant where the pin names one.
_PIN = re.compile(r"===?(?P<version>\d+\.\d+\.\d+)(?:\+(?P<variant>" + VARIANT_TOKEN + r"))?")
_SOURCE = "https://download.pytorch.org/whl/torch/"
_ROOT_SOURCE = "https://download.pytorch.org/whl/"
# A named build is the one asked for where an installer found none (Poetry's refusal is not read
# by torchsmith.refusal: its words), or where the text is about that build alone (a question, no
# other failure): not a build named beside another error.
_POETRY_NOT_FOUND = "Unable to find installation candidates"
_OTHER_FAILURE = re.compile(r"error|exception|traceback|failed", re.IGNORECASE)


def _releases(kb: KnowledgeBase) -> Dict[str, FrozenSet[str]]:
    return {release.version: frozenset(v.name for v in release.variants) for release in kb.releases}


def _complete_lists(kb: KnowledgeBase) -> FrozenSet[str]:
    """The releases whose variant list can prove a build absent. An ``uncertain`` release's list was
    read from a page that names some of its builds (the previous-versions page lists no cu113 for
    torch 1.10, yet download.pytorch.org/whl/cu113/ has torch-1.10.0+cu113 wheels)."""
    return frozenset(release.version for release in kb.releases if not release.uncertain)


def _listing(names: FrozenSet[str]) -> str:
    """cpu, cu117, cu118, rocm5.4.2: by kind, then by version."""
    def key(name: str) -> Tuple[str, Tuple[int, ...]]:
        kind = re.match(r"[a-z]+", name)
        prefix = kind.group() if kind else name
        return prefix, version_tuple(name[len(prefix):] or "0")
    return ", ".join(sorted(names, key=key))


def _unpublished(version: str, variant: str, releases: Dict[str, FrozenSet[str]],
                 complete: FrozenSet[str]) -> Optional[str]:
    """Why the data proves torch ``version`` was never published as ``variant`` (None: it was, or
    the data does not cover that release, or lists only some of its builds)."""
    names = releases.get(version)
    if names is None or variant in names or version not in complete:
        return None
    ever = any(variant in published for published in releases.values())
    why = (f"torch {version} was published for {_listing(names)}; never for {variant}")
    if not ever:
        why += f" (no torch release in torchsmith's data has a {variant} build at all)"
    with_variant = sorted((v for v, n in releases.items() if variant in n), key=version_tuple)
    if with_variant:
        why += f"; the releases built for {variant} are {with_variant[0]} to {with_variant[-1]}"
    return why


def _index_without_release(variant: str, releases: Dict[str, FrozenSet[str]]) -> Optional[str]:
    """A PyTorch release index that no release in the data was published to (e.g. whl/cu131)."""
    if any(variant in names for names in releases.values()):
        return None
    newest = max(releases, key=version_tuple)
    return (f"no torch release in torchsmith's data (up to {newest}) was published for {variant}, so "
            f"download.pytorch.org/whl/{variant} holds no torch; torch {newest} has "
            f"{_listing(releases[newest])}")


def _torch_missing(refusal: Refusal) -> List[Tuple[Missing, str]]:
    """Each requirement on torch that an installer found no version of, with its specifier."""
    found = []
    for missing in refusal.unavailable:
        name, spec, _ = split_requirement(missing.said)
        if name == "torch":
            found.append((missing, spec))
    return found


def _requested(text: str, refusal: Refusal) -> List[Tuple[str, str, str]]:
    """(version, variant, how) of each torch build the text names: a pin with its variant, or a
    pin that failed on a PyTorch index's variant."""
    found: List[Tuple[str, str, str]] = []
    if refusal.unavailable or _POETRY_NOT_FOUND in text or not _OTHER_FAILURE.search(text):
        for match in _NAMED_BUILD.finditer(text):
            found.append((match.group("version"), match.group("variant"), "named"))
    indexes = [m.group("variant") for m in _INDEX.finditer(text)]
    for _, spec in _torch_missing(refusal):
        pin = _PIN.fullmatch(spec)
        if pin and pin.group("variant") is None and len(set(indexes)) == 1:
            found.append((pin.group("version"), indexes[0], "index"))
    return list(dict.fromkeys(found))


def index_facts(text: str, refusal: Refusal, kb: Optional[KnowledgeBase],
                raw: Optional[str] = None) -> List[InstallerError]:
    """The torch builds the text asks for that the data proves unpublished, or published where
    the resolver did not look (``refusal``: the text's refusal, read by torchsmith.refusal; ``text``
    with messages joined over lines, ``raw`` as written: its lines show what pip printed first)."""
    if kb is None or "torch" not in text:
        return []
    releases = _releases(kb)
    if not releases:
        return []
    out: List[InstallerError] = []
    complete = _complete_lists(kb)
    for version, variant, how in _requested(text, refusal):
        why = _unpublished(version, variant, releases, complete)
        if why is not None:
            shown = f"torch=={version}+{variant}" if how == "named" else \
                f"torch=={version} from download.pytorch.org/whl/{variant}"
            out.append(InstallerError("index", "build-unpublished", shown, why, "torch", (_SOURCE,)))
    if not out:
        out.extend(_failed_indexes(text, refusal, releases))
    if not out:
        out.extend(_index_not_given(text, refusal, releases))
    if not out:
        out.extend(_pip_index_not_given(text if raw is None else raw, refusal, releases))
    if not out:
        out.extend(_variant_missing_from_listing(text, refusal, kb))
    listing = _listing_conclusion(refusal, kb)
    python = [InstallerError("pip", "python-from-listing", "(from versions: …)", listing, "torch", (_SOURCE,))
              for listing in [listing] if listing]
    return (out + _pruned_nightlies(refusal))[:3] + python + _platform_from_listing(refusal, kb)


def _pip_listings(refusal: Refusal) -> List[Tuple[str, Tuple[str, ...]]]:
    """(specifier, versions listed) of each torch requirement pip found no version of, with its
    listing of the versions it could see ("(from versions: ...)")."""
    return [(spec, missing.listed) for missing, spec in _torch_missing(refusal)
            if missing.installer == "pip" and missing.listed]


# A dated nightly pin.
_NIGHTLY = re.compile(r"===?(?P<version>(?P<major>\d+)\.(?P<minor>\d+)\.\d+\.dev(?P<date>20\d{6}))(?:\+\w+)?")
_NIGHTLY_SOURCE = "https://github.com/pytorch/test-infra/blob/main/s3_management/manage.py"


def _pruned_nightlies(refusal: Refusal) -> List[InstallerError]:
    """A torch nightly the nightly index no longer lists: it keeps the newest 60 nightlies of each
    package (KEEP_THRESHOLD), and a release two minor series after the nightly's is listed, so a
    whole series of daily nightlies (a quarter's) was built after it."""
    nightlies = [(match, versions) for spec, versions in _pip_listings(refusal)
                 for match in [_NIGHTLY.fullmatch(spec)] if match is not None]
    if not nightlies:
        return []
    match, versions = nightlies[0]
    series = (int(match.group("major")), int(match.group("minor")))
    releases = [re.match(r"(\d+)\.(\d+)\.\d+\b", v) for v in versions]
    listed = [(int(r.group(1)), int(r.group(2))) for r in releases if r]
    later = [v for v in listed if v[0] > series[0] or (v[0] == series[0] and v[1] >= series[1] + 2)]
    if not later:
        return []
    newest = max(later)
    why = (f"torch {match.group('version')} is a nightly built on {match.group('date')}; the index lists "
           f"releases up to {newest[0]}.{newest[1]}, so every nightly of at least one whole release series "
           f"was built after it, and the nightly index keeps only the newest 60 nightlies of each package")
    return [InstallerError("index", "nightly-pruned", f"torch=={match.group('version')}", why, "torch",
                           (_NIGHTLY_SOURCE,))]


def _failed_indexes(text: str, refusal: Refusal, releases: Dict[str, FrozenSet[str]]) -> List[InstallerError]:
    """A PyTorch index no release was published to, where the installer found nothing."""
    if not refusal.unavailable:
        return []
    out = []
    for variant in dict.fromkeys(m.group("variant") for m in _INDEX.finditer(text)):
        why = _index_without_release(variant, releases)
        if why is not None:
            out.append(InstallerError("index", "build-unpublished", f"download.pytorch.org/whl/{variant}",
                                      why, "torch", (_SOURCE,)))
    for variant in dict.fromkeys(m.group("variant") for m in _DOTTED_INDEX.finditer(text)):
        if _index_without_release(variant, releases) is not None:
            why = (f"PyTorch names its CUDA indexes cu + the CUDA major and minor with no dot (cu124 for "
                   f"CUDA 12.4); no torch release in torchsmith's data was published for {variant}, so "
                   f"download.pytorch.org/whl/{variant} holds no torch")
            out.append(InstallerError("index", "build-unpublished", f"download.pytorch.org/whl/{variant}",
                                      why, "torch", (_ROOT_SOURCE, _SOURCE)))
    return out


def _index_not_given(text: str, refusal: Refusal, releases: Dict[str, FrozenSet[str]]
                     ) -> Sequence[InstallerError]:
    """uv/pixi found no version of a torch build that the data says was published: uv's resolver
    says so of no version at all, and names versions without a fitting wheel otherwise ("has no
    wheels with a matching platform tag"; crates/uv-resolver/src/pubgrub/report.rs)."""
    for missing, spec in _torch_missing(refusal):
        pin = _PIN.fullmatch(spec)
        if missing.installer != "uv" or pin is None or pin.group("variant") is None:
            continue
        version, variant = pin.group("version"), pin.group("variant")
        if variant not in releases.get(version, frozenset()):
            continue
        given = sorted({m.group("variant") for m in _INDEX.finditer(text)})
        where = (f"the PyTorch index the text names ({', '.join(given)}) is another variant's" if given
                 else "the text names no PyTorch index")
        why = (f"torch {version}+{variant} is published only on download.pytorch.org/whl/{variant}, and "
               f"the resolver found no version of it at all (uv names a wheel unfit for this platform in "
               f"other words: \"has no wheels with a matching platform tag\"), so that index was not among "
               f"the ones it read for torch; {where}")
        return [InstallerError("uv", "index-not-given", f"torch=={version}+{variant}", why, "torch",
                               (_SOURCE,))]
    return []


# pip logs "Looking in indexes: ..." / "Looking in links: ..." before it resolves whenever an index
# other than PyPI or a links page is configured: on the command line, in a requirements file, in
# pip.conf or a PIP_* variable (search_scope.get_formatted_locations, logged by req_command's
# trace_basic_info since pip 10.0); with none, a requirement it finds no version of is its first line.
_PIP_LOCATIONS = "https://github.com/pypa/pip/blob/23.2.1/src/pip/_internal/models/search_scope.py"
_PIP_INSTALL = re.compile(r"^[^\n]*?\b(?:pip3?(?:\.exe)?|python[\d.]*(?:\.exe)? -m pip) install "
                          r"(?P<args>[^\n]*)$", re.MULTILINE)
# options that name an index, a links page or a file of requirements (which may name them)
_SOURCE_OPTION = re.compile(r"(?:^|\s)(?:-[rcif]\S*|--(?:requirement|constraint|index-url|extra-index-url|"
                            r"find-links|no-index|index)\b)")
_PIP_FIRST = re.compile(r"\s*(?:ERROR: Could not find a version|Collecting |Defaulting to user installation)")


def _pip_read_pypi_alone(text: str, requirement: str) -> bool:
    """The text shows the pip command that asked for ``requirement`` with no index, links page or
    requirements file, followed at once by pip's own first lines, and no "Looking in" line."""
    if "Looking in indexes" in text or "Looking in links" in text:
        return False
    for command in _PIP_INSTALL.finditer(text):
        args = command.group("args")
        if requirement not in args.split() or _SOURCE_OPTION.search(args):
            continue
        after = text[command.end():].lstrip("\n")
        return bool(after) and _PIP_FIRST.match(after.split("\n", 1)[0]) is not None
    return False


def _pip_index_not_given(text: str, refusal: Refusal, releases: Dict[str, FrozenSet[str]]
                         ) -> Sequence[InstallerError]:
    """pip found no version of a torch build that the data says was published, listed that release
    without any +variant build (PyPI's listing), and the text shows it read no other index."""
    for spec, listed in _pip_listings(refusal):
        pin = _PIN.fullmatch(spec)
        if pin is None or pin.group("variant") is None or any("+" in v for v in listed):
            continue
        version, variant = pin.group("version"), pin.group("variant")
        if variant not in releases.get(version, frozenset()) or version not in listed:
            continue
        if not _pip_read_pypi_alone(text, f"torch{spec}"):
            continue
        why = (f"torch {version}+{variant} is published only on download.pytorch.org/whl/{variant}; the pip "
               f"command shown names no index, links page or requirements file, and pip printed no "
               f"'Looking in indexes/links' line (it prints one whenever another index or a links page is "
               f"configured, pip.conf and PIP_* included), so it read PyPI alone, which lists torch "
               f"{version} with no +{variant} build")
        return [InstallerError("pip", "index-not-given", f"torch=={version}+{variant}", why, "torch",
                               (_SOURCE, _PIP_LOCATIONS))]
    return []


_LABEL = re.compile(r"\+(?P<variant>" + VARIANT_TOKEN + r")$")


def _variant_kind(variant: str) -> str:
    """cu121 -> cu, rocm6.4 -> rocm, cpu, xpu."""
    kind = re.match(r"[a-z]+", variant)
    return kind.group() if kind else variant


def _labels_defaults(listed: Sequence[str], platforms: Sequence[str],
                     known: Mapping[str, TorchRelease]) -> bool:
    """Whether the listing labels some release's default build of one of ``platforms`` (the variant
    PyPI serves unlabelled, e.g. 2.8.0+cu128 on linux-x86_64): an index that does not (the old
    find-links pages list the default CUDA build as plain torch-1.8.0) hides that build under the
    plain version, and its label's absence proves nothing."""
    for entry in listed:
        version, _, label = entry.partition("+")
        release = known.get(version)
        if label and release is not None and any(release.pypi_default.get(p) == label for p in platforms):
            return True
    return False


def _published_where_listed(build: Optional[VariantBuild], listed: Sequence[str],
                            known: Mapping[str, TorchRelease]) -> bool:
    """Whether ``build`` is published for every platform pip may be running on: pip lists only the
    builds of its own platform, so that platform is one every labelled build listed was published
    for. A build of fewer platforms (cu121 has no linux-aarch64 wheel) may be missing from every
    index pip could read, not from the one it read."""
    platforms: Optional[FrozenSet[str]] = None
    for entry in listed:
        version, _, label = entry.partition("+")
        release = known.get(version)
        other = release.variant(label) if label and release is not None else None
        if other is not None:
            platforms = frozenset(other.platforms) if platforms is None else platforms & set(other.platforms)
    return build is not None and bool(platforms) and set(platforms or ()) <= set(build.platforms)


# The root index itself, named (an --index-url, a "Looking in indexes:" line): no variant after /whl.
_ROOT_INDEX = re.compile(r"download\.pytorch\.org/whl/?(?=[\s\"'`,;)]|$)", re.MULTILINE)


def _variant_missing_from_listing(text: str, refusal: Refusal, kb: KnowledgeBase) -> Sequence[InstallerError]:
    """pip found no version of a published torch build, and its listing of what it could see holds
    builds of several other variants of several kinds (+cpu, +cu126, +xpu...) but none of the
    asked one: PyPI lists no +label at all and a per-variant index (whl/cu126) only its own, so pip
    read an index that lists many variants, as the root download.pytorch.org/whl does, and that
    index does not carry this variant (the root index lists only some CUDA variants)."""
    known = {release.version: release for release in kb.releases}
    for spec, listed in _pip_listings(refusal):
        pin = _PIN.fullmatch(spec)
        release = known.get(pin.group("version")) if pin else None
        if pin is None or release is None or release.variant(pin.group("variant") or "") is None:
            continue
        version, variant = pin.group("version"), pin.group("variant")
        labels = {m.group("variant") for m in (_LABEL.search(v) for v in listed) if m}
        named = _ROOT_INDEX.search(text) is not None
        many = len(labels) >= 3 and len({_variant_kind(v) for v in labels}) >= 2
        if variant in labels or not (many or (named and labels)):
            continue
        defaults = [p for p, name in release.pypi_default.items() if name == variant]
        if defaults and not _labels_defaults(listed, defaults, known):
            continue
        if not _published_where_listed(release.variant(variant), listed, known):
            continue
        read = ("the text names the root index download.pytorch.org/whl" if named else
                "PyPI lists no +variant builds and a per-variant index only its own, so pip read an index "
                "listing many variants, as the root index download.pytorch.org/whl does (or several "
                f"per-variant indexes, none of them {variant}'s)")
        why = (f"torch {version}+{variant} was published on download.pytorch.org/whl/{variant}; the index "
               f"pip read lists torch builds of other variants ({_listing(frozenset(labels))}) but none "
               f"of {variant}: {read}")
        return [InstallerError("pip", "variant-missing-from-index", f"torch=={version}+{variant}", why,
                               "torch", (_SOURCE, _ROOT_SOURCE))]
    return []


# PEP 517's first hook failing: pip's "Getting requirements to build wheel ... error", or the
# hook's frame in a build backend's traceback (pip's _in_process.py, uv's builds-v0).
_BUILD_STEP = re.compile(r"Getting requirements to build (?:wheel|editable)"
                         r"(?: \.\.\. error| did not run successfully)"
                         r"|in get_requires_for_build_(?:wheel|editable)\b")
_BUILT_PACKAGE = (re.compile(r"Failed to build `(?P<package>[^`\n]{1,100})`"),
                  re.compile(r"pip-install-\w{1,40}[\\/]+(?P<package>[A-Za-z][\w.-]{0,80}?)_[0-9a-f]{32}"))


def build_requirement_failures(text: str) -> List[InstallerError]:
    """A package's build script that failed when the installer asked for its build requirements."""
    if "requirements to build" not in text and "get_requires_for_build" not in text:
        return []
    step = _BUILD_STEP.search(text)
    if step is None:
        return []
    package = next((m.group("package") for p in _BUILT_PACKAGE for m in [p.search(text)] if m), None)
    meaning = ("the build script failed in get_requires_for_build_wheel, which runs in an isolated build "
               "environment holding only the build requirements the package declares")
    return [InstallerError("pip" if "Getting requirements" in step.group() else "build", "build-requirements",
                           step.group().strip(), meaning, package, ("https://peps.python.org/pep-0517/",))]


def _listing_fits(listed: Set[str], upto: str, known: Mapping[str, TorchRelease]) -> List[Tuple[str, str]]:
    """(platform, Python) of each platform and Python whose torch releases up to ``upto`` are exactly
    pip's ``listed`` ones (pip lists the releases with a wheel for its interpreter). A release PyPI
    never served (1.8.2, on the LTS index only) counts only where listed: PyPI's listing lacks it."""
    inside = [r for r in known.values() if version_tuple(r.version) <= version_tuple(upto)
              and (r.pypi_default or r.version in listed)]
    return [(platform, python) for platform in sorted({p for r in inside for p in r.python})
            for python in sorted({v for r in inside for v in r.python.get(platform, ())}, key=version_tuple)
            if {r.version for r in inside if python in r.python.get(platform, ())} == listed]


def listing_python(refusal: Refusal, kb: KnowledgeBase) -> Optional[Tuple[str, List[str], str, str]]:
    """(Python, its platforms, the lowest and newest release listed) where the torch releases pip
    listed (pip's listing of what it could see: the releases with a wheel for this interpreter) are
    exactly the releases, up to the newest listed, that publish wheels for one Python version."""
    _, versions = next(iter(_pip_listings(refusal)), ("", ()))
    known = {release.version: release for release in kb.releases}
    listed = {v for v in versions if v in known}
    if not listed:
        return None
    low, high = min(listed, key=version_tuple), max(listed, key=version_tuple)
    fits: Dict[str, List[str]] = {}
    # every release up to the newest listed (the listing is as old as the text; none is pruned)
    for platform, python in _listing_fits(listed, high, known):
        fits.setdefault(python, []).append(platform)
    if len(fits) != 1:
        return None
    (python, platforms), = fits.items()
    return python, platforms, low, high


def _listing_conclusion(refusal: Refusal, kb: KnowledgeBase) -> Optional[str]:
    """Which Python pip ran on, read from the torch releases it listed (:func:`listing_python`)."""
    read = listing_python(refusal, kb)
    if read is None:
        return None
    python, platforms, low, high = read
    spec = next(iter(_pip_listings(refusal)), ("", ()))[0]
    known = {release.version: release for release in kb.releases}
    said = (f"the torch versions pip could see ({low} to {high}) are exactly the releases with wheels for "
            f"Python {python} ({', '.join(platforms)}): the interpreter is Python {python}, unless the index "
            f"mirrors only some releases")
    pinned = re.search(r"==\s*(\d+\.\d+\.\d+)", spec)
    release = known.get(pinned.group(1)) if pinned else None
    if release is not None:
        pythons = sorted({v for p in platforms for v in release.python.get(p, ())}, key=version_tuple)
        if python not in pythons and pythons:
            said += (f"; torch {release.version} publishes wheels for Python {pythons[0]} to {pythons[-1]} "
                     f"only")
    return said


def _platform_from_listing(refusal: Refusal, kb: KnowledgeBase) -> List[InstallerError]:
    """The platform pip ran on, read from the torch releases it listed for a pin newer than all of
    them: the listing is exactly the releases (up to the pin) with wheels for one platform and
    Python, and that platform's wheels stop before the pin (e.g. macOS x86_64 after 2.2.2)."""
    spec, versions = next(iter(_pip_listings(refusal)), ("", ()))
    # PEP 440 pads a release with zeros to compare it: ==2.4 asks for 2.4.0
    pinned = _PIN.fullmatch(spec) or _PIN.fullmatch(re.sub(r"^(===?\d+\.\d+)$", r"\1.0", spec))
    known = {release.version: release for release in kb.releases}
    listed = {v for v in versions if v in known}
    pin = pinned.group("version") if pinned and pinned.group("variant") is None else ""
    if pin not in known or not listed or version_tuple(pin) <= version_tuple(max(listed, key=version_tuple)):
        return []
    fits: Dict[str, List[str]] = {}
    for platform, python in _listing_fits(listed, pin, known):
        fits.setdefault(platform, []).append(python)
    if len(fits) != 1:
        return []
    (platform, pythons), = fits.items()
    low, high = min(listed, key=version_tuple), max(listed, key=version_tuple)
    why = (f"pip could see torch {low} to {high}: exactly the releases with {platform} wheels for Python "
           f"{' or '.join(pythons)}, and torch {pin} publishes none for {platform}")
    return [InstallerError("pip", f"listing-{platform}", f"torch=={pin} (from versions: {low} … {high})", why,
                           "torch", (_SOURCE,))]
