"""torchsmith.records.dataclass behaves as the standard decorator, class by class."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from typing import Dict, Optional, Tuple

import pytest

from torchsmith import records


def _pair(frozen: bool):  # the same class body through both decorators
    def body(decorate):
        @decorate
        class Row:
            name: str
            count: int = 0
            tags: Tuple[str, ...] = ()
            notes: Tuple[str, ...] = dataclasses.field(default_factory=tuple)
            hidden: str = dataclasses.field(default="h", repr=False)
            ignored: int = dataclasses.field(default=1, compare=False)
            derived: Optional[str] = dataclasses.field(default=None, init=False)
            extra: Dict[str, int] = dataclasses.field(default_factory=dict, init=False, compare=False)

            @property
            def label(self) -> str:
                return f"{self.name}:{self.count}"
        return Row
    options = {"frozen": True} if frozen else {}
    return (body(dataclasses.dataclass(**options)), body(records.dataclass(**options)))


@pytest.mark.parametrize("frozen", [True, False])
def test_same_behaviour_as_the_standard_decorator(frozen: bool) -> None:
    standard, fast = _pair(frozen)
    a, b = standard("x", 2, ("t",)), fast("x", 2, ("t",))
    assert repr(a) == repr(b)
    assert repr(b).endswith("(name='x', count=2, tags=('t',), notes=(), ignored=1, derived=None, extra={})")
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    assert [f.name for f in dataclasses.fields(a)] == [f.name for f in dataclasses.fields(b)]
    assert str(inspect.signature(standard)) == str(inspect.signature(fast))
    assert standard.__doc__ == fast.__doc__
    assert fast.__doc__.startswith("Row(name: 'str', count: 'int' = 0")
    assert getattr(standard, "__match_args__", None) == getattr(fast, "__match_args__", None)  # 3.10+
    assert b == fast("x", 2, ("t",), (), ignored=5) and b != fast("y") and b != a
    assert fast("x").extra is not fast("x").extra  # a new dict from the factory each time
    assert dataclasses.replace(b, count=3).count == 3 and b.label == "x:2"
    assert dataclasses.is_dataclass(fast)
    assert fast.__dataclass_params__.frozen is frozen and fast.__dataclass_params__.eq  # type: ignore[attr-defined]
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
