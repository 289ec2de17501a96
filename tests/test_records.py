"""torchsmith.records.dataclass behaves as the standard decorator, class by class."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from typing import Dict, Optional, Tuple

import pytest

from torchsmith import records


def _pair(frozen: bool, field=dataclasses.field):  # the same class body through both decorators
    def body(decorate, field):
        @decorate
        class Row:
            name: str
            count: int = 0
            tags: Tuple[str, ...] = ()
            notes: Tuple[str, ...] = field(default_factory=tuple)
            hidden: str = field(default="h", repr=False)
            ignored: int = field(default=1, compare=False)
            derived: Optional[str] = field(default=None, init=False)
            extra: Dict[str, int] = field(default_factory=dict, init=False, compare=False)

            @property
            def label(self) -> str:
                return f"{self.name}:{self.count}"
        return Row
    options = {"frozen": True} if frozen else {}
    return (body(dataclasses.dataclass(**options), dataclasses.field),
            body(records.dataclass(**options), field))


def _pending(cls: type) -> bool:
    """The standard field processing has not run yet (the lazy path is what is under test)."""
    return not isinstance(vars(cls)["__dataclass_fields__"], dict)


def _field_facts(cls: type) -> list:
    keys = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare", "metadata",
            "kw_only", "_field_type")
    return [tuple(getattr(f, key, None) for key in keys) for f in vars(cls)["__dataclass_fields__"].values()]


@pytest.mark.parametrize("field", [dataclasses.field, records.field], ids=["standard field", "records.field"])
@pytest.mark.parametrize("frozen", [True, False])
def test_same_behaviour_as_the_standard_decorator(frozen: bool, field) -> None:
    standard, fast = _pair(frozen, field)
    a, b = standard("x", 2, ("t",)), fast("x", 2, ("t",))
    # Before anything asks for the standard field processing: what the class does itself.
    assert repr(a) == repr(b)
    assert repr(b).endswith("(name='x', count=2, tags=('t',), notes=(), ignored=1, derived=None, extra={})")
    assert str(inspect.signature(standard)) == str(inspect.signature(fast))
    assert standard.__doc__ == fast.__doc__
    assert fast.__doc__.startswith("Row(name: 'str', count: 'int' = 0")
    assert getattr(standard, "__match_args__", None) == getattr(fast, "__match_args__", None)  # 3.10+
    assert b == fast("x", 2, ("t",), (), ignored=5) and b != fast("y") and b != a
    assert fast("x").extra is not fast("x").extra  # a new dict from the factory each time
    assert records.replace(b, count=3) == fast("x", 3, ("t",)) and b.label == "x:2"
    if hasattr(copy, "replace"):  # 3.13+: through __replace__, as the standard class has it
        assert copy.replace(b, count=3) == fast("x", 3, ("t",)) and copy.replace(a, count=3).count == 3
    assert records.field_names(b) == records.field_names(fast) == records.field_names(a)
    assert records.field_names(b) == tuple(f.name for f in dataclasses.fields(a))
    assert records.field_names(1) is None and records.field_names(int) is None
    assert {name: vars(standard).get(name) for name in records.field_names(a)} == \
        {name: vars(fast).get(name) for name in records.field_names(a)}  # class attributes: the defaults
    if frozen:
        assert hash(a) == hash(b)
        assert {b: 1}[fast("x", 2, ("t",))] == 1
        for change in (lambda: setattr(b, "count", 1), lambda: delattr(b, "name"),
                       lambda: setattr(b, "new", 1)):
            with pytest.raises(dataclasses.FrozenInstanceError) as raised:
                change()
            assert "cannot" in str(raised.value)
        assert copy.deepcopy(b) == b and copy.copy(b) == b
    else:
        assert fast.__hash__ is None and standard.__hash__ is None
        b.count = 7
        assert b.count == 7
    assert _pending(fast)
    # Then the standard functions, which make the standard fields.
    with pytest.raises((TypeError, ValueError)) as refused:
        dataclasses.replace(a, derived="no")
    with pytest.raises(type(refused.value), match="init=False") as also:
        records.replace(b, derived="no")  # the standard error, from dataclasses.replace
    assert str(also.value) == str(refused.value)
    assert not _pending(fast)
    assert _field_facts(standard) == _field_facts(fast)
    assert dataclasses.asdict(standard("x")) == dataclasses.asdict(fast("x"))
    assert dataclasses.replace(fast("x"), count=3).count == 3
    assert dataclasses.is_dataclass(fast)
    assert fast.__dataclass_params__.frozen is frozen and fast.__dataclass_params__.eq  # type: ignore[attr-defined]
    assert repr(standard.__dataclass_params__) == repr(fast.__dataclass_params__)  # type: ignore[attr-defined]
    assert {name: vars(standard).get(name) for name in records.field_names(a)} == \
        {name: vars(fast).get(name) for name in records.field_names(a)}
    assert standard.__doc__ == fast.__doc__


def test_each_standard_function_makes_the_standard_fields() -> None:
    asks = [dataclasses.fields, dataclasses.is_dataclass, lambda row: dataclasses.asdict(row("x")),
            lambda row: dataclasses.replace(row("x"), count=1), lambda row: row.__dataclass_params__,
            lambda row: row("x").__dataclass_fields__]
    for ask in asks:
        standard, fast = _pair(True, records.field)
        assert _pending(fast)
        ask(standard)
        ask(fast)
        assert _field_facts(standard) == _field_facts(fast)


@pytest.mark.parametrize("frozen", [True, False])
def test_init_read_before_any_instance_is_the_standard_one(frozen: bool) -> None:
    standard, fast = _pair(frozen, records.field)
    assert str(inspect.signature(fast)) == str(inspect.signature(standard))  # before any instance
    assert fast.__init__.__qualname__ == f"{fast.__qualname__}.__init__"
    assert fast.__init__.__annotations__ == standard.__init__.__annotations__
    assert fast.__init__ is fast.__init__  # compiled once, then a plain method

    class Child(fast):  # a plain subclass that extends __init__
        def __init__(self, name: str) -> None:
            super().__init__(name, 5)

    _, fresh = _pair(frozen, records.field)

    class Other(fresh):  # whose base made no instance yet
        def __init__(self) -> None:
            super().__init__("o")

    assert Child("c").count == 5 and Other().name == "o" and fresh("z").count == 0
    with pytest.raises(TypeError) as standard_error:
        standard()
    with pytest.raises(TypeError) as fast_error:
        fast()
    assert str(fast_error.value) == str(standard_error.value)  # Row.__init__() missing 1 required ...


def test_the_standard_errors() -> None:
    for declare in (_mutable_default, _default_first, _field_without_annotation):
        with pytest.raises((TypeError, ValueError)) as standard:
            declare(dataclasses.dataclass(frozen=True), dataclasses.field)
        with pytest.raises(type(standard.value)) as fast:
            declare(records.dataclass(frozen=True), records.field)
        assert str(fast.value) == str(standard.value)
    with pytest.raises(ValueError, match="cannot specify both default and default_factory"):
        records.field(default=1, default_factory=int)


def _mutable_default(decorate, field) -> None:
    @decorate
    class Row:
        items: list = []


def _default_first(decorate, field) -> None:
    @decorate
    class Row:
        first: int = 0
        second: int


def _field_without_annotation(decorate, field) -> None:
    @decorate
    class Row:
        name: str
        count = field(default=0)


def test_what_the_class_writes_itself_is_kept() -> None:
    @records.dataclass(frozen=True)
    class Version:
        """A version."""
        text: str

        def __post_init__(self) -> None:
            object.__setattr__(self, "text", self.text.strip())

        def __repr__(self) -> str:
            return f"<{self.text}>"

        def __hash__(self) -> int:
            return 7

    assert Version(" 1.0 ").text == "1.0" and repr(Version("1")) == "<1>" and hash(Version("1")) == 7
    assert Version.__doc__ == "A version."


def test_other_forms_go_to_the_standard_decorator() -> None:
    @records.dataclass(frozen=True, order=True)
    class Ordered:
        rank: int

    @records.dataclass(frozen=True)
    class Child(Ordered):
        extra: int = 0

    assert Ordered(1) < Ordered(2) and Child(1, 2) == Child(1, 2)
    assert repr(Child(1)).endswith(".Child(rank=1, extra=0)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Child(1).extra = 3  # type: ignore[misc]
