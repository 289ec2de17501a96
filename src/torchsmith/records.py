"""``@dataclass`` as the standard library's, cheaper to define.

A standard frozen dataclass compiles six methods with ``exec`` when its module is imported
(~0.6 ms a class here); the ~70 on `plan`'s start path cost it ~40 ms. This one compiles only
``__init__``: ``__eq__``, ``__hash__``, ``__repr__`` and the frozen guard are shared functions
over the class's fields that give the standard results. The class stays a real dataclass
(``fields``, ``replace``, ``asdict`` work) and mypy sees the standard decorator. Anything but
``@dataclass`` / ``@dataclass(frozen=True)`` on a plain class goes to the standard one.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter
from reprlib import recursive_repr
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Tuple

__all__ = ["dataclass"]  # the standard one for mypy, this one at run time

_Values = Callable[[object], Tuple[object, ...]]


class _HasFactory:  # the default of a parameter whose field has a default_factory
    def __repr__(self) -> str:
        return "<factory>"


_HAS_FACTORY = _HasFactory()


if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    def dataclass(cls=None, **options):
        if cls is None:
            return lambda the_class: _define(the_class, options)
        return _define(cls, options)


def _define(cls: type, options: Dict[str, bool]) -> type:
    if set(options) - {"frozen"} or not _plain(cls):
        return dataclasses.dataclass(cls, **options)
    frozen = bool(options.get("frozen", False))
    own = dict(cls.__dict__)
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        return dataclasses.dataclass(cls, **options)
    class_hash = own.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in own))
    if not own.get("__doc__"):
        cls.__doc__ = "-"  # keeps the standard decorator from reading a signature: see _SignatureDoc
    dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cls)
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.init, params.repr, params.eq, params.frozen = True, True, True, frozen
    if "__init__" not in own:
        _set(cls, "__init__", _init_function(cls, fields, frozen))
    if "__repr__" not in own:
        _set(cls, "__repr__", _repr_function([f.name for f in fields if f.repr]))
    compared = _values([f.name for f in fields if f.compare])
    if "__eq__" not in own:
        _set(cls, "__eq__", _eq_function(compared))
    if not explicit_hash:
        hashed = _values([f.name for f in fields if (f.compare if f.hash is None else f.hash)])
        cls.__hash__ = _hash_function(hashed) if frozen else None  # type: ignore[assignment]
    if frozen:
        names = tuple(f.name for f in fields)
        _set(cls, "__setattr__", _frozen_setattr(cls, names))
        _set(cls, "__delattr__", _frozen_delattr(cls, names))
    if not own.get("__doc__"):
        cls.__doc__ = _SignatureDoc()  # type: ignore[assignment]
    return cls


def _plain(cls: type) -> bool:
    """No base dataclass, slots, InitVar, KW_ONLY or field named self: the standard one does those."""
    annotations = getattr(cls, "__annotations__", {})  # (a base's, when cls has none: then stricter)
    return (not any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:])
            and "__slots__" not in cls.__dict__ and "self" not in annotations
            and not any("InitVar" in str(kind) or "KW_ONLY" in str(kind) for kind in annotations.values()))


def _set(cls: type, name: str, function: Callable[..., object]) -> None:
    function.__qualname__ = f"{cls.__qualname__}.{function.__name__}"
    setattr(cls, name, function)


def _init_function(cls: type, fields: Sequence[dataclasses.Field], frozen: bool  # type: ignore[type-arg]
                   ) -> Callable[..., None]:
    """``__init__`` as the standard decorator writes it (same parameters, defaults, assignments)."""
    names: Dict[str, object] = {"_HAS_FACTORY": _HAS_FACTORY, "_object": object}
    parameters: List[str] = ["self"]
    body: List[str] = []
    for field in fields:
        default = f"_dflt_{field.name}"
        if field.default_factory is not dataclasses.MISSING:
            names[default] = field.default_factory
            value = f"{default}()"
            if field.init:
                value = f"{default}() if {field.name} is _HAS_FACTORY else {field.name}"
        elif field.init:
            value = field.name
        else:
            continue  # the class attribute holds the default
        if field.init:
            parameters.append(_parameter(field, default, names))
        body.append(f"_object.__setattr__(self, {field.name!r}, {value})" if frozen
                    else f"self.{field.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    source = f"def __init__({', '.join(parameters)}):\n    " + "\n    ".join(body or ["pass"])
    exec(source, names)  # generated from the class's own field names, as dataclasses does
    function: Callable[..., None] = names["__init__"]  # type: ignore[assignment]
    annotations: Dict[str, object] = {f.name: f.type for f in fields if f.init}
    annotations["return"] = None
    function.__annotations__ = annotations
    return function


def _parameter(field: dataclasses.Field, default: str, names: Dict[str, object]) -> str:  # type: ignore[type-arg]
    if field.default is not dataclasses.MISSING:
        names[default] = field.default
        return f"{field.name}={default}"
    if field.default_factory is not dataclasses.MISSING:
        return f"{field.name}=_HAS_FACTORY"
    return field.name


def _values(names: Sequence[str]) -> _Values:
    """The fields' values as a tuple, as the standard methods compare and hash them."""
    if not names:
        return lambda instance: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda instance: (one(instance),)
    return attrgetter(*names)


def _eq_function(values: _Values) -> Callable[[object, object], object]:
    def __eq__(self: object, other: object) -> object:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented
    return __eq__


def _hash_function(values: _Values) -> Callable[[object], int]:
    def __hash__(self: object) -> int:
        return hash(values(self))
    return __hash__


def _repr_function(names: Sequence[str]) -> Callable[[object], str]:
    @recursive_repr()
    def __repr__(self: object) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"
    return __repr__


def _frozen_setattr(cls: type, names: Tuple[str, ...]) -> Callable[[object, str, object], None]:
    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]
    return __setattr__


def _frozen_delattr(cls: type, names: Tuple[str, ...]) -> Callable[[object, str], None]:
    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]
    return __delattr__


class _SignatureDoc:
    """The class docstring the standard decorator writes (``Name(a: 'int', b: 'str' = '')``),
    worked out when first read rather than for every class at import."""

    def __init__(self) -> None:
        self.text: Optional[str] = None

    def __get__(self, instance: object, owner: type) -> str:
        if self.text is None:
            import inspect

            try:
                signature = str(inspect.signature(owner)).replace(" -> None", "")
            except (TypeError, ValueError):
                signature = ""
            self.text = owner.__name__ + signature
        return self.text
