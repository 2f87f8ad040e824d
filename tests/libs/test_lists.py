"""The lists extension table: every overload, error text and version-3 runtime cost."""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

import pytest

from kcel.errors import EvalError
from kcel.libs.lists import LIBRARY, MAX_RANGE_SIZE, _GoSorter, library
from kcel.parser.macros import LISTS
from kcel.temporal import Duration, Timestamp
from kcel.values import Uint

U = Uint
OVERLOADS = {o.id: o for o in LIBRARY.overloads}
T2010 = Timestamp.parse("2010-01-01T00:00:00Z")
T2020 = Timestamp.parse("2020-01-01T00:00:00Z")
T2020_PARIS = Timestamp.parse("2020-01-01T01:00:00+01:00")  # the same instant as T2020, printed differently
SORT_BY = "list_int_sortByAssociatedKeys"
SAME_SIZE = (
    "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, "
    "but got {} and {} elements respectively"
)


@dataclasses.dataclass(frozen=True)
class Err:
    message: str


def assert_same(actual: Any, expected: Any) -> None:
    """Equal with CEL types kept (1, 1u, 1.0, true differ; -0.0 is not 0.0), lists element by element."""
    if isinstance(expected, list):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected, strict=True):
            assert_same(a, e)
        return
    assert type(actual) is type(expected), (actual, expected)
    if isinstance(expected, float):
        assert math.copysign(1, actual) == math.copysign(1, expected)
    assert actual == expected


def check(overload_id: str, args: tuple[Any, ...], expected: Any) -> None:
    impl = OVERLOADS[overload_id].impl
    if isinstance(expected, Err):
        with pytest.raises(EvalError) as info:
            impl(*args)
        assert info.value.message == expected.message
    else:
        assert_same(impl(*args), expected)


NUMBERS = [1, 2, 3, 4]
# (overload id, arguments with the receiver first, result or Err); from the apiextensions validation and cost
# tests and cel-go's lists_test.go.
SLICE = [
    ("list_slice", (NUMBERS, 0, 4), [1, 2, 3, 4]),
    ("list_slice", (NUMBERS, 0, 0), []),
    ("list_slice", (NUMBERS, 1, 1), []),
    ("list_slice", (NUMBERS, 4, 4), []),
    ("list_slice", (NUMBERS, 1, 3), [2, 3]),
    ("list_slice", (NUMBERS, 2, 4), [3, 4]),
    ("list_slice", ((1, 2, 3), 0, 2), [1, 2]),
    ("list_slice", (NUMBERS, -5, -3), Err("cannot slice(-5, -3), negative indexes not supported")),
    ("list_slice", (NUMBERS, 0, -1), Err("cannot slice(0, -1), negative indexes not supported")),
    ("list_slice", (NUMBERS, 3, 1), Err("cannot slice(3, 1), start index must be less than or equal to end index")),
    ("list_slice", (NUMBERS, 2, 5), Err("cannot slice(2, 5), list is length 4")),
    ("list_slice", ([], 0, 1), Err("cannot slice(0, 1), list is length 0")),
]

FLATTEN = [
    ("list_flatten", ([],), []),
    ("list_flatten", ([1, 2, 3, 4],), [1, 2, 3, 4]),
    ("list_flatten", ([1, [2, 3], [4]],), [1, 2, 3, 4]),
    ("list_flatten", ([1, [2, [3, 4]]],), [1, 2, [3, 4]]),
    ("list_flatten", ([1, 2, [], [], [3, 4]],), [1, 2, 3, 4]),
    ("list_flatten", ([(1, 2), [{"a": [1]}]],), [1, 2, {"a": [1]}]),
    ("list_flatten", (1,), Err("no such overload: int.flatten()")),
    ("list_flatten", ("ab",), Err("no such overload: string.flatten()")),
    ("list_flatten_int", ([1, [2, [3, [4]]]], 2), [1, 2, 3, [4]]),
    ("list_flatten_int", ([1, [2, [3, [4]]]], 0), [1, [2, [3, [4]]]]),
    ("list_flatten_int", ([1, [2, [3, [4]]]], 100), [1, 2, 3, 4]),
    ("list_flatten_int", ([[1], [2], [3, 4]], -1), Err("level must be non-negative")),
    ("list_flatten_int", ([], -1), Err("level must be non-negative")),
    ("list_flatten_int", ({"a": 1}, 1), Err("no such overload: map.flatten(int)")),
    ("list_flatten_int", ([1], "2"), Err("no such overload: list.flatten(string)")),
    ("list_flatten_int", ([1], U(2)), Err("no such overload: list.flatten(uint)")),
]

SORT = [
    ("list_int_sort", ([],), []),
    ("list_int_sort", ([1],), [1]),
    ("list_int_sort", ([4, 3, 2, 1],), [1, 2, 3, 4]),
    ("list_int_sort", ([3, 1, 3, 2, 1],), [1, 1, 2, 3, 3]),
    ("list_string_sort", (["d", "a", "b", "c"],), ["a", "b", "c", "d"]),
    ("list_string_sort", (["b", "B", "é", "a"],), ["B", "a", "b", "é"]),
    ("list_uint_sort", ([U(3), U(1)],), [U(1), U(3)]),
    ("list_bool_sort", ([True, False, True],), [False, True, True]),
    ("list_bytes_sort", ([b"b", b"a", b""],), [b"", b"a", b"b"]),
    ("list_double_sort", ([2.5, -1.0, 0.5],), [-1.0, 0.5, 2.5]),
    # Go's sort leaves equal doubles as its insertion sort finds them (stable for short lists).
    ("list_double_sort", ([0.0, 2.5, -0.0, -1.0],), [-1.0, 0.0, -0.0, 2.5]),
    ("list_double_sort", ([-0.0, 0.0],), [-0.0, 0.0]),
    ("list_google.protobuf.Timestamp_sort", ([T2020, T2010],), [T2010, T2020]),
    (
        "list_google.protobuf.Duration_sort",
        ([Duration(5), Duration(-1), Duration(0)],),
        [Duration(-1), Duration(0), Duration(5)],
    ),
    ("list_int_sort", ([1, "b"],), Err("list elements must have the same type")),
    ("list_string_sort", (["d", 3, 2, "c"],), Err("list elements must have the same type")),
    ("list_int_sort", ([1, 1.0],), Err("list elements must have the same type")),
    ("list_int_sort", ([1, U(1)],), Err("list elements must have the same type")),
    ("list_int_sort", ([1, True],), Err("list elements must have the same type")),
    ("list_int_sort", ([[1, 2, 3]],), Err("list elements must be comparable")),
    ("list_int_sort", ([[1], [2]],), Err("list elements must be comparable")),
    ("list_int_sort", ([{}, {}],), Err("list elements must be comparable")),
    ("list_int_sort", ([None, None],), Err("list elements must be comparable")),
    (SORT_BY, (["foo", "bar", "baz"], [3, 1, 2]), ["bar", "baz", "foo"]),
    (SORT_BY, ([], []), []),
    (SORT_BY, ([-6, 2, -10, -4, 8], [-36, -4, -100, -16, -64]), [-10, 8, -6, -4, 2]),
    ("list_string_sortByAssociatedKeys", (["a", "c", "b", "first"], ["a", "c", "b", ""]), ["first", "a", "b", "c"]),
    (
        "list_string_sortByAssociatedKeys",
        ([{"name": "foo"}, {"name": "bar"}, {"name": "baz"}], ["foo", "bar", "baz"]),
        [{"name": "bar"}, {"name": "baz"}, {"name": "foo"}],
    ),
    (SORT_BY, (["x", "y", "z", "w"], [1, 0, 1, 0]), ["y", "w", "x", "z"]),
    ("list_double_sortByAssociatedKeys", (["a", "b", "c"], [1.0, math.nan, 0.0]), ["a", "b", "c"]),
    (SORT_BY, ([1], [1, 2]), Err(SAME_SIZE.format(1, 2))),
    (SORT_BY, ([], [1]), Err(SAME_SIZE.format(0, 1))),
    (SORT_BY, ([1, 2], [2, "1"]), Err("list elements must have the same type")),
    (SORT_BY, ([1, 2], [[2], [1]]), Err("list elements must be comparable")),
]

OTHERS = [
    ("lists_range", (0,), []),
    ("lists_range", (4,), [0, 1, 2, 3]),
    ("lists_range", (-1,), Err("lists.range: size must be non-negative, got -1")),
    ("lists_range", (MAX_RANGE_SIZE + 1,), Err("lists.range: size 1000001 exceeds maximum allowed (1000000)")),
    ("list_reverse", ([],), []),
    ("list_reverse", ([1],), [1]),
    ("list_reverse", ([5, 1, 2, 3],), [3, 2, 1, 5]),
    ("list_reverse", ((False, True, True),), [True, True, False]),
    (
        "list_reverse",
        (["are", "you", "as", "bored", "as", "I", "am"],),
        ["am", "I", "as", "bored", "as", "you", "are"],
    ),
    ("list_distinct", ([],), []),
    ("list_distinct", ([1],), [1]),
    ("list_distinct", ([1, 2, 2, 3, 3, 3],), [1, 2, 3]),
    ("list_distinct", (["b", "b", "c", "a", "c"],), ["b", "c", "a"]),
    ("list_distinct", ([1, "b", 2, "b"],), [1, "b", 2]),
    ("list_distinct", ([-2, 5, -2, 1, 1, 5, -2, 1],), [-2, 5, 1]),
    ("list_distinct", (["c", "a", "a", "b", "a", "b", "c", "c"],), ["c", "a", "b"]),
    ("list_distinct", ([[1], [1], [2]],), [[1], [2]]),
    ("list_distinct", ([{"name": "a"}, {"name": "b"}, {"name": "a"}],), [{"name": "a"}, {"name": "b"}]),
    ("list_distinct", ([1, 1.0, U(1), True, 1],), [1, True]),
    ("list_distinct", ([2.0, 2, [2.0], [U(2)]],), [2.0, [2.0]]),
    ("list_distinct", ([math.inf, math.inf],), [math.inf]),
    ("list_distinct", ([None, None, 0],), [None, 0]),
]


@pytest.mark.parametrize(("overload_id", "args", "expected"), SLICE + FLATTEN + SORT + OTHERS)
def test_overload(overload_id: str, args: tuple[Any, ...], expected: Any) -> None:
    check(overload_id, args, expected)


def test_sort_keeps_equal_timestamps_in_go_order() -> None:
    result = OVERLOADS["list_google.protobuf.Timestamp_sort"].impl([T2020_PARIS, T2010, T2020])
    assert [ts.offset for ts in result] == [0, 3600, 0]


def test_distinct_keeps_every_nan() -> None:
    nan = math.nan
    result = OVERLOADS["list_distinct"].impl([nan, nan, 1.0])
    assert len(result) == 3 and result[0] is nan and result[1] is nan


# (overload id, arguments, result, runtime cost); the apiextensions cost-stability totals minus the other nodes.
COSTS = [
    ("list_slice", ([1, 2, 3, 4], 1, 3), [2, 3], 13),
    ("list_slice", ([1, 2, 3, 4], 1, 1), [], 11),
    ("lists_range", (4,), [0, 1, 2, 3], 15),
    ("list_reverse", ([],), [], 11),
    ("list_reverse", (["are", "you", "as", "bored", "as", "I", "am"],), None, 18),
    ("list_flatten", ([],), [], 11),
    ("list_flatten", ([1, [2, 3]],), [1, 2, 3], 13),
    ("list_flatten_int", ([1, [2, [3]]], 2), [1, 2, 3], 15),
    ("list_flatten_int", ([1, [2]], -1), None, 13),
    ("list_int_sort", ([4, 3, 2, 1],), None, 43),
    ("list_string_sort", (["d", "a", "b", "c"],), None, 44),
    ("list_bytes_sort", ([b"b", b"a"],), None, 19),
    ("list_int_sort", ([],), None, 11),
    (SORT_BY, (["x", "y"], [2, 1]), None, 19),
    ("list_string_sortByAssociatedKeys", ([1, 2, 3], ["c", "b", "a"]), None, 29),
    ("list_distinct", ([1],), None, 13),
    ("list_distinct", ([-2, 5, -2, 1, 1, 5, -2, 1],), None, 139),
    ("list_distinct", (["c", "a", "a", "b", "a", "b", "c", "c"],), None, 145),
    ("list_distinct", ([[1], [1], [2]],), None, 29),
]


@pytest.mark.parametrize(("overload_id", "args", "result", "cost"), COSTS)
def test_runtime_cost(overload_id: str, args: tuple[Any, ...], result: Any, cost: int) -> None:
    overload = OVERLOADS[overload_id]
    assert overload.cost is not None
    assert overload.cost(list(args), result if result is not None else _result(overload_id, args)) == cost


def _result(overload_id: str, args: tuple[Any, ...]) -> Any:
    try:
        return OVERLOADS[overload_id].impl(*args)
    except EvalError as err:
        return err


SORTABLE = "int uint double bool google.protobuf.Duration google.protobuf.Timestamp string bytes".split()


@pytest.mark.parametrize(
    ("version", "ids"),
    [
        (0, ["list_slice"]),
        (1, ["list_slice", "list_flatten", "list_flatten_int"]),
        (
            2,
            ["list_slice", "list_flatten", "list_flatten_int"]
            + [f"list_{t}_sort" for t in SORTABLE]
            + [f"list_{t}_sortByAssociatedKeys" for t in SORTABLE]
            + ["lists_range", "list_reverse", "list_distinct"],
        ),
    ],
)
def test_versions(version: int, ids: list[str]) -> None:
    lib = library(version)
    assert [o.id for o in lib.overloads] == ids
    assert all(o.cost is None for o in lib.overloads), "runtime costs arrive with version 3"
    assert lib.macros == (LISTS if version >= 2 else ())
    assert [o.id for o in library(3).overloads] == [o.id for o in library(2).overloads]


@pytest.mark.parametrize(
    ("overload_id", "function", "signature", "member"),
    [
        ("list_slice", "slice", "(list(T), int, int) -> list(T)", True),
        ("list_flatten", "flatten", "(list(list(T))) -> list(T)", True),
        ("list_flatten_int", "flatten", "(list(dyn), int) -> list(dyn)", True),
        ("list_google.protobuf.Duration_sort", "sort", "(list(google.protobuf.Duration)) -> list(google.protobuf.Duration)", True),  # noqa: E501
        ("list_bytes_sortByAssociatedKeys", "@sortByAssociatedKeys", "(list(T), list(bytes)) -> list(T)", True),
        ("lists_range", "lists.range", "(int) -> list(int)", False),
        ("list_reverse", "reverse", "(list(T)) -> list(T)", True),
        ("list_distinct", "distinct", "(list(T)) -> list(T)", True),
    ],
)  # fmt: skip
def test_signature(overload_id: str, function: str, signature: str, member: bool) -> None:
    overload = OVERLOADS[overload_id]
    assert overload.function == function and overload.member is member
    assert f"({', '.join(map(str, overload.args))}) -> {overload.result}" == signature
    assert overload.cost is not None


@pytest.mark.parametrize("seed", range(40))
def test_go_sort_replay_sorts(seed: int) -> None:
    """The pdqsort replay (used for ties) is a correct sort on every path: insertion, partitions, heapsort."""
    rng = random.Random(seed)
    n = rng.choice([0, 1, 5, 12, 13, 40, 49, 50, 51, 200, 600])
    keys = [rng.randint(0, rng.choice([1, 3, 30, 10_000])) for _ in range(n)]
    if seed % 4 == 1:
        keys.sort()
    elif seed % 4 == 2:
        keys.sort(reverse=True)
    order = _GoSorter(keys).sort()
    assert sorted(order) == list(range(n))
    assert [keys[i] for i in order] == sorted(keys)


def test_sort_by_ties_follow_go_not_python() -> None:
    """Equal keys in a long list come out in pdqsort's order, which is deterministic but not stable."""
    keys = [i % 3 for i in range(30)]
    values = list(range(30))
    result = OVERLOADS[SORT_BY].impl(values, keys)
    assert [keys[v] for v in result] == sorted(keys)
    assert result == [values[i] for i in _GoSorter(keys).sort()]
    assert result == OVERLOADS[SORT_BY].impl(values, keys)
