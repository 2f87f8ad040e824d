"""What cel-go's planner folds to a constant under OptOptimize (which Kubernetes sets): literals, list and map
literals of constants, type names, type conversions of constants (`int('1')`, `duration('1s')`, `dyn([])`), and
membership in an empty constant list (`false`).
A folded value is computed once when planning and costs nothing when evaluated; a conversion that fails makes the
program fail to build, as cel-go's does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kcel.checker import names
from kcel.checker.decls import Overload
from kcel.errors import EvalError, PlanError
from kcel.eval import control_flow, runtime
from kcel.eval.dispatch import dispatcher
from kcel.parser.ast import Call, Const, CreateList, CreateMap, Expr, Ident, walk

# cel-go's IsTypeConversionFunction: with a constant argument these are folded when planning.
TYPE_CONVERSIONS = frozenset(
    {"bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint"}
)


def constant(cg: Any, node: Expr) -> tuple[bool, Any]:
    """Whether the planner folds `node` to a value, and the value. `cg`: the planner (kcel.eval.codegen.CodeGen),
    for the names in scope and the declarations."""
    if isinstance(node, Const):
        return True, node.value
    if isinstance(node, CreateList) and not node.optional_indices:
        values = _constants(cg, node.elements)
        return (True, tuple(values)) if values is not None else (False, None)
    decls = cg.decls
    if isinstance(node, Ident) and cg.lookup(node.name) is None:  # a type name is a constant (`type(int)`)
        if not any(decls.is_variable(c) or c in decls.constants for c in cg.candidates(node.name)):
            found = (decls.type_value(c) for c in cg.candidates(node.name))
            type_value = next((t for t in found if t is not None), None)
            return (True, type_value) if type_value is not None else (False, None)
        return False, None
    if isinstance(node, CreateMap) and not node.entries:
        return True, {}
    if isinstance(node, CreateMap) and not any(e.optional for e in node.entries):
        parts = _constants(cg, [part for e in node.entries for part in (e.key, e.value)])
        if parts is not None:
            try:  # a map literal that fails to build (a repeated key) is left to fail when evaluated
                entries = zip(parts[::2], parts[1::2], strict=True)
                return True, runtime.make_map_optional([(k, v, False) for k, v in entries])
            except EvalError:
                return False, None
    if isinstance(node, Call) and set_membership(cg, node) and constant(cg, node.args[1]) == (True, ()):
        return True, False  # membership in an empty constant list (maybeOptimizeSetMembership)
    if isinstance(node, Call) and node.function in TYPE_CONVERSIONS and node.target is None and len(node.args) == 1:
        ok, value = constant(cg, node.args[0])
        overloads = [o for o in decls.overloads(node.function) if len(o.args) == 1 and not o.member]
        if ok and overloads:
            try:
                return True, dispatcher(overloads)(value)
            except EvalError as err:
                raise PlanError(str(err)) from None
    return False, None


def set_membership(cg: Any, node: Call) -> bool:
    """Whether cel-go's planner may make `x in <constant list>` a set test: only when the checker pinned `in_list`
    (not for `x in dyn([1])`, which could be a map)."""
    return node.function == "@in" and cg.chosen.get(node.id) == ("in_list",)


def in_constant_set(cg: Any, node: Call, elements: tuple[Any, ...]) -> str:
    """`x in [1, 2]`: cel-go's planner makes a constant list of primitives (bytes aside) a set, whose test costs
    nothing; an empty one is `false` without evaluating `x` (maybeOptimizeSetMembership)."""
    if not elements:
        check_constants_within(cg, node.args[0])
        return "False"
    (item,) = cg.gen_args(node.args[:1])
    if all(e.__class__ is str for e in elements):  # a str hashes as CEL compares it; nothing else is in it
        value, strings = cg.temp("_i"), cg.bind(frozenset(elements), "_set")
        if control_flow.read_class(cg, node.args[0]) is str:  # a str, as the reads in that variant are checked
            return f"({item} in {strings})"
        return f"(({value} := {item}).__class__ is str and {value} in {strings})"
    return f"_in_container({item}, {cg.bind(list(elements), '_list')})"


def _constants(cg: Any, nodes: Sequence[Expr]) -> list[Any] | None:
    """The values of nodes that are all constants, else None, found in source order and stopping at the first that
    is not: a conversion that fails further on is then found where cel-go's depth-first planning finds it."""
    values = []
    for node in nodes:
        ok, value = constant(cg, node)
        if not ok:
            return None
        values.append(value)
    return values


def call_overloads(cg: Any, node: Call) -> tuple[str, Sequence[Expr], list[Overload]]:
    """The function a call names, its arguments (a member call's target first) and the overloads it may run: those
    the checker chose, else every one of its arity and call style."""
    function, args = names.resolve_function(
        node, cg.decls.container, cg.decls.overloads, cg.is_local, cg.decls.is_variable
    )
    member = node.target is not None
    overloads = [o for o in cg.decls.overloads(function) if len(o.args) == len(args) and o.member == member]
    if not overloads and member:
        overloads = [o for o in cg.decls.overloads(function) if len(o.args) == len(args) and not o.member]
    chosen = cg.chosen.get(node.id, ())
    if chosen:
        overloads = [o for o in overloads if o.id in chosen] or overloads
    return function, args, overloads


def check_constants_within(cg: Any, root: Expr) -> None:
    """The plan-time checks of every call below `root` (a bad literal regex fails the program): cel-go plans an
    operand before its call is folded away, as `x in []` is."""
    for node in walk(root):
        if isinstance(node, Call):
            _, args, overloads = call_overloads(cg, node)
            check_constant_arguments(cg, overloads, args)


def check_constant_arguments(cg: Any, overloads: Sequence[Overload], args: Sequence[Expr]) -> None:
    """Run the overloads' plan-time checks on literal arguments (a bad regex fails the program)."""
    for overload in overloads:
        check = overload.constant_check
        if check is None or check.position >= len(args):
            continue
        ok, value = cg.constant(args[check.position])
        if ok and isinstance(value, str):
            try:
                check.check(value)
            except Exception as err:  # the library's own error type; its text is what users see
                raise PlanError(str(err)) from None


def compiled_pattern(cg: Any, overloads: Sequence[Overload], args: Sequence[Expr]) -> bool:
    """Whether cel-go's regex optimisation replaces the call (`matches`, `find` with a literal pattern) with one of
    variable arguments, which stops at the first failed argument and is then not charged."""
    return any(
        o.constant_check is not None
        and o.constant_check.position < len(args)
        and cg.constant(args[o.constant_check.position])[0]
        for o in overloads
    )


def check_constant_key(cg: Any, key: Expr) -> None:
    """cel-go makes a qualifier of a constant index when planning: null, bytes or a (folded) list cannot be one, and
    the program fails to build (planner planCallIndex, newQualifier)."""
    ok, value = cg.constant(key)
    if ok and value.__class__ not in runtime.QUALIFIER_KEYS:
        raise PlanError(f"invalid qualifier type: {runtime.go_type(value)}")
