"""Bugs the differential fuzzer (test_differential.py, bench/fuzz.py) found in kcel, each pinned by the smallest case.

Each test runs the expression through all three program variants (`evaluate`, `evaluate_with_cost`, `explain`),
which must agree, with cel-go's answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

import kcel
from kcel.errors import EvalError


def outcomes(expr: str, activation: Mapping[str, Any] | None = None, **variables: str) -> list[Any]:
    """What each variant gives: the value, or the EvalError's class and text."""
    program = kcel.Env(variables=variables).compile(expr)
    results: list[Any] = []
    for run in (
        lambda: program.evaluate(activation),
        lambda: program.evaluate_with_cost(activation, 10**9)[0],
    ):
        try:
            results.append(run())
        except EvalError as err:  # anything else fails the test
            results.append((type(err), str(err)))
    explained = program.explain(activation)
    results.append((type(explained.error), str(explained.error)) if explained.error else explained.value)
    return results


def same(expr: str, activation: Mapping[str, Any] | None = None, **variables: str) -> Any:
    first, *others = outcomes(expr, activation, **variables)
    assert all(other == first or (first != first and other != other) for other in others), (first, others)
    return first


# codegen wrote a folded infinity into the generated source as `inf`: NameError at the first evaluation.
@pytest.mark.parametrize("text", ["inf", "-Infinity", "+INF", "infinity"])
def test_a_folded_infinity_evaluates(text: str) -> None:
    value = same(f"x > 0 ? double('{text}') : 0.0", {"x": 1}, x="int")
    assert math.isinf(value) and (value < 0) == text.startswith("-")


# double(string) is Go's strconv.ParseFloat: hexadecimal mantissas, `_` between digits, no signed NaN, and a range
# error for a finite number too large for a double.
@pytest.mark.parametrize(
    ("text", "expected"),
    [("0x1p3", 8.0), ("0x1.8p1", 3.0), ("0x_1_2.3_4_5p+1_2", 74565.0), ("1_23.50_0_0e+1_2", 1.235e14),
     ("1_000.5", 1000.5), ("1e-400", 0.0), ("NaN", "nan")],
)  # fmt: skip
def test_double_parses_what_go_parses(text: str, expected: Any) -> None:
    value = same("double(s)", {"s": text}, s="string")
    assert math.isnan(value) if expected == "nan" else value == expected


@pytest.mark.parametrize("text", ["+nan", "-nan", "1__0", "_1", "1_", "1_.5", "0x1", "0x1p", "1e400", "-1e400",
                                  "0x1p1024", " 1", "1e_5"])  # fmt: skip
def test_double_refuses_what_go_refuses(text: str) -> None:
    error = same("double(s)", {"s": text}, s="string")
    assert error[0] is EvalError and error[1].startswith("type conversion error from 'string' to 'double'")
    with pytest.raises(kcel.PlanError):  # a literal argument fails when the program is built, as in cel-go
        kcel.Env().compile(f"double('{text}')")


# The metered variant raised the internal OperandTypeError (an EvalError subclass) where the others raised EvalError.
def test_every_variant_raises_the_same_class() -> None:
    assert same("true in dyn(true)") == (EvalError, "no such overload")


# explain() failed to name the operands of optMap/optFlatMap (ValueError from the unparser).
@pytest.mark.parametrize(
    ("expr", "expected"),
    [("optional.none().optMap(v, f).hasValue()", False), ("optional.of(1).optMap(v, v + 1).value()", 2),
     ("optional.of(2).optFlatMap(v, optional.of(v * 2)).value()", 4)],
)  # fmt: skip
def test_explain_shows_optional_map_macros(expr: str, expected: Any) -> None:
    assert same(expr, {"f": 1.5}, f="double") == expected
    text = kcel.Env(variables={"f": "double"}).compile(expr).explain({"f": 1.5}).text()
    assert text.startswith(expr + " = ")


# A value nested past Python's recursion limit (or containing itself) raised RecursionError; explain() did too,
# rendering a value 3,000 levels deep.
def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def test_values_too_deep_to_compare_are_an_evaluation_error() -> None:
    deep = {"a": _nested(20_000), "b": _nested(20_000)}
    assert same("a == b", deep, a="dyn", b="dyn") == (EvalError, "value nested too deeply to evaluate")


def test_explain_shows_deep_and_cyclic_values() -> None:
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    for value in (_nested(3000), cyclic):
        explained = kcel.Env(variables={"a": "dyn"}).compile("size(a)").explain({"a": value})
        assert explained.value == len(value)
        assert explained.text()


# The metered `in` charged a list's length to an operand that is no list, and so raised TypeError ("no such
# overload" after the retry) where cel-go reports the failed operand.
def test_metered_in_reports_the_failed_operand() -> None:
    assert same("dyn({}['a']) in dyn(1)") == (EvalError, "no such key: a")


# The metered indexOf/lastIndexOf charged the receiver's UTF-8 length when the receiver had failed: AttributeError.
@pytest.mark.parametrize("function", ["indexOf", "lastIndexOf"])
def test_metered_index_of_reports_the_failed_receiver(function: str) -> None:
    error = same(f"'abc'.substring(2, -1).{function}('a')")
    assert error == (EvalError, "invalid substring range. start: 2, end: -1")


# cel.bind's initialiser runs on first use of its variable (cel-go's folder.ResolveName); one that was just a name
# was read at once, so a bind of a failing bind failed although nothing used it, and paid for the read.
def test_bind_to_a_name_is_read_only_when_used() -> None:
    assert same("cel.bind(a, [][0], cel.bind(b, a, 1))") == 1
    program = kcel.Env(variables={"x": "int"}).compile("cel.bind(b, x, 1)")
    assert program.evaluate_with_cost({"x": 1}) == (1, 0)
    assert kcel.Env(variables={"x": "int"}).compile("cel.bind(b, x, b + b)").evaluate_with_cost({"x": 2}) == (4, 4)


# A datetime or timedelta variable outside CEL's range (a duration past ±292 years, a timestamp before year 1 in
# UTC) raised the ValueError of its conversion from evaluate and explain.
@pytest.mark.parametrize(
    ("declared", "value", "message"),
    [("google.protobuf.Duration", timedelta(days=10**6), "duration out of range"),
     ("dyn", timedelta(days=-(10**6)), "duration out of range"),
     ("google.protobuf.Timestamp", datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))), "timestamp out of range")],
)  # fmt: skip
def test_times_out_of_range_are_an_evaluation_error(declared: str, value: Any, message: str) -> None:
    error = same("d", {"d": value}, d=declared)
    assert error[0] is EvalError and error[1].startswith(message)


# A variable declared with a type but bound to a value of another (a `string` bound to an int) reached library
# functions that use the value's methods: AttributeError escaped evaluate, evaluate_with_cost and explain. cel-go
# finds no overload for such a value at run time; kcel now says so, and `||` absorbs it like any error.
@pytest.mark.parametrize(
    ("expr", "value"),
    [("s.matches('a')", 3), ("s.format([1])", 1), ("s.lowerAscii()", {}), ("s.trim()", []), ("quantity(s)", 1),
     ("url(s)", 1), ("cidr(s)", 1), ("s.indexOf('a')", 1.5), ("strings.quote(s)", {"a": 1})],
)  # fmt: skip
def test_a_value_of_another_type_than_declared_is_no_such_overload(expr: str, value: Any) -> None:
    error = same(expr, {"s": value}, s="string")
    assert error[0] is EvalError and error[1] == "no such overload"
    assert same(f"true || dyn({expr}) == ''", {"s": value}, s="string") is True
