"""Stage 2: type-check a parsed expression (cel-go checker/checker.go), collecting every issue.

The result keeps the AST untouched and adds side tables keyed by node id: each node's type
and, for each call, the overload ids that may run. Types left open at the end (an empty list's
element type, say) become `dyn`.
"""

from __future__ import annotations

import dataclasses
import itertools
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kcel.checker import errors, names, validators
from kcel.checker.decls import ASTValidator, Overload, StructType, has_params
from kcel.checker.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DYN,
    ERROR,
    INT,
    NULL,
    STRING,
    UINT,
    CelType,
    list_of,
    map_of,
    optional_of,
    param,
    type_of,
)
from kcel.checker.unify import Substitution, is_assignable, most_general
from kcel.errors import CompileError, Issue
from kcel.parser import Parsed
from kcel.parser.ast import (
    Call,
    Comprehension,
    Const,
    CreateList,
    CreateMap,
    CreateStruct,
    Expr,
    Ident,
    Select,
    StructField,
)
from kcel.parser.unparser import unparse_node
from kcel.values import Uint


class CheckerEnv(Protocol):
    container: str
    homogeneous_literals: bool
    literal_exemption_through_calls: bool  # before cel-go v0.18 (Kubernetes 1.30), only through literals
    keyword_field_names: bool  # Kubernetes 1.31+: `self.namespace` selects the escaped `__namespace__`
    literal_validators: bool  # cel-go's duration/timestamp/regex literal validators (Kubernetes 1.29+)
    shared_macro_targets: bool  # cel-go before v0.22: a node checked twice must get the very same type
    optional_type_name: str  # how messages name the optional type: `optional` in cel-go v0.17 (Kubernetes 1.30)

    @property
    def variables(self) -> Mapping[str, CelType]: ...
    @property
    def constants(self) -> Mapping[str, Any]:
        """Named constants the libraries declare (protobuf enum values: `pkg.Enum.VALUE`)."""

    @property
    def mixed_literal_functions(self) -> frozenset[str]:
        """Calls whose literal arguments may mix types (`format` with the strings extension's validator)."""

    @property
    def ast_validators(self) -> Sequence[ASTValidator]:
        """The libraries' own checks after type-checking (the strings extension's `format()`)."""

    def overloads(self, function: str) -> Sequence[Overload]: ...
    def type_of_name(self, name: str) -> CelType | None: ...
    def struct_type(self, name: str) -> StructType | None: ...


@dataclass(frozen=True, slots=True)
class Checked:
    """A parsed expression with the type of every node and the overloads each call may use."""

    parsed: Parsed
    types: Mapping[int, CelType]
    overloads: Mapping[int, tuple[str, ...]]

    @property
    def output_type(self) -> CelType:
        return self.types[self.parsed.expr.id]


def check(parsed: Parsed, env: CheckerEnv) -> Checked:
    """Type-check `parsed` against `env`; raise `CompileError` listing every issue found."""
    checker = _Checker(parsed, env)
    checker.visit(parsed.expr)
    if checker.issues:
        raise CompileError(_named_as(env, checker.issues), parsed.source)
    final = {node_id: checker.subst.resolve(t, to_dyn=True) for node_id, t in checker.types.items()}
    # cel-go's AST validators run on the checked AST only: the literal ones, homogeneous aggregate literals
    # (cel.HomogeneousAggregateLiterals is a validator, not a checker option), then the environment's own.
    issues = validators.literal_issues(parsed.expr, env.overloads) if env.literal_validators else []
    if env.homogeneous_literals:
        exempt = _MIXED_LITERALS_ALLOWED | env.mixed_literal_functions
        issues += validators.homogeneous_issues(parsed.expr, final, exempt, env.literal_exemption_through_calls)
    issues += [issue for validate in env.ast_validators for issue in validate(parsed.expr, final, checker.chosen)]
    if issues:
        raise CompileError(issues, parsed.source)
    return Checked(parsed, final, checker.chosen)


def _named_as(env: CheckerEnv, issues: list[Issue]) -> list[Issue]:
    """The issues with the optional type named as the environment's cel-go names it."""
    if env.optional_type_name == "optional_type":
        return issues
    renamed = f"{env.optional_type_name}("
    return [dataclasses.replace(i, message=i.message.replace("optional_type(", renamed)) for i in issues]


def _unplanned(*_: object) -> object:
    raise AssertionError("planned by kcel.eval.codegen, not dispatched")


def _const_type(value: object) -> CelType:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, Uint):
        return UINT
    return {int: INT, float: DOUBLE, str: STRING, bytes: BYTES}[type(value)]


# cel-go's optional library declares `x[?k]`, and `x[k]` on an optional `x`, as ordinary overloads
# (cel/library.go optionalLib); the checker resolves them like any other.
_K, _V = param("K"), param("V")
_OPTIONAL_OPT_INDEX = tuple(
    Overload(overload_id, "_[?_]", args, optional_of(_V), impl=_unplanned)
    for overload_id, args in (
        ("list_optindex_optional_int", (list_of(_V), INT)),
        ("optional_list_optindex_optional_int", (optional_of(list_of(_V)), INT)),
        ("map_optindex_optional_value", (map_of(_K, _V), _K)),
        ("optional_map_optindex_optional_value", (optional_of(map_of(_K, _V)), _K)),
    )
)
_OPTIONAL_INDEX = tuple(
    Overload(overload_id, "_[_]", args, optional_of(_V), impl=_unplanned)
    for overload_id, args in (
        ("optional_list_index_int", (optional_of(list_of(_V)), INT)),
        ("optional_map_index_value", (optional_of(map_of(_K, _V)), _K)),
    )
)

# Calls whose list and map literals may mix element types even with homogeneous literals on (cel-go's block
# validator exempts cel.@block; libraries add theirs, e.g. the strings extension's format()).
_MIXED_LITERALS_ALLOWED = frozenset({"cel.@block"})


# Overload resolutions of calls whose argument types have no parameters, per environment: the same function with
# the same argument types resolves the same way (what cel-go's checker recomputes for every call).
_RESOLUTIONS: weakref.WeakKeyDictionary[Any, dict[Any, tuple[Sequence[Overload], CelType, tuple[str, ...]]]] = (
    weakref.WeakKeyDictionary()
)


class _Checker:
    def __init__(self, parsed: Parsed, env: CheckerEnv) -> None:
        self.parsed = parsed
        self.env = env
        self.types: dict[int, CelType] = {}
        self.chosen: dict[int, tuple[str, ...]] = {}
        self.issues: list[Issue] = []
        self.subst = Substitution()
        self.scopes: list[dict[str, CelType]] = []
        self.fresh = itertools.count(1)

    # -- helpers -----------------------------------------------------------------------------

    def error(self, node: Expr | StructField, message: str) -> CelType:
        self.issues.append(Issue(message, node.pos, node.id))
        return ERROR

    def set(self, node: Expr, t: CelType) -> CelType:
        old = self.types.get(node.id)
        if old is not None and old != t and self.env.shared_macro_targets:  # cel-go's setType, before v0.22
            try:
                text = unparse_node(self.parsed, node)
            except ValueError:  # a comprehension a macro made, which has no text of its own
                text = type(node).__name__.lower()
            self.error(node, f"incompatible type already exists for expression: {text}({node.id}) old:{old}, new:{t}")
            return old
        self.types[node.id] = t
        return t

    def type_var(self) -> CelType:
        return param(f"_var{next(self.fresh)}")

    def resolved(self, t: CelType) -> CelType:
        return self.subst.resolve(t)

    def local(self, name: str) -> CelType | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def is_local(self, name: str) -> bool:
        return self.local(name) is not None

    def candidates(self, name: str) -> list[str]:
        return names.candidates(name, self.env.container)

    def lookup_name(self, name: str) -> CelType | None:
        for candidate in self.candidates(name):
            if candidate in self.env.variables:
                return self.env.variables[candidate]
            if candidate in self.env.constants:
                return _const_type(self.env.constants[candidate])
        for candidate in self.candidates(name):
            named = self.env.type_of_name(candidate)
            if named is not None:
                return type_of(named)
        return None

    # -- visiting ----------------------------------------------------------------------------

    def visit(self, node: Expr) -> CelType:
        if isinstance(node, Const):
            return self.set(node, _const_type(node.value))
        if isinstance(node, Ident):
            return self.set(node, self.ident(node))
        if isinstance(node, Select):
            return self.set(node, self.select(node))
        if isinstance(node, Call):
            return self.set(node, self.call(node))
        if isinstance(node, CreateList):
            return self.set(node, self.create_list(node))
        if isinstance(node, CreateMap):
            return self.set(node, self.create_map(node))
        if isinstance(node, Comprehension):
            return self.set(node, self.comprehension(node))
        assert isinstance(node, CreateStruct)
        return self.set(node, self.create_struct(node))

    def create_struct(self, node: CreateStruct) -> CelType:
        """cel-go checkCreateStruct: the type must be declared, each field must exist and take its value."""
        declared = next(
            (s for s in map(self.env.struct_type, names.candidates(node.type_name, self.env.container)) if s), None
        )
        values = [self.resolved(self.visit(f.value)) for f in node.fields]
        if declared is None:
            return self.error(node, errors.undeclared_reference(node.type_name.lstrip("."), self.env.container))
        for f, value in zip(node.fields, values, strict=True):
            expected = declared.field_type(f.name, self.env.keyword_field_names)
            if expected is None:
                self.error(f, errors.undefined_field(f.name))
                continue
            if f.optional:
                expected = optional_of(expected)
            if not is_assignable(expected, value, self.subst):
                self.error(f, errors.field_type_mismatch(f.name, expected, value))
        return declared.cel

    def ident(self, node: Ident) -> CelType:
        local = self.local(node.name)
        if local is not None:
            return local
        found = self.lookup_name(node.name)
        if found is not None:
            return found
        return self.error(node, errors.undeclared_reference(node.name.lstrip("."), self.env.container))

    def qualified_name(self, node: Expr) -> str | None:
        return names.qualified_name(node, self.is_local)

    def select(self, node: Select) -> CelType:
        if not node.test_only:
            name = self.qualified_name(node)
            if name is not None and self._names_nothing_shorter(name):
                found = self.lookup_name(name)
                if found is not None:
                    return found
        operand = self.resolved(self.visit(node.operand))
        optional = operand.name == "optional_type" and operand.kind == "opaque"
        if optional:
            operand = self.resolved(operand.params[0])
        field_type = self.field_type(node, operand)
        if node.test_only:
            return BOOL
        return optional_of(field_type) if optional else field_type

    def _names_nothing_shorter(self, name: str) -> bool:
        """cel-go resolves a dotted name as a whole (`authorizer.requestResource` before `authorizer`) unless its
        first part is a local (comprehension) variable, which then selects fields (checker/env.go
        resolveQualifiedIdent)."""
        return name.startswith(".") or self.local(name.split(".")[0]) is None

    def field_type(self, node: Select, operand: CelType) -> CelType:
        if operand.kind in ("dyn", "error"):
            return DYN if operand.kind == "dyn" else ERROR
        if operand.kind == "map":
            return operand.params[1]
        if operand.kind == "param":  # cel-go checkSelectField: the parameter becomes dyn
            is_assignable(operand, DYN, self.subst)
            return DYN
        if operand.kind == "message" and operand.decl is not None:
            found = operand.decl.field_type(node.field, self.env.keyword_field_names)
            return found if found is not None else self.error(node, errors.undefined_field(node.field))
        return self.error(node, errors.no_field_selection(operand))

    # -- calls -------------------------------------------------------------------------------

    def call(self, node: Call) -> CelType:
        fn = node.function
        if fn == "_?._":
            return self.optional_select(node)
        if fn == "_[?_]":
            return self.optional_index(node)
        if fn == "cel.@block":
            return self.block(node)
        if fn == "cel.@mapInsert":
            return self.map_insert(node)
        function, args = names.resolve_function(
            node, self.env.container, self.env.overloads, self.is_local, self.env.variables.__contains__
        )
        arg_types = [self.visit(a) for a in args]  # unresolved, as cel-go: a later call may widen a bound parameter
        overloads = self.env.overloads(function)
        if fn == "_[_]" and self.env.overloads("optional.none"):
            overloads = [*overloads, *_OPTIONAL_INDEX]
        return self.resolve_overload(
            node, function, args, arg_types, member=node.target is not None and args != node.args, overloads=overloads
        )

    def resolve_overload(
        self,
        node: Call,
        function: str,
        args: Sequence[Expr],
        arg_types: list[CelType],
        member: bool,
        overloads: Sequence[Overload] | None = None,
    ) -> CelType:
        overloads = self.env.overloads(function) if overloads is None else overloads
        if not overloads:
            return self.error(node, errors.undeclared_reference(function, self.env.container))
        if function in ("_&&_", "_||_"):
            return self.logical(node, overloads, args, arg_types)
        concrete = not any(map(has_params, arg_types))
        cacheable = concrete and overloads is self.env.overloads(function)  # not a list made for this call
        key = (id(overloads), member, tuple(arg_types))
        resolutions = _RESOLUTIONS.setdefault(self.env, {}) if cacheable else None
        if resolutions is not None and key in resolutions:
            kept, known, chosen = resolutions[key]
            if kept is overloads:
                self.chosen[node.id] = chosen
                return known
        result, found = self.match_overloads(overloads, arg_types, member, concrete)
        if result is None:  # cel-go names a parameter still free `dyn` here
            shown_types = [self.subst.resolve(t, to_dyn=True) for t in arg_types]
            receiver = shown_types[0] if member else None
            shown = shown_types[1:] if member else shown_types
            return self.error(node, errors.no_matching_overload(function, shown, receiver))
        self.chosen[node.id] = tuple(found)
        if resolutions is not None and not any(o.generic for o in overloads):  # nothing was bound: the same again
            resolutions[key] = (overloads, result, tuple(found))
        return result

    def match_overloads(
        self, overloads: Sequence[Overload], arg_types: list[CelType], member: bool, concrete: bool
    ) -> tuple[CelType | None, list[str]]:
        """The result type and the ids of the overloads the arguments fit, binding type parameters."""
        result: CelType | None = None
        found: list[str] = []
        for overload in overloads:
            if overload.member != member or len(overload.args) != len(arg_types):
                continue
            if concrete and not overload.generic:  # nothing to bind: no copy of the substitution to try it on
                if all(is_assignable(p, a, self.subst) for p, a in zip(overload.args, arg_types, strict=True)):
                    found.append(overload.id)
                    candidate = overload.result
                    result = candidate if result is None else (result if result == candidate else DYN)
                continue
            params, overload_result = self.instantiate(overload)
            trial = self.subst.copy()
            if all(is_assignable(p, a, trial) for p, a in zip(params, arg_types, strict=True)):
                self.subst = trial
                found.append(overload.id)
                candidate = self.resolved(overload_result)
                result = candidate if result is None else (result if result == candidate else DYN)
        return result, found

    def logical(
        self, node: Call, overloads: Sequence[Overload], args: Sequence[Expr], arg_types: list[CelType]
    ) -> CelType:
        """`&&`/`||` (cel-go resolveOverload's special case): each operand must be a bool, else a type
        mismatch at that operand (not "no matching overload")."""
        mismatched = [
            self.error(arg, errors.type_mismatch(BOOL, self.resolved(t)))
            for arg, t in zip(args, arg_types, strict=True)
            if not is_assignable(BOOL, t, self.subst)
        ]
        if mismatched:
            return ERROR
        self.chosen[node.id] = (overloads[0].id,)
        return BOOL

    def instantiate(self, overload: Overload) -> tuple[list[CelType], CelType]:
        """The overload's signature with fresh type variables for its parameters."""
        fresh: dict[str, CelType] = {}

        def rename(t: CelType) -> CelType:
            if t.kind == "param":
                return fresh.setdefault(t.name, self.type_var())
            if not t.params:
                return t
            return CelType(t.name, tuple(rename(p) for p in t.params), t.kind)

        return [rename(a) for a in overload.args], rename(overload.result)

    def map_insert(self, node: Call) -> CelType:
        """transformMap's `cel.@mapInsert(m, k, v)` and transformMapEntry's `cel.@mapInsert(m, {k: v})`."""
        types = [self.visit(a) for a in node.args]
        accu, *rest = types
        entry = map_of(rest[0], rest[1]) if len(rest) == 2 else rest[0]
        if not is_assignable(accu, entry, self.subst):  # cel-go declares it as a function of two overloads
            shown = [self.subst.resolve(t, to_dyn=True) for t in types]
            return self.error(node, errors.no_matching_overload("cel.@mapInsert", shown))
        return self.resolved(accu)

    def optional_select(self, node: Call) -> CelType:
        operand = self.resolved(self.visit(node.args[0]))
        self.visit(node.args[1])
        if operand.name == "optional_type" and operand.kind == "opaque":
            operand = self.resolved(operand.params[0])
        field = node.args[1]
        assert isinstance(field, Const) and isinstance(field.value, str)
        probe = Select(node.id, node.start, node.end, node.pos, node.args[0], field.value)
        return optional_of(self.field_type(probe, operand))

    def optional_index(self, node: Call) -> CelType:
        """`x[?k]`: resolved against the optional library's `_[?_]` overloads, as cel-go declares them."""
        arg_types = [self.resolved(self.visit(a)) for a in node.args]
        return self.resolve_overload(node, "_[?_]", node.args, arg_types, False, _OPTIONAL_OPT_INDEX)

    def block(self, node: Call) -> CelType:
        slots, result = node.args
        assert isinstance(slots, CreateList)
        scope: dict[str, CelType] = {}
        self.scopes.append(scope)
        for i, slot in enumerate(slots.elements):
            scope[f"@index{i}"] = self.resolved(self.visit(slot))
        self.set(slots, list_of(DYN))
        out = self.visit(result)
        self.scopes.pop()
        return out

    # -- literals ----------------------------------------------------------------------------

    def join(self, node: Expr, previous: CelType | None, current: CelType) -> CelType:
        if previous is None:
            return current
        # cel-go joinTypes: isAssignable(previous, current), so `[null, ts]` is `list(timestamp)` but
        # `[ts, null]` is `list(null_type)` (mostGeneral keeps the later type when neither is less specific).
        if is_assignable(current, previous, self.subst):
            return most_general(previous, current)  # a parameter stays one, to widen later (`[[][0], ls, dyn(x)]`)
        return DYN  # mixed types: homogeneous literals are a validator's question, asked once checking succeeded

    def create_list(self, node: CreateList) -> CelType:
        element: CelType | None = None
        for i, item in enumerate(node.elements):
            t = self.visit(item)  # unresolved, as cel-go's checkCreateList
            if i in node.optional_indices:
                t = self.unwrap_optional(item, t)
            element = self.join(item, element, t)
        return list_of(element if element is not None else self.type_var())

    def unwrap_optional(self, node: Expr, t: CelType) -> CelType:
        if t.name == "optional_type" and t.kind == "opaque":
            return t.params[0]
        if t.kind != "dyn":
            self.error(node, errors.type_mismatch(optional_of(t), t))
        return t

    def create_map(self, node: CreateMap) -> CelType:
        key_type: CelType | None = None
        value_type: CelType | None = None
        for entry in node.entries:
            key_type = self.join(entry.key, key_type, self.visit(entry.key))  # unresolved, as cel-go's checkCreateMap
            value = self.visit(entry.value)
            if entry.optional:
                value = self.unwrap_optional(entry.value, value)
            value_type = self.join(entry.value, value_type, value)
        return map_of(key_type or self.type_var(), value_type or self.type_var())

    # -- comprehensions ----------------------------------------------------------------------

    def comprehension(self, node: Comprehension) -> CelType:
        range_type = self.resolved(self.visit(node.iter_range))
        first, second = self.iteration_types(node, range_type)
        accu_type = self.visit(node.accu_init)  # unresolved, as cel-go; the result is resolved when checked
        self.scopes.append({node.accu_var: accu_type})
        loop_scope = {node.iter_var: first}
        if node.iter_var2:
            loop_scope[node.iter_var2] = second
        self.scopes.append(loop_scope)
        condition = self.visit(node.loop_condition)
        if not is_assignable(condition, BOOL, self.subst):  # cel-go assertType: isAssignable(bool, condition)
            self.error(node.loop_condition, errors.type_mismatch(BOOL, self.resolved(condition)))
        step = self.visit(node.loop_step)
        if not is_assignable(step, accu_type, self.subst):
            self.error(node.loop_step, errors.type_mismatch(self.resolved(accu_type), self.resolved(step)))
        self.scopes.pop()
        result = self.resolved(self.visit(node.result))
        self.scopes.pop()
        return result

    def iteration_types(self, node: Comprehension, range_type: CelType) -> tuple[CelType, CelType]:
        if range_type.kind == "list":
            return (INT, range_type.params[0]) if node.iter_var2 else (range_type.params[0], DYN)
        if range_type.kind == "map":
            return range_type.params[0], range_type.params[1]
        if range_type.kind in ("dyn", "error", "param"):
            is_assignable(range_type, DYN, self.subst)  # cel-go: a parameter ranged over becomes dyn
            return DYN, DYN
        self.error(node.iter_range, errors.not_a_range(range_type))
        return ERROR, ERROR
