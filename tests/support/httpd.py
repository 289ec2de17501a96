"""A local HTTP server for one test: started on a free port of 127.0.0.1, shut down after."""

from __future__ import annotations

import contextlib
import http.server
import threading
from typing import Callable, Iterator

__all__ = ["serving"]


@contextlib.contextmanager
def serving(handler: Callable[..., http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """``127.0.0.1:<port>`` while ``handler`` answers there (one thread per request)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True  # a handler that drips must not hold up the shutdown
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
