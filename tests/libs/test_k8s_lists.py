"""Table tests of Kubernetes' lists library (apiserver pkg/cel/library/lists.go) and its costs (cost.go).

Rows follow the examples in lists.go and cel-go's Compare/Add/Equal rules, including how a `dyn`
list picks its overload (by the type of its first element). The last tests run the lists cases
of Kubernetes' cost_test.go from ../shared/k8s-cases.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

import kcel
from kcel.checker.types import BYTES, DOUBLE, DYN, INT, STRING, UINT, CelType, list_of
from kcel.cost import StringSizes
from kcel.errors import CompileError, EvalError
from kcel.libs import CallEstimate, CostEstimate, SizedCall, SizeEstimate
from kcel.libs.k8s_lists import LIBRARY, library, traversal_cost, traversal_estimate
from kcel.temporal import Duration, Timestamp
from kcel.values import NONE, UINT64_MAX, Uint
from tests.conftest import SHARED

OVERLOADS = {o.id: o for o in LIBRARY.overloads}
NAN = float("nan")


def env(version: int = 1, **variables: str) -> kcel.Env:
    return kcel.Env(variables=variables, libraries=[*kcel.env.cel_libraries(), library(version)])


def evaluate(expr: str, **values: Any) -> Any:
    """Variables are declared `dyn`, so calls on them dispatch at run time as in cel-go."""
    return env(1, **{name: "dyn" for name in values}).compile(expr).evaluate(values)


def ts(text: str) -> Timestamp:
    return Timestamp.parse(text)


def dur(text: str) -> Duration:
    return Duration.parse(text)


def same(got: Any, want: Any) -> bool:
    """Equal and of the same kind (0 is not 0.0 is not 0u)."""
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return type(got) is type(want) and bool(got == want)


# -- isSorted, min, max ------------------------------------------------------------------------

# (list, isSorted, min, max); None: that call fails on the empty list
ORDER_ROWS = [
    ([1, 2, 3], True, 1, 3),
    ([1, 2, 2, 3], True, 1, 3),
    (["a", "b", "b", "c"], True, "a", "c"),
    ([2.0, 1.0], False, 1.0, 2.0),
    ([1], True, 1, 1),
    ([Uint(3), Uint(1)], False, Uint(1), Uint(3)),
    ([False, True, False], False, False, True),
    ([b"b", b"a"], False, b"a", b"b"),
    ([dur("1s"), dur("2m")], True, dur("1s"), dur("2m")),
    ([ts("2011-01-02T00:00:00Z"), ts("2011-01-01T00:00:00Z")], False, ts("2011-01-01T00:00:00Z"),
     ts("2011-01-02T00:00:00Z")),
    (["é", "z"], False, "z", "é"),  # code point (= UTF-8 byte) order
    ([2, 1.5, Uint(3)], False, 1.5, Uint(3)),  # numbers of all kinds compare with each other
    ([1.0, 1, Uint(1)], True, 1.0, 1.0),  # the first of equal elements wins
    ([0.0, -0.0], True, 0.0, 0.0),
    ([1.0, NAN, 0.5], True, 0.5, 1.0),  # comparisons with NaN are errors, which are ignored
    ([NAN, 1.0], True, NAN, NAN),
    ([1, "a", 0], True, 0, 1),  # so are comparisons of unlike types: 'a' is skipped, 1 vs 0 counts for min
]  # fmt: skip


@pytest.mark.parametrize(("values", "is_sorted", "low", "high"), ORDER_ROWS)
def test_order(values: list[Any], is_sorted: bool, low: Any, high: Any) -> None:
    assert evaluate("x.isSorted()", x=values) is is_sorted
    assert same(evaluate("x.min()", x=values), low)
    assert same(evaluate("x.max()", x=values), high)


@pytest.mark.parametrize("function", ["min", "max"])
def test_min_max_empty(function: str) -> None:
    with pytest.raises(EvalError) as error:
        evaluate(f"x.{function}()", x=[])
    assert str(error.value) == f"{function} called on empty list"
    assert evaluate("x.isSorted()", x=[]) is True
    with pytest.raises(EvalError, match=f"^{function} called on empty list$"):
        env(l="list(string)").compile(f"l.{function}()").evaluate({"l": []})


@pytest.mark.parametrize("values", [[None], [1, None], [[1], [2]], [{}], [NONE]])
def test_order_needs_comparable_elements(values: list[Any]) -> None:
    for function in ("isSorted", "min", "max"):
        with pytest.raises(EvalError, match="^no such overload$"):
            evaluate(f"x.{function}()", x=values)


def test_typed_order() -> None:
    assert evaluate("[1, 2, 3].isSorted()") is True
    assert evaluate("['b', 'a'].isSorted()") is False
    assert evaluate("[3, 1, 2].min()") == 1
    assert evaluate("[timestamp('2011-01-01T00:00:00Z')].max()") == ts("2011-01-01T00:00:00Z")
    assert env().compile("[1.0].min()").output_type == DOUBLE
    with pytest.raises(CompileError, match="found no matching overload for 'isSorted'"):
        env().compile("[[1]].isSorted()")
    with pytest.raises(CompileError, match="found no matching overload for 'min'"):
        env().compile("[{'a': 1}].min()")


# -- sum ---------------------------------------------------------------------------------------

# (list, sum)
SUM_ROWS = [
    ([1, 3], 4),
    ([1.0, 3.0], 4.0),
    ([Uint(1), Uint(2)], Uint(3)),
    ([dur("1m"), dur("1s")], dur("61s")),
    ([1.5, 2.5], 4.0),  # a dyn list takes the overload of its first element
    ([], 0),  # ... and an empty one the first overload, int
    ([dur("1s"), ts("2011-01-01T00:00:00Z")], ts("2011-01-01T00:00:01Z")),  # duration + timestamp is a timestamp
]


@pytest.mark.parametrize(("values", "expected"), SUM_ROWS)
def test_sum(values: list[Any], expected: Any) -> None:
    assert same(evaluate("x.sum()", x=values), expected)


@pytest.mark.parametrize(("element", "zero"), [("int", 0), ("uint", Uint(0)), ("double", 0.0), ("duration", dur("0s"))])
def test_sum_of_empty_typed_list(element: str, zero: Any) -> None:
    assert same(env(l=f"list({element})").compile("l.sum()").evaluate({"l": []}), zero)


# (list, error)
SUM_ERROR_ROWS = [
    ([9223372036854775807, 1], "integer overflow"),
    ([Uint(18446744073709551615), Uint(1)], "unsigned integer overflow"),
    ([1, 2.0], "no such overload"),  # Int(1).Add(Double) has no overload
    ([1.0, 2], "no such overload"),
    (["a"], "no such overload"),
    ([True], "no such overload"),
    ([1, True], "no such overload"),
]


@pytest.mark.parametrize(("values", "message"), SUM_ERROR_ROWS)
def test_sum_errors(values: list[Any], message: str) -> None:
    with pytest.raises(EvalError) as error:
        evaluate("x.sum()", x=values)
    assert str(error.value) == message


def test_sum_types() -> None:
    assert evaluate("[1, 3].sum()") == 4
    assert evaluate("[duration('1m'), duration('1s')].sum() == duration('61s')") is True
    assert env().compile("[1u].sum()").output_type == UINT
    with pytest.raises(CompileError, match="found no matching overload for 'sum'"):
        env().compile("['a'].sum()")
    with pytest.raises(CompileError, match="found no matching overload for 'sum'"):
        env().compile("[timestamp(0)].sum()")


# -- indexOf, lastIndexOf, includes ------------------------------------------------------------

# (list, item, indexOf, lastIndexOf)
INDEX_ROWS = [
    ([1, 2, 2, 3], 2, 1, 2),
    (["a", "b", "b", "c"], "b", 1, 2),
    ([1.0], 1.1, -1, -1),
    ([], "string", -1, -1),
    ([1, Uint(2), 3.0, 2], 3, 2, 2),  # heterogeneous numeric equality
    ([1, Uint(2), 3.0, 2], 2.0, 1, 3),
    ([[1], [2], [2]], [2], 1, 2),
    ([{"a": 1}, {"a": 2}], {"a": 1}, 0, 0),
    ([None, 1], None, 0, 0),
    ([1, "1"], "1", 1, 1),
    ([True, 1], 1, 1, 1),  # true is not 1
]


@pytest.mark.parametrize(("values", "item", "first", "last"), INDEX_ROWS)
def test_index_of(values: list[Any], item: Any, first: int, last: int) -> None:
    assert evaluate("x.indexOf(y)", x=values, y=item) == first
    assert evaluate("x.lastIndexOf(y)", x=values, y=item) == last


def test_index_of_typed() -> None:
    assert evaluate("[1, 2, 2, 3].indexOf(2)") == 1
    assert evaluate("['a', 'b', 'b', 'c'].lastIndexOf('b')") == 2
    assert evaluate("'abcb'.indexOf('b')") == 1  # the strings extension's indexOf still resolves
    assert evaluate("'abcb'.lastIndexOf('b')") == 3
    with pytest.raises(CompileError, match="found no matching overload for 'indexOf'"):
        env().compile("[1, 2].indexOf('a')")


# (receiver, item, includes)
INCLUDES_ROWS = [
    ([1, 2, 3], 2, True),
    ([1, 2, 3], 4, False),
    ([1, 2, 3], 2.0, True),
    ("model-a", "model-a", True),
    ("model-a", "model-b", False),
    ({"a": 1}, {"a": 1}, True),  # a map is compared whole, not searched
    ({"a": 1}, "a", False),
    (1, 1.0, True),
    ([], [], False),
    ([[]], [], True),
]


@pytest.mark.parametrize(("target", "item", "expected"), INCLUDES_ROWS)
def test_includes(target: Any, item: Any, expected: bool) -> None:
    assert evaluate("x.includes(y)", x=target, y=item) is expected


def test_includes_typed() -> None:
    assert evaluate("[1, 2, 3].includes(2)") is True
    assert evaluate("'model-a'.includes('model-a')") is True
    assert evaluate("'model-a'.includes('model-b')") is False


def test_versions() -> None:
    assert "list_includes_dyn_dyn" not in {o.id for o in library(0).overloads}
    with pytest.raises(CompileError):
        env(0).compile("[1].includes(1)")
    assert env(0).compile("[1].isSorted()").evaluate() is True
    assert {o.id for o in library(1).overloads} - {o.id for o in library(0).overloads} == {"list_includes_dyn_dyn"}


def test_overload_ids() -> None:
    comparable = ["int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes"]
    summable = ["int", "uint", "double", "duration"]
    expected = {f"list_{t}_is_sorted_bool" for t in comparable}
    expected |= {f"list_{t}_sum_{t}" for t in summable}
    expected |= {f"list_{t}_{f}_{t}" for t in comparable for f in ("min", "max")}
    expected |= {"list_a_index_of_int", "list_a_last_index_of_int", "list_includes_dyn_dyn"}
    assert set(OVERLOADS) == expected


# -- costs -------------------------------------------------------------------------------------

# (value, traversalCost: a tenth of each string/bytes length in bytes, truncated; 1 per other leaf)
TRAVERSAL_ROWS = [
    ("abcdefghi", 0),
    ("abcdefghij", 1),
    ("Rook takes 👑", 1),  # 15 bytes
    (b"x" * 25, 2),
    ([1, 2, 3], 3),
    (["ab", "cd"], 0),
    (["012345678901"] * 5, 5),
    ({"k": "v"}, 0),
    ({1: 2}, 2),
    ([[1, 2], [3]], 3),
    ([], 0),
    (True, 1),
    (None, 1),
    (dur("1s"), 1),
]


@pytest.mark.parametrize(("value", "cost"), TRAVERSAL_ROWS)
def test_traversal_cost(value: Any, cost: int) -> None:
    assert traversal_cost(value) == cost


# (expression, runtime cost when the receiver is the variable x)
RUNTIME_ROWS = [
    ("x.sum()", [1, 2, 3], 1 + 3),
    ("x.isSorted()", ["abcdefghij", "klmnopqrst"], 1 + 2),
    ("x.indexOf(y)", [{"a": "b"}, 1], 1 + 1 + 1),  # the map's short strings cost 0
    ("x.includes(y)", "Rook takes 👑", 1 + 1 + 1),
    ("x.max()", [dur("1s"), dur("2s")], 1 + 2),
]


@pytest.mark.parametrize(("expr", "value", "cost"), RUNTIME_ROWS)
def test_runtime_cost(expr: str, value: Any, cost: int) -> None:
    assert env(x="dyn", y="dyn").compile(expr).evaluate_with_cost({"x": value, "y": 1})[1] == cost


UNKNOWN = SizeEstimate(0, UINT64_MAX)

# (function, receiver size, receiver type, element size, estimate)
ESTIMATE_ROWS = [
    ("sum", SizeEstimate(5, 5), list_of(INT), UNKNOWN, CostEstimate(5, 5)),
    ("isSorted", SizeEstimate(5, 5), list_of(STRING), SizeEstimate(0, 12), CostEstimate(5, 15)),
    ("max", SizeEstimate(5, 5), list_of(BYTES), SizeEstimate(0, 12), CostEstimate(5, 15)),
    ("isSorted", SizeEstimate(5, 5), list_of(STRING), UNKNOWN, CostEstimate(5, 5 * (1 + 1844674407370955264))),
    ("min", SizeEstimate(0, UINT64_MAX), list_of(DOUBLE), UNKNOWN, CostEstimate(0, UINT64_MAX)),
    (
        "min",
        SizeEstimate(0, UINT64_MAX),
        list_of(STRING),
        SizeEstimate(0, 12),
        CostEstimate(0, UINT64_MAX),
    ),  # saturates
    ("includes", SizeEstimate(50, 50), STRING, UNKNOWN, CostEstimate(50, 50)),  # not a list: size * 1
    ("includes", SizeEstimate(3, 7), DYN, UNKNOWN, CostEstimate(3, 7)),
    ("indexOf", SizeEstimate(50, 50), STRING, UNKNOWN, CostEstimate(5, 5)),  # a string: size * 0.1
    ("isSorted", SizeEstimate(10, 25), DYN, UNKNOWN, CostEstimate(1, 3)),
    ("indexOf", SizeEstimate(2, 4), list_of(list_of(STRING)), UNKNOWN, CostEstimate(2, 4)),
]


@pytest.mark.parametrize(("function", "receiver", "receiver_type", "element", "expected"), ESTIMATE_ROWS)
def test_traversal_estimate(
    function: str, receiver: SizeEstimate, receiver_type: CelType, element: SizeEstimate, expected: CostEstimate
) -> None:
    call = SizedCall([receiver], [receiver_type], [element])
    assert traversal_estimate(function)(call) == CallEstimate(expected)


def test_overload_estimates() -> None:
    """Each overload estimates from the receiver's checked type (not its declared one) and element size."""
    five = SizeEstimate(5, 5)

    def estimate(overload_id: str, call: SizedCall) -> CostEstimate:
        found = OVERLOADS[overload_id].estimate
        assert found is not None
        result = found(call)
        assert result is not None
        return result.cost

    assert estimate("list_int_sum_int", SizedCall([five], [list_of(INT)])) == CostEstimate(5, 5)
    strings = SizedCall([five], [list_of(STRING)])
    assert estimate("list_string_is_sorted_bool", strings) == CostEstimate(5, 5 * (1 + 1844674407370955264))
    strings = SizedCall([five], [list_of(STRING)], [SizeEstimate(0, 12)])
    assert estimate("list_string_is_sorted_bool", strings) == CostEstimate(5, 15)
    assert estimate("list_includes_dyn_dyn", SizedCall([five, five], [DYN, DYN])) == CostEstimate(5, 5)
    # declared list(A), called on list(string): the element size counts
    assert estimate("list_a_index_of_int", SizedCall([five, five], [list_of(STRING), STRING])) == CostEstimate(
        5, 5 * (1 + 1844674407370955264)
    )


# -- Kubernetes' own tables (../shared/k8s-cases) ----------------------------------------------

CASES_DIR = SHARED / "k8s-cases"
if not CASES_DIR.is_dir():
    pytest.skip(f"k8s-cases not found at {CASES_DIR} (../shared is absent)", allow_module_level=True)

_LIST_COST_TESTS = ("/TestListsCost/", "/TestIndexOfCost/", "/TestIncludesCost/")


def _lists_cost_cases() -> list[Any]:
    document = json.loads((CASES_DIR / "apiserver-library-cost_test.json").read_text(encoding="utf-8"))
    cases = [c for c in document["cases"] if c["kind"] == "cost" and any(t in c["id"] for t in _LIST_COST_TESTS)]
    return [pytest.param(case, id=case["id"]) for case in cases]


@pytest.mark.parametrize("case", _lists_cost_cases())
def test_k8s_lists_cost_cases(case: dict[str, Any]) -> None:
    expr, expect = case["expression"], case["expect"]
    # cost_test.go builds programs without OptOptimize: nothing is folded there.
    unoptimized = kcel.Env(libraries=[*kcel.env.cel_libraries(), library(1)], optimize=False)
    program = unoptimized.compile(expr)
    _, cost = program.evaluate_with_cost({})
    assert cost == expect["runtime_cost"]
    estimate = unoptimized.estimate_cost(program, StringSizes(12))
    assert {"min": estimate.min, "max": estimate.max} == expect["estimated_cost"]
