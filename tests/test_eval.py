"""Evaluation tables: (expression, variables, expected value or error), runtime costs, safety."""

from __future__ import annotations

import math
import threading
import time
import tracemalloc
from typing import Any

import pytest

import kcel
from kcel.values import Optional, TypeValue, Uint

ENV = kcel.Env(variables={"x": "int", "s": "string", "self": "dyn", "m": "map(string, int)", "l": "list(int)"})
VARS: dict[str, Any] = {"x": 3, "s": "héllo", "self": {"a": {"b": [1, 2]}, "n": None}, "m": {"k": 1}, "l": [1, 2, 3]}

VALUES = [
    ("1 + 2 * 3", 7), ("7 / 2", 3), ("-7 / 2", -3), ("-7 % 3", -1), ("7 % -3", 1), ("2u * 3u", Uint(6)),
    ("1.5 + 1.0", 2.5), ("1.0 / 0.0", math.inf), ("'a' + 'b'", "ab"), ("b'a' + b'b'", b"ab"), ("[1] + [2]", [1, 2]),
    ("size(s)", 5), ("s.size()", 5), ("size(b'\\xff')", 1), ("size(m)", 1), ("x > 2 && x < 4", True),
    ("1 < 1.5", True), ("2u > 1", True), ("dyn(1) == 1.0", True), ("dyn(1) == 1u", True), ("[1, 2] == [1.0, 2u]", True),
    ("dyn({'a': 1}) == {'a': 1.0}", True), ("dyn(true) == 1", False), ("null == null", True), ("'a' < 'b'", True),
    ("b'a' < b'b'", True), ("false < true", True), ("x in [1, 2, 3]", True), ("'k' in m", True), ("2 in {1: 2}", False),
    ("self.a.b[1]", 2), ("self.a['b'][0]", 1), ("m.k", 1), ("has(self.a)", True), ("has(self.z)", False),
    ("has(self.a.b)", True), ("self.n == null", True), ("x == 3 ? 'yes' : 'no'", "yes"), ("!(x == 3)", False),
    ("l.map(i, i * 2)", [2, 4, 6]), ("l.filter(i, i > 1)", [2, 3]), ("l.all(i, i > 0)", True),
    ("l.exists(i, i > 2)", True), ("l.exists_one(i, i > 2)", True), ("l.map(i, i > 1, i)", [2, 3]),
    ("m.all(k, k == 'k')", True), ("l.all(i, v, i < v)", True), ("m.exists(k, v, v == 1)", True),
    ("l.transformList(i, v, v * i)", [0, 2, 6]), ("m.transformMap(k, v, v + 1)", {"k": 2}),
    ("l.transformMapEntry(i, v, {string(i): v})", {"0": 1, "1": 2, "2": 3}), ("cel.bind(y, x * x, y + y)", 18),
    ("[1, 0].all(i, 1 / i > 1)", False), ("[0, 1].exists(i, 1 / i > 0)", True),
    ("1 / 0 > 1 || true", True), ("true || 1 / 0 > 1", True), ("false && 1 / 0 > 1", False),
    ("type(1) == int", True), ("type(1u) == uint", True), ("type('a') == string", True), ("type(type) == type", True),
    ("type(null) == null_type", True), ("type([]) == list", True), ("type({}) == map", True),
    ("type(1)", TypeValue("int")),
    ("int('-42')", -42), ("uint('42')", Uint(42)), ("double('1.5e3')", 1500.0), ("string(1.0)", "1"),
    ("string(1e6)", "1e+06"), ("string(2u)", "2"), ("string(true)", "true"), ("string(b'abc')", "abc"),
    ("bytes('é')", b"\xc3\xa9"), ("bool('true')", True), ("int(1.9)", 1), ("int(-1.9)", -1), ("double(2)", 2.0),
    ("'abc'.contains('b')", True), ("s.startsWith('hé')", True), ("'abc'.endsWith('c')", True),
    ("'abc'.matches('^a.c$')", True), ("matches('xyz', 'y')", True), ("dyn([1, 'a'])[1]", "a"),
    ("optional.of(1).value()", 1), ("optional.none().hasValue()", False), ("optional.none().orValue(5)", 5),
    ("optional.of(2).or(optional.of(3)).value()", 2), ("m.?k.value()", 1), ("m.?z.hasValue()", False),
    ("l[?5].orValue(0)", 0), ("[?optional.none(), ?optional.of(1), 2]", [1, 2]), ("{?'a': optional.none()}", {}),
    ("optional.of(1).optMap(v, v + 1).value()", 2), ("optional.ofNonZeroValue(0).hasValue()", False),
    ("[3, 1, 2].sortBy(e, e)", [1, 2, 3]), ("'x' in ['x', 'y']", True), ("dyn(1) in ['x', 'y']", False),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "expected"), VALUES)
def test_values(expr: str, expected: Any) -> None:
    actual = ENV.compile(expr).evaluate(VARS)
    assert type(actual) is type(expected) or (isinstance(expected, list) and isinstance(actual, (list, tuple)))
    assert actual == expected if not isinstance(expected, list) else list(actual) == expected


ERRORS = [
    ("1 / 0", "division by zero"), ("1 % 0", "modulus by zero"), ("9223372036854775807 + 1", "integer overflow"),
    ("-9223372036854775808 - 1", "integer overflow"), ("0u - 1u", "unsigned integer overflow"),
    ("-9223372036854775808 / -1", "integer overflow"), ("dyn(1) + 1u", "no such overload"),
    ("dyn(1) + 1.0", "no such overload"),
    ("self.missing", "no such key: missing"), ("l[3]", "index out of bounds: 3"), ("l[-1]", "index out of bounds: -1"),
    ("m['z']", "no such key: z"), ("dyn('a') < 1", "no such overload"), ("dyn(x) ? 1 : 2", "no such overload"),
    ("!dyn(x)", "no such overload"), ("int(['x'][0])", None), ("int([1e19][0])", None), ("uint([-1][0])", None),
    ("string([b'\\xff'][0])", None), ("{'a': 1, 'a': 2}", None), ("optional.none().value()", None),
    ("[1, 0].exists_one(i, 1 / i > 0)", "division by zero"), ("1 / 0 > 1 && true", "division by zero"),
    ("size(dyn(1))", "no such overload"), ("'a'.matches(['('][0])", "error parsing regexp: missing closing ): `(`"),
]  # fmt: skip

# Conversions of literals are computed when the program is built (cel-go's OptOptimize), and literal
# patterns compiled then: a bad one fails the program before evaluation, as "program instantiation failed".
PLAN_ERRORS = [
    ("int('x')", "type conversion error from 'string' to 'int'"), ("int(1e19)", "range error converting double to int"),
    ("uint(-1)", "range error converting int to uint"),
    ("'a'.matches('(')", "error parsing regexp: missing closing ): `(`"),
    ("1 + int(dyn('x'))", "type conversion error from 'string' to 'int'"),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "message"), PLAN_ERRORS)
def test_plan_errors(expr: str, message: str) -> None:
    with pytest.raises(kcel.PlanError) as info:
        ENV.compile(expr)
    assert str(info.value).startswith(message)


def test_without_optimize_conversions_fail_when_evaluated() -> None:
    program = kcel.Env(optimize=False).compile("int('x')")
    with pytest.raises(kcel.EvalError, match="type conversion error"):
        program.evaluate()


@pytest.mark.parametrize(("expr", "message"), ERRORS)
def test_errors(expr: str, message: str | None) -> None:
    with pytest.raises(kcel.EvalError) as info:
        ENV.compile(expr).evaluate(VARS)
    if message is not None:
        assert str(info.value) == message


# Runtime costs from k8s-cel-cost.md §2 (the worked examples marked there as checked against cel-go).
COSTS = [
    ("self.array.all(e, e > 0)", {"array": [1, 2, 3, 4, 5, 6, 7, 8]}, 43),
    ("self.array.exists(e, e > 2)", {"array": [1, 1, 2, 2, 3, 3, 4, 5]}, 36),
    ("size(self.listMap.filter(m, m.k == 'a1')) == 1", {"listMap": [{"k": "a1"}, {"k": "a2"}, {"k": "a3"}]}, 27),
    ("self.listMap.exists_one(m, m.k == 'a3')", {"listMap": [{"k": "a1"}, {"k": "a2"}, {"k": "a3"}]}, 15),
    ("self.val.transformMapEntry(k, v, {k + '2': v + 1}).size() == 2", {"val": {"a": 1, "b": 2}}, 77),
    ("optional.of('a').optMap(v, v == 'value').hasValue()", {}, 8),
    ("self.val1.startsWith('Rook')", {"val1": "Rook takes"}, 3),
    ("self.val1.matches('^[^0-9]*$')", {"val1": "abcdefghijkl"}, 8),
    ("self.x", {"x": 1}, 2), ("self.a.b[0]", {"a": {"b": [1]}}, 4), ("self.m[k]", {"m": {"a": 1}}, None),
    ("[1, 2][0]", {}, 2), ("has(self.a.b)", {"a": {"b": 1}}, 2), ("has(self.a)", {"a": 1}, 1),
    ("self.s == 'abcdefghijklmnopqrstu'", {"s": "abcdefghijklmnopqrstu"}, 1 + 1 + 3),
    ("self.s + 'abcdefghij'", {"s": "abcdefghij"}, 2 + 2), ("'a' in self.l", {"l": ["a", "b", "c"]}, 2 + 3),
    ("[self.x, 1]", {"x": 1}, 10 + 2), ("{'a': self.x}", {"x": 1}, 30 + 2), ("{'a': 1}", {}, 0),
    ("self.x > 0 ? self.x : 0", {"x": 1}, 2 + 1 + 1), ("self.b || self.c", {"b": True, "c": False}, 2),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "self_value", "cost"), [c for c in COSTS if c[2] is not None])
def test_runtime_cost(expr: str, self_value: Any, cost: int) -> None:
    value, actual = ENV.compile(expr).evaluate_with_cost({"self": self_value})
    assert actual == cost
    assert ENV.compile(expr).evaluate({"self": self_value}) == value


def test_cost_limit_stops_runaway_expressions_quickly_and_in_bounded_memory() -> None:
    ten = "[1,2,3,4,5,6,7,8,9,10]"
    expr = f"{ten}.map(a, {ten}.map(b, {ten}.map(c, {ten}.map(d, {ten}.map(e, a + b + c + d + e)))))"
    program = ENV.compile(expr)
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(kcel.CostLimitExceeded) as info:
        program.evaluate({}, cost_limit=1_000_000)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert str(info.value) == "operation cancelled: actual cost limit exceeded"
    assert elapsed < 5 and peak < 50_000_000


def test_cost_limit_is_exceeded_only_when_strictly_greater() -> None:
    program = ENV.compile("self.x")
    assert program.evaluate({"self": {"x": 1}}, cost_limit=2) == 1
    with pytest.raises(kcel.CostLimitExceeded):
        program.evaluate({"self": {"x": 1}}, cost_limit=1)


HOSTILE = [
    "'); import os; os.system('echo pwned'); ('", '"""\n__import__("os").system("x")\n"""', "{0}{1}{__class__}",
    "\\x00\\n\\r\\t", "' + __import__('os').getcwd() + '", "\\\\", "\\u2028\\u2029", "%s%d%n",
]  # fmt: skip


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_literals_come_out_as_their_values(text: str) -> None:
    for quoted in (repr(text), "r" + repr(text) if "\\" not in text else repr(text)):
        literal = kcel.parse(quoted).expr.value  # type: ignore[union-attr]
        for expr in (quoted, f"[{quoted}][0]", f"{{{quoted}: 1}}", f"{quoted} + ''", f"b{quoted}"):
            program = ENV.compile(expr)
            value = program.evaluate(VARS)
            expected: Any = {"[": literal, "{": {literal: 1}, "b": literal.encode()}.get(expr[0], literal)
            assert value == expected
            assert "__import__" not in program.python_source.replace(repr(literal), "")


def test_programs_are_shared_safely_between_threads() -> None:
    program = ENV.compile("l.map(i, i * x).filter(v, v > 3).size()")
    results: list[int] = []

    def work(n: int) -> None:
        for _ in range(200):
            results.append(program.evaluate({"l": list(range(n)), "x": 2}))

    threads = [threading.Thread(target=work, args=(n,)) for n in (5, 10, 20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(set(results)) == [3, 8, 18]


def test_generated_source_is_visible_and_named() -> None:
    program = ENV.compile("x + 1")
    assert program.python_source.startswith("def _kcel_eval(")
    program.evaluate({"x": 1})  # the Python function is compiled on first use
    assert program._fast is not None and program._fast.__code__.co_filename.startswith("<kcel:")


def test_optional_values_are_python_objects() -> None:
    assert ENV.compile("optional.of(1)").evaluate() == Optional(1)


def test_checked_types_plan_plain_python_and_dyn_keeps_runtime_dispatch() -> None:
    assert "(_v1 < 1)" in ENV.compile("x < 1").python_source
    assert "_less(" in ENV.compile("dyn(x) < 1").python_source
    assert "_less(" in ENV.compile("x < 1", check=False).python_source
    with pytest.raises(kcel.EvalError):
        ENV.compile("math.ceil(dyn(1))").evaluate()
