"""``@dataclass``, ``field`` and ``replace`` as the standard library's, cheaper to define.

A standard frozen dataclass compiles six methods with ``exec`` when its module is imported
(~0.6 ms a class here), and importing ``dataclasses`` (with ``inspect``) costs a `probe` ~6 ms.
This decorator compiles only ``__init__``, when it is first looked up: ``__eq__``, ``__hash__``,
``__repr__`` and the frozen guard are shared functions over the class's fields that give the
standard results. The field
processing (``__dataclass_fields__``, ``__dataclass_params__``) is the standard decorator's own,
run when first asked for (``dataclasses.fields``, ``asdict``, ``is_dataclass`` ...); until then
:func:`replace` and :func:`field_names` answer from the class's field list. mypy sees the
standard decorator, ``field`` and ``replace``. Anything but ``@dataclass`` /
``@dataclass(frozen=True)`` on a plain class goes to the standard decorator.
"""

from __future__ import annotations

import sys
import types
from _thread import allocate_lock
from operator import attrgetter
from reprlib import recursive_repr

from torchsmith import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

    _Values = Callable[[object], Tuple[object, ...]]

__all__ = ["dataclass", "field", "field_names", "replace"]  # standard ones for mypy

_FIELDS = "__dataclass_fields__"
_PARAMS = "__dataclass_params__"
_MATERIALISING = allocate_lock()


_MISSING = object()


class _HasFactory:  # the default of a parameter whose field has a default_factory
    def __repr__(self) -> str:
        return "<factory>"


_HAS_FACTORY = _HasFactory()


class _FieldOptions:
    """What ``field(...)`` declared, kept until the standard decorator makes its ``Field``."""

    __slots__ = ("options",)

    def __init__(self, options: Dict[str, object]) -> None:
        self.options = options


# The options the standard field() takes that this decorator honours itself.
_OWN_OPTIONS = frozenset({"default", "default_factory", "init", "repr", "hash", "compare"})


if TYPE_CHECKING:
    from dataclasses import dataclass, field, replace
else:
    def dataclass(cls=None, **options):
        if cls is None:
            return lambda the_class: _define(the_class, options)
        return _define(cls, options)

    def field(**options):
        if set(options) - _OWN_OPTIONS or ("default" in options and "default_factory" in options):
            import dataclasses  # (kw_only, metadata; and the standard error for both defaults)

            return dataclasses.field(**options)
        return _FieldOptions(options)

    def replace(obj, /, **changes):
        pending = _pending(type(obj))
        if pending is None or not pending.init_names.issuperset(changes):
            import dataclasses  # also the standard errors for a wrong name

            return dataclasses.replace(obj, **changes)
        for name in pending.init_names:
            if name not in changes:
                changes[name] = getattr(obj, name)
        return obj.__class__(**changes)


def field_names(class_or_instance: object) -> Optional[Tuple[str, ...]]:
    """The names ``dataclasses.fields`` gives for a dataclass or one of its instances, in order;
    None for anything else."""
    cls = class_or_instance if isinstance(class_or_instance, type) else type(class_or_instance)
    pending = _pending(cls)
    if pending is not None:
        return pending.names
    if getattr(cls, _FIELDS, None) is None:
        return None
    import dataclasses

    return tuple(f.name for f in dataclasses.fields(class_or_instance))  # type: ignore[arg-type]


class _Field:
    __slots__ = ("compare", "default", "factory", "hash", "init", "name", "repr", "type")

    def __init__(self, name: str, kind: object, declared: Mapping[str, object]) -> None:
        self.name, self.type = name, kind
        self.default = declared.get("default", _MISSING)
        self.factory = declared.get("default_factory", _MISSING)
        self.init = bool(declared.get("init", True))
        self.repr = bool(declared.get("repr", True))
        self.hash = declared.get("hash")
        self.compare = bool(declared.get("compare", True))


class _Pending:
    """A class whose standard field processing is still to come, and what it declared."""

    def __init__(self, cls: type, fields: Sequence[_Field], originals: Dict[str, object],
                 frozen: bool) -> None:
        self.cls, self.originals, self.frozen = cls, originals, frozen
        self.names = tuple(f.name for f in fields)
        self.init_names = frozenset(f.name for f in fields if f.init)


class _Deferred:
    """``__dataclass_fields__`` or ``__dataclass_params__`` of a pending class: the first read
    has the standard decorator make both."""

    def __init__(self, pending: _Pending, name: str) -> None:
        self.pending, self.name = pending, name

    def __get__(self, instance: object, owner: type) -> object:
        _materialise(self.pending)
        return self.pending.cls.__dict__[self.name]


def _pending(cls: type) -> Optional[_Pending]:
    declared = cls.__dict__.get(_FIELDS)
    return declared.pending if isinstance(declared, _Deferred) else None


def _materialise(pending: _Pending) -> None:
    """The standard decorator's field processing (init, repr and eq off: ours stay), on the class
    as it was declared."""
    cls = pending.cls
    with _MATERIALISING:
        if _pending(cls) is not pending:
            return  # another thread made them
        import dataclasses

        for name, original in pending.originals.items():
            setattr(cls, name, dataclasses.field(**original.options)  # type: ignore[call-overload]
                    if isinstance(original, _FieldOptions) else original)
        doc = cls.__dict__.get("__doc__")
        if isinstance(doc, _SignatureDoc):
            cls.__doc__ = "-"  # keeps the standard decorator from reading a signature
        dataclasses.dataclass(cls, init=False, repr=False, eq=False)
        if isinstance(doc, _SignatureDoc):
            cls.__doc__ = doc  # type: ignore[assignment]
        params = cls.__dict__[_PARAMS]
        params.init, params.repr, params.eq, params.frozen = True, True, True, pending.frozen


def _define(cls: type, options: Dict[str, bool]) -> type:
    frozen = bool(options.get("frozen", False))
    declared = _declared_fields(cls, frozen) if not set(options) - {"frozen"} else None
    if declared is None:
        return _standard(cls, options)
    fields, originals = declared
    own = dict(cls.__dict__)
    for one in fields:  # the class attributes as the standard decorator leaves them
        if one.name in originals:
            if one.default is _MISSING:
                delattr(cls, one.name)
            else:
                setattr(cls, one.name, one.default)
    pending = _Pending(cls, fields, originals, frozen)
    setattr(cls, _FIELDS, _Deferred(pending, _FIELDS))
    setattr(cls, _PARAMS, _Deferred(pending, _PARAMS))
    _add_methods(cls, own, fields, frozen)
    if sys.version_info >= (3, 10) and "__match_args__" not in own:
        cls.__match_args__ = tuple(f.name for f in fields if f.init)  # type: ignore[attr-defined,misc]
    if sys.version_info >= (3, 13) and "__replace__" not in own:
        _set(cls, "__replace__", _replace_method())
    if not own.get("__doc__"):
        cls.__doc__ = _SignatureDoc()  # type: ignore[assignment]
    return cls


def _standard(cls: type, options: Dict[str, bool]) -> type:
    import dataclasses

    for name, value in list(cls.__dict__.items()):
        if isinstance(value, _FieldOptions):
            setattr(cls, name, dataclasses.field(**value.options))  # type: ignore[call-overload]
    return dataclasses.dataclass(cls, **options)


def _declared_fields(cls: type, frozen: bool) -> Optional[Tuple[List[_Field], Dict[str, object]]]:
    """The class's fields, and the ``field(...)`` values they were declared with; None when the
    standard decorator must do it (dataclass bases, slots, a metaclass, InitVar, ClassVar,
    KW_ONLY, a mutable default, ...: also every case where it raises)."""
    own = cls.__dict__
    if (type(cls) is not type or "__slots__" in own
            or any(_FIELDS in vars(base) for base in cls.__mro__[1:])
            or (frozen and ("__setattr__" in own or "__delattr__" in own))):
        return None
    annotations = own.get("__annotations__", {})
    standard = sys.modules.get("dataclasses")
    field_class = standard.Field if standard is not None else _FieldOptions
    fields: List[_Field] = []
    originals: Dict[str, object] = {}
    for name, value in own.items():
        if isinstance(value, (_FieldOptions, field_class)) and name not in annotations:
            return None  # the standard decorator's error
    for name, kind in annotations.items():
        if name == "self" or name.startswith("__records_") or any(
                word in str(kind) for word in ("ClassVar", "InitVar", "KW_ONLY")):
            return None
        value = getattr(cls, name, _MISSING)
        if isinstance(value, (_FieldOptions, field_class)):
            if name not in own:
                return None  # a field() inherited from a plain base
            originals[name] = value
            declared: Mapping[str, object] = (
                value.options if isinstance(value, _FieldOptions)
                else _standard_field_options(value, standard.MISSING))  # type: ignore[union-attr]
            if declared.get("kw_only") is True:
                return None
        elif isinstance(value, types.MemberDescriptorType):
            return None
        else:
            declared = {} if value is _MISSING else {"default": value}
        fields.append(_Field(name, kind, declared))
    return (fields, originals) if _standard_would_accept(fields) else None


def _standard_field_options(value: object, missing: object) -> Dict[str, object]:
    names = ("default", "default_factory", "init", "repr", "hash", "compare", "kw_only")
    return {name: getattr(value, name) for name in names
            if hasattr(value, name) and getattr(value, name) is not missing}


def _standard_would_accept(fields: Sequence[_Field]) -> bool:
    """No mutable default, no parameter without a default after one with."""
    defaulted = False
    for one in fields:
        default = one.default
        if default is not _MISSING and (type(default).__hash__ is None
                                        or isinstance(default, (list, dict, set))):
            return False
        if one.init:
            has_default = default is not _MISSING or one.factory is not _MISSING
            if defaulted and not has_default:
                return False
            defaulted = defaulted or has_default
    return True


def _add_methods(cls: type, own: Dict[str, object], fields: Sequence[_Field], frozen: bool) -> None:
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
    if "__init__" not in own:
        cls.__init__ = _LazyInit(cls, fields, frozen, hasattr(cls, "__post_init__"))  # type: ignore[misc]
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


def _set(cls: type, name: str, function: Callable[..., object]) -> None:
    function.__qualname__ = f"{cls.__qualname__}.{function.__name__}"
    setattr(cls, name, function)


class _LazyInit:
    """``__init__``, compiled when first looked up (to make an instance, or to read its signature):
    half the classes a probe defines never make one, and compiling is most of a definition."""

    def __init__(self, cls: type, fields: Sequence[_Field], frozen: bool, post_init: bool) -> None:
        self.cls, self.fields, self.frozen, self.post_init = cls, fields, frozen, post_init

    def __get__(self, instance: object, owner: type) -> Callable[..., None]:
        function = self.cls.__dict__["__init__"]
        if function is self:  # (made twice by two threads at once is harmless: the same function)
            function = _init_function(self.cls, self.fields, self.frozen, self.post_init)
            _set(self.cls, "__init__", function)
        return function if instance is None else function.__get__(instance, owner)  # type: ignore[no-any-return]


def _init_function(cls: type, fields: Sequence[_Field], frozen: bool, post_init: bool
                   ) -> Callable[..., None]:
    """``__init__`` as the standard decorator writes it (same parameters, defaults, assignments)."""
    names: Dict[str, object] = {"__records_factory__": _HAS_FACTORY, "__records_object__": object}
    parameters: List[str] = ["self"]
    body: List[str] = []
    for one in fields:
        default = f"__records_default_{one.name}"
        if one.factory is not _MISSING:
            names[default] = one.factory
            value = f"{default}()"
            if one.init:
                value = f"{default}() if {one.name} is __records_factory__ else {one.name}"
        elif one.init:
            value = one.name
        else:
            continue  # the class attribute holds the default
        if one.init:
            parameters.append(_parameter(one, default, names))
        body.append(f"__records_object__.__setattr__(self, {one.name!r}, {value})" if frozen
                    else f"self.{one.name} = {value}")
    if post_init:
        body.append("self.__post_init__()")
    source = f"def __init__({', '.join(parameters)}):\n    " + "\n    ".join(body or ["pass"])
    exec(source, names)  # generated from the class's own field names, as dataclasses does
    function: Callable[..., None] = names["__init__"]  # type: ignore[assignment]
    annotations: Dict[str, object] = {f.name: f.type for f in fields if f.init}
    annotations["return"] = None
    function.__annotations__ = annotations
    return function


def _parameter(one: _Field, default: str, names: Dict[str, object]) -> str:
    if one.default is not _MISSING:
        names[default] = one.default
        return f"{one.name}={default}"
    if one.factory is not _MISSING:
        return f"{one.name}=__records_factory__"
    return one.name


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


def _replace_method() -> Callable[..., object]:
    def __replace__(self: object, /, **changes: object) -> object:  # copy.replace (3.13+)
        return replace(self, **changes)  # type: ignore[type-var]
    return __replace__


def _frozen_error(text: str) -> Exception:
    import dataclasses

    return dataclasses.FrozenInstanceError(text)


def _frozen_setattr(cls: type, names: Tuple[str, ...]) -> Callable[[object, str, object], None]:
    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise _frozen_error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]
    return __setattr__


def _frozen_delattr(cls: type, names: Tuple[str, ...]) -> Callable[[object, str], None]:
    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise _frozen_error(f"cannot delete field {name!r}")
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
