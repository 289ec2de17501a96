"""Facts derived from the rows, and the invariants `kb validate` (and every load) holds the data to.

- A Jetson wheel built for a range of L4T releases (``"l4t": "==32.*"``) belongs to every JetPack in
  that range with the same Python, CUDA and cuDNN: a point release inherits its family's wheels from
  the range the wheel is built for, not from a hand-kept copy.
- A family's point releases are covered: a JetPack with no wheel and no index, while an earlier or
  later release of its L4T line has one, is an error unless the row says why (``no_wheels``).
- From 2.6 on, a Windows arch list cites the release branch's own build script, or says it is
  unverified on Windows (``"unverified": ["windows-x86_64"]``).
- Every row has a public source: a source that is no public page, file or artifact (an internal
  sheet, a report of ours) may only back a row marked ``uncertain``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import torchsmith.kb.model as m
from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb.loader import Dataset, rows_of, version_key
from torchsmith.records import replace

__all__ = ["check_invariants", "derive_in_wheels", "inherit_jetson_wheels", "l4t_in_range", "private_source"]

# A source that is not a public artifact: our own sheets (urn:torchsmith:...), our own reports and
# issues ("issue 14" with no repository or address of its own).
_OURS = ("urn:torchsmith:", "torchsmith user", "torchsmith's user")
_OUR_ISSUE = re.compile(r"(?<![\w/#-])issue \d+\b(?!\s*\()")


_CLAUSE = re.compile(r"^(==|!=|>=|<=|<|>)\s*(\d+(?:\.\d+)*)(\.\*)?$")


@lru_cache(maxsize=256)
def l4t_in_range(l4t: str, spec: str) -> bool:
    """Whether L4T release ``l4t`` ("32.7.4") is in ``spec`` ("==32.*", ">=35,<36"); a clause this
    does not read matches nothing. (packaging.specifiers is not imported: loading must be fast.)"""
    try:
        have = version_key(l4t).release
    except ValueError:
        return False
    for clause in spec.split(","):
        match = _CLAUSE.match(clause.strip())
        if match is None:
            return False
        op, text, wildcard = match.groups()
        want = tuple(int(part) for part in text.split("."))
        if wildcard:
            same = have[:len(want)] == want
            if same != (op == "=="):
                return False
            continue
        padded = have + (0,) * (len(want) - len(have))
        if not _compare(op, padded, want + (0,) * (len(padded) - len(want))):
            return False
    return True


def _compare(op: str, have: Tuple[int, ...], want: Tuple[int, ...]) -> bool:
    return {"==": have == want, "!=": have != want, ">=": have >= want, "<=": have <= want,
            "<": have < want, ">": have > want}[op]


def inherit_jetson_wheels(data: Dataset) -> None:
    """Give every JetPack the wheels whose L4T range holds it (same Python), newest torch first."""
    jetpacks = rows_of(data, m.JetPack)
    ranged: List[Tuple[m.JetPack, m.JetsonWheel]] = [
        (jp, wheel) for jp in jetpacks for wheel in jp.wheels if wheel.l4t]
    out: List[m.Row] = []
    for jp in jetpacks:
        have = {wheel.url for wheel in jp.wheels}
        extra: List[m.JetsonWheel] = []
        for home, wheel in ranged:
            if (wheel.url in have or not _same_stack(home, jp) or wheel.python != jp.python
                    or not l4t_in_range(jp.l4t, wheel.l4t)):
                continue
            have.add(wheel.url)
            extra.append(replace(wheel, listed_for=home.jetpack))
        wheels = sorted(jp.wheels + tuple(extra), key=lambda w: version_key(w.torch), reverse=True)
        out.append(replace(jp, wheels=tuple(wheels)) if extra else jp)
    data.sections[m.SECTION_OF[m.JetPack]] = out


def derive_in_wheels(data: Dataset) -> None:
    """A gfx target is in the wheels when some release's ROCm build lists it: read from the
    releases, never kept by hand."""
    listed = {gfx for release in rows_of(data, m.TorchRelease) for variant in release.variants
              if variant.kind == "rocm" for gfx in variant.gfx}
    data.sections[m.SECTION_OF[m.GfxTarget]] = [
        replace(row, in_wheels=row.gfx in listed) for row in rows_of(data, m.GfxTarget)]


def _same_stack(home: m.JetPack, other: m.JetPack) -> bool:
    """The libraries a wheel links: the same CUDA, and no cuDNN known to differ (5.0.2's 8.4 vs 5.1's 8.6)."""
    return home.cuda == other.cuda and not (home.cudnn and other.cudnn and home.cudnn != other.cudnn)


def _family(jp: m.JetPack) -> str:
    return jp.l4t.split(".")[0]


def _check_jetson_families(jetpacks: Sequence[m.JetPack]) -> None:
    covered: Dict[Tuple[str, str], List[m.JetPack]] = {}
    for jp in jetpacks:
        if jp.wheels or jp.index_url:
            covered.setdefault((_family(jp), jp.python), []).append(jp)
    for number, jp in enumerate(jetpacks, 1):
        siblings = covered.get((_family(jp), jp.python), [])
        if jp.wheels or jp.index_url or jp.no_wheels or not siblings:
            continue
        raise KnowledgeBaseError(
            f"jetson.json#jetpacks row {number} field wheels: L4T {jp.l4t} (JetPack {jp.jetpack}) has "
            f"no wheel, while L4T {siblings[0].l4t} of the same R{_family(jp)} line has some: give those "
            f"wheels the L4T range they are built for (\"l4t\": \"=={_family(jp)}.*\" with its source), "
            f"or say in no_wheels why this release has none")


def private_source(entry: object) -> Optional[str]:
    """Why a source is not a public artifact, or None."""
    text = _source_text(entry)
    lowered = text.lower()
    found = next((mark for mark in _OURS if mark in lowered), None)
    if found is None and "issue " in lowered:
        match = _OUR_ISSUE.search(lowered)
        found = match.group(0) if match else None
    return None if found is None else f"cites {found.strip()!r}, which is no public source"


def _row_sources(row: m.Row) -> Tuple[str, ...]:
    refs = tuple(row.sources)
    if isinstance(row, m.TorchRelease):
        for variant in row.variants:
            refs += tuple(variant.sources)
    return refs


def _check_sources(data: Dataset) -> None:
    private = {key: why for key, entry in data.sources.items() if (why := private_source(entry))}
    if not private:
        return
    for (file_name, section), rows in data.sections.items():
        for number, row in enumerate(rows, 1):
            refs = _row_sources(row)
            if refs and all(ref in private for ref in refs) and not getattr(row, "uncertain", False):
                raise KnowledgeBaseError(
                    f"{file_name}#{section} row {number} field source: every source it names "
                    f"({', '.join(refs)}) {private[refs[0]]}: cite the public page, file or artifact, "
                    f"or mark the row uncertain")


def _source_text(entry: object) -> str:
    if isinstance(entry, Mapping):
        return " ".join(str(entry.get(key) or "") for key in ("url", "title"))
    if isinstance(entry, m.Source):
        return f"{entry.url} {entry.title}"
    return str(entry)


def _names_release_branch_script(entry: object, platform_dir: str) -> bool:
    text = _source_text(entry)
    return "release/" in text and platform_dir in text


def _check_windows_lists(data: Dataset) -> None:
    """From 2.6 on, a Windows arch list is read from the release branch's own build script (a source
    naming release/X.Y and windows/), or the build says the list is unverified on Windows."""
    for number, release in enumerate(rows_of(data, m.TorchRelease), 1):
        if version_key(release.version) < version_key("2.6"):
            continue
        for variant in release.variants:
            if (variant.uncertain or not variant.sass("windows-x86_64")
                    or "windows-x86_64" in variant.unverified):
                continue  # an uncertain build is unverified everywhere
            if any(_names_release_branch_script(data.sources.get(ref), "windows") for ref in variant.sources):
                continue
            raise KnowledgeBaseError(
                f"torch_releases.json#releases row {number} field variants.{variant.name}.sass."
                f"windows-x86_64: torch {release.version}'s Windows arch list cites no release branch's "
                f"Windows build script (.ci/pytorch/windows/ at release/X.Y, with its commit): cite it, "
                f"or add \"windows-x86_64\" to the build's unverified platforms")


def check_invariants(data: Dataset) -> None:
    """The invariants every load checks (see the module's docstring)."""
    _check_jetson_families(rows_of(data, m.JetPack))
    _check_sources(data)
    _check_windows_lists(data)
