"""Real, installable wheels made in-process, and a PEP 503 simple index serving them.

Build a wheel::

    path = build_wheel(tmp_path, "torch", "2.6.0+cu126", requires=["torchtriton>=3.2"])

Serve a directory tree of wheels; every directory holding ``*.whl`` files becomes one index,
named by its path under the root::

    root/pytorch/cu126/torch-2.6.0+cu126-py3-none-any.whl  ->  <server.url>/pytorch/cu126/
    root/pypi/ftfy-6.3.0-py3-none-any.whl                   ->  <server.url>/pypi/

    with serve_index(root) as server:
        pip install --index-url server.index_url("pytorch/cu126") torch
        assert not server.fetched("torchtriton-3.9.9")    # every request is logged

The server is a thread on 127.0.0.1 with a free port, quiet, closed on exit. It can hold back
chosen files (``server.stall("ftfy-")``) until released, so a test can interrupt an installer
while it waits for a download.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import http.server
import os
import re
import threading
import time
import urllib.parse
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["IndexServer", "build_wheel", "normalize", "serve_index", "sha256_of"]

_NORMALIZE = re.compile(r"[-_.]+")


def normalize(name: str) -> str:
    """PEP 503 project name: ``Torch_Triton`` -> ``torch-triton``."""
    return _NORMALIZE.sub("-", name).lower()


def sha256_of(path: Union[str, Path]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _record_hash(data: bytes) -> str:
    raw = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def build_wheel(
    dest: Union[str, Path],
    name: str,
    version: str,
    requires: Sequence[str] = (),
    tag: str = "py3-none-any",
    files: Optional[Mapping[str, Union[str, bytes]]] = None,
    requires_python: Optional[str] = None,
) -> Path:
    """Write ``<dest>/<name>-<version>-<tag>.whl`` and return its path.

    ``files`` maps paths inside the wheel to contents; by default the wheel holds one module,
    ``<name>/__init__.py``, with ``__version__``. ``version`` may carry a local label
    (``2.6.0+cu126``), as PyTorch's wheels do.
    """
    dist = re.sub(r"[-.]+", "_", name)
    module = dist.lower()
    dist_info = f"{dist}-{version}.dist-info"
    content: Dict[str, bytes] = {}
    for path, text in (files or {f"{module}/__init__.py": f'__version__ = "{version}"\n'}).items():
        content[path] = text.encode("utf-8") if isinstance(text, str) else text
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        metadata.append(f"Requires-Python: {requires_python}")
    metadata.extend(f"Requires-Dist: {req}" for req in requires)
    content[f"{dist_info}/METADATA"] = ("\n".join(metadata) + "\n").encode("utf-8")
    pure = tag.endswith("-none-any")
    wheel = [
        "Wheel-Version: 1.0",
        "Generator: torchsmith-tests",
        f"Root-Is-Purelib: {'true' if pure else 'false'}",
        f"Tag: {tag}",
    ]
    content[f"{dist_info}/WHEEL"] = ("\n".join(wheel) + "\n").encode("utf-8")
    record_path = f"{dist_info}/RECORD"
    record = [f"{path},{_record_hash(data)},{len(data)}" for path, data in content.items()]
    record.append(f"{record_path},,")
    content[record_path] = ("\n".join(record) + "\n").encode("utf-8")

    out = Path(dest) / f"{dist}-{version}-{tag}.whl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data in content.items():
            # A fixed date keeps the wheel's bytes (and so its sha256) the same on every build.
            info = zipfile.ZipInfo(path, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return out


def _project_of(filename: str) -> str:
    return normalize(filename.split("-", 1)[0])


class IndexServer:
    """What :func:`serve_index` yields: the base URL, the request log, download stalls."""

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self.url = url  # "http://127.0.0.1:PORT" (no trailing slash)
        self.requests: List[str] = []  # every path asked for, in order
        self._lock = threading.Lock()
        self._stalled: List[str] = []
        self._released = threading.Event()
        self._released.set()
        self.stall_hit = threading.Event()  # set when a stalled file was asked for
        self.tampered: Dict[str, bytes] = {}  # file name -> bytes served instead (the listing keeps its hash)
        self.hashless = False  # project pages list files without their sha256 (some mirrors do)

    def index_url(self, name: str) -> str:
        """The simple-index URL of one index: ``index_url("pytorch/cu126")``."""
        return f"{self.url}/{name.strip('/')}/"

    def indexes(self) -> List[str]:
        names = []
        for dirpath, _dirs, filenames in os.walk(self.root):
            if any(f.endswith(".whl") for f in filenames):
                names.append(os.path.relpath(dirpath, self.root).replace(os.sep, "/"))
        return sorted(names)

    def fetched(self, prefix: str) -> List[str]:
        """Wheel files downloaded whose name starts with ``prefix`` (``"torchtriton-3.9"``)."""
        with self._lock:
            names = [urllib.parse.unquote(p.rsplit("/", 1)[-1]) for p in self.requests]
        return [n for n in names if n.endswith(".whl") and n.startswith(prefix)]

    def stall(self, *prefixes: str) -> None:
        """Hold back downloads of wheels whose file name starts with one of ``prefixes``."""
        self._stalled = list(prefixes)
        self.stall_hit.clear()
        self._released.clear()

    def release(self) -> None:
        self._stalled = []
        self._released.set()

    # --- called from the handler threads ------------------------------------------------
    def _log(self, path: str) -> None:
        with self._lock:
            self.requests.append(path)

    def _wait_if_stalled(self, filename: str) -> None:
        if any(filename.startswith(p) for p in self._stalled):
            self.stall_hit.set()
            self._released.wait(timeout=60)

    def _head(self, path: str) -> Tuple[int, str, bytes]:
        """What GET would answer, without logging, stalling or counting as a download."""
        rel = urllib.parse.unquote(path.split("?", 1)[0]).strip("/")
        target = self.root.joinpath(*[p for p in rel.split("/") if p not in ("", ".", "..")])
        if target.is_file() and target.suffix == ".whl":
            return 200, "application/octet-stream", self.tampered.get(target.name) or target.read_bytes()
        return self._page(path)

    def _page(self, path: str) -> Tuple[int, str, bytes]:
        rel = urllib.parse.unquote(path.split("?", 1)[0]).strip("/")
        parts = [p for p in rel.split("/") if p not in ("", ".", "..")]
        target = self.root.joinpath(*parts) if parts else self.root
        if target.is_file() and target.suffix == ".whl":
            self._wait_if_stalled(target.name)
            return 200, "application/octet-stream", self.tampered.get(target.name) or target.read_bytes()
        if target.is_file() and target.name.endswith(".whl.metadata"):  # PEP 658 core metadata
            return 200, "text/plain", target.read_bytes()
        if target.is_dir():  # an index root: list its projects
            wheels = sorted(p.name for p in target.glob("*.whl"))
            if not wheels:
                return 404, "text/plain", b"not an index\n"
            projects = sorted({_project_of(w) for w in wheels})
            links = "".join(f'<a href="{p}/">{p}</a>\n' for p in projects)
            return 200, "text/html", _html(links)
        index_dir, project = target.parent, normalize(target.name)
        if index_dir.is_dir():  # a project page: list its files with hashes
            wheels = sorted(p for p in index_dir.glob("*.whl") if _project_of(p.name) == project)
            if wheels:
                links = "".join(
                    f'<a href="../{urllib.parse.quote(w.name)}{_fragment(w, self.hashless)}"{_pep658(w)}>'
                    f"{html.escape(w.name)}</a>\n"
                    for w in wheels
                )
                return 200, "text/html", _html(links)
        return 404, "text/plain", b"not found\n"


def _fragment(wheel: Path, hashless: bool) -> str:
    return "" if hashless else f"#sha256={sha256_of(wheel)}"


def _pep658(wheel: Path) -> str:
    """PEP 658/714 attributes when a ``<wheel>.metadata`` file sits next to the wheel."""
    sidecar = wheel.with_name(wheel.name + ".metadata")
    if not sidecar.is_file():
        return ""
    attrs = f' data-core-metadata="sha256={sha256_of(sidecar)}"'
    for line in sidecar.read_text(encoding="utf-8").splitlines():
        if line.startswith("Requires-Python:"):
            attrs += f' data-requires-python="{html.escape(line.split(":", 1)[1].strip())}"'
    return attrs


def _html(body: str) -> bytes:
    return f"<!DOCTYPE html>\n<html><body>\n{body}</body></html>\n".encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "torchsmith-test-index"
    index: IndexServer  # set on a subclass per server

    def do_GET(self) -> None:
        self._answer(with_body=True)

    def do_HEAD(self) -> None:  # uv asks before downloading (range support); no ranges here
        self._answer(with_body=False)

    def _answer(self, with_body: bool) -> None:
        if with_body:
            self.index._log(self.path)
            status, ctype, body = self.index._page(self.path)
        else:
            status, ctype, body = self.index._head(self.path)
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if with_body:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client was killed mid-download: the point of some tests

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve_index(root: Union[str, Path]) -> Iterator[IndexServer]:
    """Serve every wheel directory under ``root`` as a simple index, until the block ends."""
    root_path = Path(root).resolve()
    handler = type("Handler", (_Handler,), {})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.block_on_close = False
    host, port = server.server_address[:2]
    index = IndexServer(root_path, f"http://{host}:{port}")
    handler.index = index  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="test-index", daemon=True)
    thread.start()
    try:
        yield index
    finally:
        index.release()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        time.sleep(0)  # let handler threads notice the closed socket
