"""The sets extension table: membership under CEL equality and cel-go's runtime costs."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kcel.eval.equality import cel_equals
from kcel.libs.sets import LIBRARY, Members
from kcel.temporal import Duration, Timestamp
from kcel.values import Uint

U = Uint
OVERLOADS = {o.id: o for o in LIBRARY.overloads}
HOUR = Duration.parse("1h")
TWO_HOURS = Duration.parse("2h")
Y2000 = Timestamp.parse("2000-01-01T00:00:00.000+01:00")
Y2012 = Timestamp.parse("2012-01-01T00:00:00.000+01:00")

CONTAINS = "list_sets_contains_list"
EQUIVALENT = "list_sets_equivalent_list"
INTERSECTS = "list_sets_intersects_list"

# (overload id, a, b, result, runtime cost); most rows from apiserver's cost_test and apiextensions' validation_test.
ROWS = [
    (CONTAINS, ["a", "b"], [], True, 1),
    (CONTAINS, ["a", "b"], ["b"], True, 3),
    (CONTAINS, [1], [], True, 1),
    (CONTAINS, [1], [1], True, 2),
    (CONTAINS, [1, 1], [1], True, 3),
    (CONTAINS, [2, 1], [1], True, 3),
    (CONTAINS, [1, 2, 3, 4], [2, 3], True, 9),
    (CONTAINS, [1], [1.0, 1], True, 3),
    (CONTAINS, [1, U(2)], [2, 2.0], True, 5),
    (CONTAINS, [1, 2.0, U(3)], [1.0, U(2), 3], True, 10),
    (CONTAINS, [[1], [2, 3]], [[2, 3.0]], True, 3),
    (CONTAINS, [1, 2], [2], True, 3),
    (CONTAINS, [True, False], [False], True, 3),
    (CONTAINS, [{"a": 1}, {"b": 2}], [{"b": 2}], True, 3),
    (CONTAINS, [[1, 2], [3, 4]], [[3, 4]], True, 3),
    (CONTAINS, [Y2000, Y2012], [Y2012], True, 3),
    (CONTAINS, [HOUR, TWO_HOURS], [TWO_HOURS], True, 3),
    (CONTAINS, [1], [2], False, 2),
    (CONTAINS, [1], [1, 2], False, 3),
    (CONTAINS, [1], [1.1, U(1)], False, 3),
    (CONTAINS, [], [], True, 1),
    (CONTAINS, [], [1], False, 1),
    (CONTAINS, [True], [1], False, 2),
    (CONTAINS, [1], [True], False, 2),
    (CONTAINS, [None], [None], True, 2),
    (CONTAINS, [math.nan], [math.nan], False, 2),
    (CONTAINS, ["1"], [1], False, 2),
    (CONTAINS, [b"a"], ["a"], False, 2),
    (EQUIVALENT, [], [], True, 1),
    (EQUIVALENT, ["c", "b", "a"], ["b", "c", "a"], True, 19),
    (EQUIVALENT, [1], [1], True, 3),
    (EQUIVALENT, [1], [U(1), 1.0], True, 5),
    (EQUIVALENT, [1, 2, 3], [U(3), 2.0, 1], True, 19),
    (EQUIVALENT, [[1.0], [2, 3]], [[1], [2, 3.0]], True, 9),
    (EQUIVALENT, [True, False], [True, False], True, 9),
    (EQUIVALENT, [1.25, 1.5], [1.25, 1.5], True, 9),
    (EQUIVALENT, [{"a": 1}, {"b": 2}], [{"a": 1}, {"b": 2}], True, 9),
    (EQUIVALENT, [HOUR, TWO_HOURS], [HOUR, TWO_HOURS], True, 9),
    (EQUIVALENT, [2, 1], [1], False, 5),
    (EQUIVALENT, [1], [1, 2], False, 5),
    (EQUIVALENT, [1, 2], [U(2), 2, 2.0], False, 13),
    (EQUIVALENT, [1, 1, 2], [2, 1], True, 13),
    (INTERSECTS, ["a", "b"], ["b", "c"], True, 5),
    (INTERSECTS, [], [], False, 1),
    (INTERSECTS, ["a", "b"], [], False, 1),
    (INTERSECTS, [], ["a"], False, 1),
    (INTERSECTS, ["a", "b"], ["c", "d"], False, 5),
    (INTERSECTS, [1], [1], True, 2),
    (INTERSECTS, [1], [1, 1], True, 3),
    (INTERSECTS, [2, 1], [1], True, 3),
    (INTERSECTS, [1], [1, 2], True, 3),
    (INTERSECTS, [1], [1.0, 2], True, 3),
    (INTERSECTS, [1, 2], [U(2), 2, 2.0], True, 7),
    (INTERSECTS, [1], ["1", 2], False, 3),
    (INTERSECTS, [1], [1.1, U(2)], False, 3),
    (INTERSECTS, [True, False], [False], True, 3),
    (INTERSECTS, [1.25, 1.5], [1.5], True, 3),
    (INTERSECTS, [Y2000, Y2012], [Y2012], True, 3),
    (INTERSECTS, [HOUR, TWO_HOURS], [TWO_HOURS], True, 3),
    (INTERSECTS, [[1, 2]], [[1.0, U(2)]], True, 2),
]


@pytest.mark.parametrize(("overload_id", "a", "b", "expected", "cost"), ROWS)
def test_overload(overload_id: str, a: list[Any], b: list[Any], expected: bool, cost: int) -> None:
    overload = OVERLOADS[overload_id]
    result = overload.impl(a, b)
    assert result is expected
    assert overload.cost is not None
    assert overload.cost([a, b], result) == cost


def test_table() -> None:
    assert [(o.id, o.function, str(o.args[0]), str(o.args[1]), str(o.result), o.member) for o in LIBRARY.overloads] == [
        (CONTAINS, "sets.contains", "list(T)", "list(T)", "bool", False),
        (EQUIVALENT, "sets.equivalent", "list(T)", "list(T)", "bool", False),
        (INTERSECTS, "sets.intersects", "list(T)", "list(T)", "bool", False),
    ]


def test_tuples_are_lists() -> None:
    assert OVERLOADS[CONTAINS].impl((1, 2), (2.0,)) is True


def test_members_keep_cel_equality_apart_from_python_equality() -> None:
    members = Members([1, "x", [1, 2], {"k": True}])
    assert members.contains(U(1)) and members.contains(1.0) and members.contains([1.0, U(2)])
    assert not members.contains(True) and not members.contains({"k": 1}) and not members.contains(b"x")


VALUES = [0, 1, -1, U(0), U(1), 0.0, -0.0, 1.0, 1.5, math.nan, math.inf, 2**53, 2**53 + 1, float(2**53), True, False,
          None, "", "1", b"", b"1", [], [1], [1.0], {}, {1: "a"}, {1.0: "a"}, HOUR, Y2000]  # fmt: skip


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_members_agree_with_cel_equals(value: Any) -> None:
    """The hash buckets only speed up lookups; `cel_equals` decides, whatever it says about 2**53 + 1 vs 2.0**53."""
    members = Members(VALUES)
    assert members.contains(value) == any(cel_equals(value, other) for other in VALUES)
