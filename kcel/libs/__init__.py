"""Function libraries, each one declarative table that the checker, planner and cost model read.

A library module ends with `LIBRARY = Library(...)`: its overloads (signature, Python
implementation, runtime cost) and any macros it brings. The row types are `kcel.checker.decls`'s,
re-exported here with the helpers library modules share. `kcel.env.CEL_LIBRARY_MODULES` and
`kcel.k8s.environment` list the libraries explicitly; environments pick from them by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kcel.checker.decls import (
    FREE,
    NOT_LITERAL,
    UINT64_MAX,
    UNIT,
    UNKNOWN_SIZE,
    CallEstimate,
    CallSite,
    ConstantCheck,
    CostEstimate,
    Estimate,
    Library,
    Overload,
    RuntimeCost,
    SizedCall,
    SizeEstimate,
    cost_factor,
    int_literal,
)
from kcel.eval.sizes import actual_size

__all__ = [
    "FREE", "NOT_LITERAL", "UINT64_MAX", "UNIT", "UNKNOWN_SIZE", "CallEstimate", "CallSite", "ConstantCheck",
    "CostEstimate", "Estimate", "Library", "Overload", "RuntimeCost", "SizeEstimate", "SizedCall", "cost_factor",
    "int_literal", "size_cost", "size_estimate", "unit_cost", "unit_estimate",
]  # fmt: skip


def size_cost(factor: float, arg: int = 0) -> RuntimeCost:
    """ceil(size(args[arg]) * factor): cel-go's usual formula for string and bytes functions."""

    def cost(args: Sequence[Any], result: Any) -> int:
        return cost_factor(actual_size(args[arg]), factor)

    return cost


def unit_cost(args: Sequence[Any], result: Any) -> int:
    return 1


def size_estimate(factor: float, arg: int = 0, result_size: bool = False) -> Estimate:
    """The estimate matching `size_cost`: the factor applied to both ends of the argument's size
    (which is also the result's size when `result_size`)."""

    def estimate(call: CallSite) -> CallEstimate:
        size = call.size(arg)
        return CallEstimate(size.times(factor), size if result_size else None)

    return estimate


def unit_estimate(call: CallSite) -> CallEstimate:
    return CallEstimate(UNIT)
