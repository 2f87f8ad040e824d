"""kcel.eval.display: every kind of CEL value kcel evaluates to, written as CEL (`cel_text`) and as `-o json` data
(`json_value`). Each case evaluates a real expression; where the text is itself CEL, evaluating it must give the
value back (the round trip), and no rendering may ever be a Python repr."""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

import pytest

import kcel
from kcel.cli import main
from kcel.errors import EvalError
from kcel.eval.display import cel_text, json_value
from kcel.eval.equality import cel_equals
from kcel.k8s.surfaces.environments import environment
from kcel.libs.k8s_authz import AlwaysAllow, AlwaysDeny, Attributes, Decision, UserInfo, authorizer_value
from kcel.libs.k8s_format import FORMATS
from kcel.libs.k8s_quantity import Quantity

VERSION = "1.37"
PLAIN = kcel.Env(k8s_version=VERSION)
CEL_GO = kcel.Env()  # cel-go's own environment: list and map literals may mix types


@cache
def _env(name: str) -> kcel.Env:
    return PLAIN if name == "plain" else CEL_GO if name == "cel-go" else environment(name, VERSION)


def _evaluate(env: str, expression: str, activation: dict[str, Any] | None = None) -> Any:
    return _env(env).compile(expression).evaluate(activation or {})


def _assert_no_repr(*rendered: Any) -> None:
    text = json.dumps(rendered)
    for python in (" object at 0x", "Quantity(", "NamedFormat(", "IP(", "{'", "JSONPatchValue", "Decision("):
        assert python not in text


def _same(a: Any, b: Any) -> bool:
    """CEL equality, with NaN equal to itself (a round trip must give NaN back)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, Quantity) and isinstance(b, Quantity):  # add()'s results have no ==, as in Kubernetes
        return a.compare(b) == 0
    return bool(cel_equals(a, b))


CASES = [
    # (environment, expression, CEL text, JSON); the CEL text evaluates back to an equal value
    ("plain", "null", "null", None),
    ("plain", "true", "true", True),
    ("plain", "-5", "-5", -5),
    ("plain", "9223372036854775807", "9223372036854775807", 9223372036854775807),
    ("plain", "18446744073709551615u", "18446744073709551615u", 18446744073709551615),
    ("plain", "1.5", "1.5", 1.5),
    ("plain", "2.0", "2.0", 2.0),
    ("plain", "1e300 * 10.0", "1e+301", 1e301),
    ("plain", 'double("NaN")', 'double("NaN")', "NaN"),
    ("plain", "1e308 * 10.0", 'double("Infinity")', "Infinity"),
    ("plain", "-1e308 * 10.0", 'double("-Infinity")', "-Infinity"),
    ("plain", r'"a\"b\n"', r'"a\"b\n"', 'a"b\n'),
    ("plain", r'b"\xff\x00a"', r'b"\xff\x00a"', "/wBh"),
    ("plain", "[1, 2, 3].map(x, x * 2)", "[2, 4, 6]", [2, 4, 6]),
    ("plain", "[[1u], [2u]]", "[[1u], [2u]]", [[1], [2]]),
    ("plain", '{"a": 1, "b": 2}', '{"a": 1, "b": 2}', {"a": 1, "b": 2}),
    ("plain", '{1: "x", 2: "y"}', '{1: "x", 2: "y"}', {"1": "x", "2": "y"}),
    ("plain", '{true: "t"}', '{true: "t"}', {"true": "t"}),
    ("plain", '{7u: "u"}', '{7u: "u"}', {"7u": "u"}),
    ("cel-go", '{1: "int", true: "bool"}', '{1: "int", true: "bool"}', {"1": "int", "true": "bool"}),
    ("plain", "optional.of(1)", "optional.of(1)", "optional.of(1)"),
    ("plain", "optional.none()", "optional.none()", "optional.none()"),
    ("plain", "[optional.of([1])]", "[optional.of([1])]", ["optional.of([1])"]),
    ("plain", "type(1)", "int", "int"),
    ("plain", "type([1])", "list", "list"),
    ("plain", "type(optional.none())", "optional_type", "optional_type"),
    ("plain", 'timestamp("2023-01-01T10:00:00.5+02:00")', 'timestamp("2023-01-01T10:00:00.5+02:00")',
     "2023-01-01T10:00:00.5+02:00"),
    ("plain", 'timestamp("2023-01-01T00:00:00Z") + duration("1ns")', 'timestamp("2023-01-01T00:00:00.000000001Z")',
     "2023-01-01T00:00:00.000000001Z"),
    ("plain", 'duration("1h30m")', 'duration("5400s")', "5400s"),
    ("plain", 'duration("-1ms")', 'duration("-0.001s")', "-0.001s"),
    ("plain", 'quantity("1Gi")', 'quantity("1Gi")', "1Gi"),
    ("plain", 'quantity("1.5").add(quantity("500m"))', 'quantity("2")', "2"),
    ("plain", '[quantity("100m")]', '[quantity("100m")]', ["100m"]),
    ("plain", 'ip("10.0.0.1")', 'ip("10.0.0.1")', "10.0.0.1"),
    ("plain", 'ip("2001:db8::1")', 'ip("2001:db8::1")', "2001:db8::1"),
    ("plain", 'cidr("10.0.0.1/8")', 'cidr("10.0.0.1/8")', "10.0.0.1/8"),
    ("plain", 'cidr("10.0.0.1/8").masked()', 'cidr("10.0.0.0/8")', "10.0.0.0/8"),
    ("plain", 'cidr("10.0.0.0/8").ip()', 'ip("10.0.0.0")', "10.0.0.0"),
    ("plain", 'url("https://example.com/a?b=c")', 'url("https://example.com/a?b=c")', "https://example.com/a?b=c"),
    ("plain", 'semver("1.2.3-rc.1+build.5")', 'semver("1.2.3-rc.1+build.5")', "1.2.3-rc.1+build.5"),
    ("plain", "format.dns1123Label()", "format.dns1123Label()", "format.dns1123Label()"),
    ("plain", "format.qualifiedName()", "format.qualifiedName()", "format.qualifiedName()"),
    ("plain", 'format.named("uri")', "optional.of(format.uri())", "optional.of(format.uri())"),
    ("plain", 'format.named("nope")', "optional.none()", "optional.none()"),
    ("mutating-policy", 'JSONPatch{op: "add", path: "/a", value: 1}', 'JSONPatch{op: "add", path: "/a", value: 1}',
     {"op": "add", "path": "/a", "value": 1}),
    ("mutating-policy", 'JSONPatch{op: "move", from: "/a", path: "/b"}',
     'JSONPatch{op: "move", path: "/b", from: "/a"}',
     {"op": "move", "path": "/b", "from": "/a"}),
    ("mutating-policy", 'JSONPatch{op: "remove", path: "/a"}', 'JSONPatch{op: "remove", path: "/a"}',
     {"op": "remove", "path": "/a"}),
    ("mutating-policy", 'JSONPatch{op: "add", path: "/a", value: null}',
     'JSONPatch{op: "add", path: "/a", value: null}',
     {"op": "add", "path": "/a", "value": None}),
    ("mutating-policy", '[JSONPatch{op: "replace", path: "/spec", value: {"replicas": quantity("1")}}]',
     '[JSONPatch{op: "replace", path: "/spec", value: {"replicas": quantity("1")}}]',
     [{"op": "replace", "path": "/spec", "value": {"replicas": "1"}}]),
    ("mutating-policy", "Object{spec: Object.spec{replicas: 3}}", "Object{spec: Object.spec{replicas: 3}}",
     {"spec": {"replicas": 3}}),
    ("mutating-policy", 'Object{metadata: Object.metadata{labels: {"app": "web"}}, spec: Object.spec{x: [b"a"]}}',
     'Object{metadata: Object.metadata{labels: {"app": "web"}}, spec: Object.spec{x: [b"a"]}}',
     {"metadata": {"labels": {"app": "web"}}, "spec": {"x": ["YQ=="]}}),
    ("mutating-policy", "Object{}", "Object{}", {}),
]  # fmt: skip


@pytest.mark.parametrize(("env", "expression", "text", "data"), CASES)
def test_values_print_as_cel_and_json(env: str, expression: str, text: str, data: Any) -> None:
    value = _evaluate(env, expression)
    assert cel_text(value) == text
    assert json_value(value) == data
    assert json.loads(json.dumps(json_value(value), allow_nan=False)) == data  # strict JSON, NaN included
    _assert_no_repr(cel_text(value), json_value(value))


@pytest.mark.parametrize(("env", "expression", "text"), [(c[0], c[1], c[2]) for c in CASES])
def test_the_text_evaluates_back_to_the_value(env: str, expression: str, text: str) -> None:
    assert _same(_evaluate(env, text), _evaluate(env, expression))


@pytest.mark.parametrize("key", sorted(FORMATS))
def test_every_format_prints_as_the_function_that_returns_it(key: str) -> None:
    value = _evaluate("plain", f"format.named({key!r}).value()")
    assert cel_text(value) == f"format.{key}()"
    assert _evaluate("plain", cel_text(value)) == value


def test_type_values_of_library_types_print_their_names() -> None:
    assert cel_text(_evaluate("plain", 'type(quantity("1"))')) == "kubernetes.Quantity"
    assert json_value(_evaluate("plain", "type(format.uri())")) == "kubernetes.NamedFormat"


def test_json_ints_stay_exact_numbers_beyond_double_precision() -> None:
    assert json.dumps(json_value(_evaluate("cel-go", "[9007199254740993, 18446744073709551615u]"))) == (
        "[9007199254740993, 18446744073709551615]"
    )


# -- authorizer values: the chain of calls that builds them -----------------------------------------------

AUTHZ = [
    ("authorizer", "authorizer"),
    ('authorizer.path("/healthz")', 'authorizer.path("/healthz")'),
    ("authorizer.group('apps')", 'authorizer.group("apps")'),
    ("authorizer.group('apps').resource('deployments')", 'authorizer.group("apps").resource("deployments")'),
    ("authorizer.group('').resource('pods').name('p').subresource('status').namespace('ns')",
     'authorizer.group("").resource("pods").subresource("status").namespace("ns").name("p")'),
    ("authorizer.group('').resource('pods').labelSelector('app=web').fieldSelector('spec.nodeName=n')",
     'authorizer.group("").resource("pods").fieldSelector("spec.nodeName=n").labelSelector("app=web")'),
    ("authorizer.serviceAccount('default', 'builder')", 'authorizer.serviceAccount("default", "builder")'),
    ("authorizer.serviceAccount('ns', 'sa').group('apps')", 'authorizer.serviceAccount("ns", "sa").group("apps")'),
]  # fmt: skip


def _authorizer(allow: bool = True, user: UserInfo | None = None) -> dict[str, Any]:
    return {"authorizer": authorizer_value(AlwaysAllow() if allow else AlwaysDeny(), user or UserInfo("alice"))}


@pytest.mark.parametrize(("expression", "text"), AUTHZ)
def test_authorizer_values_print_as_the_calls_that_build_them(expression: str, text: str) -> None:
    value = _evaluate("validating-policy", expression, _authorizer())
    assert cel_text(value) == text
    assert json_value(value) == text
    again = _evaluate("validating-policy", text, _authorizer())  # authz values have no ==: compare the texts
    assert type(again) is type(value) and cel_text(again) == text


def test_an_authorizer_whose_user_is_a_service_account_with_more_groups_prints_as_the_variable() -> None:
    user = UserInfo("system:serviceaccount:ns:sa", groups=("system:serviceaccounts", "system:authenticated"))
    assert cel_text(_evaluate("validating-policy", "authorizer", _authorizer(user=user))) == "authorizer"


class _Failing:
    def authorize(self, attributes: Attributes) -> Decision:
        raise TimeoutError("webhook timed out")


@pytest.mark.parametrize(("activation", "text"), [
    (_authorizer(), "kubernetes.authorization.Decision{allowed: true}"),
    (_authorizer(allow=False), 'kubernetes.authorization.Decision{allowed: false, reason: "Everything is forbidden."}'),
    ({"authorizer": authorizer_value(_Failing())},
     'kubernetes.authorization.Decision{allowed: false, error: "webhook timed out"}'),
])  # fmt: skip
def test_decisions_print_as_a_literal_of_what_their_methods_read(activation: dict[str, Any], text: str) -> None:
    value = _evaluate("validating-policy", "authorizer.group('').resource('pods').check('get')", activation)
    assert cel_text(value) == text
    assert json_value(value) == text


# -- errors, protobuf messages, host objects -----------------------------------------------------------


def test_errors_print_as_their_message() -> None:
    with pytest.raises(EvalError) as caught:
        _evaluate("plain", "1 / 0")
    assert cel_text(caught.value) == "error: division by zero"
    assert json_value(caught.value) == "error: division by zero"


def test_protobuf_messages_print_as_literals_and_protobuf_json() -> None:
    pytest.importorskip("google.protobuf", reason="protobuf messages need the kcel[protobuf] extra")
    from google.protobuf import descriptor_pb2

    field = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="acme/pod.proto", package="acme", syntax="proto3")
    pod = file.message_type.add(name="Pod")
    pod.field.add(name="name", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    pod.field.add(name="replicas", number=2, type=field.TYPE_INT64, label=field.LABEL_OPTIONAL)
    env = kcel.Env(messages=[descriptor_pb2.FileDescriptorSet(file=[file])])
    value = env.compile('acme.Pod{name: "web", replicas: 3}').evaluate({})
    assert cel_text(value) == 'acme.Pod{name: "web", replicas: 3}'
    assert json_value(value) == {"name": "web", "replicas": "3"}  # protobuf's JSON writes int64 as a string
    assert cel_equals(env.compile(cel_text(value)).evaluate({}), value)


def test_a_host_object_that_is_no_cel_value_prints_as_its_type_name() -> None:
    class Host:
        pass

    assert cel_text(Host()) == "<Host>"
    assert json_value([Host()]) == ["<Host>"]


def test_long_text_is_cut() -> None:
    assert cel_text(list(range(100)), limit=10) == "[0, 1, 2,…"


# -- the command line ---------------------------------------------------------------------------------


def test_kcel_eval_prints_cel(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", 'quantity("1Gi")']) == 0
    assert capsys.readouterr().out == 'quantity("1Gi") : kubernetes.Quantity\n'
    assert main(["eval", "--env", "mutating-policy", '[JSONPatch{op: "add", path: "/a", value: 1}]']) == 0
    assert capsys.readouterr().out == '[JSONPatch{op: "add", path: "/a", value: 1}] : list(JSONPatch)\n'


def test_kcel_eval_json_prints_kubernetes_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "-o", "json", 'quantity("1Gi")']) == 0
    assert json.loads(capsys.readouterr().out) == {"value": "1Gi", "type": "kubernetes.Quantity", "cost": 1}
    assert main(["eval", "-o", "json", "--env", "mutating-policy", '[JSONPatch{op: "add", path: "/a", value: 1}]']) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["value"] == [{"op": "add", "path": "/a", "value": 1}]
    assert record["type"] == "list(JSONPatch)"
    assert main(["eval", "-o", "json", 'b"\\xff"']) == 0
    assert json.loads(capsys.readouterr().out)["value"] == "/w=="
