"""The Authz and AuthzSelectors libraries against apiserver's authz.go, cost.go and cost_test.go.

Selector rows follow apimachinery's pkg/labels and pkg/fields tests; error texts are Go's.
The Kubernetes cost cases come from ../shared/k8s-cases (skipped, with the reason shown, when absent).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

import kcel
from kcel.cost import StringSizes
from kcel.errors import CompileError, EvalError
from kcel.eval.runtime import type_of
from kcel.libs import SizedCall, SizeEstimate
from kcel.libs.k8s_authz import (
    AUTHORIZER_TYPE,
    LIBRARY,
    AlwaysAllow,
    AlwaysDeny,
    Attributes,
    Decision,
    UserInfo,
    Verdict,
    authorizer_value,
    library,
)
from kcel.libs.k8s_selectors import (
    FieldRequirement,
    LabelRequirement,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)
from kcel.values import TypeValue
from tests.conftest import SHARED

OVERLOADS = {o.id: o for o in LIBRARY.overloads}


@dataclass
class Recorder:
    """An authorizer that remembers every question and gives one fixed answer."""

    answer: Decision = field(default_factory=lambda: Decision(Verdict.ALLOW, "ok"))
    asked: list[Attributes] = field(default_factory=list)

    def authorize(self, attributes: Attributes) -> Decision:
        self.asked.append(attributes)
        return self.answer


class Broken:
    """An authorizer that fails the way Python code fails: by raising."""

    def authorize(self, attributes: Attributes) -> Decision:
        raise TimeoutError("webhook timed out")


def env(variable_type: Any = AUTHORIZER_TYPE, version: int = 1) -> kcel.Env:
    libraries = [*kcel.env.cel_libraries(), library(version)]
    return kcel.Env(variables={"authorizer": variable_type}, libraries=libraries)


def run(expr: str, authorizer: Any = None, user: UserInfo | None = None) -> Any:
    value = authorizer_value(authorizer or AlwaysAllow(), user or UserInfo("alice", groups=("dev",)))
    return env().compile(expr).evaluate({"authorizer": value})


@dataclass(frozen=True)
class Err:
    message: str


RC = "authorizer.group('apps').resource('deployments')"

# (expression, authorizer, expected value or Err)
EVAL_ROWS: list[tuple[str, Any, Any]] = [
    ("authorizer.path('/healthz').check('get').allowed()", AlwaysAllow(), True),
    ("authorizer.path('/healthz').check('get').reason()", AlwaysAllow(), ""),
    ("authorizer.path('/healthz').check('get').errored()", AlwaysAllow(), False),
    ("authorizer.path('/healthz').check('get').error()", AlwaysAllow(), ""),
    ("authorizer.path('healthz').check('get').allowed()", AlwaysAllow(), True),  # the leading '/' is optional
    ("authorizer.path('/healthz').check('get').allowed()", AlwaysDeny(), False),
    ("authorizer.path('/healthz').check('get').reason()", AlwaysDeny(), "Everything is forbidden."),
    (f"{RC}.check('create').allowed()", AlwaysDeny(), False),
    (f"{RC}.check('create').errored()", AlwaysDeny(), False),
    (f"{RC}.check('create').allowed()", Recorder(Decision(Verdict.NO_OPINION, "no rule")), False),
    (f"{RC}.check('create').allowed()", Recorder(Decision(Verdict.DENY, "denied")), False),
    (f"{RC}.check('create').reason()", Recorder(Decision(Verdict.DENY, "denied")), "denied"),
    (f"{RC}.check('create').errored()", Recorder(Decision(Verdict.NO_OPINION, "", "boom")), True),
    (f"{RC}.check('create').error()", Recorder(Decision(Verdict.NO_OPINION, "", "boom")), "boom"),
    (f"{RC}.check('create').allowed()", Recorder(Decision(Verdict.ALLOW, "", "warn")), True),
    (f"{RC}.check('create').errored()", Broken(), True),
    (f"{RC}.check('create').error()", Broken(), "webhook timed out"),
    (f"{RC}.check('create').allowed()", Broken(), False),
    ("authorizer.serviceAccount('default', 'builder').path('/x').check('get').allowed()", AlwaysAllow(), True),
    ("authorizer.serviceAccount('kube-system', 'a.b-c').group('').resource('pods').check('list').allowed()",
     AlwaysAllow(), True),
    # errors raised by the builders
    ("authorizer.path('')", AlwaysAllow(), Err("path must not be empty")),
    ("authorizer.path('  ')", AlwaysAllow(), Err("path must not be empty")),
    ("authorizer.path('\\t\\n\\u3000')", AlwaysAllow(), Err("path must not be empty")),
    ("authorizer.path('\\x1f').check('get').allowed()", AlwaysAllow(), True),  # not a space for Go
    ("authorizer.group('apps').resource('')", AlwaysAllow(), Err("resource must not be empty")),
    ("authorizer.group('apps').resource(' ')", AlwaysAllow(), Err("resource must not be empty")),
    ("authorizer.serviceAccount('not@a#valid!namespace', 'validname')", AlwaysAllow(),
     Err("Invalid service account namespace")),
    ("authorizer.serviceAccount('valid.example.com', 'invalid@*name')", AlwaysAllow(),
     Err("Invalid service account name")),
    ("authorizer.serviceAccount('ns.with.dots', 'ok')", AlwaysAllow(), Err("Invalid service account namespace")),
    ("authorizer.serviceAccount('', 'ok')", AlwaysAllow(), Err("Invalid service account namespace")),
    ("authorizer.serviceAccount('ok', '')", AlwaysAllow(), Err("Invalid service account name")),
    ("authorizer.serviceAccount('Bad', 'Bad')", AlwaysAllow(), Err("Invalid service account name")),  # name first
    ("authorizer.serviceAccount('" + "a" * 64 + "', 'ok')", AlwaysAllow(), Err("Invalid service account namespace")),
    ("authorizer.serviceAccount('ok', '" + "a" * 254 + "')", AlwaysAllow(), Err("Invalid service account name")),
    # errors absorbed by the logical operators, as everywhere in CEL
    ("authorizer.path('') == authorizer.path('') || true", AlwaysAllow(), True),
    # receiverOnlyObjectVal has no usable equality
    ("authorizer == authorizer", AlwaysAllow(), Err("no such overload")),
    ("authorizer != authorizer", AlwaysAllow(), Err("no such overload")),
    ("authorizer.path('/a').check('get') == authorizer.path('/a').check('get')", AlwaysAllow(),
     Err("no such overload")),
    ("dyn(authorizer) == 1", AlwaysAllow(), Err("no such overload")),
    ("1 == dyn(authorizer)", AlwaysAllow(), False),
    ("authorizer == null", AlwaysAllow(), False),
    ("authorizer.group('') != null", AlwaysAllow(), True),
    ("[authorizer].size()", AlwaysAllow(), 1),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "authorizer", "expected"), EVAL_ROWS, ids=[r[0] for r in EVAL_ROWS])
def test_eval(expr: str, authorizer: Any, expected: Any) -> None:
    if isinstance(expected, Err):
        with pytest.raises(EvalError) as caught:
            run(expr, authorizer)
        assert caught.value.message == expected.message
    else:
        assert run(expr, authorizer) == expected


TYPE_ROWS = [
    ("authorizer", "kubernetes.authorization.Authorizer"),
    ("authorizer.serviceAccount('ns', 'sa')", "kubernetes.authorization.Authorizer"),
    ("authorizer.path('/x')", "kubernetes.authorization.PathCheck"),
    ("authorizer.group('')", "kubernetes.authorization.GroupCheck"),
    ("authorizer.group('').resource('pods')", "kubernetes.authorization.ResourceCheck"),
    ("authorizer.group('').resource('pods').labelSelector('a=b')", "kubernetes.authorization.ResourceCheck"),
    ("authorizer.group('').resource('pods').check('get')", "kubernetes.authorization.Decision"),
]


@pytest.mark.parametrize(("expr", "type_name"), TYPE_ROWS)
def test_types(expr: str, type_name: str) -> None:
    program = env().compile(expr)
    assert str(program.output_type) == type_name
    assert run(f"type({expr})") == TypeValue(type_name)
    assert type_of(run(expr)) == TypeValue(type_name)


COMPILE_ERROR_ROWS = [
    ("authorizer.group('').path('/x')", "found no matching overload for 'path'"),
    ("authorizer.path('/x').resource('pods')", "found no matching overload for 'resource'"),
    ("authorizer.path('/x').check(1)", "found no matching overload for 'check'"),
    ("authorizer.path('/x').fieldSelector('a=b')", "found no matching overload for 'fieldSelector'"),
    ("authorizer.serviceAccount('ns')", "found no matching overload for 'serviceAccount'"),
    ("authorizer.path('/x').check('get').allowed() == 'yes'", "found no matching overload for '_==_'"),
    ("authorizer.foo", "does not support field selection"),
    # the types are not registered with the type provider, so their names are not identifiers
    ("type(authorizer) == kubernetes.authorization.Authorizer", "undeclared reference to 'kubernetes'"),
]


@pytest.mark.parametrize(("expr", "message"), COMPILE_ERROR_ROWS)
def test_compile_errors(expr: str, message: str) -> None:
    with pytest.raises(CompileError) as caught:
        env().compile(expr)
    assert message in str(caught.value)


def test_selectors_need_version_1() -> None:
    """AuthzSelectors came in Kubernetes 1.31 as a separate library."""
    with pytest.raises(CompileError, match="undeclared reference to 'fieldSelector'"):
        env(version=0).compile("authorizer.group('').resource('pods').fieldSelector('a=b')")
    assert env(version=0).compile("authorizer.path('/x').check('get').allowed()")


def test_dyn_receiver_dispatches_at_runtime() -> None:
    program = env("dyn").compile("authorizer.group('').resource('pods').check('list').allowed()")
    assert program.evaluate({"authorizer": authorizer_value(AlwaysAllow())}) is True
    with pytest.raises(EvalError, match="no such overload"):
        program.evaluate({"authorizer": "not an authorizer"})


# -- what the authorizer is asked -------------------------------------------------------------------

ALICE = UserInfo("alice", "uid-1", ("dev", "system:authenticated"), {"scopes": ("a",)})


def asked(expr: str, user: UserInfo = ALICE) -> Attributes:
    recorder = Recorder()
    run(expr, recorder, user)
    assert len(recorder.asked) == 1
    return recorder.asked[0]


ATTRIBUTE_ROWS: list[tuple[str, Attributes]] = [
    ("authorizer.path('/healthz').check('get')", Attributes(ALICE, "get", False, path="/healthz")),
    ("authorizer.path('/metrics').check('GET')", Attributes(ALICE, "GET", False, path="/metrics")),
    ("authorizer.group('').resource('pods').check('list')",
     Attributes(ALICE, "list", True, api_version="*", resource="pods")),
    ("authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend')"
     ".check('create')",
     Attributes(ALICE, "create", True, api_group="apps", api_version="*", resource="deployments",
                subresource="status", namespace="test", name="backend")),
    ("authorizer.group('example.com').resource('widgets').subresource('scale').subresource('').check('get')",
     Attributes(ALICE, "get", True, api_group="example.com", api_version="*", resource="widgets")),
    ("authorizer.group('').resource('pods').namespace('a').namespace('b').check('get')",
     Attributes(ALICE, "get", True, api_version="*", resource="pods", namespace="b")),
    ("authorizer.group('').resource('pods').fieldSelector('spec.nodeName=node-1').check('list')",
     Attributes(ALICE, "list", True, api_version="*", resource="pods",
                field_selector=(FieldRequirement("spec.nodeName", "=", "node-1"),))),
    ("authorizer.group('').resource('pods').labelSelector('app=web,tier in (a, b)').check('list')",
     Attributes(ALICE, "list", True, api_version="*", resource="pods",
                label_selector=(LabelRequirement("app", "=", ("web",)), LabelRequirement("tier", "in", ("a", "b"))))),
    ("authorizer.group('').resource('pods').fieldSelector('').labelSelector('').check('list')",
     Attributes(ALICE, "list", True, api_version="*", resource="pods")),
    ("authorizer.group('').resource('pods').fieldSelector(',').check('list')",
     Attributes(ALICE, "list", True, api_version="*", resource="pods", field_selector=())),
    # a selector that does not parse reaches the authorizer as its error, without requirements
    ("authorizer.group('').resource('pods').fieldSelector('spec.nodeName').check('list')",
     Attributes(ALICE, "list", True, api_version="*", resource="pods",
                field_selector_error="invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'")),
    ("authorizer.group('').resource('pods').labelSelector('a b').check('list')",
     Attributes(ALICE, "list", True, api_version="*", resource="pods",
                label_selector_error="unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt")),
    ("authorizer.serviceAccount('ci', 'builder').group('').resource('secrets').check('get')",
     Attributes(UserInfo("system:serviceaccount:ci:builder", groups=("system:serviceaccounts",
                                                                    "system:serviceaccounts:ci")),
                "get", True, api_version="*", resource="secrets")),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "attributes"), ATTRIBUTE_ROWS, ids=[r[0] for r in ATTRIBUTE_ROWS])
def test_attributes(expr: str, attributes: Attributes) -> None:
    assert asked(expr) == attributes


def test_partial_checks_are_reusable() -> None:
    recorder = Recorder()
    pods = "authorizer.group('').resource('pods')"
    expr = f"[{pods}].all(r, r.check('get').allowed() && r.name('x').check('get').allowed())"
    run(expr, recorder)
    assert [a.name for a in recorder.asked] == ["", "x"]


def test_invalid_selector_is_the_authorizers_call() -> None:
    """authz.go passes the parse error along; an authorizer that errors on it makes the decision errored."""

    class Strict:
        def authorize(self, attributes: Attributes) -> Decision:
            error = attributes.field_selector_error or attributes.label_selector_error
            return Decision(Verdict.NO_OPINION, "", error) if error else Decision(Verdict.ALLOW)

    expr = "authorizer.group('').resource('pods').labelSelector('!').check('list').error()"
    assert run(expr, Strict()) == "unable to parse requirement: found '', expected: identifier"
    assert run(expr.replace("error()", "errored()"), AlwaysAllow()) is False


# -- selector parsing ---------------------------------------------------------------------------------

R = LabelRequirement

# (selector, requirements or Err); the good rows are apimachinery's TestSetSelectorParser/TestSelectorParse.
LABEL_ROWS: list[tuple[str, Any]] = [
    ("", ()),
    ("\rx", (R("x", "exists"),)),
    ("this-is-a-dns.domain.com/key-with-dash", (R("this-is-a-dns.domain.com/key-with-dash", "exists"),)),
    ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
     (R("0.1.2.domain/99", "notin", ("10.10.100.1", "tick.tack.clock")),)),
    ("foo  in\t (abc)", (R("foo", "in", ("abc",)),)),
    ("x notin\n (abc)", (R("x", "notin", ("abc",)),)),
    ("x in (abc,)", (R("x", "in", ("", "abc")),)),
    ("x in (abc,abc)", (R("x", "in", ("abc",)),)),
    ("x in ()", (R("x", "in", ("",)),)),
    ("x in (a,,a,,a,,a,,)", (R("x", "in", ("", "a")),)),
    ("x notin (abc,,def),bar,z in (),w",
     (R("bar", "exists"), R("w", "exists"), R("x", "notin", ("", "abc", "def")), R("z", "in", ("",)))),
    ("x=a,y!=b,z in (h,i,j)", (R("x", "=", ("a",)), R("y", "!=", ("b",)), R("z", "in", ("h", "i", "j")))),
    ("x==a", (R("x", "==", ("a",)),)),
    ("x=", (R("x", "=", ("",)),)),
    ("x= ,z= ", (R("x", "=", ("",)), R("z", "=", ("",)))),
    ("!x", (R("x", "!"),)),
    ("x>1,z<5", (R("x", "gt", ("1",)), R("z", "lt", ("5",)))),
    ("x>-1", Err("unable to parse requirement: values[0][x]: Invalid value: \"-1\": a valid label must be an empty "
                 "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                 "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                 "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")),  # an integer, but not a label value
    ("x>a-", Err("unable to parse requirement: [values[0]: Invalid value: \"a-\": for 'Gt', 'Lt' operators, the "
                 "value must be an integer, values[0][x]: Invalid value: \"a-\": a valid label must be an empty "
                 "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                 "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                 "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]")),  # two errors aggregate as [a, b]
    ("a in (x,y,notin, z,in)", (R("a", "in", ("in", "notin", "x", "y", "z")),)),
    ("in in (in)", (R("in", "in", ("in",)),)),
    ("x notin (, a)", (R("x", "notin", ("", "a")),)),
    ("a ", (R("a", "exists"),)),
    ("a \x00b", (R("a", "exists"),)),  # Go's lexer reads a NUL byte as the end of the text
    ("x=a||y=b", Err("unable to parse requirement: values[0][x]: Invalid value: \"a||y\": a valid label must be an "
                     "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                     "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
                     "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")),
    ("x==a==b", Err("found '==', expected: ',' or 'end of string'")),
    ("!x=a", Err("found '=', expected: ',' or 'end of string'")),
    ("x<a", Err("unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the "
                "value must be an integer")),
    ("x>9223372036854775808", Err("unable to parse requirement: values[0]: Invalid value: \"9223372036854775808\": "
                                  "for 'Gt', 'Lt' operators, the value must be an integer")),
    ("x,,y", Err("found ',', expected: identifier after ','")),
    (",x,y", Err("found ',', expected: !, identifier, or 'end of string'")),
    ("x nott in (y)", Err("unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt")),
    ("a in (xyz),", Err("found '', expected: identifier after ','")),
    ("a in (xyz)b notin ()", Err("found 'b', expected: ',' or 'end of string'")),
    ("a in (x", Err("unable to parse requirement: found '', expected: ',' or ')'")),
    ("a in x", Err("unable to parse requirement: found 'x' expected: '('")),
    ("a in (=)", Err("unable to parse requirement: found '=', expected: ',', ')' or identifier")),
    ("a in (x,=)", Err("unable to parse requirement: found '=', expected: ',', or identifier")),
    ("a in (x y)", Err("unable to parse requirement: found 'y', expected: ',' or ')'")),
    ("a=(", Err("unable to parse requirement: found '(', expected: identifier")),
    ("!", Err("unable to parse requirement: found '', expected: identifier")),
    ("a!", Err("unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt")),
    ("-k", Err("unable to parse requirement: <nil>: Invalid value: \"-k\": name part must consist of alphanumeric "
               "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
               "or 'my.name',  or '123-abc', regex used for validation is "
               "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")),
    ("/a", Err("unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty")),
    ("a/", Err("unable to parse requirement: <nil>: Invalid value: \"a/\": name part must be non-empty; name part must "
               "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
               "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
               "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")),
    ("A_/b", Err("unable to parse requirement: <nil>: Invalid value: \"A_/b\": prefix part a lowercase RFC 1123 "
                 "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
                 "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")),
    ("a/b/c", Err("unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key must consist of "
                  "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
                  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
                  "(e.g. 'example.com/MyName')")),
    ("k" * 64, Err(f"unable to parse requirement: <nil>: Invalid value: \"{'k' * 64}\": name part must be no more "
                   "than 63 bytes")),
    ("k=" + "v" * 64 + ",", Err(f"unable to parse requirement: values[0][k]: Invalid value: \"{'v' * 64}\": must be "
                                "no more than 63 bytes")),
    ("k=é", Err("unable to parse requirement: values[0][k]: Invalid value: \"é\": a valid label must be an empty "
                "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")),
]  # fmt: skip


@pytest.mark.parametrize(("selector", "expected"), LABEL_ROWS, ids=[repr(r[0]) for r in LABEL_ROWS])
def test_label_selector(selector: str, expected: Any) -> None:
    if isinstance(expected, Err):
        with pytest.raises(SelectorError) as caught:
            parse_label_selector(selector)
        assert str(caught.value) == expected.message
    else:
        assert parse_label_selector(selector) == expected


F = FieldRequirement

# apimachinery's fields TestSelectorParse, TestSplitTerms and TestEscapeValue, plus Go's error texts.
FIELD_ROWS: list[tuple[str, Any]] = [
    ("", ()),
    ("a=b", (F("a", "=", "b"),)),
    ("a==b", (F("a", "=", "b"),)),
    ("a!=b", (F("a", "!=", "b"),)),
    ("x=a,y=b,z=c", (F("x", "=", "a"), F("y", "=", "b"), F("z", "=", "c"))),
    ("x!=a,y=b", (F("x", "!=", "a"), F("y", "=", "b"))),
    ("x=,z= ", (F("x", "=", ""), F("z", "=", " "))),
    ("z=c,a=b", (F("a", "=", "b"), F("z", "=", "c"))),  # terms are sorted
    ("a=\\,", (F("a", "=", ","),)),
    ("a=\\=\\\\", (F("a", "=", "=\\"),)),
    ("a\\,b=c", (F("a\\,b", "=", "c"),)),  # no unescaping on the left
    ("a!b=c", (F("a!b", "=", "c"),)),
    ("=", ()),  # an empty field with an empty value selects everything
    ("=,a=b", (F("a", "=", "b"),)),
    (",", ()),
    ("x", Err("invalid selector: 'x'; can't understand 'x'")),
    ("a=b,x", Err("invalid selector: 'a=b,x'; can't understand 'x'")),
    ("x=a||y=b", Err("invalid field selector: unescaped character in value: 61")),
    ("x=a||y", (F("x", "=", "a||y"),)),
    ("x==a==b", Err("invalid field selector: unescaped character in value: 61")),
    ("a=b,c", Err("invalid selector: 'a=b,c'; can't understand 'c'")),
    ("a=\\x", Err("invalid field selector: invalid escape sequence: \\x")),
    ("a=b\\", Err("invalid field selector: invalid escape sequence: \\")),
]  # fmt: skip


@pytest.mark.parametrize(("selector", "expected"), FIELD_ROWS, ids=[repr(r[0]) for r in FIELD_ROWS])
def test_field_selector(selector: str, expected: Any) -> None:
    if isinstance(expected, Err):
        with pytest.raises(SelectorError) as caught:
            parse_field_selector(selector)
        assert str(caught.value) == expected.message
    else:
        assert parse_field_selector(selector) == expected


MATCH_ROWS = [
    ("x=y", {"x": "y"}, True),
    ("x=y", {"x": "z"}, False),
    ("x=y", {}, False),
    ("x!=y", {}, True),
    ("x in (a,b)", {"x": "b"}, True),
    ("x notin (a,b)", {"x": "c"}, True),
    ("x notin (a,b)", {"x": "a"}, False),
    ("x", {"x": ""}, True),
    ("!x", {"x": ""}, False),
    ("x>1", {"x": "2"}, True),
    ("x>1", {"x": "1"}, False),
    ("x<1", {"x": "-3"}, True),
    ("x<1", {"x": "a"}, False),
    ("x>1", {}, False),
]


@pytest.mark.parametrize(("selector", "labels", "expected"), MATCH_ROWS)
def test_label_requirement_matches(selector: str, labels: dict[str, str], expected: bool) -> None:
    assert all(r.matches(labels) for r in parse_label_selector(selector)) is expected


# -- costs ----------------------------------------------------------------------------------------------


def estimate(program: Any) -> tuple[int, int]:
    """kcel's estimator with cost_test.go's sizes (strings of unknown size are at most 12 long)."""
    found = env().estimate_cost(program, StringSizes(12))
    return found.min, found.max


# apiserver cost_test.go TestAuthzLibrary: (expression, estimated cost, runtime cost)
COST_ROWS = [
    ("authorizer.path('/healthz')", 2, 2),
    ("authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend')", 6, 6),
    ("authorizer.group('').resource('pods').fieldSelector("
     "'spec.nodeName=example-node-name.fully.qualified.domain.name.example.com')", 1821, 1821),
    ("authorizer.group('').resource('pods').labelSelector("
     "'spec.nodeName=example-node-name.fully.qualified.domain.name.example.com')", 1821, 1821),
    ("authorizer.path('/healthz').check('get').allowed()", 350003, 350003),
    (f"{RC}.subresource('status').namespace('test').name('backend').check('create').allowed()", 350007, 350007),
    (f"{RC}.subresource('status').namespace('test').name('backend').check('create').errored()", 350007, 350007),
    (f"{RC}.subresource('status').namespace('test').name('backend').check('create').error()", 350007, 350007),
    (f"{RC}.subresource('status').namespace('test').name('backend').check('create').reason()", 350007, 350007),
    ("authorizer.serviceAccount('default', 'sa').path('/x').check('get').allowed()", 350004, 350004),
    ("authorizer.group('').resource('pods').labelSelector('')", 13, 13),
    ("authorizer.group('').resource('pods').labelSelector('a')", 64, 64),  # 3 + 10 + 1 + ceil(1 * 0.5) * 50
]  # fmt: skip


@pytest.mark.parametrize(("expr", "estimated", "runtime"), COST_ROWS, ids=[r[0] for r in COST_ROWS])
def test_costs(expr: str, estimated: int, runtime: int) -> None:
    program = env().compile(expr)
    assert estimate(program) == (estimated, estimated)
    _, cost = program.evaluate_with_cost({"authorizer": authorizer_value(AlwaysAllow())})
    assert cost == runtime


SELECTOR_COST_ROWS = [(SizeEstimate(0, 12), (10, 10 + 2 + 300)), (SizeEstimate(71, 71), (1818, 1818)),
                      (SizeEstimate(0, 2**64 - 1), (10, 2**64 - 1))]  # fmt: skip


@pytest.mark.parametrize(("size", "expected"), SELECTOR_COST_ROWS)
def test_selector_estimate(size: SizeEstimate, expected: tuple[int, int]) -> None:
    for overload_id in ("authorizer_fieldselector", "authorizer_labelselector"):
        estimate = OVERLOADS[overload_id].estimate
        assert estimate is not None
        result = estimate(SizedCall([SizeEstimate(1, 1), size]))
        assert result is not None and (result.cost.min, result.cost.max) == expected


def test_overload_ids() -> None:
    """The names Kubernetes gives the overloads (authz.go), pinned."""
    assert sorted(OVERLOADS) == sorted([
        "authorizer_path", "authorizer_group", "authorizer_serviceaccount", "groupcheck_resource",
        "resourcecheck_subresource", "resourcecheck_namespace", "resourcecheck_name", "pathcheck_check",
        "resourcecheck_check", "decision_errored", "decision_error", "decision_allowed", "decision_reason",
        "authorizer_fieldselector", "authorizer_labelselector",
    ])  # fmt: skip
    assert all(o.member for o in LIBRARY.overloads)


# -- Kubernetes' own cases (../shared/k8s-cases) -----------------------------------------------------------

CASES_FILE = SHARED / "k8s-cases" / "apiserver-library-cost_test.json"
AUTHORIZERS = {"always-allow": AlwaysAllow}


def _k8s_cases() -> list[Any]:
    if not CASES_FILE.exists():
        reason = f"k8s-cases not found at {CASES_FILE} (../shared is absent)"
        print(reason)
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="k8s-cases-absent")]
    cases = json.loads(CASES_FILE.read_text())["cases"]
    chosen = [c for c in cases if "authorizer" in c.get("expression", "")]
    return [pytest.param(c, id=c["id"]) for c in chosen]


def _variables(encoded: dict[str, Any]) -> dict[str, Any]:
    return {name: authorizer_value(AUTHORIZERS[value["authorizer"]]()) for name, value in encoded.items()}


@pytest.mark.parametrize("case", _k8s_cases())
def test_k8s_cases(case: dict[str, Any]) -> None:
    assert case["kind"] == "cost"
    program = env().compile(case["expression"])
    _, cost = program.evaluate_with_cost(_variables(case["inputs"]["variables"]))
    expect = case["expect"]
    assert cost == expect["runtime_cost"]
    assert estimate(program) == (expect["estimated_cost"]["min"], expect["estimated_cost"]["max"])


def test_k8s_cases_cover_the_library() -> None:
    if not CASES_FILE.exists():
        pytest.skip(f"k8s-cases not found at {CASES_FILE} (../shared is absent)")
    found = {p.values[0]["id"].rsplit("/", 1)[-1] for p in _k8s_cases()}
    assert found == {"path", "fieldSelector", "resource_check_error"}
