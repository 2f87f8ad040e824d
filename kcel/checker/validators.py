"""cel-go's literal validators (`cel.ValidateDurationLiterals`, `ValidateTimestampLiterals`,
`ValidateRegexLiterals`): after type-checking, a literal argument that can never work is a
compile error ("invalid duration argument") instead of a failure at run time. Kubernetes turns
them on from 1.29.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

from kcel.checker import errors
from kcel.checker.decls import Overload
from kcel.checker.types import CelType
from kcel.errors import EvalError, Issue
from kcel.goregex import GoRegexError, compile_go_regex
from kcel.parser.ast import Call, Const, CreateList, CreateMap, Expr, children, walk


def literal_issues(root: Expr, overloads: Callable[[str], Sequence[Overload]]) -> list[Issue]:
    """An issue per `duration(...)`/`timestamp(...)` literal that fails to convert and per bad `matches` pattern."""
    issues: list[Issue] = []
    for node in walk(root):
        if not isinstance(node, Call) or not node.args or not isinstance(node.args[0], Const):
            continue
        literal = node.args[0]  # the first argument after any receiver, as cel-go counts it
        if node.function in ("duration", "timestamp") and node.target is None and len(node.args) == 1:
            if not _converts(literal.value, overloads(node.function)):
                issues.append(Issue(f"invalid {node.function} argument", literal.pos, literal.id))
        elif node.function == "matches" and isinstance(literal.value, str):
            try:
                compile_go_regex(literal.value)
            except GoRegexError:
                issues.append(Issue("invalid matches argument", literal.pos, literal.id))
    return issues


def _converts(value: object, overloads: Sequence[Overload]) -> bool:
    for overload in overloads:
        if len(overload.args) == 1 and not overload.member and overload.args[0].name == _type_name(value):
            try:
                overload.impl(value)
            except EvalError:
                return False
    return True


def _type_name(value: object) -> str:
    return "string" if isinstance(value, str) else "int" if type(value) is int else type(value).__name__


def homogeneous_issues(
    root: Expr, types: Mapping[int, CelType], exempt: Collection[str], through_calls: bool = True
) -> list[Issue]:
    """cel-go's ValidateHomogeneousAggregateLiterals: a list literal's elements, a map literal's keys and values,
    of one type each (optional entries by their value's type), unless inside a call of an exempt function
    (`format`). A list reports its first odd element; a map every odd key and value; lists before maps.
    `through_calls=False`: cel-go before v0.18 (Kubernetes 1.30) exempts only literals reached from the exempt
    call through literals (`format([dyn([1u, 2.0])])` is checked)."""
    lists: list[CreateList] = []
    maps: list[CreateMap] = []
    for node in _outside(root, exempt, through_calls):
        if isinstance(node, CreateList):
            lists.append(node)
        elif isinstance(node, CreateMap):
            maps.append(node)
    issues: list[Issue] = []
    for literal in lists:
        first: CelType | None = None
        for i, element in enumerate(literal.elements):
            t = _unwrapped(types[element.id], i in literal.optional_indices)
            if first is None:
                first = t
            elif t != first:
                issues.append(Issue(errors.type_mismatch(first, t), element.pos, element.id))
                break
    for map_literal in maps:
        key_type: CelType | None = None
        value_type: CelType | None = None
        for entry in map_literal.entries:
            k, v = types[entry.key.id], _unwrapped(types[entry.value.id], entry.optional)
            if key_type is None or value_type is None:
                key_type, value_type = k, v
                continue
            if k != key_type:
                issues.append(Issue(errors.type_mismatch(key_type, k), entry.key.pos, entry.key.id))
            if v != value_type:
                issues.append(Issue(errors.type_mismatch(value_type, v), entry.value.pos, entry.value.id))
    return issues


def _unwrapped(t: CelType, optional: bool) -> CelType:
    return t.params[0] if optional and t.params else t


def _outside(root: Expr, exempt: Collection[str], through_calls: bool = True) -> Iterator[Expr]:
    """Every node, in pre-order, except those under a call of an exempt function (with `through_calls=False`,
    except the literals that reach such a call through literals only)."""
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, exempted = stack.pop()
        if not exempted:
            yield node
        if isinstance(node, Call) and node.function in exempt:
            if through_calls:
                continue
            exempted = True
        elif not isinstance(node, (CreateList, CreateMap)):
            exempted = False
        stack.extend(
            (child, exempted and isinstance(child, (CreateList, CreateMap))) for child in reversed(children(node))
        )
