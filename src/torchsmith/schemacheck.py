"""Check a document against the JSON Schemas torchsmith ships, without a runtime dependency.

Only the keywords those schemas use are understood: ``type``, ``const``, ``enum``, ``pattern``,
``minimum``, ``required``, ``properties``, ``items``, ``oneOf``, and ``additionalProperties`` as
the form of a map's values. ``additionalProperties: false`` is not enforced: a newer torchsmith
may add fields without changing the schema number, and its profiles should still load here.
The tests hold the schema itself to the full standard (jsonschema).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, Iterator, Mapping, Optional

__all__ = ["first_problem", "load_schema"]

_SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema")
_CACHE: Dict[str, Mapping[str, Any]] = {}
_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def load_schema(name: str) -> Mapping[str, Any]:
    """A schema shipped in ``torchsmith/schema`` (``host-profile.schema.json``)."""
    if name not in _CACHE:
        with open(os.path.join(_SCHEMA_DIR, name), encoding="utf-8") as handle:
            _CACHE[name] = json.load(handle)
    return _CACHE[name]


def first_problem(value: Any, schema: Mapping[str, Any], where: str = "") -> Optional[str]:
    """``"os.arch: expected string, got int"``, or None when ``value`` fits ``schema``."""
    return next(_problems(value, schema, where or "(top)"), None)


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object", type(None): "null"}.get(type(value), type(value).__name__)


def _problems(value: Any, schema: Mapping[str, Any], where: str) -> Iterator[str]:
    wanted = schema.get("type")
    if wanted is not None:
        names = [wanted] if isinstance(wanted, str) else list(wanted)
        if not any(_TYPES[name](value) for name in names):
            yield f"{where}: expected {' or '.join(names)}, got {_type_name(value)}"
            return
    if "const" in schema and value != schema["const"]:
        yield f"{where}: must be {json.dumps(schema['const'])}"
    if "enum" in schema and value not in schema["enum"]:
        yield f"{where}: must be one of {', '.join(json.dumps(v) for v in schema['enum'])}"
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        yield f"{where}: {value[:40]!r} does not match {schema['pattern']}"
    if _TYPES["number"](value) and "minimum" in schema and value < schema["minimum"]:
        yield f"{where}: must be at least {schema['minimum']}"
    if "oneOf" in schema:
        fits = sum(1 for option in schema["oneOf"] if first_problem(value, option, where) is None)
        if fits != 1:
            yield f"{where}: matches none of its allowed forms"
    if isinstance(value, dict):
        yield from _object_problems(value, schema, where)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield from _problems(item, schema["items"], f"{where}[{index}]")


def _object_problems(value: Mapping[str, Any], schema: Mapping[str, Any], where: str) -> Iterator[str]:
    prefix = "" if where == "(top)" else f"{where}."
    for key in schema.get("required", ()):
        if key not in value:
            yield f"{prefix}{key}: missing"
    known = schema.get("properties") or {}
    for key, inner in known.items():
        if key in value:
            yield from _problems(value[key], inner, f"{prefix}{key}")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):  # a map: every other value has this form
        for key in value:
            if key not in known:
                yield from _problems(value[key], extra, f"{prefix}{key}")
