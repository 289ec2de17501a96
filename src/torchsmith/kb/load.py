"""Loading the knowledge base: the packaged data plus an overlay directory, cached per overlay."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Tuple, cast

from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb import invariants, loader
from torchsmith.kb.documents import DATA_DIR
from torchsmith.kb.knowledge import KnowledgeBase
from torchsmith.kb.loader import Dataset
from torchsmith.kb.model import TorchRelease

__all__ = ["REFRESH_FILE", "clear_cache", "default_overlay_dir", "load_kb"]

REFRESH_FILE = "refresh.json"


def default_overlay_dir(environ: Optional[Mapping[str, str]] = None) -> str:
    """Where `kb refresh` writes: ``$TORCHSMITH_CACHE_DIR/kb-overlay`` or the user cache dir."""
    if environ is None:
        from torchsmith.host.live import process_environ  # the CLI passes its own

        environ = process_environ()
    env = environ
    base = env.get("TORCHSMITH_CACHE_DIR")
    if not base:
        if env.get("XDG_CACHE_HOME"):
            root = env["XDG_CACHE_HOME"]
        elif os.name == "nt" and env.get("LOCALAPPDATA"):
            root = env["LOCALAPPDATA"]
        else:
            root = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
        base = os.path.join(root, "torchsmith")
    return os.path.join(base, "kb-overlay")


_CacheKey = Tuple[str, Optional[str], Tuple[Tuple[str, float], ...]]
_CACHE: Dict[_CacheKey, KnowledgeBase] = {}


def clear_cache() -> None:
    _CACHE.clear()


def _stamp(path: Optional[str]) -> Tuple[Tuple[str, float], ...]:
    if not path or not os.path.isdir(path):
        return ()
    out = []
    for name in sorted(os.listdir(path)):
        try:
            out.append((name, os.stat(os.path.join(path, name)).st_mtime))
        except OSError:
            continue
    return tuple(out)


def load_kb(path: Optional[str] = None, *, environ: Optional[Mapping[str, str]] = None,
            packaged_dir: Optional[str] = None, packaged_only: bool = False) -> KnowledgeBase:
    """The knowledge base: packaged data plus an overlay directory.

    ``path`` is an overlay (or a complete data directory); without it, the overlay written by
    `torchsmith kb refresh` is used when present. Loads are cached per path until a file in
    the overlay changes. ``packaged_only`` ignores every overlay. Raises
    :class:`KnowledgeBaseError` naming file, row and field.
    """
    base_dir = packaged_dir or DATA_DIR
    overlay: Optional[str] = None
    if path:
        overlay = os.path.abspath(path)
        if not os.path.isdir(overlay):
            raise KnowledgeBaseError(f"knowledge base overlay {path}: no such directory",
                                     hint="pass a directory with data files (--kb DIR / TORCHSMITH_KB)")
    elif not packaged_only:
        default = default_overlay_dir(environ)
        overlay = default if os.path.isdir(default) else None
    key = (base_dir, overlay, _stamp(overlay))
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    kb = _load(base_dir, overlay)
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[key] = kb
    return kb


def _read_refresh(overlay: str) -> Dict[str, Any]:
    path = os.path.join(overlay, REFRESH_FILE)
    if not os.path.exists(path):
        return {}
    from torchsmith.errors import parse_json_bytes, read_json_bytes

    try:
        loaded = parse_json_bytes(read_json_bytes(path))
    except (OSError, ValueError) as exc:
        raise KnowledgeBaseError(
            f"{REFRESH_FILE}: cannot read ({exc})", context=[f"file: {path}"],
            hint="delete the overlay and run `torchsmith kb refresh` again") from exc
    problem = _refresh_problem(loaded)
    if problem:
        raise KnowledgeBaseError(
            f"{REFRESH_FILE}: {problem}", context=[f"file: {path}"],
            hint="delete the overlay and run `torchsmith kb refresh` again")
    return cast(Dict[str, Any], loaded)


# What `kb refresh` writes in its provenance record, and the type of each field.
_REFRESH_FIELDS = {"refreshed": str, "newest_seen": str, "torch_index_base": str, "packaged_kb_version": str,
                   "package_indexes": list, "read": list, "new_releases": list, "changed_releases": list}


def _refresh_problem(loaded: Any) -> str:
    if not isinstance(loaded, dict):
        return f"expected an object, got {type(loaded).__name__}"
    if "refreshed" not in loaded:
        return "the field 'refreshed' is missing"
    for name, value in loaded.items():  # a field a newer refresh added is left alone
        if name in _REFRESH_FIELDS and not isinstance(value, _REFRESH_FIELDS[name]):
            return f"the field {name!r} is not a {_REFRESH_FIELDS[name].__name__}"
    for name in ("new_releases", "changed_releases", "package_indexes"):
        if not all(isinstance(item, str) for item in loaded.get(name, ())):
            return f"the field {name!r} holds something other than text"
    return ""


def _load(base_dir: str, overlay: Optional[str]) -> KnowledgeBase:
    data = loader.read_dir(base_dir, packaged=True)
    releases = loader.rows_of(data, TorchRelease)
    data.manifest["packaged_newest"] = releases[0].version if releases else ""
    if overlay is None:
        _derive_and_check(data)
        return KnowledgeBase(data.sections, data.manifest, data.sources, packaged_dir=base_dir)
    try:
        return _with_overlay(data, overlay, base_dir)
    except KnowledgeBaseError as exc:  # name the overlay: the packaged data is not at fault
        raise KnowledgeBaseError(
            f"{exc.message} (in the overlay {overlay})", code=exc.code,
            context=exc.context or [f"overlay: {overlay}"],
            hint=f"`torchsmith kb validate {overlay}` re-checks it; or delete that directory "
                 "(`torchsmith kb refresh` writes a new one)") from exc


def _derive_and_check(data: Dataset) -> None:
    loader.check_references(data)
    loader.with_minor_compat(data)
    invariants.inherit_jetson_wheels(data)
    invariants.derive_in_wheels(data)
    invariants.check_invariants(data)


def _with_overlay(data: Dataset, overlay: str, base_dir: str) -> KnowledgeBase:
    refresh = _read_refresh(overlay)
    made_for = refresh.get("packaged_kb_version")
    in_use: Optional[str] = overlay
    notes: List[str] = []
    if made_for and made_for != data.manifest.get("kb_version"):
        # A refresh of older packaged data would replace newer verified rows with guesses.
        notes.append(f"ignoring the `kb refresh` overlay in {overlay}: it was made for knowledge base "
                     f"{made_for}, this torchsmith ships {data.manifest.get('kb_version')}; "
                     f"run `torchsmith kb refresh` again")
        in_use, refresh = None, {}
    else:
        base = str(data.manifest["torch_index_base"])
        extra = loader.read_dir(overlay, packaged=False, index_base=base)
        data = loader.merge(data, extra)
    _derive_and_check(data)
    kb = KnowledgeBase(data.sections, data.manifest, data.sources, overlay=in_use, refresh=refresh,
                       packaged_dir=base_dir)
    kb.warnings.extend(notes)
    return kb
