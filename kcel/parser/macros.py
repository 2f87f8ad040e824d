"""Macros: calls the parser rewrites into comprehensions, exactly as cel-go expands them.

Each macro is keyed by (name, argument count, receiver style). An expander receives a
`NodeFactory` (fresh ids placed at the call's position) and returns the expansion, raises
`MacroError` when the macro matched but its arguments are malformed, or returns None to
leave the call alone (`cel.bind` on a target other than `cel`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from kcel.parser.ast import (
    Call,
    Comprehension,
    Const,
    CreateList,
    CreateMap,
    Expr,
    Ident,
    Select,
)

ACCUMULATOR = "@result"
LEGACY_ACCUMULATOR = "__result__"
UNUSED_ITER_VAR = "#unused"
MAP_INSERT = "cel.@mapInsert"
SORT_BY_INPUT = "@__sortBy_input__"


class MacroError(Exception):
    def __init__(self, message: str, node: Expr) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


class NodeFactory(Protocol):
    def const(self, value: object) -> Const: ...
    def ident(self, name: str) -> Ident: ...
    def call(self, function: str, *args: Expr, target: Expr | None = None) -> Call: ...
    def list(self, *elements: Expr) -> CreateList: ...
    def map(self) -> CreateMap: ...
    def select(self, operand: Expr, field: str, test_only: bool) -> Select: ...
    def fold(self, **parts: object) -> Comprehension: ...


Expander = Callable[[NodeFactory, "Expr | None", tuple[Expr, ...]], "Expr | None"]


@dataclass(frozen=True, slots=True)
class Macro:
    """A macro: the call it matches (name, argument count, on a receiver or not) and how it expands."""

    name: str
    arg_count: int  # -1: any number of arguments (cel-go's var-arg macros)
    receiver: bool
    expand: Expander
    doc: str = ""

    @property
    def key(self) -> tuple[str, int, bool]:
        return (self.name, self.arg_count, self.receiver)


def _iter_var(node: Expr, message: str) -> str:
    if not isinstance(node, Ident):
        raise MacroError(message, node)
    if node.name in (ACCUMULATOR, LEGACY_ACCUMULATOR):
        raise MacroError("iteration variable overwrites accumulator variable", node)
    return node.name


def _two_iter_vars(args: tuple[Expr, ...]) -> tuple[str, str]:
    names = []
    for arg in args[:2]:
        if not isinstance(arg, Ident):
            raise MacroError("argument must be a simple name", arg)
        names.append(arg.name)
    if names[0] == names[1]:
        raise MacroError(f"duplicate variable name: {names[0]}", args[1])
    for name, arg in zip(names, args[:2], strict=True):
        if name in (ACCUMULATOR, LEGACY_ACCUMULATOR):
            raise MacroError("iteration variable overwrites accumulator variable", arg)
    return names[0], names[1]


def _quantifier(kind: str, f: NodeFactory, target: Expr, var: str, var2: str, pred: Expr) -> Expr:
    accu = f.ident
    init: Expr
    cond: Expr
    step: Expr
    result: Expr
    if kind == "all":
        init, cond = f.const(True), f.call("@not_strictly_false", accu(ACCUMULATOR))
        step, result = f.call("_&&_", accu(ACCUMULATOR), pred), accu(ACCUMULATOR)
    elif kind == "exists":
        init = f.const(False)
        cond = f.call("@not_strictly_false", f.call("!_", accu(ACCUMULATOR)))
        step, result = f.call("_||_", accu(ACCUMULATOR), pred), accu(ACCUMULATOR)
    else:
        init, cond = f.const(0), f.const(True)
        step = f.call("_?_:_", pred, f.call("_+_", accu(ACCUMULATOR), f.const(1)), accu(ACCUMULATOR))
        result = f.call("_==_", accu(ACCUMULATOR), f.const(1))
    return f.fold(
        iter_var=var, iter_var2=var2, iter_range=target, accu_var=ACCUMULATOR,
        accu_init=init, loop_condition=cond, loop_step=step, result=result,
    )  # fmt: skip


def _one_var_quantifier(kind: str) -> Expander:
    def expand(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
        var = _iter_var(args[0], "argument must be a simple name")
        assert target is not None
        return _quantifier(kind, f, target, var, "", args[1])

    return expand


def _two_var_quantifier(kind: str) -> Expander:
    def expand(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
        var, var2 = _two_iter_vars(args)
        assert target is not None
        return _quantifier(kind, f, target, var, var2, args[2])

    return expand


def _guarded(f: NodeFactory, step: Expr, guard: Expr | None) -> Expr:
    return step if guard is None else f.call("_?_:_", guard, step, f.ident(ACCUMULATOR))


def _collect(f: NodeFactory, target: Expr, var: str, var2: str, init: Expr, step: Expr) -> Expr:
    return f.fold(
        iter_var=var, iter_var2=var2, iter_range=target, accu_var=ACCUMULATOR, accu_init=init,
        loop_condition=f.const(True), loop_step=step, result=f.ident(ACCUMULATOR),
    )  # fmt: skip


def expand_map(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
    var = _iter_var(args[0], "argument is not an identifier")
    guard, transform = (args[1], args[2]) if len(args) == 3 else (None, args[1])
    assert target is not None
    step = _guarded(f, f.call("_+_", f.ident(ACCUMULATOR), f.list(transform)), guard)
    return _collect(f, target, var, "", f.list(), step)


def _expand_filter(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
    var = _iter_var(args[0], "argument is not an identifier")
    assert target is not None
    step = f.call("_+_", f.ident(ACCUMULATOR), f.list(f.ident(var)))
    return _collect(f, target, var, "", f.list(), _guarded(f, step, args[1]))


def _expand_has(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
    arg = args[0]
    if not isinstance(arg, Select):
        raise MacroError("invalid argument to has() macro", arg)
    return f.select(arg.operand, arg.field, True)


def _transform(kind: str) -> Expander:
    def expand(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
        var, var2 = _two_iter_vars(args)
        guard, transform = (args[2], args[3]) if len(args) == 4 else (None, args[2])
        assert target is not None
        accu = f.ident(ACCUMULATOR)
        step: Expr
        init: Expr
        if kind == "list":
            step, init = f.call("_+_", accu, f.list(transform)), f.list()
        elif kind == "map":
            step, init = f.call(MAP_INSERT, accu, f.ident(var), transform), f.map()
        else:
            step, init = f.call(MAP_INSERT, accu, transform), f.map()
        return _collect(f, target, var, var2, init, _guarded(f, step, guard))

    return expand


def _bind(f: NodeFactory, var: str, init: Expr, body: Expr) -> Expr:
    return f.fold(
        iter_var=UNUSED_ITER_VAR, iter_range=f.list(), accu_var=var, accu_init=init,
        loop_condition=f.const(False), loop_step=f.ident(var), result=body,
    )  # fmt: skip


def _is_namespace(target: Expr | None, name: str) -> bool:
    return isinstance(target, Ident) and target.name == name


def _expand_bind(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr | None:
    if not _is_namespace(target, "cel"):
        return None
    if not isinstance(args[0], Ident):
        raise MacroError("cel.bind() variable names must be simple identifiers", args[0])
    return _bind(f, args[0].name, args[1], args[2])


def _optional_map(flat: bool) -> Expander:
    name = "optFlatMap" if flat else "optMap"

    def expand(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
        if not isinstance(args[0], Ident):
            raise MacroError(f"{name}() variable name must be a simple identifier", args[0])
        assert target is not None
        value = _bind(f, args[0].name, f.call("value", target=target), args[1])
        mapped = value if flat else f.call("optional.of", value)
        has_value = f.call("hasValue", target=target)
        return f.call("_?_:_", has_value, mapped, f.call("optional.none"))

    return expand


def _expand_sort_by(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
    if not isinstance(target, (CreateList, Select, Ident, Comprehension, Call)):
        assert target is not None
        raise MacroError(
            "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
            target,
        )
    keys = expand_map(f, f.ident(SORT_BY_INPUT), args)
    sort = f.call("@sortByAssociatedKeys", keys, target=f.ident(SORT_BY_INPUT))
    return _bind(f, SORT_BY_INPUT, target, sort)


def _expand_block(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr | None:
    if not _is_namespace(target, "cel"):
        return None
    if not isinstance(args[0], CreateList):
        raise MacroError("cel.block requires the first arg to be a list literal", args[0])
    return f.call("cel.@block", *args)


def _non_negative_int(node: Expr) -> int | None:
    if isinstance(node, Const) and type(node.value) is int and node.value >= 0:
        return node.value
    return None


def _expand_block_index(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr | None:
    if not _is_namespace(target, "cel"):
        return None
    index = _non_negative_int(args[0])
    if index is None:
        raise MacroError("cel.index requires a single non-negative int constant arg", args[0])
    return f.ident(f"@index{index}")


def _block_variable(function: str, prefix: str) -> Expander:
    def expand(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr | None:
        if not _is_namespace(target, "cel"):
            return None
        numbers = [_non_negative_int(arg) for arg in args]
        for number, arg in zip(numbers, args, strict=True):
            if number is None:
                raise MacroError(f"{function} requires two non-negative int constant args", arg)
        return f.ident(f"{prefix}:{numbers[0]}:{numbers[1]}")

    return expand


STANDARD: tuple[Macro, ...] = (
    Macro("has", 1, False, _expand_has, "has(m.f): whether field f is set"),
    Macro("all", 2, True, _one_var_quantifier("all"), "l.all(x, p): p holds for every element"),
    Macro("exists", 2, True, _one_var_quantifier("exists"), "l.exists(x, p): p holds for some element"),
    Macro("exists_one", 2, True, _one_var_quantifier("exists_one"), "l.exists_one(x, p): exactly one"),
    Macro("map", 2, True, expand_map, "l.map(x, f): f of every element"),
    Macro("map", 3, True, expand_map, "l.map(x, p, f): f of the elements where p holds"),
    Macro("filter", 2, True, _expand_filter, "l.filter(x, p): the elements where p holds"),
)
TWO_VAR: tuple[Macro, ...] = (
    Macro("all", 3, True, _two_var_quantifier("all")),
    Macro("exists", 3, True, _two_var_quantifier("exists")),
    Macro("existsOne", 3, True, _two_var_quantifier("exists_one")),
    Macro("exists_one", 3, True, _two_var_quantifier("exists_one")),
    Macro("transformList", 3, True, _transform("list")),
    Macro("transformList", 4, True, _transform("list")),
    Macro("transformMap", 3, True, _transform("map")),
    Macro("transformMap", 4, True, _transform("map")),
    Macro("transformMapEntry", 3, True, _transform("entry")),
    Macro("transformMapEntry", 4, True, _transform("entry")),
)
BINDINGS: tuple[Macro, ...] = (Macro("bind", 3, True, _expand_bind, "cel.bind(v, init, e)"),)
OPTIONALS: tuple[Macro, ...] = (
    Macro("optMap", 2, True, _optional_map(flat=False)),
    Macro("optFlatMap", 2, True, _optional_map(flat=True)),
)
LISTS: tuple[Macro, ...] = (Macro("sortBy", 2, True, _expand_sort_by),)
# `cel.block` as cel-spec's conformance suite declares it (cel-go conformance_test.go).
BLOCK: tuple[Macro, ...] = (
    Macro("block", 2, True, _expand_block),
    Macro("index", 1, True, _expand_block_index),
    Macro("iterVar", 2, True, _block_variable("cel.iterVar", "@it")),
    Macro("accuVar", 2, True, _block_variable("cel.accuVar", "@ac")),
)

ALL_MACROS: tuple[Macro, ...] = STANDARD + TWO_VAR + BINDINGS + OPTIONALS + LISTS + BLOCK


def macro_table(macros: Iterable[Macro]) -> Mapping[tuple[str, int, bool], Macro]:
    return {m.key: m for m in macros}
