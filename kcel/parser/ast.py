"""The CEL abstract syntax tree: small frozen nodes, each with an id and source offsets.

Nodes are never mutated after the parse; later stages keep what they learn (types, chosen
overloads) in side tables keyed by `id`. `id`, `start`, `end` and `pos` do not take part in
equality, so two parses of the same structure compare equal whatever their spacing.

`start`/`end` span the node's text; `pos` is the offset cel-go reports errors at (the operator
of a call, the `.` of a selection, the `[` of an index, the first character otherwise).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from kcel.values import Uint

ConstValue: TypeAlias = None | bool | int | Uint | float | str | bytes
_T = TypeVar("_T")

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: object) -> Callable[[_T], _T]:
        return lambda decorated: decorated


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def _frozen_node(cls: type[_T]) -> type[_T]:
    """A frozen slotted dataclass whose methods `_compile_methods` (below) compiles, not `dataclass` (as type
    checkers are told)."""
    return dataclass(slots=True, init=False, repr=False, eq=False)(cls)


@_frozen_node
class Node:
    """What every node has: its id and where it is in the source (see the module docstring)."""

    id: int = field(compare=False)
    start: int = field(compare=False, repr=False)
    end: int = field(compare=False, repr=False)
    pos: int = field(compare=False, repr=False)

    def __setattr__(self, name: str, value: object) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:  # pickle and copy rebuild a node through `__init__`
        return self.__class__, tuple(getattr(self, f.name) for f in dataclasses.fields(self))


@_frozen_node
class Const(Node):
    """A literal: null, a bool, an int, a uint, a double, a string or bytes."""

    value: ConstValue = None

    def __eq__(self, other: object) -> bool:
        # `True == 1` in Python; CEL constants of different types never compare equal.
        return (
            isinstance(other, Const)
            and type(self.value) is type(other.value)
            and (self.value == other.value or self.value != self.value)
        )

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))


@_frozen_node
class Ident(Node):
    """A name: a variable, or a type such as `int`."""

    name: str = ""


@_frozen_node
class Select(Node):
    """`operand.field`; `has(operand.field)` when `test_only`."""

    operand: Expr = None  # type: ignore[assignment]
    field: str = ""
    test_only: bool = False


@_frozen_node
class Call(Node):
    """A function or operator call; `target` is the receiver of `target.function(args)`."""

    function: str = ""
    args: tuple[Expr, ...] = ()
    target: Expr | None = None


@_frozen_node
class CreateList(Node):
    """A list literal; `optional_indices` are the positions of `?element`s."""

    elements: tuple[Expr, ...] = ()
    optional_indices: tuple[int, ...] = ()


@_frozen_node
class MapEntry(Node):
    """One `key: value` of a map literal (`?key: value` when `optional`)."""

    key: Expr = None  # type: ignore[assignment]
    value: Expr = None  # type: ignore[assignment]
    optional: bool = False


@_frozen_node
class CreateMap(Node):
    """A map literal."""

    entries: tuple[MapEntry, ...] = ()


@_frozen_node
class StructField(Node):
    """One `name: value` of a message literal (`?name: value` when `optional`)."""

    name: str = ""
    value: Expr = None  # type: ignore[assignment]
    optional: bool = False


@_frozen_node
class CreateStruct(Node):
    """A message literal, `type_name{fields}`."""

    type_name: str = ""
    fields: tuple[StructField, ...] = ()


@_frozen_node
class Comprehension(Node):
    """A fold; every macro expands into one. `macro` keeps the call as written."""

    iter_var: str = ""
    iter_range: Expr = None  # type: ignore[assignment]
    accu_var: str = ""
    accu_init: Expr = None  # type: ignore[assignment]
    loop_condition: Expr = None  # type: ignore[assignment]
    loop_step: Expr = None  # type: ignore[assignment]
    result: Expr = None  # type: ignore[assignment]
    iter_var2: str = ""
    macro: Call | None = None


Expr: TypeAlias = Const | Ident | Select | Call | CreateList | CreateMap | CreateStruct | Comprehension


def _compile_methods(*classes: type) -> None:
    """Give the node classes what `dataclass(frozen=True)` would: `__init__`, `__repr__`, `__eq__` and `__hash__`
    from their fields' declarations, all compiled in one go.

    Python 3.11's `dataclass` compiles each method of each class on its own: 66 compilations, 10 ms of every
    process's start. (Frozen is `Node`'s `__setattr__`.) The `__init__` fills each slot through its descriptor:
    `dataclass`'s frozen one gets past `__setattr__` with one `object.__setattr__(self, name, value)` per field, a
    generic lookup that made building a node cost as much as the parse step that builds it; the descriptor's own
    `__set__` is twice as fast. Only field names and plain defaults reach the compiled text.
    """
    scope: dict[str, Any] = {}
    lines = []
    for cls in classes:
        name, fields = cls.__name__, dataclasses.fields(cls)
        params = []
        for f in fields:
            assert f.default_factory is dataclasses.MISSING and f.name.isidentifier(), "only plain fields"
            scope[f"{name}_{f.name}"] = getattr(cls, f.name).__set__
            if f.default is dataclasses.MISSING:
                params.append(f.name)
            else:
                scope[f"{name}_{f.name}_default"] = f.default
                params.append(f"{f.name}={name}_{f.name}_default")
        lines.append(f"def {name}___init__(self, {', '.join(params)}):")
        lines += [f"    {name}_{f.name}(self, {f.name})" for f in fields]
        shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in fields if f.repr)
        lines += [f"def {name}___repr__(self):", f"    return f'{{self.__class__.__qualname__}}({shown})'"]
        compared = "".join(f"self.{f.name}," for f in fields if f.compare)
        lines += [f"def {name}___eq__(self, other):", "    if other.__class__ is self.__class__:"]
        lines += [
            f"        return ({compared}) == ({compared.replace('self.', 'other.')})",
            "    return NotImplemented",
        ]
        lines += [f"def {name}___hash__(self):", f"    return hash(({compared}))"]
    exec("\n".join(lines), scope)
    for cls in classes:
        for method in ("__init__", "__repr__", "__eq__", "__hash__"):
            if method in ("__init__", "__repr__") or method not in cls.__dict__:  # Const compares its own way
                function = scope[f"{cls.__name__}_{method}"]
                function.__qualname__ = f"{cls.__qualname__}.{method}"
                setattr(cls, method, function)


_compile_methods(Const, Ident, Select, Call, CreateList, MapEntry, CreateMap, StructField, CreateStruct, Comprehension)


def children(node: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of a node, in evaluation order."""
    if isinstance(node, Select):
        return (node.operand,)
    if isinstance(node, Call):
        return node.args if node.target is None else (node.target, *node.args)
    if isinstance(node, CreateList):
        return node.elements
    if isinstance(node, CreateMap):
        return tuple(x for e in node.entries for x in (e.key, e.value))
    if isinstance(node, CreateStruct):
        return tuple(f.value for f in node.fields)
    if isinstance(node, Comprehension):
        return (node.iter_range, node.accu_init, node.loop_condition, node.loop_step, node.result)
    return ()


def walk(node: Expr) -> list[Expr]:
    """Every node of a tree, parents before children, without recursion."""
    out: list[Expr] = []
    stack = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(reversed(children(current)))
    return out
