"""One error type with a stable code, in the manner of pip's diagnostic errors.

Results a user should expect (no compatible stack, a problem found) are values, not
exceptions. Exceptions mean torchsmith could not answer: bad input, invalid data, a failed step.
"""

from __future__ import annotations

import os

from torchsmith import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Type

DOCS_BASE = "docs/errors"


class TorchsmithError(Exception):
    """An error the CLI shows as one line ``error[code]: message`` plus context and a hint."""

    code = "torchsmith-error"

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        context: Sequence[str] = (),
        hint: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.context: Tuple[str, ...] = tuple(context)
        self.hint = hint

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "message": self.message,
            "context": list(self.context),
            "hint": self.hint,
        }


class UsageError(TorchsmithError):
    code = "usage"


class ProfileError(TorchsmithError):
    """A host profile (``--host FILE``) or capture could not be read."""

    code = "host-profile-invalid"


class KnowledgeBaseError(TorchsmithError):
    """The compatibility data is missing, corrupted or inconsistent."""

    code = "kb-invalid"


class FetchError(TorchsmithError):
    """A URL gave no page (``Host.fetch_url``). ``status`` is the HTTP status when a server
    answered, else None. The message names the URL without its credentials."""

    code = "fetch-failed"

    def __init__(self, message: str, *, status: Optional[int] = None, hint: Optional[str] = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status


class RequirementError(TorchsmithError):
    code = "requirement-invalid"


class InstallError(TorchsmithError):
    code = "install-failed"


# Host profiles, captures, locks and data files are kilobytes; a bigger one is not ours.
JSON_FILE_LIMIT = 16 * 1024 * 1024


def parse_json_bytes(raw: bytes) -> Any:
    """JSON from UTF-8 bytes; ValueError for anything unusable: nesting too deep to parse, a key
    given twice in one object (the last would silently win), NaN or Infinity (not JSON), a number
    of more digits than any fact of ours has."""
    import json  # here, so that importing the error types stays free

    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys,
                          parse_constant=_no_constant, parse_int=_bounded_int, parse_float=_finite_float)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc


_MAX_NUMBER_CHARS = 40


def _unique_keys(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: Set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {key[:80]!r} appears twice in one object")
            seen.add(key)
    return obj


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _bounded_int(text: str) -> int:
    if len(text) > _MAX_NUMBER_CHARS:
        raise ValueError(f"a number of {len(text)} digits")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text) if len(text) <= _MAX_NUMBER_CHARS else float("inf")
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"a number out of range ({text[:20]}…)")
    return value


def read_json_bytes(path: str, limit: int = JSON_FILE_LIMIT) -> bytes:
    """A JSON file's bytes; OSError when absent, not a regular file or larger than ``limit``."""
    from torchsmith.host.files import read_whole

    try:
        return read_whole(path, limit)
    except ValueError as exc:  # a NUL in the path
        raise OSError(str(exc)) from exc


def load_json_file(path: str, what: str, error: Type[TorchsmithError] = TorchsmithError,
                   code: Optional[str] = None) -> Any:
    """The JSON in ``path``; unreadable or invalid, a one-line ``error`` naming ``what`` and path."""
    try:
        raw = read_json_bytes(path)
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}", code=code) from exc
    try:
        return parse_json_bytes(raw)
    except ValueError as exc:  # bad JSON or bad UTF-8
        raise error(f"{what} {path} is not valid JSON: {exc}", code=code) from exc


def load_data_file(path: str, what: str, check: Callable[[Dict[str, Any]], object]) -> Dict[str, Any]:
    """A JSON object shipped with torchsmith, validated by ``check`` (which raises KeyError,
    TypeError or ValueError); any failure is a one-line ``kb-invalid`` error naming ``what``."""
    try:
        data = parse_json_bytes(read_json_bytes(path))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        check(data)
        return data
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise KnowledgeBaseError(f"{what} {os.path.basename(path)} is unusable: {exc}",
                                 hint="reinstall torchsmith") from exc
