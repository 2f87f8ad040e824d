"""The MutatingAdmissionPolicy types: `Object...` apply configurations and `JSONPatch` operations."""

from __future__ import annotations

from typing import Any

import pytest

from kcel import Env
from kcel.errors import CompileError, EvalError
from kcel.libs import k8s_jsonpatch, k8s_mutation
from kcel.libs.k8s_mutation import JSONPatchValue, MutationValueError, ObjectValue, check_type_names, to_json

ENV = Env({"object": "dyn"}, libraries=[]).extend({}, [k8s_mutation.LIBRARY, k8s_jsonpatch.LIBRARY])
FULL = Env({"object": "dyn"}, k8s_version="1.36").extend({}, [k8s_mutation.LIBRARY, k8s_jsonpatch.LIBRARY])


def evaluate(text: str, **activation: Any) -> Any:
    return FULL.compile(text).evaluate(activation)


def test_apply_configuration_builds_typed_objects() -> None:
    program = FULL.compile('Object{spec: Object.spec{replicas: 3, containers: [Object.spec.containers{name: "c"}]}}')
    assert str(program.output_type) == "Object"
    value = program.evaluate({})
    assert isinstance(value, ObjectValue) and value.type_name == "Object"
    assert to_json(value) == {"spec": {"replicas": 3, "containers": [{"name": "c"}]}}
    assert check_type_names(value) == []


def test_object_fields_are_dyn_and_optional_fields_are_left_out_when_empty() -> None:
    value = evaluate("Object{metadata: Object.metadata{?labels: optional.none(), ?name: optional.of('x')}}")
    assert to_json(value) == {"metadata": {"name": "x"}}


@pytest.mark.parametrize(("expression", "expected"), [
    # cel-go's field qualifier reads ObjectType.Field from the value's native form: nested objects become maps
    ("Object{spec: Object.spec{replicas: 3}}.spec", {"replicas": 3}),
    ("Object{spec: Object.spec{replicas: 3}}.spec.replicas", 3),
    ("Object{spec: Object.spec{replicas: 3}}.spec == {'replicas': 3}", True),
    ("Object{a: [Object.a{x: 1}]}.a[0].x", 1),
    ("Object{}.spec", None),  # GetFrom of an absent key: null
    ("has(Object{spec: Object.spec{}}.spec)", True),
    ("has(Object{}.spec)", False),
    ("Object{}.?spec.hasValue()", False),
    ("Object{x: 'v'}.?x.value()", "v"),
    ("has(Object{a: {1: 2}}.a)", False),  # Value() fails on a map key that is not a string: nothing is set
])  # fmt: skip
def test_fields_of_object_literals_read_as_the_api_server_does(expression: str, expected: Any) -> None:
    assert evaluate(expression) == expected


def test_a_field_of_an_object_that_has_no_native_form_cannot_be_read() -> None:
    with pytest.raises(EvalError, match='cannot get field "b"'):
        evaluate("Object{a: {1: 2}}.b")


def test_type_names_must_follow_the_field_path() -> None:
    value = evaluate("Object{spec: Object.foo{x: [Object.spec.x{}]}}")
    assert check_type_names(value) == [
        'unexpected type name "Object.foo", expected "Object.spec", which matches field name path from root Object type'
    ]


def test_json_patch_values() -> None:
    program = FULL.compile('[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b"), value: 1}]')
    assert str(program.output_type) == "list(JSONPatch)"
    (patch,) = program.evaluate({})
    assert isinstance(patch, JSONPatchValue)
    assert (patch.op, patch.path, patch.from_, patch.value) == ("add", "/metadata/labels/a~1b", "", 1)
    assert not evaluate('JSONPatch{op: "remove", path: "/a"}').has_value()
    assert evaluate('JSONPatch{op: "test", path: "/a", value: null}').has_value()
    assert evaluate('JSONPatch{op: "add", path: "/a"}.op') == "add"
    assert evaluate('JSONPatch{op: "add"} == JSONPatch{op: "add"}') is True
    assert evaluate('JSONPatch{op: "add", value: 1} == JSONPatch{op: "add", value: 1.0}') is True


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("JSONPatch{op: 1}", "expected type of field 'op' is 'string' but provided type is 'int'"),
        ("JSONPatch{foo: 1}", "undefined field 'foo'"),
        ("Foo{a: 1}", "undeclared reference to 'Foo' (in container '')"),
    ],
)
def test_compile_errors(text: str, error: str) -> None:
    with pytest.raises(CompileError, match=error.replace("(", r"\(").replace(")", r"\)")):
        ENV.compile(text)


def test_runtime_type_errors_of_dyn_fields() -> None:
    with pytest.raises(EvalError, match="unexpected type int64 for JSONPatchType 'op' field"):
        evaluate("JSONPatch{op: dyn(1)}")
    with pytest.raises(EvalError, match="unexpected type bool for JSONPatchType 'path' field"):
        evaluate("JSONPatch{path: dyn(true)}")


def test_types_only_in_the_mutation_environment() -> None:
    with pytest.raises(CompileError, match="undeclared reference to 'JSONPatch'"):
        Env(k8s_version="1.36").compile('JSONPatch{op: "add"}')


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.0", 1),
        ("1.5", 1.5),
        ("2u", 2),
        ("b'hi'", "aGk="),
        ("duration('90s')", "90s"),
        ("timestamp('2024-01-02T03:04:05Z')", "2024-01-02T03:04:05Z"),
        ("{'a': [dyn(1), dyn(null), dyn(true)]}", {"a": [1, None, True]}),
    ],
)
def test_values_become_json_as_protobuf_values_do(text: str, expected: Any) -> None:
    assert to_json(evaluate(text)) == expected


@pytest.mark.parametrize("text", ["{1: 'a'}", "optional.of(1)", "double('NaN')"])
def test_values_without_json_form(text: str) -> None:
    with pytest.raises(MutationValueError):
        to_json(evaluate(text))
