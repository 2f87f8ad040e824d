"""Golden checker tables: (expression, declarations) -> type, or -> rendered error."""

from __future__ import annotations

import re

import pytest

import kcel
from kcel.checker.types import parse_type

DECLS = {"x": "int", "u": "uint", "s": "string", "l": "list(int)", "m": "map(string, list(int))", "d": "dyn"}
ENV = kcel.Env(variables=DECLS)
K8S_LIKE = kcel.Env(variables=DECLS, homogeneous_literals=True)

TYPES = [
    ("x + 1", "int"), ("u * 2u", "uint"), ("1.5 / 2.0", "double"), ("s + 'a'", "string"), ("b'a'", "bytes"),
    ("null", "null_type"), ("x < 1.5", "bool"), ("u > 1", "bool"), ("[1, 2]", "list(int)"), ("[]", "list(dyn)"),
    ("{}", "map(dyn, dyn)"), ("{'a': 1}", "map(string, int)"), ("[1, 'a']", "list(dyn)"), ("m.k", "list(int)"),
    ("m['k'][0]", "int"), ("d.a.b", "dyn"), ("d[0]", "dyn"), ("l.map(i, i * 2)", "list(int)"),
    ("l.map(i, string(i))", "list(string)"), ("l.filter(i, i > 1)", "list(int)"), ("m.all(k, k != '')", "bool"),
    ("m.exists(k, v, size(v) > 0)", "bool"), ("l.transformList(i, v, i + v)", "list(int)"),
    ("m.transformMap(k, v, size(v))", "map(string, int)"), ("cel.bind(y, x * 2, [y])", "list(int)"),
    ("type(x)", "type(int)"), ("int", "type(int)"), ("x == 1 ? s : 'b'", "string"), ("x == 1 ? d : 1", "dyn"),
    ("optional.of(x)", "optional_type(int)"), ("m.?k", "optional_type(list(int))"), ("l[?0]", "optional_type(int)"),
    ("m.?k.orValue([])", "list(int)"), ("size(s)", "int"), ("s.matches('a+')", "bool"), ("dyn(x)", "dyn"),
    ("timestamp('2024-01-01T00:00:00Z') - duration('1h')", "google.protobuf.Timestamp"),
    ("duration('1h').getMinutes()", "int"), ("has(d.a)", "bool"), ("[?optional.of(1)]", "list(int)"),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "expected"), TYPES)
def test_types(expr: str, expected: str) -> None:
    assert str(ENV.compile(expr).output_type) == expected
    assert parse_type(expected) == ENV.compile(expr).output_type


ERRORS = [
    ("y", "ERROR: <input>:1:1: undeclared reference to 'y' (in container '')\n | y\n | ^"),
    ("x + s", "ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'\n | x + s\n | ..^"),
    ("x == 1.0", "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, double)'\n"
     " | x == 1.0\n | ..^"),
    ("s.startsWith(1)", "ERROR: <input>:1:13: found no matching overload for 'startsWith' applied to "
     "'string.(int)'\n | s.startsWith(1)\n | ............^"),
    ("x.a", "ERROR: <input>:1:2: type 'int' does not support field selection\n | x.a\n | .^"),
    ("x.all(i, i > 0)", "ERROR: <input>:1:1: expression of type 'int' cannot be range of a comprehension "
     "(must be list, map, or dynamic)\n | x.all(i, i > 0)\n | ^"),
    ("l.all(i, i)", "ERROR: <input>:1:10: expected type 'bool' but found 'int'\n | l.all(i, i)\n | .........^"),
    ("x && s", "ERROR: <input>:1:1: expected type 'bool' but found 'int'\n | x && s\n | ^\n"
     "ERROR: <input>:1:6: expected type 'bool' but found 'string'\n | x && s\n | .....^"),
    ("l == null", "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(list(int), null)'\n"
     " | l == null\n | ..^"),
    ("x ? 1 : 2", "ERROR: <input>:1:3: found no matching overload for '_?_:_' applied to '(int, int, int)'\n"
     " | x ? 1 : 2\n | ..^"),
    ("y + z", "ERROR: <input>:1:1: undeclared reference to 'y' (in container '')\n | y + z\n | ^\n"
     "ERROR: <input>:1:5: undeclared reference to 'z' (in container '')\n | y + z\n | ....^"),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "rendered"), ERRORS)
def test_errors_are_collected_and_rendered_like_cel_go(expr: str, rendered: str) -> None:
    with pytest.raises(kcel.CompileError) as info:
        ENV.compile(expr)
    assert str(info.value) == rendered


def test_homogeneous_literals_as_kubernetes_configures_them() -> None:
    assert str(ENV.compile("[1, 'a']").output_type) == "list(dyn)"
    with pytest.raises(kcel.CompileError) as info:
        K8S_LIKE.compile("[1, 'a']")
    assert info.value.messages == ("expected type 'int' but found 'string'",)
    # A validator after checking, comparing types exactly (cel-go's IsEquivalentType): dyn is a type of its own.
    with pytest.raises(kcel.CompileError) as info:
        K8S_LIKE.compile("[1, dyn('a')]")
    assert info.value.messages == ("expected type 'int' but found 'dyn'",)
    assert str(K8S_LIKE.compile("[dyn(1), dyn('a')]").output_type) == "list(dyn)"
    # Only once checking succeeded: an undeclared name alone is reported, not the mixed list around it.
    with pytest.raises(kcel.CompileError) as info:
        K8S_LIKE.compile("[nope, 'a', 1]")
    assert info.value.messages == ("undeclared reference to 'nope' (in container '')",)


def test_containers_resolve_qualified_names() -> None:
    env = kcel.Env(variables={"a.b.c": "int", "x.y": "string"}, container="a.b")
    assert str(env.compile("c + 1").output_type) == "int"
    assert str(env.compile("x.y.size()").output_type) == "int"
    assert env.compile("c + 1").evaluate({"a.b.c": 41}) == 42


def test_unchecked_compilation_defers_errors_to_evaluation() -> None:
    program = ENV.compile("dyn(x) + s", check=True)
    with pytest.raises(kcel.EvalError):
        program.evaluate({"x": 1, "s": "a"})
    assert ENV.compile("y + 1", check=False).evaluate({"y": 1}) == 2


NULLABLE = {"ts": "google.protobuf.Timestamp", "o": "optional_type(int)", "ip": "net.IP", "q": "kubernetes.Quantity"}
NULLS = [
    # cel-go checker/types.go: null is assignable to opaque types (optionals, net.IP, Quantity...), messages,
    # timestamps and durations, and those to null, in either operand order.
    ("ts == null", "bool"), ("null == ts", "bool"), ("duration('1s') != null", "bool"), ("o == null", "bool"),
    ("null != o", "bool"), ("ip == null", "bool"), ("q == null", "bool"), ("null == null", "bool"),
    ("optional.none() == null", "bool"), ("null in [ts]", "bool"), ("ts in [null]", "bool"),
    # joins and type parameters keep the more general type, the later one when neither is less specific
    ("[null, ts]", "list(google.protobuf.Timestamp)"), ("[ts, null]", "list(null_type)"),
    ("[null, o]", "list(optional_type(int))"), ("[o, null]", "list(null_type)"),
    ("true ? ts : null", "google.protobuf.Timestamp"), ("true ? null : ts", "null_type"),
    ("{'a': null, 'b': ts}", "map(string, google.protobuf.Timestamp)"), ("[null, ts][0]", "google.protobuf.Timestamp"),
    ("[int, string]", "list(type(int))"),  # any type(...) is as specific as another: the first is kept
]  # fmt: skip


@pytest.mark.parametrize(("expr", "expected"), NULLS)
def test_null_is_assignable_to_nullable_types(expr: str, expected: str) -> None:
    env = kcel.Env(variables=NULLABLE)
    assert str(env.compile(expr).output_type) == expected


@pytest.mark.parametrize("expr", ["x == null", "null == s", "l == null", "m == null", "null in l", "[1][0] == null"])
def test_null_is_not_assignable_to_primitives_lists_or_maps(expr: str) -> None:
    with pytest.raises(kcel.CompileError) as info:
        ENV.compile(expr)
    assert "found no matching overload" in info.value.messages[0]


def test_null_comparisons_in_the_kubernetes_environment() -> None:
    env = kcel.Env(k8s_version="1.34", variables={"self": "string"})
    program = env.compile("format.dns1123Label().validate(self) == null")  # validate: optional(list(string))
    assert program.evaluate({"self": "ok"}) is False
    assert env.compile("timestamp('2020-01-01T00:00:00Z') == null").evaluate({}) is False
    assert env.compile("null != url('https://example.com')").evaluate({}) is True


OPTIONAL_INDEXES = [
    # cel-go declares `_[?_]` and `_[_]` on an optional as overloads (cel/library.go): keys must match, and
    # several candidates with different results (a dyn operand) make the result dyn
    ("m[?'k']", "optional_type(list(int))"), ("l[?0]", "optional_type(int)"), ("d[?0]", "dyn"),
    ("optional.of(l)[0]", "optional_type(int)"), ("optional.of(m)[?'k']", "optional_type(list(int))"),
    ("optional.of(d)[0]", "dyn"), ("m[?1]", "found no matching overload for '_[?_]' applied to '(map(string, "
     "list(int)), int)'"), ("l[?'a']", "found no matching overload for '_[?_]' applied to '(list(int), string)'"),
    ("optional.of(m)[1]", "found no matching overload for '_[_]' applied to '(optional_type(map(string, list(int)))"
     ", int)'"),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "expected"), OPTIONAL_INDEXES)
def test_optional_indexing_resolves_overloads(expr: str, expected: str) -> None:
    if expected.startswith("found"):
        with pytest.raises(kcel.CompileError) as info:
            ENV.compile(expr)
        assert info.value.messages == (expected,)
    else:
        assert str(ENV.compile(expr).output_type) == expected


@pytest.mark.parametrize(("declared", "message"), [
    ("strng", "unknown type 'strng' (did you mean 'string'?)"),
    ("map(strng, int)", "unknown type 'strng' (did you mean 'string'?)"),
    ("lst(int)", "unknown type 'lst' (did you mean 'list'?)"),
    ("foo.Bar", "unknown type 'foo.Bar'"),
])  # fmt: skip
def test_a_declared_type_no_one_declares_is_an_error_naming_it(declared: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"variable 'x': {declared!r}: {message}")):
        kcel.Env(variables={"x": declared})


@pytest.mark.parametrize("declared", [
    "list(int)", "map(string, dyn)", "timestamp", "google.protobuf.Duration", "optional_type(list(int))",
    "kubernetes.Quantity", "net.IP", "kubernetes.authorization.Authorizer", "google.protobuf.Int64Value", "null_type",
])  # fmt: skip
def test_declared_types_the_libraries_know(declared: str) -> None:
    assert kcel.Env(variables={"x": declared}, k8s_version="1.37").variables["x"] is not None
