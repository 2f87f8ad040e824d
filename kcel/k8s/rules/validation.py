"""CRD `x-kubernetes-validations`: compiled once per schema, evaluated over objects as the API server does.

`Validator(schema)` compiles every rule in the schema at its node (k8s.io/apiextensions-apiserver
pkg/apiserver/schema/cel `NewValidator`/`Compile`), and `validate(obj, old)` walks the data the way
`validate`/`validateExpressions` do: rules at each non-null node, then `allOf`, then list items,
object properties and map values; transition rules only where an old value correlates; ratcheting
of unchanged values; the per-call cost limit and the per-object budget. The results are
Kubernetes field errors whose text matches the API server's.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any

from kcel.checker.types import BOOL, STRING, optional_of
from kcel.env import Env
from kcel.errors import CompileError, CostLimitExceeded, EvalError, PlanError
from kcel.eval.program import Program
from kcel.k8s import field as fe
from kcel.k8s.environment import NEWEST, server_version
from kcel.k8s.rules.cost import Multiplier, SchemaSizes, max_cardinality
from kcel.k8s.rules.fieldpath import FieldPathError, valid_field_path
from kcel.k8s.schemas.correlation import CorrelatedObject
from kcel.k8s.schemas.decltypes import DeclType, assign_type_name, schema_decl_type, with_type_and_object_meta
from kcel.k8s.schemas.escaping import escape
from kcel.k8s.schemas.maplist import MapListIndex
from kcel.k8s.schemas.schema import Schema, ValidationRule, structure
from kcel.k8s.schemas.values import convert
from kcel.libs import Library
from kcel.values import NONE, Optional

PER_CALL_LIMIT = 1_000_000  # k8s.io/apiserver pkg/apis/cel/config.go PerCallLimit
RUNTIME_BUDGET = 10_000_000  # RuntimeCELCostBudget: all rules of one object together
MAX_MESSAGE_BYTES = 5120  # MaxEvaluatedMessageExpressionSizeBytes
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"


@dataclass(frozen=True)
class RuleCompileError:
    """apiservercel.Error: `type` is "Invalid" or "Internal"; prints as its detail."""

    type: str
    detail: str

    def __str__(self) -> str:
        return self.detail


@dataclass(frozen=True)
class CompiledRule:
    """One rule's compilation result (upstream `CompilationResult`); no program and no error: a blank rule.

    The estimated costs are computed when first asked for: validating objects never needs them.
    """

    rule: ValidationRule
    program: Program | None = None
    error: RuleCompileError | None = None
    uses_old_self: bool = False
    message_program: Program | None = None
    message_error: RuleCompileError | None = None
    field_path: str = ""  # the rule's fieldPath, normalised; "" if none
    self_type: DeclType | None = field(default=None, compare=False, repr=False)

    @cached_property
    def max_cost(self) -> int:
        """The rule's estimated worst-case cost (one evaluation), 0 without a program."""
        return self._estimate(self.program)

    @cached_property
    def message_max_cost(self) -> int:
        return self._estimate(self.message_program)

    @property
    def max_cardinality(self) -> int:
        """How often the rule can run when nothing above it bounds that: one per smallest serialized value."""
        return max_cardinality(self.self_type.min_size) if self.self_type is not None else 1

    def _estimate(self, program: Program | None) -> int:
        if program is None or program.checked is None or self.self_type is None:
            return 0
        env = program.declarations
        assert isinstance(env, Env)
        return env.estimate_cost(program, SchemaSizes(self.self_type)).max


@dataclass(frozen=True)
class ExpressionCost:
    """One rule's (or messageExpression's) estimated cost, as the API server checks it on CRD create."""

    path: fe.Path  # `...x-kubernetes-validations[0].rule`
    compiled: CompiledRule
    message: bool  # the messageExpression, not the rule
    cardinality: int | None  # how often the rule can run; None when a list or map above it is unbounded
    cost: int  # the estimate times the cardinality (the messageExpression's is not multiplied)
    location: str  # where the data is: `spec.containers[*]`
    multipliers: tuple[Multiplier, ...]  # the lists and maps above it, outermost first

    @property
    def expression(self) -> str:
        return (self.compiled.rule.message_expression or "") if self.message else self.compiled.rule.rule

    @property
    def estimated(self) -> int:
        """The estimate of one evaluation."""
        return self.compiled.message_max_cost if self.message else self.compiled.max_cost

    @property
    def effective_cardinality(self) -> int:
        if self.message:
            return 1
        return self.compiled.max_cardinality if self.cardinality is None else self.cardinality


class RuleEnvironments:
    """The CEL environments rules compile in: Kubernetes' base environment plus `self` and `oldSelf`."""

    def __init__(
        self, k8s_version: str | None = None, environment: str = "stored", extra: Sequence[Library] = ()
    ) -> None:
        """`k8s_version`: the API server (default the newest); `extra`: libraries added to Kubernetes' own (an
        embedding API server's additions)."""
        self.base = _base_env(k8s_version or NEWEST, environment)
        # What identifies these environments for the compiled-rule cache (None: extra libraries, never cached).
        self.key: tuple[str, str] | None = (k8s_version or NEWEST, environment)
        if extra:
            libraries = [*self.base.libraries, *extra]
            self.base = Env(k8s_version=k8s_version or NEWEST, environment=environment, libraries=libraries)
            self.key = None

    def for_type(self, self_type: DeclType, optional_old_self: bool) -> Env:
        cel = self_type.cel
        return self.base.extend({"self": cel, "oldSelf": optional_of(cel) if optional_old_self else cel})


@lru_cache(maxsize=64)
def _base_env(k8s_version: str, environment: str) -> Env:
    return Env(k8s_version=k8s_version, environment=environment)


_COMPILED: OrderedDict[Hashable, CompiledRule] = OrderedDict()
_COMPILED_MAX = 4096
_COMPILED_LOCK = threading.Lock()


def forget_compiled_rules() -> None:
    """Empty the process-wide cache of compiled rules, so the next validator compiles every rule again (what a
    fresh process pays: benchmarks of a cold build, tests of the cache itself)."""
    with _COMPILED_LOCK:
        _COMPILED.clear()


def _cache_key(schema: Schema, decl: DeclType, envs: RuleEnvironments) -> Hashable | None:
    """Rules compile alike wherever the same text meets the same schema in the same environment: the same rule in
    every version of a CRD, or on every field of one shape. The schema is its whole content (`structure`), the type
    its fields (a resource root has apiVersion, kind and metadata besides), the API server the one answered as; the
    rule completes the key."""
    if envs.key is None:
        return None
    return (envs.key, fe.api_server(), structure(schema), decl.kind, tuple(decl.fields))


def compile_rules(
    schema: Schema, decl: DeclType | None, envs: RuleEnvironments, rules: Sequence[ValidationRule] | None = None
) -> list[CompiledRule]:
    """Compile the rules of one schema node (its own, or `rules` given for an `allOf` entry).

    Raises ValueError when the node has rules but is not visible to CEL (upstream's compiler
    initialization error).
    """
    rules = schema.validations if rules is None else rules
    if not rules:
        return []
    if decl is None:
        raise ValueError("failed to convert to declType for CEL validation rules")
    node_key = _cache_key(schema, decl, envs)  # the schema's repr once for all its rules
    keys = [None if node_key is None else (node_key, rule) for rule in rules]
    with _COMPILED_LOCK:
        found = [_COMPILED.get(key) if key is not None else None for key in keys]
    if all(compiled is not None for compiled in found):
        return found  # type: ignore[return-value]
    self_type = _self_type(decl)
    plain, optional = envs.for_type(self_type, False), envs.for_type(self_type, True)
    compiled_rules = []
    for rule, key, compiled in zip(rules, keys, found, strict=True):
        if compiled is None:
            env = optional if rule.optional_old_self else plain
            compiled = replace(_compile_rule(schema, rule, env), self_type=self_type)
            if key is not None:
                with _COMPILED_LOCK:
                    _COMPILED[key] = compiled
                    while len(_COMPILED) > _COMPILED_MAX:
                        _COMPILED.popitem(last=False)
        compiled_rules.append(compiled)
    return compiled_rules


_SELF_TYPES: weakref.WeakKeyDictionary[DeclType, DeclType] = weakref.WeakKeyDictionary()
_SELF_TYPE_LOCK = threading.Lock()
_last_self_type_number = 0


def _self_type(decl: DeclType) -> DeclType:
    """`decl` named as its rules' `self`: a fresh name when its rules are first compiled in this process, so that no
    rule can depend on it (upstream's generateUniqueSelfTypeName, at each compilation); the same type after, with
    what it has built for checking and evaluation (renaming a large schema's type took as long as its rules)."""
    found = _SELF_TYPES.get(decl)
    if found is None:
        found = assign_type_name(decl, f"selfType{_unique_self_type_number() % 1_000_000_000}")
        if found is not decl:  # (held by itself, an entry would never go)
            _SELF_TYPES[decl] = found
    return found


def _unique_self_type_number() -> int:
    """The clock's nanoseconds, as upstream names them, but never the same twice: a clock that ticks in
    microseconds (macOS) or coarser (Windows) gave two nodes named in one tick the same name."""
    global _last_self_type_number
    with _SELF_TYPE_LOCK:
        _last_self_type_number = max(time.time_ns(), _last_self_type_number + 1)
        return _last_self_type_number


def _compile_rule(schema: Schema, rule: ValidationRule, env: Env) -> CompiledRule:
    if not rule.rule.strip():
        return CompiledRule(rule)
    try:
        program = env.compile(rule.rule)
    except CompileError as err:
        return CompiledRule(rule, error=RuleCompileError("Invalid", f"compilation failed: {err}"))
    except PlanError as err:
        return CompiledRule(rule, error=RuleCompileError("Invalid", f"program instantiation failed: {err}"))
    if program.output_type != BOOL:
        return CompiledRule(rule, error=RuleCompileError("Invalid", "cel expression must evaluate to a bool"))
    compiled = CompiledRule(rule, program, uses_old_self="oldSelf" in program.variables)
    if rule.message_expression:
        compiled = _with_message_expression(compiled, rule.message_expression, env)
    if rule.field_path:
        try:
            path, _ = valid_field_path(rule.field_path, schema)
        except FieldPathError:
            pass
        else:
            compiled = replace(compiled, field_path=str(path))
    return compiled


def _with_message_expression(compiled: CompiledRule, text: str, env: Env) -> CompiledRule:
    try:
        program = env.compile(text)
    except CompileError as err:
        error = RuleCompileError("Invalid", f"messageExpression compilation failed: {err}")
        return replace(compiled, message_error=error)
    except PlanError as err:
        error = RuleCompileError("Invalid", f"messageExpression instantiation failed: {err}")
        return replace(compiled, message_error=error)
    if program.output_type != STRING:
        return replace(
            compiled, message_error=RuleCompileError("Invalid", "messageExpression must evaluate to a string")
        )
    return replace(compiled, message_program=program)


# -- the validator tree ------------------------------------------------------------------------


@dataclass
class _Node:
    """Upstream `Validator`: the compiled rules of one schema node and the validators below it."""

    schema: Schema
    decl: DeclType | None
    is_resource_root: bool
    rules: list[CompiledRule]
    compile_error: str | None = None
    value_decl: DeclType | None = None  # the type `self` is read with (a resource root's includes its metadata)
    uses_old_self: bool = False  # some rule here is a transition rule
    items: _Node | None = None
    properties: dict[str, _Node] = field(default_factory=dict)
    additional: _Node | None = None
    all_of: list[_Node] = field(default_factory=list)


def _build(
    rules_schema: Schema, node_schema: Schema, is_resource_root: bool, decl: DeclType | None, envs: RuleEnvironments
) -> _Node | None:
    compile_error = None
    try:
        rules = compile_rules(node_schema, decl, envs, rules_schema.validations)
    except ValueError as err:
        rules, compile_error = [], str(err)
    elem = decl.elem if decl is not None else None
    value_decl = schema_decl_type(with_type_and_object_meta(node_schema)) or decl if is_resource_root else decl
    uses_old_self = any(r.uses_old_self for r in rules)
    node = _Node(node_schema, decl, is_resource_root, rules, compile_error, value_decl, uses_old_self)
    if rules_schema.items is not None and node_schema.items is not None:
        items = node_schema.items
        node.items = _build(rules_schema.items, items, items.embedded_resource, elem, envs)
    for key, rules_property in (rules_schema.properties or {}).items():
        prop = (node_schema.properties or {}).get(key)
        if prop is None:
            continue
        escaped = escape(key)
        if escaped is not None:
            found = decl.fields.get(escaped) if decl is not None else None
            if found is None:
                continue
            prop_decl: DeclType | None = found.type
        else:
            prop_decl = schema_decl_type(prop, prop.embedded_resource)
            if prop_decl is None:
                continue
        child = _build(rules_property, prop, prop.embedded_resource, prop_decl, envs)
        if child is not None:
            node.properties[key] = child
    rules_additional, node_additional = rules_schema.additional_properties, node_schema.additional_properties
    if isinstance(rules_additional, Schema) and isinstance(node_additional, Schema):
        node.additional = _build(rules_additional, node_additional, node_additional.embedded_resource, elem, envs)
    for entry in rules_schema.all_of:
        child = _build(entry, node_schema, is_resource_root, decl, envs)
        if child is not None:
            node.all_of.append(child)
    if rules or compile_error or node.items or node.additional or node.properties or node.all_of:
        return node
    return None


def has_validations(schema: Schema | None) -> bool:
    """Whether any rule exists at or below this node (not looking into allOf, as upstream)."""
    if schema is None:
        return False
    additional = schema.additional_properties
    return bool(
        schema.validations
        or has_validations(schema.items)
        or (isinstance(additional, Schema) and has_validations(additional))
        or any(has_validations(p) for p in (schema.properties or {}).values())
    )


# -- validation --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidationResult:
    """What validating an object against a schema's rules found, and the cost budget left."""

    errors: list[fe.FieldError]
    warnings: list[str]  # ratcheted errors, as the API server returns them as warnings
    log: list[str]  # what the API server only logs: messageExpression failures that fell back to the message
    remaining_budget: int  # negative when validation stopped (cost limit or budget exhausted)


class Validator:
    """Every `x-kubernetes-validations` rule of a schema, compiled once (upstream `NewValidator`).

    >>> schema = Schema.from_json({"type": "object", "properties": {"replicas": {"type": "integer"}},
    ...     "x-kubernetes-validations": [{"rule": "self.replicas <= 3", "message": "must be at most 3"}]})
    >>> [str(e) for e in Validator(schema).validate({"replicas": 5}).errors]
    ['<nil>: Invalid value: must be at most 3']
    """

    def __init__(
        self,
        schema: Schema,
        *,
        is_resource_root: bool = False,
        k8s_version: str | None = None,
        environment: str = "stored",
        per_call_limit: int = PER_CALL_LIMIT,
        decl: DeclType | None = None,
        rules_in_all_of_only: bool = False,
    ) -> None:
        """`rules_in_all_of_only`: also build when the only rules sit under `allOf` (upstream's internal
        `validator()`; `NewValidator`, which the API server uses, finds no rules there)."""
        self.schema = schema
        self.per_call_limit = per_call_limit
        # Before 1.35 the API server showed the schema type as the bad value of every rule failure.
        server = server_version(k8s_version)
        self.types_as_values = server < (1, 35)
        envs = RuleEnvironments(k8s_version, environment)
        with fe.answering_as(server):  # schema types and their bounds as that API server derives them
            root_decl = decl if decl is not None else schema_decl_type(schema, is_resource_root)
            build = rules_in_all_of_only or has_validations(schema)
            self.root = _build(schema, schema, is_resource_root, root_decl, envs) if build else None

    def compiled(self) -> Iterator[tuple[Schema, CompiledRule]]:
        """Every compiled rule with the schema node it belongs to."""
        stack = [self.root] if self.root is not None else []
        while stack:
            node = stack.pop()
            for rule in node.rules:
                yield node.schema, rule
            stack.extend(n for n in (node.items, node.additional) if n is not None)
            stack.extend(node.properties.values())
            stack.extend(node.all_of)

    def validate(
        self,
        obj: Any,
        old: Any = None,
        *,
        path: fe.Path | None = None,
        budget: int = RUNTIME_BUDGET,
        ratcheting: bool = True,
    ) -> ValidationResult:
        """Run every rule over `obj` (and `old`, for an update); errors as the API server reports them."""
        run = _Run(self.per_call_limit, self.types_as_values)
        correlation = _Ratchet(CorrelatedObject(obj, old, self.schema) if ratcheting and old is not None else None)
        remaining = run.validate(self.root, path or fe.Path(), obj, old, correlation, budget)
        return ValidationResult(run.errors, run.warnings, run.log, remaining)


@dataclass(frozen=True)
class _Ratchet:
    """Upstream `ratchetingOptions`: the node's correlation, or the nearest correlated ancestor's."""

    current: CorrelatedObject | None = None
    parent: CorrelatedObject | None = None

    def should_ratchet(self) -> bool:
        if self.current is not None:
            return self.current.cached_deep_equal()
        return self.parent is not None and self.parent.cached_deep_equal()

    def key(self, name: str) -> _Ratchet:
        if self.current is None:
            return self
        if self.parent is None and name in ("apiVersion", "kind"):
            return _Ratchet()  # never ratcheted: both versions convert to the same apiVersion and kind
        return _Ratchet(self.current.key(name), self.current)

    def index(self, i: int) -> _Ratchet:
        if self.current is None:
            return self
        return _Ratchet(self.current.index(i), self.current)


class _Run:
    """One validation: collects errors and warnings; methods return the remaining budget (< 0: stop)."""

    def __init__(self, per_call_limit: int, types_as_values: bool = False) -> None:
        self.per_call_limit = per_call_limit
        self.types_as_values = types_as_values
        self.errors: list[fe.FieldError] = []
        self.warnings: list[str] = []
        self.log: list[str] = []

    def validate(self, node: _Node | None, path: fe.Path, obj: Any, old: Any, ratchet: _Ratchet, budget: int) -> int:
        if node is None or obj is None:
            return budget
        budget = self.expressions(node, path, obj, old, ratchet, budget)
        if budget < 0:
            return budget
        for entry in node.all_of:  # allOf errors are not ratcheted (as schema ratcheting does)
            budget = self.validate(entry, path, obj, old, _Ratchet(None, ratchet.parent), budget)
            if budget < 0:
                return budget
        if isinstance(obj, list):
            return self.array(node, path, obj, old if isinstance(old, list) else None, ratchet, budget)
        if isinstance(obj, Mapping):
            return self.object(node, path, obj, old if isinstance(old, Mapping) else None, ratchet, budget)
        return budget

    def object(
        self, node: _Node, path: fe.Path, obj: Mapping[str, Any], old: Mapping[str, Any] | None, ratchet: _Ratchet,
        budget: int,
    ) -> int:  # fmt: skip
        correlatable = node.schema.map_type in (None, "granular", "atomic")
        old_of: Callable[[str], Any] = (lambda k: old.get(k)) if correlatable and old is not None else (lambda k: None)
        if node.additional is not None:
            for key, value in obj.items():
                budget = self.validate(node.additional, path.key(key), value, old_of(key), ratchet.key(key), budget)
                if budget < 0:
                    return budget
        if node.properties:
            for key, value in obj.items():
                child = node.properties.get(key)
                if child is not None:
                    budget = self.validate(child, path.child(key), value, old_of(key), ratchet.key(key), budget)
                    if budget < 0:
                        return budget
        return budget

    def array(
        self, node: _Node, path: fe.Path, obj: list[Any], old: list[Any] | None, ratchet: _Ratchet, budget: int
    ) -> int:
        if node.items is None:
            return budget
        # Only map lists correlate items with old ones.
        old_items = MapListIndex(node.schema, old) if old and node.schema.list_type == "map" else None
        for i, item in enumerate(obj):
            old_item = old_items.get(item) if old_items is not None else None
            budget = self.validate(node.items, path.index(i), item, old_item, ratchet.index(i), budget)
            if budget < 0:
                return budget
        return budget

    def expressions(self, node: _Node, path: fe.Path, obj: Any, old: Any, ratchet: _Ratchet, budget: int) -> int:
        schema_type = node.schema.type
        if node.compile_error is not None:
            self.errors.append(
                fe.invalid(path, schema_type, f"rule compiler initialization error: {node.compile_error}")
            )
            return budget
        if not node.rules:
            return budget
        if budget <= 0:
            self.errors.append(fe.invalid(path, schema_type, OUT_OF_BUDGET))
            return -1
        decl = node.value_decl
        assert decl is not None
        this = _value(obj, decl)
        previous = _value(old, decl) if old is not None and node.uses_old_self else None
        for compiled in node.rules:
            rule = compiled.rule
            if compiled.error is not None:
                self.errors.append(fe.invalid(path, schema_type, f"rule compile error: {compiled.error}"))
                continue
            if compiled.program is None:
                continue  # a blank rule
            optional_old_self = bool(rule.optional_old_self)
            if compiled.uses_old_self and previous is None and not optional_old_self:
                continue  # a transition rule runs only where an old value correlates
            # oldSelf is bound only where an old value correlates; optionalOldSelf rules get an optional.
            activation: dict[str, Any] = {"self": this}
            if previous is not None:
                activation["oldSelf"] = previous
            rule_activation = activation
            if optional_old_self:
                held = NONE if previous is None else Optional(activation["oldSelf"])
                rule_activation = {**activation, "oldSelf": held}
            result, error, cost = _evaluate(compiled.program, rule_activation, self.per_call_limit)
            if isinstance(error, CostLimitExceeded):
                detail = f"'{error}': no further validation rules will be run due to call cost exceeds limit for rule: "
                self.errors.append(fe.invalid(path, schema_type, detail + _rule_text(rule)))
                return -1
            if cost > budget:
                self.errors.append(fe.invalid(path, schema_type, OUT_OF_BUDGET))
                return -1
            budget -= cost
            if error is not None:
                self.errors.append(fe.invalid(path, schema_type, _runtime_error_detail(error, rule)))
                continue
            if result is True:
                continue
            budget = self.failed(node, compiled, path, obj, activation, ratchet, budget)
            if budget < 0:
                return budget
        return budget

    def failed(
        self, node: _Node, compiled: CompiledRule, path: fe.Path, obj: Any, activation: dict[str, Any],
        ratchet: _Ratchet, budget: int,
    ) -> int:  # fmt: skip
        """Report a rule that evaluated to false, with its messageExpression, message or the rule text."""
        rule = compiled.rule
        error_path = path.child(compiled.field_path) if compiled.field_path else path
        ratcheted = not compiled.uses_old_self and ratchet.should_ratchet()

        def add(error: fe.FieldError) -> None:
            (self.warnings.append(str(error)) if ratcheted else self.errors.append(error))

        detail = None
        if compiled.message_program is not None:  # upstream gives it the non-optional activation, always
            message, error, cost = _evaluate(compiled.message_program, activation, self.per_call_limit)
            if isinstance(error, CostLimitExceeded):
                text = rule.message_expression or ""
                add(fe.invalid(error_path, node.schema.type, "no further validation rules will be run due to call "
                               f"cost exceeds limit for messageExpression: {fe.quote(text)}"))  # fmt: skip
                return -1
            if cost > budget:
                add(fe.invalid(error_path, node.schema.type, "messageExpression evaluation failed due to running out "
                               "of cost budget, no further validation rules will be run"))  # fmt: skip
                return -1
            budget -= cost
            detail, problem = _message_text(message, error)
            if problem is not None:
                self.log.append(problem)  # upstream only logs these, and falls back to the message
        if detail is None:
            detail = rule.message.strip() if rule.message else f"failed rule: {_rule_text(rule)}"
        if self.types_as_values:
            value = node.schema.type
        else:
            value = fe.OMIT if node.schema.type in ("object", "array") else obj
        add(_error_for_reason(error_path, value, detail, rule.reason))
        return budget


def _message_text(message: Any, error: EvalError | None) -> tuple[str | None, str | None]:
    """A messageExpression result as the error detail, or why it cannot be used (evalMessageExpression)."""
    if error is not None:
        return None, f"messageExpression evaluation failed due to: {error}"
    if not isinstance(message, str):
        return None, "messageExpression failed to convert to string"
    trimmed = message.strip()
    if len(trimmed.encode()) > MAX_MESSAGE_BYTES:
        return None, f"messageExpression beyond allowable length of {MAX_MESSAGE_BYTES}"
    if "\n" in trimmed:
        return None, "messageExpression should not contain line breaks"
    if not trimmed:
        return None, "messageExpression should evaluate to a non-empty string"
    return trimmed, None


def _value(data: Any, decl: DeclType) -> Any:
    """The CEL value of a node's data; data that does not fit the schema is kept as its error."""
    try:
        return convert(data, decl)
    except EvalError as err:
        return _Broken(err)


@dataclass(frozen=True)
class _Broken:
    """Data that does not match its schema: an error if a rule reads it."""

    error: EvalError


def _evaluate(program: Program, activation: dict[str, Any], limit: int) -> tuple[Any, EvalError | None, int]:
    for value in activation.values():
        if value.__class__ is _Broken:
            return None, value.error, 0
    try:
        result, cost = program.evaluate_with_cost(activation, cost_limit=limit)
    except EvalError as err:
        return None, err, err.cost or 0
    return result, None, cost


def _runtime_error_detail(error: EvalError, rule: ValidationRule) -> str:
    if str(error).startswith("no such overload"):
        return (
            f"'{error}': call arguments did not match a supported operator, function or macro signature "
            f"for rule: {_rule_text(rule)}"
        )
    return f"{error} evaluating rule: {_rule_text(rule)}"


def _rule_text(rule: ValidationRule) -> str:
    """ruleErrorString: the trimmed message if there is one, else the trimmed rule."""
    return rule.message.strip() if rule.message else rule.rule.strip()


def _error_for_reason(path: fe.Path, value: Any, detail: str, reason: str | None) -> fe.FieldError:
    if reason == "FieldValueForbidden":
        return fe.forbidden(path, detail)
    if reason == "FieldValueRequired":
        return fe.required(path, detail)
    if reason == "FieldValueDuplicate":
        return fe.duplicate(path, value)
    return fe.invalid(path, value, detail)
