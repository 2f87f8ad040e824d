"""Static cost estimation: cel-go's worst-case estimator (checker/cost.go) over a checked expression.

`estimate(checked, overloads, sizes)` walks the checked AST once and returns the (min, max) cost in
cel-go's units, exactly as `env.EstimateCost` does with Kubernetes' `library.CostEstimator`: each
call asks its overload's `estimate` from the library table, then cel-go's built-in formulas, then 1.
Sizes come from the expression (literals, concatenations, comprehensions) and, for variables typed by
an OpenAPI schema, from a `SizeEstimator` that walks the field path (`self.spec.items.@items`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kcel.checker.checker import Checked
from kcel.checker.decls import (
    FREE,
    NOT_LITERAL,
    UINT64_MAX,
    UNIT,
    UNKNOWN_SIZE,
    CallEstimate,
    CostEstimate,
    Overload,
    SizeEstimate,
)
from kcel.checker.types import DYN, CelType
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
)

__all__ = ["CostEstimate", "SizeEstimate", "SizeEstimator", "StringSizes", "estimate"]

Path = tuple[str, ...]
LIST_CREATE_BASE_COST = CostEstimate(10, 10)
MAP_CREATE_BASE_COST = CostEstimate(30, 30)
STRUCT_CREATE_BASE_COST = CostEstimate(40, 40)
STRING_TRAVERSAL_FACTOR = 0.1
_ACCUMULATORS = ("@result", "__result__")
_SCALARS = frozenset(("bool", "int", "uint", "double", "google.protobuf.Duration", "google.protobuf.Timestamp"))
# Calls the checker resolves without an overload table; cel-go gives them overloads with no formula (cost 1).
_UNTABLED = frozenset(("_?._", "_[?_]", "_[_]", "cel.@mapInsert", "cel.@block"))


class SizeEstimator(Protocol):
    """Sizes of what the expression cannot bound itself (cel-go `CostEstimator.EstimateSize`)."""

    def estimate_size(self, path: Path, type: CelType) -> SizeEstimate | None:
        """The size of the value at a field path (`("self", "spec", "items", "@items")`; `()` if the
        node has none) of the given type, or None when unknown."""


@dataclass(frozen=True)
class StringSizes:
    """Every string or bytes value whose size is not known is at most `max` long (Kubernetes' cost tests)."""

    max: int

    def estimate_size(self, path: Path, type: CelType) -> SizeEstimate | None:
        return SizeEstimate(0, self.max) if type.name in ("string", "bytes") else None


@dataclass(frozen=True, slots=True)
class _EntrySize:
    """The sizes of a list's (index, element) or a map's (key, value), when both are known."""

    container: str  # "list" or "map"
    key: SizeEstimate
    value: SizeEstimate

    def union(self, other: _EntrySize | None) -> _EntrySize | None:
        if other is None:
            return None
        return _EntrySize(self.container, self.key.union(other.key), self.value.union(other.value))


@dataclass(frozen=True, slots=True)
class _Local:
    """A comprehension variable or bound name: the path its sizes are asked for by, and the sizes known."""

    path: Path
    size: SizeEstimate | None
    entry: _EntrySize | None


def estimate(
    checked: Checked,
    overloads: Mapping[str, Overload],
    sizes: SizeEstimator | None = None,
    presence_test_cost: int = 0,
    tracks_sizes: bool = True,
) -> CostEstimate:
    """The (min, max) cost of a checked expression; `overloads` maps overload ids to the library tables.

    `presence_test_cost` is what `has()` adds: Kubernetes sets cel-go's PresenceTestHasCost(false), i.e. 0.
    `tracks_sizes`: cel-go v0.23's estimator (Kubernetes 1.33): `dyn(x)` has the size of `x`, and the sizes of list
    and map entries follow literals, local variables and comprehensions. Before, `dyn(x)` is a call like any other,
    an entry's size is known only from its path (Kubernetes' schema) and a comprehension has its range's size.

    >>> import kcel
    >>> env = kcel.Env(variables={"s": "string"}, k8s_version="1.35")
    >>> env.estimate_cost(env.compile("s.contains('abc')"), sizes=StringSizes(100))
    CostEstimate(min=2, max=12)
    """
    presence = CostEstimate(presence_test_cost, presence_test_cost)
    return _Estimator(checked, overloads, sizes, presence, tracks_sizes).cost(checked.parsed.expr)


class _Estimator:
    """One walk of cel-go's `coster`: costs bottom-up, recording paths and sizes on the way."""

    def __init__(
        self,
        checked: Checked,
        overloads: Mapping[str, Overload],
        sizes: SizeEstimator | None,
        presence_test_cost: CostEstimate,
        tracks_sizes: bool = True,
    ) -> None:
        self.types = checked.types
        self.tracks_sizes = tracks_sizes
        self.chosen = checked.overloads
        self.overloads = overloads
        self.sizes = sizes
        self.presence_test_cost = presence_test_cost
        self.paths: dict[int, Path] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.computed: dict[int, SizeEstimate] = {}
        self.entries: dict[int, _EntrySize] = {}

    # -- nodes -------------------------------------------------------------------------------

    def cost(self, node: Expr) -> CostEstimate:
        if isinstance(node, Const):
            return FREE
        if isinstance(node, Ident):
            return self.ident(node, node.name)
        if isinstance(node, Select):
            return self.select(node)
        if isinstance(node, Call):
            return self.call(node)
        if isinstance(node, CreateList):
            return self.create_list(node)
        if isinstance(node, CreateMap):
            return self.create_map(node)
        if isinstance(node, CreateStruct):
            return sum_costs(self.cost(f.value) for f in node.fields).add(STRUCT_CREATE_BASE_COST)
        if self.is_bind(node):
            return self.bind(node)
        return self.comprehension(node)

    def ident(self, node: Expr, name: str) -> CostEstimate:
        local = self.local(name)
        self.paths[node.id] = local.path if local is not None else (name,)
        return UNIT

    def select(self, node: Select) -> CostEstimate:
        if node.operand.id not in self.types and not node.test_only:  # a dotted name the checker resolved whole
            return self.ident(node, _dotted(node))
        if node.test_only:
            return self.presence_test_cost.add(self.cost(node.operand))
        cost = self.cost(node.operand)
        if self.type(node.operand).kind in ("map", "message", "param"):
            cost = cost.add(UNIT)
        self.paths[node.id] = (*self.path(node.operand), node.field)
        return cost

    def call(self, node: Call) -> CostEstimate:
        target = node.target if node.target is not None and node.target.id in self.types else None
        args = node.args
        if node.function == "dyn" and target is None and len(args) == 1 and self.tracks_sizes:
            cost = self.cost(args[0])
            self.copy_sizes(node, args[0])
            return UNIT.add(cost)
        arg_costs = [self.cost(a) for a in args]
        ids = self.chosen.get(node.id, ())
        if not ids and node.function not in _UNTABLED:
            return FREE
        cost = self.cost(target) if target is not None else FREE
        site = _Site(self, (target, *args) if target is not None else args)
        function_cost: CostEstimate | None = None
        result: SizeEstimate | None = None
        for overload_id in ids or ("",):
            call = self.function_cost(node, overload_id, site, target is not None, arg_costs)
            function_cost = call.cost if function_cost is None else function_cost.union(call.cost)
            if call.result_size is not None:
                result = call.result_size if result is None else result.union(call.result_size)
            if overload_id in ("index_list", "index_map") and args:
                entry = self.entry_size(args[0])
                result = entry.value if entry is not None else None
                self.paths[node.id] = (*self.path(args[0]), "@items" if overload_id == "index_list" else "@values")
            if result is None:
                result = self.size(node)
        self.set_size(node, result)
        assert function_cost is not None
        return cost.add(function_cost)

    def function_cost(
        self, node: Call, overload_id: str, site: _Site, member: bool, arg_costs: Sequence[CostEstimate]
    ) -> CallEstimate:
        """cel-go's functionCost: the library's estimate, else a built-in formula, else 1; plus the arguments."""
        arguments = sum_costs(arg_costs)
        overload = self.overloads.get(overload_id)
        if overload is not None and overload.estimate is not None:
            found = overload.estimate(site)
            if found is not None:
                return CallEstimate(found.cost.add(arguments), found.result_size)
        if overload_id in ("logical_and", "logical_or"):
            lhs, rhs = arg_costs
            return CallEstimate(CostEstimate(lhs.min, lhs.add(rhs).max))
        if overload_id == "conditional":
            return self.conditional(node, arg_costs)
        if overload_id in ("add_string", "add_bytes", "add_list") and len(node.args) == 2:
            return self.concatenation(node, overload_id, arguments)
        return CallEstimate(UNIT.add(arguments))

    def conditional(self, node: Call, arg_costs: Sequence[CostEstimate]) -> CallEstimate:
        _, then, otherwise = node.args
        size = self.size_or_unknown(then).union(self.size_or_unknown(otherwise))
        entry = self.entry_size(then)
        self.set_entry(node, entry.union(self.entry_size(otherwise)) if entry is not None else None)
        return CallEstimate(arg_costs[0].add(arg_costs[1].union(arg_costs[2])), size)

    def concatenation(self, node: Call, overload_id: str, arguments: CostEstimate) -> CallEstimate:
        left, right = node.args
        size = self.size_or_unknown(left).add(self.size_or_unknown(right))
        entry = self.entry_size(left)
        if entry is not None:
            self.set_entry(node, entry.union(self.entry_size(right)))
        if overload_id == "add_list":
            return CallEstimate(UNIT.add(arguments), size)  # O(1), tracked for the size
        return CallEstimate(size.times(STRING_TRAVERSAL_FACTOR).add(arguments), size)

    def create_list(self, node: CreateList) -> CostEstimate:
        cost = FREE
        item = SizeEstimate(0 if not node.elements else UINT64_MAX, 0)
        for element in node.elements:
            cost = cost.add(self.cost(element))
            item = item.union(self.size_or_unknown(element))
        self.set_entry(node, _EntrySize("list", SizeEstimate(1, 1), item))
        return cost.add(LIST_CREATE_BASE_COST)

    def create_map(self, node: CreateMap) -> CostEstimate:
        cost = FREE
        low = 0 if not node.entries else UINT64_MAX
        key, value = SizeEstimate(low, 0), SizeEstimate(low, 0)
        for entry in node.entries:
            cost = cost.add(self.cost(entry.key)).add(self.cost(entry.value))
            key = key.union(self.size_or_unknown(entry.key))
            value = value.union(self.size_or_unknown(entry.value))
        self.set_entry(node, _EntrySize("map", key, value))
        return cost.add(MAP_CREATE_BASE_COST)

    def comprehension(self, node: Comprehension) -> CostEstimate:
        cost = self.cost(node.iter_range).add(self.cost(node.accu_init))
        self.push_local(node.accu_var, node.accu_init)
        if node.iter_var2:
            self.push_iteration(node.iter_var, node.iter_range, "key")
            self.push_iteration(node.iter_var2, node.iter_range, "value")
        else:
            self.push_iteration(node.iter_var, node.iter_range, "single")
        loop = self.cost(node.loop_condition)
        step = self.cost(node.loop_step)
        self.pop_local(node.iter_var)
        if node.iter_var2:
            self.pop_local(node.iter_var2)
        cost = cost.add(self.cost(node.result))
        self.pop_local(node.accu_var)
        count = self.size_or_unknown(node.iter_range)
        cost = cost.add(count.cost(step.add(loop)))
        if not self.tracks_sizes:
            self.set_size(node, count)
        elif isinstance(node.accu_init, Const):
            self.set_size(node, self.size(node.accu_init))
        elif isinstance(node.accu_init, (CreateList, CreateMap)):
            self.set_size(node, count)
            self.set_entry(node, self.entry_size(node.loop_step))
        return cost

    def is_bind(self, node: Comprehension) -> bool:
        """`cel.bind` and similar folds that never iterate: an empty range and a `false` condition."""
        condition = node.loop_condition
        return (
            isinstance(node.iter_range, CreateList)
            and not node.iter_range.elements
            and isinstance(condition, Const)
            and condition.value is False
            and node.accu_var != "__result__"
        )

    def bind(self, node: Comprehension) -> CostEstimate:
        cost = self.cost(node.iter_range).add(self.cost(node.accu_init))  # bindings are lazy: the range stays
        self.push_local(node.accu_var, node.accu_init)
        cost = cost.add(self.cost(node.result))
        self.pop_local(node.accu_var)
        self.copy_sizes(node, node.result)
        return cost

    # -- local variables ---------------------------------------------------------------------

    def local(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def push_local(self, name: str, value: Expr) -> None:
        if not self.tracks_sizes:  # a name of its own, sized only by an estimator that knows it
            self.locals.setdefault(name, []).append(_Local((name,), None, None))
            return
        self.locals.setdefault(name, []).append(_Local(self.path(value), self.size(value), self.entry_size(value)))

    def push_iteration(self, name: str, range_: Expr, role: str) -> None:
        """An iteration variable: its path is the range's plus `@items`/`@indices` (lists) or `@keys`/`@values`."""
        entry = self.entry_size(range_)
        container = entry.container if entry is not None else self.type(range_).kind
        is_list = container == "list"
        if role == "key":
            size, step = (entry.key if entry else None), ("@indices" if is_list else "@keys")
        elif role == "value":
            size, step = (entry.value if entry else None), ("@items" if is_list else "@values")
        else:
            size = (entry.value if is_list else entry.key) if entry else None
            step = "@items" if is_list else "@keys"
        self.locals.setdefault(name, []).append(_Local((*self.path(range_), step), size, None))

    def pop_local(self, name: str) -> None:
        self.locals[name].pop()

    # -- paths, types and sizes ----------------------------------------------------------------

    def path(self, node: Expr) -> Path:
        if isinstance(node, Ident):
            local = self.local(node.name)
            if local is not None:
                return local.path
        return self.paths.get(node.id, ())

    def type(self, node: Expr) -> CelType:
        return self.types.get(node.id, DYN)

    def set_size(self, node: Expr, size: SizeEstimate | None) -> None:
        if size is not None:
            self.computed[node.id] = size

    def set_entry(self, node: Expr, entry: _EntrySize | None) -> None:
        if entry is not None and self.tracks_sizes:
            self.entries[node.id] = entry

    def copy_sizes(self, target: Expr, source: Expr) -> None:
        self.set_size(target, self.size(source))
        self.set_entry(target, self.entry_size(source))

    def entry_size(self, node: Expr) -> _EntrySize | None:
        found = self.entries.get(node.id)
        if found is None and isinstance(node, Ident):
            local = self.local(node.name)
            return local.entry if local is not None else None
        return found

    def size(self, node: Expr) -> SizeEstimate | None:
        """cel-go computeSize: recorded, literal, schema, scalar type, then a local variable's size."""
        found = self.computed.get(node.id)
        if found is not None:
            return found
        literal = _literal_size(node)
        if literal is not None:
            return literal
        t = self.type(node)
        if self.sizes is not None:
            estimated = self.sizes.estimate_size(self.path(node), t)
            if estimated is not None:
                self.computed[node.id] = estimated
                return estimated
        if _is_scalar(t, optionals=self.tracks_sizes):
            return SizeEstimate(1, 1)
        if isinstance(node, Ident):
            local = self.local(node.name)
            if local is not None:
                return local.size
        return None

    def size_or_unknown(self, node: Expr) -> SizeEstimate:
        size = self.size(node)
        return size if size is not None else UNKNOWN_SIZE

    def element_size(self, node: Expr) -> SizeEstimate:
        """Kubernetes' listElementNode: the first type parameter's size at `<path>.@items` (none without a path)."""
        t = self.type(node)
        if not t.params or self.sizes is None:
            return UNKNOWN_SIZE
        path = self.argument_path(node)
        found = self.sizes.estimate_size((*path, "@items") if path else (), t.params[0])
        return found if found is not None else UNKNOWN_SIZE

    def argument_path(self, node: Expr) -> Path:
        """A call argument's path as estimators see it: none when rooted at an accumulator."""
        path = self.path(node)
        return () if path and path[0] in _ACCUMULATORS else path


class _Site:
    """The `CallSite` an overload's estimate sees: one call's arguments, receiver first."""

    def __init__(self, estimator: _Estimator, args: Sequence[Expr]) -> None:
        self.estimator, self.args = estimator, args

    def __len__(self) -> int:
        return len(self.args)

    def size(self, i: int) -> SizeEstimate:
        return self.estimator.size_or_unknown(self.args[i])

    def computed_size(self, i: int) -> SizeEstimate | None:
        return self.estimator.size(self.args[i])

    def literal(self, i: int) -> Any:
        node = self.args[i]
        return node.value if isinstance(node, Const) else NOT_LITERAL

    def type(self, i: int) -> CelType:
        return self.estimator.type(self.args[i])

    def element_size(self, i: int) -> SizeEstimate:
        return self.estimator.element_size(self.args[i])


def sum_costs(costs: Any) -> CostEstimate:
    total = FREE
    for cost in costs:
        total = total.add(cost)
    return total


def _dotted(node: Expr) -> str:
    parts = []
    while isinstance(node, Select):
        parts.append(node.field)
        node = node.operand
    assert isinstance(node, Ident)
    parts.append(node.name.lstrip("."))
    return ".".join(reversed(parts))


def _literal_size(node: Expr) -> SizeEstimate | None:
    if isinstance(node, Const):
        value = node.value
        if isinstance(value, str):
            return SizeEstimate(len(value), len(value))
        if isinstance(value, bytes):
            return SizeEstimate(len(value), len(value))
        return SizeEstimate(1, 1)  # null, bool, int, uint, double
    if isinstance(node, CreateList):
        return SizeEstimate(len(node.elements), len(node.elements))
    if isinstance(node, CreateMap):
        return SizeEstimate(len(node.entries), len(node.entries))
    return None


def _is_scalar(t: CelType, optionals: bool = True) -> bool:
    """cel-go's isScalar; an optional of a scalar is one since cel-go v0.23 (Kubernetes 1.33), not before."""
    if t.name == "optional_type" and t.params:
        return optionals and _is_scalar(t.params[0])
    return t.name in _SCALARS and t.kind in ("primitive", "opaque")
