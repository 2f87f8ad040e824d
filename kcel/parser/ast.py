"""The CEL abstract syntax tree: small frozen nodes, each with an id and source offsets.

Nodes are never mutated after the parse; later stages keep what they learn (types, chosen
overloads) in side tables keyed by `id`. `id`, `start`, `end` and `pos` do not take part in
equality, so two parses of the same structure compare equal whatever their spacing.

`start`/`end` span the node's text; `pos` is the offset cel-go reports errors at (the operator
of a call, the `.` of a selection, the `[` of an index, the first character otherwise).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from kcel.values import Uint

ConstValue: TypeAlias = None | bool | int | Uint | float | str | bytes


@dataclass(frozen=True, slots=True)
class Node:
    """What every node has: its id and where it is in the source (see the module docstring)."""

    id: int = field(compare=False)
    start: int = field(compare=False, repr=False)
    end: int = field(compare=False, repr=False)
    pos: int = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class Ident(Node):
    """A name: a variable, or a type such as `int`."""

    name: str = ""


@dataclass(frozen=True, slots=True)
class Select(Node):
    """`operand.field`; `has(operand.field)` when `test_only`."""

    operand: Expr = None  # type: ignore[assignment]
    field: str = ""
    test_only: bool = False


@dataclass(frozen=True, slots=True)
class Call(Node):
    """A function or operator call; `target` is the receiver of `target.function(args)`."""

    function: str = ""
    args: tuple[Expr, ...] = ()
    target: Expr | None = None


@dataclass(frozen=True, slots=True)
class CreateList(Node):
    """A list literal; `optional_indices` are the positions of `?element`s."""

    elements: tuple[Expr, ...] = ()
    optional_indices: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class MapEntry(Node):
    """One `key: value` of a map literal (`?key: value` when `optional`)."""

    key: Expr = None  # type: ignore[assignment]
    value: Expr = None  # type: ignore[assignment]
    optional: bool = False


@dataclass(frozen=True, slots=True)
class CreateMap(Node):
    """A map literal."""

    entries: tuple[MapEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class StructField(Node):
    """One `name: value` of a message literal (`?name: value` when `optional`)."""

    name: str = ""
    value: Expr = None  # type: ignore[assignment]
    optional: bool = False


@dataclass(frozen=True, slots=True)
class CreateStruct(Node):
    """A message literal, `type_name{fields}`."""

    type_name: str = ""
    fields: tuple[StructField, ...] = ()


@dataclass(frozen=True, slots=True)
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


def _store_through_slots(*classes: type) -> None:
    """Give frozen slotted dataclasses an `__init__` that fills each slot through its descriptor.

    The `__init__` that `dataclass(frozen=True)` writes gets past the frozen `__setattr__` with one
    `object.__setattr__(self, name, value)` per field, a generic lookup that made building a node
    cost as much as the parse step that builds it. The slot descriptor's own `__set__` is the same
    bypass without the lookup, twice as fast; the instances stay frozen. All the `__init__`s are
    compiled together, from nothing but the field names, the way dataclasses writes its own.
    """
    scope: dict[str, Any] = {}
    lines = []
    for cls in classes:
        params = []
        for f in dataclasses.fields(cls):
            assert f.default_factory is dataclasses.MISSING, "only plain defaults are supported"
            scope[f"{cls.__name__}_{f.name}"] = getattr(cls, f.name).__set__
            if f.default is dataclasses.MISSING:
                params.append(f.name)
            else:
                scope[f"{cls.__name__}_{f.name}_default"] = f.default
                params.append(f"{f.name}={cls.__name__}_{f.name}_default")
        lines.append(f"def {cls.__name__}_init(self, {', '.join(params)}):")
        lines += [f"    {cls.__name__}_{f.name}(self, {f.name})" for f in dataclasses.fields(cls)]
    exec("\n".join(lines), scope)
    for cls in classes:
        init = scope[f"{cls.__name__}_init"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = init  # type: ignore[misc]


_store_through_slots(
    Const, Ident, Select, Call, CreateList, MapEntry, CreateMap, StructField, CreateStruct, Comprehension
)


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
