"""CEL's operators as overloads (cel-go common/stdlib), so the checker can resolve them.

The implementations are kcel.eval.runtime's specialised functions; the planner emits the
dynamic helpers for `dyn` operands and these when the checker has fixed the overload.
"""

from __future__ import annotations

from typing import Any

from kcel.checker.types import (
    BOOL,
    BYTES,
    DOUBLE,
    INT,
    STRING,
    UINT,
    A,
    B,
    CelType,
    list_of,
    map_of,
)
from kcel.errors import EvalError
from kcel.eval import runtime
from kcel.libs import UNIT, CallEstimate, CallSite, CostEstimate, Library, Overload

_NUMERIC = (("int64", INT), ("uint64", UINT), ("double", DOUBLE))
_ORDERED = (*_NUMERIC, ("bool", BOOL), ("string", STRING), ("bytes", BYTES))  # timestamps: kcel.libs.timestamps
_CROSS = (("int64_double", INT, DOUBLE), ("int64_uint64", INT, UINT), ("uint64_double", UINT, DOUBLE),
          ("uint64_int64", UINT, INT), ("double_int64", DOUBLE, INT), ("double_uint64", DOUBLE, UINT))  # fmt: skip
_COMPARISONS = (("less", "_<_", runtime.less), ("less_equals", "_<=_", runtime.less_equals),
                ("greater", "_>_", runtime.greater), ("greater_equals", "_>=_", runtime.greater_equals))  # fmt: skip


def _arithmetic() -> list[Overload]:
    table = []
    for name, symbol, impl in (("add", "_+_", runtime.add), ("subtract", "_-_", runtime.subtract),
                               ("multiply", "_*_", runtime.multiply), ("divide", "_/_", runtime.divide)):  # fmt: skip
        table += [Overload(f"{name}_{suffix}", symbol, (t, t), t, impl) for suffix, t in _NUMERIC]
    table += [
        Overload("add_string", "_+_", (STRING, STRING), STRING, runtime.add),
        Overload("add_bytes", "_+_", (BYTES, BYTES), BYTES, runtime.add),
        Overload("add_list", "_+_", (list_of(A), list_of(A)), list_of(A), runtime.add),
        Overload("modulo_int64", "_%_", (INT, INT), INT, runtime.modulo),
        Overload("modulo_uint64", "_%_", (UINT, UINT), UINT, runtime.modulo),
        Overload("negate_int64", "-_", (INT,), INT, runtime.negate),
        Overload("negate_double", "-_", (DOUBLE,), DOUBLE, runtime.negate),
    ]
    return table


def _relations() -> list[Overload]:
    table = []
    for name, symbol, impl in _COMPARISONS:
        table += [
            Overload(f"{name}_{suffix}", symbol, (t, t), BOOL, impl,
                     estimate=compare_estimate if t in (STRING, BYTES) else None)
            for suffix, t in _ORDERED
        ]  # fmt: skip
        table += [Overload(f"{name}_{suffix}", symbol, (a, b), BOOL, impl) for suffix, a, b in _CROSS]
    return table


# -- estimated costs (cel-go checker/cost.go, with Kubernetes' EstimateCallCost for `_==_`) ---------

# Kubernetes types whose equality costs 1 (apiserver pkg/cel/library/cost.go).
_CONSTANT_EQUALITY = frozenset((
    "net.IP", "net.CIDR", "kubernetes.Quantity", "kubernetes.Semver", "kubernetes.authorization.Authorizer",
    "kubernetes.authorization.PathCheck", "kubernetes.authorization.GroupCheck",
    "kubernetes.authorization.ResourceCheck", "kubernetes.authorization.Decision",
))  # fmt: skip
_MAX_FORMAT_SIZE = 64  # apiserver pkg/cel/limits.go


def compare_estimate(call: CallSite) -> CallEstimate:
    """Strings and bytes compare up to the shorter one's size; other values cost 1 (sizes of 1)."""
    smallest = min(call.size(0).max, call.size(1).max)
    return CallEstimate(CostEstimate(1 if smallest > 0 else 0, smallest).times(0.1))


def equals_estimate(call: CallSite) -> CallEstimate:
    left = call.type(0)
    if left == call.type(1):
        if left.name in _CONSTANT_EQUALITY:
            return CallEstimate(UNIT)
        if left.name == "kubernetes.NamedFormat":
            return CallEstimate(CostEstimate(1, _MAX_FORMAT_SIZE).times(0.1))
        if left.name == "kubernetes.URL":
            right = call.computed_size(1)  # upstream unions the right operand's size with itself
            return CallEstimate(CostEstimate(1, right.max if right is not None else 1).times(0.1))
    return compare_estimate(call)


def _in_list_estimate(call: CallSite) -> CallEstimate:
    """Every element may be compared (a constant list is O(1) at run time, not here)."""
    return CallEstimate(call.size(1).times(1))


def _unsupported(*_: Any) -> Any:
    raise EvalError("no such overload")


def _logic() -> list[Overload]:
    return [
        Overload("logical_and", "_&&_", (BOOL, BOOL), BOOL, _unsupported),
        Overload("logical_or", "_||_", (BOOL, BOOL), BOOL, _unsupported),
        Overload("logical_not", "!_", (BOOL,), BOOL, runtime.logical_not),
        Overload("not_strictly_false", "@not_strictly_false", (BOOL,), BOOL, runtime.not_strictly_false),
        Overload("conditional", "_?_:_", (BOOL, A, A), A, _unsupported),
        Overload("equals", "_==_", (A, A), BOOL, runtime.equals, estimate=equals_estimate),
        Overload("not_equals", "_!=_", (A, A), BOOL, runtime.not_equals, estimate=compare_estimate),
        Overload("index_list", "_[_]", (list_of(A), INT), A, runtime.index),
        Overload("index_map", "_[_]", (map_of(A, B), A), B, runtime.index),
        Overload("in_list", "@in", (A, list_of(A)), BOOL, runtime.in_container, estimate=_in_list_estimate),
        Overload("in_map", "@in", (A, map_of(A, B)), BOOL, runtime.in_container),
    ]


_ORDER_SUFFIXES = ("bool", "int64", "int64_double", "int64_uint64", "uint64", "uint64_double", "uint64_int64", "double",
                   "double_int64", "double_uint64", "string", "bytes", "timestamp", "duration")  # fmt: skip
DECLARATION_ORDER: dict[str, tuple[str, ...]] = {
    "_+_": ("add_bytes", "add_double", "add_duration_duration", "add_duration_timestamp", "add_timestamp_duration",
            "add_int64", "add_list", "add_string", "add_uint64"),
    "_-_": ("subtract_double", "subtract_duration_duration", "subtract_int64", "subtract_timestamp_duration",
            "subtract_timestamp_timestamp", "subtract_uint64"),
    "_*_": ("multiply_double", "multiply_int64", "multiply_uint64"),
    "_/_": ("divide_double", "divide_int64", "divide_uint64"),
    "-_": ("negate_double", "negate_int64"),
    **{symbol: tuple(f"{name}_{suffix}" for suffix in _ORDER_SUFFIXES) for name, symbol, _ in _COMPARISONS},
}  # fmt: skip
"""The operators' overloads in cel-go's order of declaration (common/stdlib/standard.go, the same since v0.17): an
operand whose type is still a parameter takes the type of the first overload it fits (`[][0] + [][1]` is bytes,
`{}.c + duration('1s')` a duration)."""


def cross_type_comparisons() -> frozenset[str]:
    """Overload ids that only exist with `CrossTypeNumericComparisons` (Kubernetes 1.28+)."""
    return frozenset(f"{name}_{suffix}" for name, _, _ in _COMPARISONS for suffix, _, _ in _CROSS)


def _all() -> tuple[Overload, ...]:
    return tuple(_arithmetic() + _relations() + _logic())


LIBRARY = Library("operators", overloads=_all())

__all__ = ["DECLARATION_ORDER", "LIBRARY", "CelType", "cross_type_comparisons"]
