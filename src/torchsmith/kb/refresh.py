"""`torchsmith kb refresh`: read the live wheel indexes and write an overlay with what is new.

The only module of torchsmith that opens network connections. It reads the PEP 503 simple pages
``<torch index base>/<variant>/torch/`` (download.pytorch.org by default, from the packaged
manifest) and ``<index>/torch/`` of the package index the user configured for pip or uv (never
a built-in registry), through ``Host.fetch_url`` (which honours ``http_proxy``/``https_proxy``/
``no_proxy`` and netrc).

What it learns: torch releases newer than the packaged data, new variants of known releases
and the Python tags their wheels exist for. New releases inherit the GPU architecture lists of
the newest packaged build of the same variant and are marked ``uncertain``. The overlay
(``manifest.json``, ``torch_releases.json``, ``cuda.json``, ``refresh.json`` with the URLs read
and the date) replaces the previous one only when it validates.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import tempfile
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from torchsmith.compat import Variant
from torchsmith.errors import FetchError, TorchsmithError
from torchsmith.kb import DATA_DIR, REFRESH_FILE, KnowledgeBase, load_kb
from torchsmith.kb.pipsources import pip_file_options
from torchsmith.kb.rows import is_version, version_key
from torchsmith.redact import redact, redact_data, strip_credentials
from torchsmith.versions import python_tag_key

__all__ = ["Fetch", "RefreshError", "configured_indexes", "parse_simple_page", "refresh"]

# url, timeout -> page text (Host.fetch_url); raises FetchError.
Fetch = Callable[[str, float], str]

_ANCHOR = re.compile(r"<a\b([^>]*)>([^<]*)</a>", re.IGNORECASE)
_ANCHOR_START = re.compile(r"<a\b", re.IGNORECASE)
_HREF = re.compile(r"""href\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_WHEEL = re.compile(r"^torch-([^-]+)-(cp\d+|py3)-([^-]+)-([^-]+)\.whl$")


class RefreshError(TorchsmithError):
    code = "kb-refresh-failed"


# --- the user's package index ---------------------------------------------------------------


def _uv_index(text: str) -> Optional[str]:
    """The default index from a uv.toml / [tool.uv] text, without a TOML parser (3.8)."""
    match = re.search(r'^\s*index-url\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if match:
        return match.group(1)
    for block in re.split(r"^\s*\[\[index\]\]\s*$", text, flags=re.MULTILINE)[1:]:
        url = re.search(r'^\s*url\s*=\s*"([^"]+)"', block, re.MULTILINE)
        if url and re.search(r"^\s*default\s*=\s*true", block, re.MULTILINE):
            return url.group(1)
    return None


def configured_indexes(environ: Mapping[str, str], read: Callable[[str], Optional[str]]
                       ) -> List[Tuple[str, str]]:
    """(url, where it came from) of the package index pip and uv are configured to use.

    Environment first (``UV_DEFAULT_INDEX``, ``UV_INDEX_URL``, ``PIP_INDEX_URL``), then pip's
    configuration files (later files win, as in pip), then ``uv.toml``; files are read with
    ``read`` (``Host.read_text``). Empty when nothing is configured: torchsmith does not assume
    a registry.
    """
    env = environ
    found: List[Tuple[str, str]] = []
    for name in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        if env.get(name):
            found.append((env[name].strip(), f"${name}"))
    pip_url = pip_file_options(env, read, ("index-url",)).get("index-url")
    if pip_url:
        found.append(pip_url)
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    for path in (os.path.join(xdg, "uv", "uv.toml"), "/etc/uv/uv.toml"):
        url = _uv_index(read(path) or "")
        if url:
            found.append((url, path))
    unique: List[Tuple[str, str]] = []
    for url, where in found:
        if url.rstrip("/") not in [u.rstrip("/") for u, _ in unique]:
            unique.append((url, where))
    return unique


# --- parsing simple pages -------------------------------------------------------------------


def _platform(tag: str) -> Optional[str]:
    if tag.endswith("x86_64") and ("linux" in tag):
        return "linux-x86_64"
    if tag.endswith("aarch64") and "linux" in tag:
        return "linux-aarch64"
    if tag == "win_amd64":
        return "windows-x86_64"
    if tag.startswith("macosx") and tag.endswith("arm64"):
        return "macos-arm64"
    if tag.startswith("macosx") and (tag.endswith(("x86_64", "intel"))):
        return "macos-x86_64"
    return None


def _python(tag: str, abi: str) -> Optional[str]:
    match = re.match(r"^cp(\d)(\d+)$", tag)
    if not match:
        return None
    return f"{match.group(1)}.{match.group(2)}" + ("t" if abi.endswith("t") else "")


# PyTorch's own pages list a few thousand files; a page of far more is no torch index, and
# reading it link by link would take minutes.
MAX_PAGE_LINKS = 50_000


def parse_simple_page(text: str) -> Dict[str, Dict[str, Dict[str, Set[str]]]]:
    """``{version: {local tag or "": {platform: {python tags}}}}`` from a PEP 503 page of torch.

    Raises ValueError for a page of more than :data:`MAX_PAGE_LINKS` links."""
    links = len(_ANCHOR_START.findall(text))
    if links > MAX_PAGE_LINKS:
        raise ValueError(f"it lists {links} links, more than a torch index has ({MAX_PAGE_LINKS})")
    out: Dict[str, Dict[str, Dict[str, Set[str]]]] = {}
    import html
    import urllib.parse

    for attributes, label in _ANCHOR.findall(text):
        name = html.unescape(label.strip())
        href = _HREF.search(attributes)
        if not _WHEEL.match(name) and href:  # the file name is the link's last path segment
            name = urllib.parse.unquote(html.unescape(href.group(1)).split("#")[0].rsplit("/", 1)[-1])
        match = _WHEEL.match(name)
        if not match:
            continue
        version_text, python_tag, abi, platform_tag = match.groups()
        version, _, local = version_text.partition("+")
        platform = _platform(platform_tag)
        python = _python(python_tag, abi)
        if not platform or not python or not is_version(version):
            continue
        out.setdefault(version, {}).setdefault(local, {}).setdefault(platform, set()).add(python)
    return out


# --- building the overlay -------------------------------------------------------------------


def _py_sorted(tags: Set[str]) -> List[str]:
    return sorted(tags, key=python_tag_key)


def _platform_order(platforms: Set[str]) -> List[str]:
    from torchsmith.kb.model import WHEEL_PLATFORMS

    return [p for p in WHEEL_PLATFORMS if p in platforms]


def _kind(variant: str) -> Dict[str, Any]:
    parsed = Variant.parse(variant) or Variant("cpu", "cpu")
    if parsed.kind in ("cuda", "rocm"):
        return {"kind": parsed.kind, parsed.kind: parsed.version}
    return {"kind": parsed.kind}


def _read_page(fetch: Fetch, url: str, timeout: float, read: List[Dict[str, Any]]
               ) -> Optional[Dict[str, Dict[str, Dict[str, Set[str]]]]]:
    """The parsed simple page at ``url``; None (noted in ``read``) when the index has none."""
    try:
        page = fetch(url, timeout)
    except FetchError as exc:
        if exc.status == 404:  # this variant or package is not there (not an outage)
            read.append({"url": redact(url), "status": "not found"})
            return None
        hint = exc.hint if exc.status is not None else (
            "`kb refresh` needs the network (set https_proxy if you use a proxy); "
            "every other command works offline from packaged data")
        raise RefreshError(exc.message, hint=hint) from None
    try:
        return parse_simple_page(page)
    except ValueError as exc:
        raise RefreshError(f"{redact(url)} is not read: {exc}") from None


def refresh(*, overlay_dir: str, fetch: Fetch, index_base: Optional[str] = None,
            variants: Optional[Sequence[str]] = None, package_indexes: Sequence[str] = (),
            timeout: float = 20.0, today: Optional[str] = None, wait: float = 0.0,
            variant_index: Union[bool, str] = False,
            wheel_pages: Sequence[Mapping[str, Any]] = ()) -> Dict[str, Any]:
    """Read the indexes and (re)write ``overlay_dir``; returns what was read and found.

    One refresh of an overlay at a time (a second waits up to ``wait`` seconds, else is
    refused): the overlay is swapped in by renames that two writers would interleave."""
    from torchsmith.install.exclusive import exclusive

    with exclusive(overlay_dir, wait=wait, what="kb refresh"):
        return _refresh(overlay_dir=overlay_dir, fetch=fetch, index_base=index_base, variants=variants,
                        package_indexes=package_indexes, timeout=timeout, today=today,
                        variant_index=variant_index, wheel_pages=wheel_pages)


def _refresh(*, overlay_dir: str, fetch: Fetch, index_base: Optional[str], variants: Optional[Sequence[str]],
             package_indexes: Sequence[str], timeout: float, today: Optional[str],
             variant_index: Union[bool, str] = False,
             wheel_pages: Sequence[Mapping[str, Any]] = ()) -> Dict[str, Any]:
    packaged = load_kb(packaged_only=True)
    base = (index_base or str(packaged.manifest["torch_index_base"])).rstrip("/")
    date = today or datetime.date.today().isoformat()
    read: List[Dict[str, Any]] = []
    names = list(variants or _recent_variants(packaged))
    per_variant = _read_variant_pages(fetch, base, names, timeout, read)
    pypi = _read_package_indexes(fetch, package_indexes, timeout, read)
    shown = redact(strip_credentials(base))  # the overlay names no credentials
    rows, toolkits, newest = _overlay_rows(packaged, per_variant, pypi, shown)
    documents: Dict[str, Any] = {}
    labels = _variant_labels(packaged, fetch, variant_index, base, documents=documents, rows=rows, date=date,
                             timeout=timeout, read=read)
    new = [r["version"] for r in rows if packaged.release(r["version"]) is None]
    provenance: Dict[str, Any] = {"refreshed": date, "newest_seen": newest, "torch_index_base": shown,
                  "packaged_kb_version": packaged.kb_version,
                  "package_indexes": [redact(strip_credentials(u)) for u in package_indexes],
                  "read": read, "new_releases": new,
                  "changed_releases": [r["version"] for r in rows if r["version"] not in new]}
    if variant_index:
        provenance["variant_labels"] = labels
    source_id = f"REFRESH_{date.replace('-', '')}"
    stamp = date.replace("-", "")
    manifest = {"kb_version": f"{packaged.kb_version}+refresh.{stamp}", "schema": 1,
                "sources": {source_id: {
                    "url": shown, "retrieved": date,
                    "title": "PEP 503 pages read by `torchsmith kb refresh`: "
                             + ", ".join(r["url"] for r in read)}}}
    for row in rows:
        row["source"] = [source_id]
        for variant in row["variants"]:
            if variant.get("from_refresh"):
                del variant["from_refresh"]
                variant["source"] = [source_id]
    for row in toolkits:
        row["source"] = [source_id]
    files = {"manifest.json": manifest, "torch_releases.json": {"releases": rows},
             "cuda.json": {"toolkits": toolkits}, REFRESH_FILE: provenance}
    files.update(documents)
    if package_indexes:  # the packages' own metadata, re-read from the user's index
        files.update(_package_snapshot(packaged, fetch, package_indexes[0], pypi,  # and package_deps.json
                                       newest=newest, date=date, timeout=timeout, read=read))
    if wheel_pages:  # projects' own pages (wheel_pages.json): packages named by the files they list
        from torchsmith.kb.wheel_pages import apply_wheel_pages

        provenance["wheel_pages"] = apply_wheel_pages(packaged, files, wheel_pages, fetch, timeout=timeout,
                                                      date=date, read=read)
    _write(overlay_dir, redact_data(files))
    return provenance


def _read_variant_pages(fetch: Fetch, base: str, names: List[str], timeout: float, read: List[Dict[str, Any]]
                        ) -> Dict[str, Dict[str, Dict[str, Dict[str, Set[str]]]]]:
    per_variant: Dict[str, Dict[str, Dict[str, Dict[str, Set[str]]]]] = {}
    for name in names:
        url = f"{base}/{name}/torch/"
        found = _read_page(fetch, url, timeout, read)
        if found is None:
            continue
        per_variant[name] = found
        read.append({"url": redact(url), "status": "ok", "versions": len(found)})
    if not per_variant:
        raise RefreshError(f"none of the torch indexes under {redact(base)} answered ({', '.join(names)})",
                           hint="check --torch-index / the variant names")
    return per_variant


def _read_package_indexes(fetch: Fetch, package_indexes: Sequence[str], timeout: float,
                          read: List[Dict[str, Any]]) -> Dict[str, Dict[str, Set[str]]]:
    """``{version: {platform: python tags}}`` of torch on the user's package indexes."""
    pypi: Dict[str, Dict[str, Set[str]]] = {}
    for index in package_indexes:
        url = f"{index.rstrip('/')}/torch/"
        found = _read_page(fetch, url, timeout, read)
        if found is None:
            continue
        for version, locals_ in found.items():
            for platform, tags in locals_.get("", {}).items():
                pypi.setdefault(version, {}).setdefault(platform, set()).update(tags)
        read.append({"url": redact(url), "status": "ok", "versions": len(pypi)})
    return pypi


def _variant_labels(packaged: KnowledgeBase, fetch: Fetch, variant_index: Union[bool, str], base: str, *,
                    documents: Dict[str, Any], rows: List[Dict[str, Any]], date: str, timeout: float,
                    read: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The variant index's variants.json files, into the overlay's variant_labels.json (what `plan
    --variants` reads); the index is ``<torch index>/variant`` unless a URL is given."""
    if not variant_index:
        return {}
    from torchsmith.kb.variant_refresh import refresh_variant_labels, variant_page_url

    page = variant_page_url(variant_index if isinstance(variant_index, str) else f"{base}/variant")
    return refresh_variant_labels(packaged, fetch, page, files=documents, rows=rows, date=date,
                                  timeout=timeout, read=read)


def _package_snapshot(packaged: KnowledgeBase, fetch: Fetch, index: str, pypi: Mapping[str, object], *,
                      newest: str, date: str, timeout: float, read: List[Dict[str, Any]]
                      ) -> Dict[str, Dict[str, object]]:
    from torchsmith.kb.metaread import refresh_snapshot
    from torchsmith.kb.torch_requires import refresh_torch_requires

    finals = [v for v in pypi if not re.search(r"(a|b|rc|dev)\d*", v)] or [newest]
    files = refresh_snapshot(packaged.document("package_meta"), fetch, index,
                             torch_newest=max(finals, key=version_key), today=date, timeout=timeout,
                             read=read, packaged_deps=packaged.document("package_deps"))
    # torch's own requirements of the releases the packaged file lacks (explain's optional-dependency reader)
    requires = refresh_torch_requires(packaged.document("torch_requires"), fetch, index, today=date,
                                      timeout=timeout, read=read)
    if requires is not None:
        files["torch_requires.json"] = requires
    return files


def _recent_variants(kb: KnowledgeBase) -> List[str]:
    names: List[str] = []
    for release in kb.releases[:6]:
        for variant in release.variants:
            if variant.name not in names:
                names.append(variant.name)
    return names


def _raw_releases() -> Dict[str, Dict[str, Any]]:
    with open(os.path.join(DATA_DIR, "torch_releases.json"), encoding="utf-8") as handle:
        return {row["version"]: row for row in json.load(handle)["releases"]}


def _overlay_rows(kb: KnowledgeBase, per_variant: Dict[str, Dict[str, Dict[str, Dict[str, Set[str]]]]],
                  pypi: Dict[str, Dict[str, Set[str]]], base: str) -> Tuple[List[Dict[str, Any]],
                                                                            List[Dict[str, Any]], str]:
    raw = _raw_releases()
    newest_known = kb.releases[0].version
    seen: Dict[str, Dict[str, Dict[str, Set[str]]]] = {}  # version -> variant -> platform -> pythons
    for name, versions in per_variant.items():
        for version, locals_ in versions.items():
            platforms: Dict[str, Set[str]] = {}
            for local, by_platform in locals_.items():
                if local and local != name:
                    continue  # a page may list other variants' files; keep this variant's own
                for platform, tags in by_platform.items():
                    platforms.setdefault(platform, set()).update(tags)
            if platforms:
                seen.setdefault(version, {})[name] = platforms
    finals = [v for v in seen if not re.search(r"(a|b|rc|dev)\d*", v)] + list(pypi)
    newest = max(finals, key=version_key) if finals else newest_known
    rows: List[Dict[str, Any]] = []
    toolkits: List[Dict[str, Any]] = []
    known_cuda = {row.version for row in kb.cuda_releases}
    for version in sorted(seen, key=version_key, reverse=True):
        if re.search(r"(a|b|rc|dev)\d*", version):
            continue  # pre-releases are not planned for
        existing = raw.get(version)
        if existing is not None:
            have = {v["name"] for v in existing["variants"]}
            new = [n for n in seen[version] if n not in have]
            if not new:
                continue
            row = json.loads(json.dumps(existing))
        else:
            if version_key(version) < version_key(newest_known):
                continue  # an old release the packaged data leaves out on purpose
            row = {"version": version, "python": {}, "pypi_default": {}, "torchvision": None,
                   "torchaudio": None, "variants": [], "uncertain": True,
                   "notes": ["seen by `torchsmith kb refresh`; GPU architectures inferred from the newest "
                             "packaged build of each variant"]}
            new = list(seen[version])
        for name in new:
            row["variants"].append(_inferred_variant(kb, name, seen[version][name], base))
            cuda = _kind(name).get("cuda")
            if cuda and cuda not in known_cuda:
                known_cuda.add(cuda)
                toolkits.append({"version": cuda, "uncertain": True})
        if existing is None:
            python: Dict[str, Set[str]] = {}
            for platforms in seen[version].values():
                for platform, tags in platforms.items():
                    python.setdefault(platform, set()).update(tags)
            for platform, tags in pypi.get(version, {}).items():
                python.setdefault(platform, set()).update(tags)
            row["python"] = {p: _py_sorted(python[p]) for p in _platform_order(set(python))}
            previous = raw[newest_known]["pypi_default"]
            names = {v["name"] for v in row["variants"]}
            row["pypi_default"] = {p: n for p, n in previous.items() if n in names and p in row["python"]}
        rows.append(row)
    toolkits.sort(key=lambda r: version_key(r["version"]), reverse=True)
    return rows, toolkits, newest


def _inferred_variant(kb: KnowledgeBase, name: str, platforms: Dict[str, Set[str]],
                      base: str) -> Dict[str, Any]:
    variant: Dict[str, Any] = {"name": name, **_kind(name), "platforms": _platform_order(set(platforms)),
                               "uncertain": True, "from_refresh": True, "index_url": f"{base}/{name}"}
    template = next((r.variant(name) for r in kb.releases if r.variant(name) is not None), None)
    if template is not None:
        sass = {p: list(template.sass(p)) for p in variant["platforms"] if template.sass(p)}
        if sass:
            variant["sass"] = sass
        if template.gfx:
            variant["gfx"] = list(template.gfx)
        variant["note"] = "architectures copied from the newest packaged build of this variant (unverified)"
    else:
        variant["note"] = "new variant: compiled architectures unknown until torchsmith's data is updated"
    return variant


def _write(overlay_dir: str, files: Mapping[str, Any]) -> None:
    """Write the overlay next to the old one, validate it, then swap it in."""
    parent = os.path.dirname(os.path.abspath(overlay_dir)) or "."
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".kb-overlay-", dir=parent)
    try:
        for name, data in files.items():
            with open(os.path.join(staging, name), "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
                handle.write("\n")
        load_kb(path=staging)  # raises KnowledgeBaseError rather than leave a broken overlay
        old = None
        if os.path.isdir(overlay_dir):
            old = staging + ".old"
            os.replace(overlay_dir, old)
        os.replace(staging, overlay_dir)
        if old:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if os.path.isdir(staging):
            shutil.rmtree(staging, ignore_errors=True)
