"""cel-go's lists extension (versions 0-3): slice, flatten, sort, sortBy, lists.range, reverse, distinct."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from kcel.checker.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    STRING,
    TIMESTAMP,
    UINT,
    CelType,
    T,
    list_of,
)
from kcel.errors import EvalError, RecoveredPanic
from kcel.eval.runtime import go_type, type_name
from kcel.eval.sizes import actual_size, refuse_oversized
from kcel.libs import (
    CallEstimate,
    CallSite,
    CostEstimate,
    Estimate,
    Library,
    Overload,
    RuntimeCost,
    SizeEstimate,
    int_literal,
)
from kcel.libs.sets import Members
from kcel.parser.macros import LISTS
from kcel.values import UINT64_MAX, Uint

__all__ = ["LIBRARY", "MAX_RANGE_SIZE", "library"]

MAX_RANGE_SIZE = 1_000_000
"""cel-go's default `ListsMaxRangeSize`, which Kubernetes does not change."""

SORTABLE: tuple[CelType, ...] = (INT, UINT, DOUBLE, BOOL, DURATION, TIMESTAMP, STRING, BYTES)
"""cel-go's comparableTypes, in its order; each gets its own sort overload id."""

_LIST_CREATE_COST = 10  # common.ListCreateBaseCost
_CALL_COST = 1
_CALL_AND_LIST_ESTIMATE = CostEstimate(_CALL_COST + _LIST_CREATE_COST, _CALL_COST + _LIST_CREATE_COST)
_STRING_TRAVERSAL_FACTOR = 0.1


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple))


# -- slice, reverse, range -----------------------------------------------------------------


def list_slice(values: Sequence[Any], start: int, end: int) -> list[Any]:
    if start < 0 or end < 0:
        raise EvalError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise EvalError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if len(values) < end:
        raise EvalError(f"cannot slice({start}, {end}), list is length {len(values)}")
    return list(values[start:end])


def list_reverse(values: Sequence[Any]) -> list[Any]:
    return list(reversed(values))


def lists_range(n: int) -> list[int]:
    if n < 0:
        raise EvalError(f"lists.range: size must be non-negative, got {n}")
    if n > MAX_RANGE_SIZE:
        raise EvalError(f"lists.range: size {n} exceeds maximum allowed ({MAX_RANGE_SIZE})")
    return list(range(n))


# -- flatten -------------------------------------------------------------------------------


def _flatten(values: Sequence[Any], depth: int, out: list[Any]) -> list[Any]:
    refuse_oversized(len(out), "flatten", "elements")  # its cost does not count the elements of the sublists
    for value in values:
        if depth > 0 and _is_list(value):
            _flatten(value, depth - 1, out)
        else:
            out.append(value)
    return out


def list_flatten(values: Any) -> list[Any]:
    """One level. cel-go runs this without type guards, so a `dyn` receiver that is no list gets its own error."""
    if not _is_list(values):
        raise EvalError(f"no such overload: {type_name(values)}.flatten()")
    return _flatten(values, 1, [])


def list_flatten_int(values: Any, depth: Any) -> list[Any]:
    if not _is_list(values) or not isinstance(depth, int) or isinstance(depth, (bool, Uint)):
        raise EvalError(f"no such overload: {type_name(values)}.flatten({type_name(depth)})")
    if depth < 0:
        raise EvalError("level must be non-negative")
    return _flatten(values, depth, [])


# -- distinct ------------------------------------------------------------------------------


def list_distinct(values: Sequence[Any]) -> Sequence[Any]:
    """Keep the first of each group of CEL-equal elements (so `[1, 1.0, 1u]` gives `[1]`)."""
    seen = Members()
    out = []
    for value in values:
        if not seen.contains(value):
            seen.add(value)
            out.append(value)
    return out if values else values


# -- sort and sortBy -----------------------------------------------------------------------


def _kind(value: Any) -> type:
    """The runtime type cel-go compares in `list elements must have the same type` (bool is not int here)."""
    for kind in (bool, Uint, int, float, str, bytes):
        if isinstance(value, kind):
            return kind
    return type(value)


_UNORDERED: Any = vars(object)["__lt__"]  # what a class without an ordering inherits


def _is_comparable(value: Any) -> bool:
    """cel-go's traits.Comparer: scalars, and kcel value classes that define an ordering (timestamp, duration)."""
    if value is None or isinstance(value, (list, tuple, Mapping)):
        return False
    return isinstance(value, (int, float, str, bytes)) or getattr(type(value), "__lt__", None) is not _UNORDERED


def _check_keys(keys: Sequence[Any]) -> None:
    if not _is_comparable(keys[0]):
        raise EvalError("list elements must be comparable")
    kind = _kind(keys[0])
    # Go's sort compares every element at least once, so any odd one out is found.
    if len(keys) > 1 and any(_kind(key) is not kind for key in keys):
        raise EvalError("list elements must have the same type")


def _sorted_order(keys: Sequence[Any]) -> list[int]:
    """Indices of `keys` in the order Go's `sort.Slice` leaves them.

    With distinct keys every correct sort agrees, so Python's sort is used; ties and NaNs make
    the unstable pdqsort observable (sortBy), and then Go's algorithm is replayed.
    """
    order = sorted(range(len(keys)), key=keys.__getitem__)
    if all(keys[i] < keys[j] for i, j in zip(order, order[1:], strict=False)):
        return order
    return _GoSorter(keys).sort()


def list_sort_by_associated_keys(values: Sequence[Any], keys: Sequence[Any]) -> Sequence[Any]:
    """`sortBy`'s expansion: order `values` by the parallel list of `keys`."""
    if len(values) != len(keys):
        raise EvalError(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, "
            f"but got {len(values)} and {len(keys)} elements respectively"
        )
    if not values:
        return values
    _check_keys(keys)
    return [values[i] for i in _sorted_order(keys)]


def list_sort(values: Sequence[Any]) -> Sequence[Any]:
    """Sort comparable elements of one type.

    Equal ints, strings, bytes or bools are indistinguishable, so any sort will do; equal doubles
    (±0.0, NaN) and timestamps (offsets) are not, and need Go's order.
    """
    if not values:
        return values
    _check_keys(values)
    if isinstance(values[0], (int, str, bytes)):
        return sorted(values)
    return [values[i] for i in _sorted_order(values)]


_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2  # Go's sortedHint


# Ported from Go's src/sort/zsortfunc.go (pdqsort, Go 1.19+).
# Copyright 2022 The Go Authors. All rights reserved. Use of this source code is governed by a BSD-style licence:
# Go's licence text is in kcel/THIRD_PARTY_NOTICES.txt, shipped with the package.
class _GoSorter:
    """Go's `sort.Slice` (pattern-defeating quicksort, Go 1.19+) over an index list, replayed step for step.

    Only needed when equal keys make the result depend on the algorithm; `less` is CEL's
    `compare(a, b) == -1`, which is false whenever a NaN is involved.
    """

    def __init__(self, keys: Sequence[Any]) -> None:
        self.keys = keys
        self.idx = list(range(len(keys)))

    def less(self, i: int, j: int) -> bool:
        return bool(self.keys[self.idx[i]] < self.keys[self.idx[j]])

    def swap(self, i: int, j: int) -> None:
        idx = self.idx
        idx[i], idx[j] = idx[j], idx[i]

    def sort(self) -> list[int]:
        n = len(self.idx)
        self.pdqsort(0, n, n.bit_length())
        return self.idx

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        hi = b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, a)
        for i in range(hi - 1, -1, -1):
            self.swap(a, a + i)
            self.sift_down(0, i, a)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced, was_partitioned = True, True
        while True:
            length = b - a
            if length <= 12:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, was_partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i, j = i + 1, j - 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i, j = i + 1, j - 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i, j = i + 1, j - 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(5):  # at most 5 adjacent out-of-order pairs are shifted
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < 50:  # short slices are not shifted
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                for j in range(i - 1, 0, -1):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:
                for j in range(i + 1, b):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length  # Go seeds its xorshift with the length, so the scatter is deterministic
        mask = (1 << length.bit_length()) - 1
        middle = a + (length // 4) * 2
        for idx in range(middle - 1, middle + 2):
            state ^= (state << 13) & UINT64_MAX
            state ^= state >> 17
            state ^= (state << 5) & UINT64_MAX
            other = state & mask
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        length = b - a
        swaps = [0]
        i, j, k = a + length // 4, a + length // 4 * 2, a + length // 4 * 3
        if length >= 8:
            if length >= 50:  # Tukey's ninther
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        return j, _DECREASING if swaps[0] == 12 else _UNKNOWN

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i, j = i + 1, j - 1


# -- runtime costs (cel-go ext/lists.go track*, version 3) ----------------------------------


def _allocating_call(factor: float, size: int) -> int:
    """trackAllocatingListCall: floor(size * factor) + call + list creation."""
    if factor < 0:
        factor = 1.0
    return min(int(float(size) * factor), UINT64_MAX) + _CALL_COST + _LIST_CREATE_COST


def _output_size_cost(args: Sequence[Any], result: Any) -> int:
    return _allocating_call(1.0, actual_size(result))


def _flatten_cost(args: Sequence[Any], result: Any) -> int:
    """The input's size times the depth; cel-go's tracker asserts the depth is an int, and panics otherwise."""
    depth = 1.0
    if len(args) == 2:
        if type_name(args[1]) != "int":
            raise RecoveredPanic(f"internal error: interface conversion: ref.Val is {_go_type(args[1])}, not types.Int")
        depth = float(args[1])
    return _allocating_call(depth, actual_size(args[0]))


def _self_compare_cost(values: Any) -> int:
    """O(n²) worst case over the list; string and bytes elements cost a traversal factor more. cel-go's tracker
    asserts the operand is a list, so an operand that failed or is something else (`dyn(1).distinct()`) panics
    there, and the API server reports that panic (Program.Eval recovers it) instead of the call's own error."""
    if not _is_list(values):
        raise _not_a_lister(values)
    size = actual_size(values)
    if size == 0:
        return _allocating_call(2.0, 0)
    factor = 2.0 + (_STRING_TRAVERSAL_FACTOR if isinstance(values[0], (str, bytes)) else 0.0)
    return _allocating_call(factor, min(size * size, UINT64_MAX))


_ADDERS = frozenset(
    {"int", "uint", "double", "string", "bytes", "google.protobuf.Duration", "google.protobuf.Timestamp"}
)


def _go_type(value: Any) -> str:
    return "*types.Err" if isinstance(value, BaseException) else go_type(value)


def _not_a_lister(value: Any) -> RecoveredPanic:
    """Go's failed assertion to traits.Lister, which names the first method (alphabetically) the value lacks."""
    missing = "Contains" if not isinstance(value, BaseException) and type_name(value) in _ADDERS else "Add"
    return RecoveredPanic(
        f"internal error: interface conversion: {_go_type(value)} is not traits.Lister: missing method {missing}"
    )


def _receiver_self_compare_cost(args: Sequence[Any], result: Any) -> int:
    return _self_compare_cost(args[0])


def _keys_self_compare_cost(args: Sequence[Any], result: Any) -> int:
    return _self_compare_cost(args[1])


# -- estimated costs (cel-go ext/lists.go estimate*, version 3) -----------------------------


def _allocating_estimate(factor: float, size: SizeEstimate) -> CallEstimate:
    """estimateAllocatingListCall: the result's size times the factor, plus the call and the list creation."""
    return CallEstimate(size.times(factor).add(_CALL_AND_LIST_ESTIMATE), size)


def _slice_estimate(call: CallSite) -> CallEstimate:
    start = int_literal(call.literal(1), 0)
    end = int_literal(call.literal(2), call.size(0).max)
    length = (end - start) % 2**64  # Go's uint64 subtraction
    return _allocating_estimate(1, SizeEstimate(length, length))


def _range_estimate(call: CallSite) -> CallEstimate:
    count = int_literal(call.literal(0), UINT64_MAX)
    return _allocating_estimate(1, SizeEstimate(count, count))


def _reverse_estimate(call: CallSite) -> CallEstimate:
    return _allocating_estimate(1, call.size(0))


def _flatten_estimate(call: CallSite) -> CallEstimate:
    depth = int_literal(call.literal(1), UINT64_MAX) if len(call) == 2 else 1
    return _allocating_estimate(float(depth), call.size(0))


def _distinct_estimate(call: CallSite) -> CallEstimate:
    size = call.size(0)
    return _allocating_estimate(2.0, size.multiply(size))


def _sort_estimate(element: CelType, position: int) -> Estimate:
    """O(n²) comparisons over the list sorted by (the receiver, or the keys for sortByAssociatedKeys)."""
    factor = 2.0 + (_STRING_TRAVERSAL_FACTOR if element in (STRING, BYTES) else 0.0)

    def estimate(call: CallSite) -> CallEstimate:
        size = call.size(position)
        return _allocating_estimate(factor, size.multiply(size))

    return estimate


# -- the table -----------------------------------------------------------------------------

_LIST_T = list_of(T)


def _member(
    id: str,
    function: str,
    args: tuple[CelType, ...],
    result: CelType,
    impl: Callable[..., Any],
    cost: RuntimeCost,
    doc: str,
    estimate: Estimate,
) -> Overload:
    return Overload(id, function, args, result, impl, member=True, cost=cost, doc=doc, estimate=estimate)


def _sort(t: CelType) -> Overload:
    return _member(
        f"list_{t.name}_sort",
        "sort",
        (list_of(t),),
        list_of(t),
        list_sort,
        _receiver_self_compare_cost,
        "[3, 1, 2].sort() == [1, 2, 3]",
        _sort_estimate(t, 0),
    )


def _sort_by(t: CelType) -> Overload:
    return _member(
        f"list_{t.name}_sortByAssociatedKeys",
        "@sortByAssociatedKeys",
        (_LIST_T, list_of(t)),
        _LIST_T,
        list_sort_by_associated_keys,
        _keys_self_compare_cost,
        "['a', 'b'].sortBy(e, -size(e))",
        _sort_estimate(t, 1),
    )


# (version introduced, overload); the costs apply from version 3 on.
TABLE: tuple[tuple[int, Overload], ...] = (
    (0, _member("list_slice", "slice", (_LIST_T, INT, INT), _LIST_T, list_slice, _output_size_cost,
                "[1, 2, 3].slice(1, 3) == [2, 3]", _slice_estimate)),
    (1, _member("list_flatten", "flatten", (list_of(_LIST_T),), _LIST_T, list_flatten, _flatten_cost,
                "[1, [2, 3]].flatten() == [1, 2, 3]", _flatten_estimate)),
    (1, _member("list_flatten_int", "flatten", (list_of(DYN), INT), list_of(DYN), list_flatten_int, _flatten_cost,
                "[1, [2, [3]]].flatten(2) == [1, 2, 3]", _flatten_estimate)),
    *((2, _sort(t)) for t in SORTABLE),
    *((2, _sort_by(t)) for t in SORTABLE),
    (2, Overload("lists_range", "lists.range", (INT,), list_of(INT), lists_range, cost=_output_size_cost,
                 estimate=_range_estimate, doc="lists.range(3) == [0, 1, 2]")),
    (2, _member("list_reverse", "reverse", (_LIST_T,), _LIST_T, list_reverse, _output_size_cost,
                "[1, 2].reverse() == [2, 1]", _reverse_estimate)),
    (2, _member("list_distinct", "distinct", (_LIST_T,), _LIST_T, list_distinct, _receiver_self_compare_cost,
                "[1, 1.0, 2].distinct() == [1, 2]", _distinct_estimate)),
)  # fmt: skip
COSTS_SINCE = 3
SORT_BY_SINCE = 2


def library(version: int = 3) -> Library:
    """The lists extension at a cel-go `ListsVersion` (Kubernetes uses 3 since 1.34).

    >>> [o.id for o in library(0).overloads]
    ['list_slice']
    """
    overloads = tuple(
        overload if version >= COSTS_SINCE else replace(overload, cost=None, estimate=None)
        for since, overload in TABLE
        if since <= version
    )
    return Library("lists", overloads=overloads, macros=LISTS if version >= SORT_BY_SINCE else ())


LIBRARY = library(3)
