"""The compatibility data: what it holds, one table, a validity check, and a refresh.

  torchsmith kb info                 version, age, tables and row counts, overlay in use
  torchsmith kb show TABLE [--json]  one table (releases, cuda, gpus, jetson, ...)
  torchsmith kb validate [DIR]       the packaged data and the refresh overlay in use, or DIR over it
  torchsmith kb refresh              read the live wheel indexes; write an overlay in the cache
  torchsmith kb archs FILE|WHEEL     the SASS and PTX a binary (or a torch wheel's CUDA libraries) carries

Every command works offline except `refresh`. `--kb DIR` (or TORCHSMITH_KB) loads DIR as an
overlay instead of the one `refresh` wrote.
"""

from __future__ import annotations

import argparse
import datetime
import os
from typing import IO, TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from torchsmith.cli.common import Context, add_json_option
from torchsmith.errors import UsageError
from torchsmith.output import Result
from torchsmith.versions import python_tag_key

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase
    from torchsmith.kb.model import Row

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    info = sub.add_parser("info", help="kb_version, age, tables with row counts, overlay in use")
    show = sub.add_parser("show", help="print one table")
    from torchsmith.kb.model import TABLE_FILES

    show.add_argument("table", nargs="?", choices=sorted(TABLE_FILES), metavar="TABLE",
                      help="one of: " + ", ".join(TABLE_FILES))  # none given: the error lists them
    validate = sub.add_parser("validate", help="check the data and its refresh overlay (or DIR over it)")
    validate.add_argument("path", nargs="?", metavar="DIR", help="a data or overlay directory")
    refresh = sub.add_parser("refresh", help="read the live wheel indexes and write an overlay")
    refresh.add_argument("--torch-index", metavar="URL",
                         help="base of the PyTorch wheel indexes (default: from the data; "
                              "a mirror works)")
    refresh.add_argument("--variant", action="append", metavar="NAME",
                         help="variant index to read, e.g. cu130 (repeat; default: recent variants)")
    refresh.add_argument("--index-url", action="append", metavar="URL",
                         help="package index to read torch from "
                              "(default: the one pip/uv are configured with)")
    refresh.add_argument("--variant-index", nargs="?", const=True, default=False, metavar="URL",
                         help="also read the wheel-variant index (URL, default <torch-index>/variant) and "
                              "each release's torch-<version>-variants.json (PEP 825 draft) into the labels "
                              "`plan --variants` uses: CUDA/ROCm/XPU versions, arch lists, driver floors")
    pages = refresh.add_mutually_exclusive_group()
    pages.add_argument("--wheel-pages", dest="wheel_pages", action="store_true", default=None,
                       help="read the projects' own wheel pages (wheel_pages.json: PyG, OpenMMLab, NATTEN, "
                            "GitHub release assets...) into the package snapshot, within one deadline "
                            "(default: on, unless --torch-index names a mirror)")
    pages.add_argument("--no-wheel-pages", dest="wheel_pages", action="store_false",
                       help="do not read the projects' wheel pages")
    refresh.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS")
    refresh.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                         help="when another refresh is writing the same overlay, wait this long for it")
    refresh.add_argument("--overlay", metavar="DIR", help="where to write (default: the user cache)")
    archs = sub.add_parser("archs", help="the SASS and PTX a CUDA binary or a torch wheel carries")
    archs.add_argument("path", metavar="FILE|WHEEL",
                       help="a shared library (.so, .dll) or a torch wheel (its torch/lib CUDA libraries)")
    add_json_option(archs)
    for command in (info, show, validate, refresh):
        add_json_option(command)
        command.add_argument("--kb", metavar="DIR",
                             help="use DIR as the overlay (default: the refreshed one)")


def run(args: argparse.Namespace, ctx: Context) -> Result:
    action = str(args.action)
    if action == "info":
        return _info(ctx)
    if action == "show":
        if args.table is None:
            from torchsmith.kb.model import TABLE_FILES

            raise UsageError("kb show needs the TABLE to print", hint="one of: " + ", ".join(TABLE_FILES))
        return _show(ctx, str(args.table))
    if action == "validate":
        return _validate(ctx, args.path)
    if action == "archs":
        return _archs(ctx, str(args.path))
    return _refresh(args, ctx)


def _archs(ctx: Context, path: str) -> Result:
    from torchsmith.kb.fatbin import read_path

    codes = read_path(ctx.host(), path)
    data = {"path": path, "binaries": [code.to_json() for code in codes]}

    def human(out: IO[str]) -> None:
        if not codes:
            out.write(f"{path}: its CUDA libraries carry no GPU code\n")
        for code in codes:
            sass, ptx = code.targets()
            out.write(f"{code.file}: {code.containers} fatbin container(s)\n")
            out.write(f"  SASS {' '.join(_counted(sass, code.sass, code.containers)) or 'none'}\n")
            out.write(f"  PTX  {' '.join(_counted(ptx, code.ptx, code.containers)) or 'none'}\n")
            build_sass, build_ptx = code.build_targets()
            out.write(f"  most containers: {' '.join(build_sass + build_ptx)} (a torch build's arch list)\n")

    return Result(command="kb", data=data, human=human)


def _counted(names: Sequence[str], counts: Dict[str, int], containers: int) -> List[str]:
    """``sm_90a (4/475)`` for a target only some containers (some kernels) carry."""
    return [name if counts[name] == containers else f"{name} ({counts[name]}/{containers})" for name in names]


def _age_days(kb_version: str) -> Optional[int]:
    try:
        made = datetime.date(*(int(p) for p in kb_version.split("+", 1)[0].split(".")[:3]))
    except (TypeError, ValueError):
        return None
    return (datetime.date.today() - made).days


def _counts(kb: KnowledgeBase) -> Dict[str, Dict[str, int]]:
    from torchsmith.kb.model import TABLE_FILES

    out = {}
    for name in TABLE_FILES:
        rows = kb.table(name)
        out[name] = {"rows": len(rows), "uncertain": sum(1 for r in rows if getattr(r, "uncertain", False))}
    return out


def _info(ctx: Context) -> Result:
    from torchsmith.kb import DATA_DIR

    kb = ctx.kb()
    counts = _counts(kb)
    data = {"kb_version": kb.kb_version, "schema": kb.schema, "age_days": _age_days(kb.kb_version),
            "packaged": DATA_DIR, "overlay": kb.overlay, "refresh": dict(kb.refresh), "tables": counts,
            "sources": len(kb.sources), "newest_release": kb.newest_release.version,
            "wheel_pages": [str(r["url"]) for r in kb.document("wheel_pages")["rows"]],
            "oldest_release": kb.releases[-1].version}

    def human(out: IO[str]) -> None:
        age = data["age_days"]
        out.write(f"knowledge base {kb.kb_version} (schema {kb.schema})"
                  + (f", {age} days old" if age is not None else "") + "\n")
        out.write(f"  packaged data: {DATA_DIR}\n")
        if kb.overlay:
            when = kb.refresh.get("refreshed")
            out.write(f"  overlay: {kb.overlay}" + (f" (refreshed {when})" if when else "") + "\n")
        else:
            out.write("  overlay: none (`torchsmith kb refresh` writes one)\n")
        out.write(f"  torch releases {kb.releases[-1].version} … {kb.newest_release.version}; "
                  f"{len(kb.sources)} sources\n")
        width = max(len(n) for n in counts)
        for name, count in counts.items():
            extra = f" ({count['uncertain']} uncertain)" if count["uncertain"] else ""
            out.write(f"  {name.ljust(width)}  {count['rows']:4d} rows{extra}\n")

    return Result(command="kb", data=data, human=human, kb_version=kb.kb_version)


def _show(ctx: Context, table: str) -> Result:
    from torchsmith.kb.loader import dump_rows

    kb = ctx.kb()
    rows = kb.table(table)
    data = {"table": table, "rows": dump_rows(rows)}

    def human(out: IO[str]) -> None:
        from torchsmith.cli.table import write_table

        header, cells = _table(rows)
        write_table(out, header, cells)
        out.write(f"({len(rows)} rows; ? = unverified; `--json` for every field and source)\n")

    return Result(command="kb", data=data, human=human, kb_version=kb.kb_version)


def _cell(value: object) -> str:
    """A value for people: lists joined, mappings as key: value, nested rows by name, never a repr."""
    import dataclasses

    if value is None or value in ("", ()):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    if isinstance(value, (tuple, list)):
        items = [_cell(item) for item in value]
        return (", " if any(" " in item for item in items) else " ").join(items)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        named = getattr(value, "name", None) or getattr(value, "id", None)
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return str(named) if named else _cell(fields)
    return str(value)


def _table(rows: Sequence[Row]) -> Tuple[List[str], List[List[str]]]:
    """The columns of a table (every field but the sources) and its cells."""
    import dataclasses

    from torchsmith.kb.model import TorchRelease

    if not rows:
        return ["(empty)"], []
    if isinstance(rows[0], TorchRelease):
        header = ["?", "torch", "torchvision", "torchaudio", "python", "variants"]
        return header, [[
            "?" if row.uncertain else "", row.version, row.torchvision or "-", row.torchaudio or "-",
            " ".join(sorted({t for tags in row.python.values() for t in tags}, key=python_tag_key)),
            ", ".join(v.name + ("?" if v.uncertain else "") for v in row.variants)]
            for row in rows if isinstance(row, TorchRelease)]
    names = [f.name for f in dataclasses.fields(rows[0]) if f.name not in ("sources", "uncertain")]
    header = ["?", *(name.replace("_", " ") for name in names)]
    return header, [["?" if getattr(row, "uncertain", False) else "",
                     *(_cell(getattr(row, name)) for name in names)] for row in rows]


def _validate(ctx: Context, path: Optional[str]) -> Result:
    from torchsmith.kb import load_kb

    # Without DIR: the packaged data and the refresh overlay every command would read with it.
    from torchsmith.kb.validate import validate_documents

    kb = load_kb(str(path)) if path else load_kb(environ=ctx.environ)
    counts = _counts(kb)
    documents = validate_documents(kb)
    total = sum(c["rows"] for c in counts.values())
    data = {"valid": True, "path": os.path.abspath(path) if path else None, "rows": total,
            "tables": counts, "documents": documents, "sources": len(kb.sources),
            "kb_version": kb.kb_version, "overlay": kb.overlay}

    def human(out: IO[str]) -> None:
        what = (f"{path} over the packaged data" if path else
                f"the overlay {kb.overlay} over the packaged data" if kb.overlay else "packaged data")
        out.write(f"ok: {what} is valid: {total} rows in {len(counts)} tables, {len(documents)} documents, "
                  f"{len(kb.sources)} sources (kb {kb.kb_version})\n")

    ctx.warnings.extend(kb.warnings)
    return Result(command="kb", data=data, human=human, kb_version=kb.kb_version)


def _pages_said(read: Sequence[Dict[str, Any]]) -> str:
    """The projects' wheel pages in a few lines (hundreds are read): counts, then what failed."""
    from torchsmith.kb.wheel_pages import PAGE

    pages = [r for r in read if r.get("kind") == PAGE]
    if not pages:
        return ""
    counts: Dict[str, int] = {}
    for page in pages:
        status = "skipped" if str(page["status"]).startswith("skipped") else str(page["status"])
        counts[status] = counts.get(status, 0) + 1
    lines = ["  projects' wheel pages: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))]
    lines += [f"    {p['url']}: {p['status']}" for p in pages
              if p["status"] not in ("ok", "not found")][:8]
    return "\n".join(lines) + "\n"


def _read_pages(args: argparse.Namespace, notes: List[str]) -> bool:
    """The projects' pages are read unless asked not to; behind a mirror (--torch-index) the
    network may not reach their hosts, so only when asked for (--wheel-pages)."""
    if args.wheel_pages is None and args.torch_index:
        notes.append("projects' wheel pages not read: --torch-index names a mirror "
                     "(--wheel-pages reads them)")
        return False
    return args.wheel_pages is not False


def _refresh(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.kb import default_overlay_dir
    from torchsmith.kb.refresh import configured_indexes, refresh
    from torchsmith.kb.wheel_pages import PAGE

    overlay = args.overlay or default_overlay_dir(ctx.environ)
    if os.path.exists(overlay) and not os.path.isdir(overlay):  # found before any download
        raise UsageError(f"the overlay path {overlay} is a file, not a directory",
                         hint="pass --overlay DIR (a directory, made if absent)")
    indexes: Sequence[str]
    notes: List[str] = []
    if args.index_url:
        indexes = list(args.index_url)
    else:
        found = configured_indexes(ctx.environ, ctx.host().read_text)
        indexes = [url for url, _ in found[:1]]
        if found:
            notes.append(f"package index {found[0][0]} (from {found[0][1]})")
        else:
            notes.append("no package index configured for pip or uv: PyPI defaults stay as packaged")
    from torchsmith.cli.progress import waiting

    pages = ctx.kb().document("wheel_pages")["rows"] if _read_pages(args, notes) else ()
    with waiting(args, "kb refresh: reading the wheel indexes"):
        result = refresh(overlay_dir=overlay, fetch=ctx.host().fetch_url, index_base=args.torch_index,
                         variants=args.variant, package_indexes=indexes, timeout=args.timeout,
                         wait=args.wait, variant_index=args.variant_index,
                         wheel_pages=pages)
    data = {"overlay": overlay, **result, "notes": notes}

    def human(out: IO[str]) -> None:
        out.write(f"refreshed {overlay} ({result['refreshed']})\n")
        for item in result["read"]:
            if item.get("kind") != PAGE:
                out.write(f"  read {item['url']}: {item['status']}\n")
        out.write(_pages_said(result["read"]))
        for note in notes:
            out.write(f"  {note}\n")
        new = result["new_releases"]
        changed = result["changed_releases"]
        out.write(f"  newest torch seen: {result['newest_seen']}; new releases: {', '.join(new) or 'none'}; "
                  f"releases with new variants: {', '.join(changed) or 'none'}\n")
        for version, labels in result.get("variant_labels", {}).items():  # now in variant_labels.json
            out.write(f"  variant labels of torch {version}: {', '.join(labels)}\n")
            for label, facts in labels.items():
                out.writelines(f"    {label} disagrees with the data: {d}\n" for d in facts["disagrees"])

    from torchsmith.kb import load_kb

    ctx.warnings.extend(load_kb(overlay).warnings)
    return Result(command="kb", data=data, human=human)
