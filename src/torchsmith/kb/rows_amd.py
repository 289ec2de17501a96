"""The AMD tables' rows: gfx targets (with AMD TheRock's per-platform status) and TheRock's indexes."""

from __future__ import annotations

import torchsmith.kb.model as m
from torchsmith.kb.rows import GFX_PATTERN, Context, RowReader

__all__ = ["gfx_target", "therock_index"]

_THEROCK_STATUS = ("release-ready", "sanity-tested", "build-passing")


def gfx_target(row: RowReader, _ctx: Context) -> m.GfxTarget:
    row.moved("hsa_override", "hsa_override.json (the override route's one home)")
    row.moved("in_wheels", "the releases' gfx lists (derived when the data is loaded)")
    therock = row.platform_text_map("therock")
    for platform, status in therock.items():
        if status not in _THEROCK_STATUS:
            raise row.error(f"therock.{platform}", f"{status!r} is not one of {', '.join(_THEROCK_STATUS)}")
    return m.GfxTarget(
        name=row.text("name"), gfx=row.text("gfx", GFX_PATTERN), family=row.text("family"), in_wheels=False,
        sources=row.sources(), uncertain=row.flag("uncertain"), therock=therock,
    )


def therock_index(row: RowReader, _ctx: Context) -> m.TheRockIndex:
    kind = row.text("kind")
    if kind not in ("multi-arch", "per-family"):
        raise row.error("kind", f"{kind!r} is not multi-arch or per-family")
    gfx = row.texts("gfx", GFX_PATTERN, required=True)
    if not gfx:
        raise row.error("gfx", "empty arch list: name the gfx targets the index serves")
    extra = row.opt_text("extra") or ""
    if kind == "multi-arch" and "{gfx}" not in extra:
        raise row.error("extra", "a multi-arch index names its per-target extra, e.g. device-{gfx}")
    return m.TheRockIndex(
        index_url=row.text("index_url"), kind=kind, family=row.opt_text("family") or "",
        channel=row.text("channel"), gfx=gfx, platforms=row.platforms("platforms"),
        torch=row.texts("torch", required=True), sources=row.sources(), extra=extra,
        uncertain=row.flag("uncertain"), note=row.opt_text("note") or "",
    )
