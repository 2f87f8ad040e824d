"""Function libraries, each one declarative table that the checker, planner and cost model read.

A library module ends with `LIBRARY = Library(...)`: its overloads (signature, Python
implementation, runtime cost) and any macros it brings. `LIBRARIES` below lists them all
explicitly; environments pick from it by name.
"""

from __future__ import annotations

import math as _math  # plain `math` would be replaced by the kcel.libs.math submodule
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kcel.checker.types import CelType
from kcel.parser.macros import Macro

RuntimeCost = Callable[[Sequence[Any], Any], int]
"""Runtime cost of one call: (argument values, receiver first; result) -> cost in cel-go units."""


@dataclass(frozen=True, slots=True)
class SizeEstimate:
    """The smallest and largest size (code points, elements, entries) a value may have."""

    min: int
    max: int


@dataclass(frozen=True, slots=True)
class CostRange:
    min: int
    max: int


EstimatedCost = Callable[[Sequence[SizeEstimate]], CostRange]
"""Static cost of one call from the size estimates of its arguments (receiver first), cel-go's
`CostEstimator.EstimateCallCost`. None means the estimator's default (1)."""


@dataclass(frozen=True, slots=True)
class Overload:
    """One overload of a CEL function.

    `args` include the receiver first when `member` is true. `impl` takes the argument values
    (receiver first) and returns the result or raises `kcel.errors.EvalError`. `cost` is the
    runtime cost; None means cel-go's default of 1.
    """

    id: str
    function: str
    args: tuple[CelType, ...]
    result: CelType
    impl: Callable[..., Any]
    member: bool = False
    cost: RuntimeCost | None = None
    doc: str = ""
    estimate: EstimatedCost | None = None
    constant_check: ConstantCheck | None = None


@dataclass(frozen=True, slots=True)
class ConstantCheck:
    """A check the planner runs on a literal argument (cel-go's regex precompilation).

    When argument `position` (the receiver is 0) is a literal, `check(value)` runs once at plan
    time; an exception fails the program ("program instantiation failed"), before any evaluation.
    """

    position: int
    check: Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Library:
    name: str
    overloads: tuple[Overload, ...] = ()
    macros: tuple[Macro, ...] = ()
    constants: dict[str, Any] = field(default_factory=dict)
    types: tuple[CelType, ...] = ()
    """Opaque types the library declares; their names become type identifiers (`net.IP`)."""


UINT64_MAX = 2**64 - 1


def cost_factor(size: float, factor: float) -> int:
    """cel-go's multiplyByCostFactor: ceil(size * factor), saturating at 2^64-1."""
    cost = _math.ceil(float(size) * factor)
    return UINT64_MAX if cost >= 2**64 else cost


def size_cost(factor: float, arg: int = 0) -> RuntimeCost:
    """ceil(size(args[arg]) * factor): cel-go's usual formula for string and bytes functions."""
    from kcel.eval.sizes import actual_size

    def cost(args: Sequence[Any], result: Any) -> int:
        return cost_factor(actual_size(args[arg]), factor)

    return cost


def unit_cost(args: Sequence[Any], result: Any) -> int:
    return 1


def size_estimate(factor: float, arg: int = 0) -> EstimatedCost:
    """The estimate matching `size_cost`: the factor applied to both ends of the size range."""

    def estimate(sizes: Sequence[SizeEstimate]) -> CostRange:
        return CostRange(cost_factor(sizes[arg].min, factor), cost_factor(sizes[arg].max, factor))

    return estimate


def unit_estimate(sizes: Sequence[SizeEstimate]) -> CostRange:
    return CostRange(1, 1)
