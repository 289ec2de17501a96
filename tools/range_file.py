"""A file on an index read by HTTP range requests, so that a tool reads a wheel's METADATA or
one library from it without fetching the whole wheel. Wrap it in ``io.BufferedReader`` with the
chunk size the reader wants: each read asks for exactly what the buffer holds."""

from __future__ import annotations

import io
import urllib.request
from typing import Any

__all__ = ["RangeFile"]


class RangeFile(io.RawIOBase):
    def __init__(self, url: str, timeout: float = 120.0) -> None:
        self.url, self.pos, self.timeout = url, 0, timeout
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout) as response:
            self.size = int(response.headers["Content-Length"])

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else self.size + offset
        return self.pos

    def readinto(self, buffer: Any) -> int:
        if self.pos >= self.size or not len(buffer):
            return 0
        end = min(self.size, self.pos + len(buffer)) - 1
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end}"})
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            data = response.read(len(buffer))
        buffer[:len(data)] = data
        self.pos += len(data)
        return len(data)
