"""`kb refresh --variant-index [URL]`: the wheel-variant index's metadata read as the primary source
of each release's variant labels, written where `plan --variants` reads them.

The index's simple page (``<variant index>/torch/``) lists each release's
``torch-<version>-variants.json`` (PEP 825 draft) next to the variant wheels, whose file names end
in their label (``...-manylinux_2_28_x86_64-cuda12.8.whl``). Each file read becomes that release's
row of the overlay's ``variant_labels.json`` (the packaged rows of other releases kept), with the
file's URL and the date as its source: per label the CUDA driver floor and ``sm_arch`` targets,
the ROCm version and gfx targets, the Intel device IPs, the providers and priorities, and the
platforms its wheels are published for. A file that cannot be read or parsed is noted, never fatal.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from torchsmith.errors import FetchError, KnowledgeBaseError
from torchsmith.kb.rows import version_key
from torchsmith.kb.variant_index import (
    LabelFacts,
    build_name,
    label_disagreements,
    parse_variant_page,
    parse_variants_data,
)
from torchsmith.redact import redact, strip_credentials

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["refresh_variant_labels", "variant_page_url"]

Fetch = Callable[[str, float], str]


def variant_page_url(index: str) -> str:
    """``<variant index>/torch/`` from the index's base (``.../whl/variant``) or its torch page."""
    index = index.rstrip("/")
    return f"{index}/" if index.endswith("/torch") else f"{index}/torch/"


def refresh_variant_labels(packaged: KnowledgeBase, fetch: Fetch, page_url: str, *, files: Dict[str, Any],
                           rows: List[Dict[str, Any]], date: str, timeout: float,
                           read: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Read every release's variants.json the page lists into ``files["variant_labels.json"]``;
    returns, per release and label, what was read and where the packaged build disagrees."""
    try:
        names, platforms = parse_variant_page(fetch(page_url, timeout))
    except FetchError as exc:
        read.append({"url": redact(page_url), "status": "not found" if exc.status == 404 else "failed"})
        return {}
    read.append({"url": redact(page_url), "status": "ok", "versions": len(names)})
    document = json.loads(json.dumps(packaged.document("variant_labels")))
    summary: Dict[str, Any] = {}
    for version, name in sorted(names.items(), key=lambda item: version_key(item[0]), reverse=True):
        url = f"{page_url}{name}"
        shown = redact(strip_credentials(url))
        try:
            data = json.loads(fetch(url, timeout))
            labels = parse_variants_data(data, shown)
        except (FetchError, ValueError, KnowledgeBaseError) as exc:
            read.append({"url": shown, "status": f"failed: {getattr(exc, 'message', exc)}"})
            continue
        read.append({"url": shown, "status": "ok", "labels": sorted(labels)})
        published = platforms.get(version, {})
        _record(document, version, data, url=shown, date=date, published=published)
        summary[version] = {label: _summary(packaged, version, facts, published.get(label, []))
                            for label, facts in labels.items()}
        _fill_inferred(rows, version, labels, published)
    files["variant_labels.json"] = document
    return summary


def _record(document: Dict[str, Any], version: str, data: Dict[str, Any], *, url: str, date: str,
            published: Dict[str, List[str]]) -> None:
    """The file as the release's row (replacing a packaged one), its URL and date as the source."""
    source = f"variant-index-torch-{version}"
    document["sources"][source] = {
        "url": url, "retrieved": date,
        "title": f"torch-{version}-variants.json on the wheel-variant index, read by `torchsmith kb refresh`"}
    row: Dict[str, Any] = {key: value for key, value in data.items() if key != "$schema"}
    row.update({"torch": version, "source": [source], "url": url, "retrieved": date,
                "schema": data.get("$schema"), "published": published})
    kept = [r for r in document["releases"] if r.get("torch") != version]
    document["releases"] = sorted([*kept, row], key=lambda r: version_key(str(r["torch"])), reverse=True)


def _summary(packaged: KnowledgeBase, version: str, facts: LabelFacts, on: List[str]) -> Dict[str, Any]:
    rocm = facts.values("amd", "rocm_version")
    out: Dict[str, Any] = {
        "build": build_name(facts.label), "cuda_floor": facts.cuda_lower, "sass": list(facts.sass),
        "ptx": list(facts.ptx), "rocm": rocm[0] if rocm else None,
        "gfx": list(facts.values("amd", "gfx_arch")),
        "device_ip": list(facts.values("intel", "device_ip")), "platforms": on, "disagrees": []}
    release = packaged.release(version)
    build = release.variant(build_name(facts.label)) if release is not None else None
    if build is not None:
        for platform in on:
            out["disagrees"] += [f"{platform}: {p}" for p in label_disagreements(
                facts, build.sass(platform), build.ptx(platform), build.gfx, build.rocm)]
    return out


def _fill_inferred(rows: List[Dict[str, Any]], version: str, labels: Dict[str, LabelFacts],
                   published: Dict[str, List[str]]) -> None:
    """A build `kb refresh` only inferred (arch lists copied from an older release) takes the
    targets its label declares, on the platforms its variant wheels are published for."""
    by_build = {build_name(label): (facts, published.get(label, [])) for label, facts in labels.items()}
    for row in rows:
        for variant in row["variants"] if row["version"] == version else ():
            found: Optional[Any] = by_build.get(variant["name"])
            if found is None or not variant.get("from_refresh"):
                continue
            facts, on = found
            on = [p for p in on if p in variant["platforms"]]
            if facts.sass and on:
                variant["sass"] = {p: list(facts.sass) for p in on}
                variant["ptx"] = {p: list(facts.ptx) for p in on if facts.ptx}
            gfx = facts.values("amd", "gfx_arch")
            if gfx:
                variant["gfx"] = sorted(gfx)
            if (facts.sass and on) or gfx:
                variant["note"] = f"arch lists from the variant index's torch-{version}-variants.json"
