"""Captures: a host's answers written down, and replayed.

A capture is one JSON document::

    {"schema": 1, "slug": "...", "description": "...", "sources": ["where each text came from"],
     "platform": {PlatformInfo fields}, "environ": {...},
     "files": {path: text | null}, "dirs": {path: [names] | null}, "which": {name: path | null},
     "commands": {command_key: {"returncode", "stdout", "stderr", "timed_out", "not_found"}},
     "urls": {url: {"status": 200, "body": "..."}}}

Anything a capture does not mention is absent: no file, no directory, no executable.
"""

from __future__ import annotations

from typing import IO, Any, Dict, Iterator, List, Mapping, Optional, Sequence, Set

from torchsmith.errors import FetchError, ProfileError, load_json_file
from torchsmith.host import (
    FETCH_LIMIT,
    READ_LIMIT,
    CommandResult,
    Host,
    PlatformInfo,
    bound_output,
    command_key,
)
from torchsmith.redact import redact, strip_credentials

__all__ = ["CAPTURE_SCHEMA", "RecordedHost", "RecordingHost", "is_capture", "load_capture"]

CAPTURE_SCHEMA = 1


class RecordedHost:
    """Replays a capture. Pure: it never touches the machine it runs on."""

    def __init__(self, capture: Mapping[str, Any]) -> None:
        if not isinstance(capture, Mapping) or capture.get("schema") != CAPTURE_SCHEMA:
            raise ProfileError(f"not a torchsmith capture (schema {CAPTURE_SCHEMA} expected)")
        self.capture = capture
        try:
            self._platform = PlatformInfo.from_json(capture["platform"])
        except (KeyError, TypeError) as exc:
            raise ProfileError(f"capture has no usable 'platform' section: {exc}") from exc
        self._files: Mapping[str, Any] = _section(capture, "files")
        self._dirs: Mapping[str, Any] = _section(capture, "dirs")
        self._which: Mapping[str, Any] = _section(capture, "which")
        self._links: Mapping[str, Any] = _section(capture, "links")
        self._commands: Mapping[str, Any] = _section(capture, "commands")
        self._urls: Mapping[str, Any] = _section(capture, "urls")
        self._environ: Dict[str, str] = {
            str(k): str(v) for k, v in _section(capture, "environ").items()
        }

    # A capture may come from anyone (a bug report): a value of the wrong type reads as absent.
    def read_text(self, path: str, limit: int = READ_LIMIT) -> Optional[str]:
        text = self._files.get(path)
        if not isinstance(text, str):
            return None
        # Bounded as LiveHost bounds it, so a capture replays what a live read would give.
        if limit >= READ_LIMIT or len(text) <= limit // 4:  # (a character is at most 4 bytes)
            return text[:READ_LIMIT]
        return text.encode("utf-8")[:limit].decode("utf-8", errors="replace")

    def open_binary(self, path: str) -> Optional[IO[bytes]]:
        return None  # a capture holds text only: binaries are too large to share

    def list_dir(self, path: str) -> Optional[List[str]]:
        names = self._dirs.get(path)
        if not isinstance(names, list):
            return None
        return sorted(str(name) for name in names)

    def which(self, name: str) -> Optional[str]:
        found = self._which.get(name)
        return found if isinstance(found, str) and found else None

    def real_path(self, path: str) -> str:
        found = self._links.get(path)
        return found if isinstance(found, str) and found else path

    def run(self, argv: Sequence[str], timeout: float = 5.0,
            env: Optional[Mapping[str, Optional[str]]] = None, stdin: Optional[str] = None
            ) -> CommandResult:
        answer = self._commands.get(command_key(argv))
        if not isinstance(answer, Mapping):
            return CommandResult(list(argv), not_found=True)
        code = answer.get("returncode")
        return CommandResult(
            list(argv),
            returncode=code if isinstance(code, int) and not isinstance(code, bool) else None,
            stdout=bound_output(str(answer.get("stdout") or "")),
            stderr=bound_output(str(answer.get("stderr") or "")),
            timed_out=bool(answer.get("timed_out", False)),
            not_found=bool(answer.get("not_found", False)),
        )

    def environ(self) -> Mapping[str, str]:
        return self._environ

    def platform(self) -> PlatformInfo:
        return self._platform

    def fetch_url(self, url: str, timeout: float, max_bytes: int = FETCH_LIMIT) -> str:
        return replay_fetch(self._urls.get(url, self._urls.get(strip_credentials(url))), url, max_bytes)


class _ReadTracker(Mapping[str, str]):
    """The environment, remembering which variables were asked for (present or not)."""

    def __init__(self, inner: Mapping[str, str], read: Set[str]) -> None:
        self._inner = inner
        self._read = read

    def __getitem__(self, key: str) -> str:
        self._read.add(key)
        return self._inner[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self._read.add(key)
        return key in self._inner

    def __iter__(self) -> Iterator[str]:
        # Whoever walks every variable has read every variable.
        self._read.update(self._inner)
        return iter(self._inner)

    def __len__(self) -> int:
        return len(self._inner)


class RecordingHost:
    """Wraps another host and writes down every answer, for ``probe --record``.

    Only the environment variables the probe asked for are written (unless ``environ_keys``
    names others): a capture is meant to be shared, and the rest of the environment (tokens,
    paths) is none of its business.
    """

    def __init__(self, inner: Host, environ_keys: Optional[Sequence[str]] = None) -> None:
        self._inner = inner
        self._environ_keys = environ_keys
        self.files: Dict[str, Optional[str]] = {}
        self.dirs: Dict[str, Optional[List[str]]] = {}
        self.which_answers: Dict[str, Optional[str]] = {}
        self.links: Dict[str, str] = {}
        self.commands: Dict[str, Dict[str, Any]] = {}
        self.urls: Dict[str, Dict[str, Any]] = {}
        self.read_environ: Dict[str, str] = {}
        self._read_keys: Set[str] = set()

    def read_text(self, path: str, limit: int = READ_LIMIT) -> Optional[str]:
        text = self._inner.read_text(path, limit)
        if len(text or "") >= len(self.files.get(path) or ""):  # a head read after a whole one keeps it
            self.files[path] = text
        return text

    def open_binary(self, path: str) -> Optional[IO[bytes]]:
        return self._inner.open_binary(path)

    def list_dir(self, path: str) -> Optional[List[str]]:
        self.dirs[path] = names = self._inner.list_dir(path)
        return names

    def which(self, name: str) -> Optional[str]:
        self.which_answers[name] = found = self._inner.which(name)
        return found

    def real_path(self, path: str) -> str:
        resolved = self._inner.real_path(path)
        if resolved != path:  # only links: a path that is itself needs no entry
            self.links[path] = resolved
        return resolved

    def run(self, argv: Sequence[str], timeout: float = 5.0,
            env: Optional[Mapping[str, Optional[str]]] = None, stdin: Optional[str] = None
            ) -> CommandResult:
        result = self._inner.run(argv, timeout, env, stdin)
        self.commands[command_key(argv)] = {
            "returncode": result.returncode,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "timed_out": result.timed_out,
            "not_found": result.not_found,
        }
        return result

    def environ(self) -> Mapping[str, str]:
        return _ReadTracker(self._inner.environ(), self._read_keys)

    def platform(self) -> PlatformInfo:
        return self._inner.platform()

    def fetch_url(self, url: str, timeout: float, max_bytes: int = FETCH_LIMIT) -> str:
        shown = strip_credentials(url)  # a capture is shared: no credentials in it
        try:
            body = self._inner.fetch_url(url, timeout, max_bytes)
        except FetchError as exc:
            self.urls[shown] = {"status": exc.status, "error": str(exc)}
            raise
        self.urls[shown] = {"status": 200, "body": body}
        return body

    def capture(self, slug: str = "recorded", description: str = "") -> Dict[str, Any]:
        environ = self._inner.environ()
        keys = self._environ_keys if self._environ_keys is not None else sorted(self._read_keys)
        return {
            "schema": CAPTURE_SCHEMA,
            "slug": slug,
            "description": description,
            "sources": ["recorded by torchsmith probe --record"],
            "platform": self._inner.platform().to_json(),
            "environ": {k: environ[k] for k in keys if k in environ},
            "files": dict(sorted(self.files.items())),
            "dirs": dict(sorted(self.dirs.items())),
            "which": dict(sorted(self.which_answers.items())),
            **({"links": dict(sorted(self.links.items()))} if self.links else {}),
            "commands": dict(sorted(self.commands.items())),
            **({"urls": dict(sorted(self.urls.items()))} if self.urls else {}),
        }


def replay_fetch(answer: Any, url: str, max_bytes: int) -> str:
    """What a recorded URL gave: its body, or the FetchError it raised (absent: not reachable)."""
    shown = redact(url)
    if not isinstance(answer, Mapping):
        raise FetchError(f"cannot reach {shown}: not in the capture")
    status = answer.get("status")
    body = answer.get("body")
    if status == 200 and isinstance(body, str):
        if len(body.encode("utf-8")) > max_bytes:
            raise FetchError(f"{shown} is larger than {max_bytes} bytes: not read")
        return body
    code = status if isinstance(status, int) and not isinstance(status, bool) else None
    if code == 404:
        raise FetchError(f"{shown}: not found (HTTP 404)", status=404)
    raise FetchError(str(answer.get("error") or f"cannot read {shown}: HTTP {code}"), status=code)


def _section(capture: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = capture.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ProfileError(f"capture section {name!r} must be an object, not {type(value).__name__}")
    return value


def is_capture(data: Any) -> bool:
    """Whether a JSON document is a capture (``probe --record``) rather than a host profile."""
    return isinstance(data, Mapping) and "kind" not in data and "platform" in data \
        and data.get("schema") == CAPTURE_SCHEMA


def load_capture(path: str) -> RecordedHost:
    return RecordedHost(load_json_file(path, "capture", ProfileError))
