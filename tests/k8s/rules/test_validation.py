"""CRD rules evaluated as the API server does: schema types, schema-typed values and the validator walk.

These run without ../shared; the Kubernetes test tables in k8s-cases cover the same ground in bulk.
"""

from __future__ import annotations

from typing import Any

import pytest

from kcel.k8s import field as fe
from kcel.k8s.field import Path
from kcel.k8s.rules.validation import RuleEnvironments, Validator, compile_rules
from kcel.k8s.schemas.decltypes import assign_type_name, object_type_names, schema_decl_type
from kcel.k8s.schemas.schema import Schema, SchemaError


def schema(data: dict[str, Any]) -> Schema:
    return Schema.from_json(data)


def errors(rule_schema: dict[str, Any], obj: Any, old: Any = None, **options: Any) -> list[str]:
    return [str(e) for e in Validator(schema(rule_schema), **options).validate(obj, old).errors]


def obj_schema(properties: dict[str, Any], *rules: str | dict[str, Any], **extra: Any) -> dict[str, Any]:
    validations = [r if isinstance(r, dict) else {"rule": r} for r in rules]
    return {"type": "object", "properties": properties, "x-kubernetes-validations": validations, **extra}


# -- schema -> CEL types ------------------------------------------------------------------------

TYPES = [
    ({"type": "string"}, "string"), ({"type": "integer"}, "int"), ({"type": "number"}, "double"),
    ({"type": "boolean"}, "bool"), ({"type": "string", "format": "byte"}, "bytes"),
    ({"type": "string", "format": "date-time"}, "google.protobuf.Timestamp"),
    ({"type": "string", "format": "duration"}, "google.protobuf.Duration"),
    ({"x-kubernetes-int-or-string": True}, "dyn"),
    ({"type": "array", "items": {"type": "string"}}, "list(string)"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, "map(string, int)"),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, "object"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "expected"), TYPES)
def test_schema_types(data: dict[str, Any], expected: str) -> None:
    decl = schema_decl_type(schema(data))
    assert decl is not None and str(decl.cel) == expected


def test_invisible_schemas_have_no_type() -> None:
    assert schema_decl_type(schema({"x-kubernetes-preserve-unknown-fields": True})) is None
    assert schema_decl_type(schema({"type": "array"})) is None  # no items
    hidden = schema_decl_type(schema({"type": "object", "properties": {"x": {}, "1up": {"type": "string"}}}))
    assert hidden is not None and hidden.fields == {}  # untyped and unescapable properties are absent


def test_type_names_and_escaped_fields() -> None:
    data = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"a-b": {"type": "string"}, "items": {
            "type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}}}}}}}  # fmt: skip
    named = assign_type_name(schema_decl_type(schema(data)), "selfType1")  # type: ignore[arg-type]
    assert object_type_names(named) == ["selfType1", "selfType1.spec", "selfType1.spec.items.@idx"]
    assert set(named.fields["spec"].type.fields) == {"a__dash__b", "items"}


def test_resource_root_sees_only_name_and_generate_name_of_metadata() -> None:
    root = schema_decl_type(schema({"type": "object"}), is_resource_root=True)
    assert root is not None and set(root.fields) == {"apiVersion", "kind", "metadata"}
    assert set(root.fields["metadata"].type.fields) == {"name", "generateName"}
    assert root.fields["metadata"].type.fields["name"].type.max_elements == 4 * 253


def test_bad_schema_documents_name_the_field() -> None:
    with pytest.raises(SchemaError, match=r"^properties\.spec\.items: must be an object, got string$"):
        schema({"type": "object", "properties": {"spec": {"type": "array", "items": "string"}}})


# -- values read through the schema -------------------------------------------------------------

VALUES = [
    # (property schema, data, rule, errors)
    ({"type": "number"}, 3, "self.v == 3.0 && type(self.v) == double", []),
    ({"type": "string", "format": "date-time"}, "2024-01-02T03:04:05Z", "self.v.getFullYear() == 2024", []),
    ({"type": "string", "format": "duration"}, "1h30m", "self.v == duration('90m')", []),
    ({"type": "string", "format": "byte"}, "aGk=", "self.v == b'hi'", []),
    ({"x-kubernetes-int-or-string": True}, "50%", "type(self.v) == string", []),
    ({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}, ["a", "b"],
     "self.v == ['b', 'a'] && self.v + ['c', 'a'] == ['a', 'b', 'c']", []),
    ({"type": "array", "items": {"type": "string"}}, ["a", "b"], "self.v == ['b', 'a']",
     ["<nil>: Invalid value: failed rule: self.v == ['b', 'a']"]),
    ({"type": "integer"}, "x", "self.v == 1",
     ['<nil>: Invalid value: "object": invalid data, expected int, got string evaluating rule: self.v == 1']),
]  # fmt: skip


@pytest.mark.parametrize(("prop", "data", "rule", "expected"), VALUES)
def test_values_follow_the_schema(prop: dict[str, Any], data: Any, rule: str, expected: list[str]) -> None:
    assert errors(obj_schema({"v": prop}, rule), {"v": data}) == expected


def test_map_lists_compare_and_merge_by_key() -> None:
    items = {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "integer"}}}
    prop = {"type": "array", "items": items, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}
    rules = [{"rule": "self == oldSelf"}, {"rule": "(oldSelf + self)[0].v == 9", "message": "merged by key"}]
    data = obj_schema({"l": {**prop, "x-kubernetes-validations": rules}})
    old = {"l": [{"k": "a", "v": 1}, {"k": "b", "v": 2}]}
    assert errors(data, {"l": [{"k": "b", "v": 2}, {"k": "a", "v": 1}]}, old) == ["l: Invalid value: merged by key"]
    assert errors(data, {"l": [{"k": "b", "v": 2}, {"k": "a", "v": 9}]}, old) == [
        "l: Invalid value: failed rule: self == oldSelf"
    ]


def test_null_properties_are_absent() -> None:
    data = obj_schema({"a": {"type": "string", "nullable": True}}, "!has(self.a)", "self.?a.orValue('x') == 'x'")
    assert errors(data, {"a": None}) == []
    assert errors(obj_schema({"a": {"type": "string"}}, "self.a == ''"), {"a": None}) == [
        "<nil>: Invalid value: \"object\": no such key: a evaluating rule: self.a == ''"
    ]


def test_unknown_fields_are_invisible_but_count_in_equality() -> None:
    prop = {"type": "object", "properties": {"k": {"type": "integer"}}, "x-kubernetes-preserve-unknown-fields": True}
    data = obj_schema({"l": {"type": "array", "items": prop}}, "self.l[0] == self.l[1]")
    assert errors(data, {"l": [{"k": 1, "u": 1}, {"k": 1, "u": 1}]}) == []
    assert len(errors(data, {"l": [{"k": 1, "u": 1}, {"k": 1, "u": 2}]})) == 1
    unknown = schema(obj_schema({"a": prop}, "self.a.u == 1"))
    (result,) = compile_rules(unknown, schema_decl_type(unknown), RuleEnvironments())
    assert "undefined field 'u'" in str(result.error)


# -- the validator walk -------------------------------------------------------------------------

CONTAINERS = {
    "type": "array",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["name"],
    "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "image": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "self.image.contains(':')", "message": "image needs a tag", "fieldPath": ".image"},
            {"rule": "self.image == oldSelf.image", "message": "image is immutable"},
        ],
    },
}


def test_rules_run_at_every_item_with_field_paths() -> None:
    data = obj_schema({"containers": CONTAINERS}, "self.containers.size() <= 2")
    obj = {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "x"}, {"name": "c", "image": "y"}]}
    assert errors(data, obj) == [
        "<nil>: Invalid value: failed rule: self.containers.size() <= 2",
        "containers[1].image: Invalid value: image needs a tag",
        "containers[2].image: Invalid value: image needs a tag",
    ]


def test_transition_rules_follow_map_list_keys_and_ratchet() -> None:
    data = obj_schema({"containers": CONTAINERS})
    old = {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y"}]}
    new = {"containers": [{"name": "b", "image": "y"}, {"name": "a", "image": "x:2"}, {"name": "c", "image": "z:1"}]}
    result = Validator(schema(data)).validate(new, old)
    assert [str(e) for e in result.errors] == ["containers[1]: Invalid value: image is immutable"]
    # `b` kept its untagged image: its old error is returned as a warning, not an error (ratcheting).
    assert result.warnings == ["containers[0].image: Invalid value: image needs a tag"]


def test_message_expression_reason_and_scalar_values() -> None:
    data = {"type": "object", "properties": {"replicas": {"type": "integer", "x-kubernetes-validations": [
        {"rule": "self <= 3", "messageExpression": "'must be at most 3, not ' + string(self)"},
        {"rule": "self != 5", "reason": "FieldValueForbidden", "message": "five is forbidden"}]}}}  # fmt: skip
    assert errors(data, {"replicas": 5}) == [
        "replicas: Invalid value: 5: must be at most 3, not 5",
        "replicas: Forbidden: five is forbidden",
    ]


def test_compile_errors_are_reported_per_rule() -> None:
    data = schema(obj_schema({"a": {"type": "integer"}}, "self.a == 'x'", "self.a", "self.b > 0"))
    details = [str(r.error) for r in compile_rules(data, schema_decl_type(data), RuleEnvironments())]
    assert details[0].startswith("compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_'")
    assert details[1] == "cel expression must evaluate to a bool"
    assert "undefined field 'b'" in details[2]


def test_cost_limit_and_budget_stop_validation() -> None:
    rule = "self.l.all(x, self.l.all(y, self.l.all(z, x + y + z >= 0)))"
    data = obj_schema({"l": {"type": "array", "items": {"type": "integer"}}}, rule)
    obj = {"l": list(range(60))}
    limited = Validator(schema(data), per_call_limit=1000).validate(obj)
    assert limited.remaining_budget == -1
    assert "call cost exceeds limit for rule" in str(limited.errors[0])
    spent = Validator(schema(data)).validate({"l": list(range(20))}, budget=10_000)
    assert [e.detail for e in spent.errors] == [
        "validation failed due to running out of cost budget, no further validation rules will be run"
    ]


def test_validation_errors_print_paths_from_a_root() -> None:
    data = obj_schema({"a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 1"}]}})
    result = Validator(schema(data)).validate({"a": 1}, path=Path.new("spec"))
    assert [str(e) for e in result.errors] == ["spec.a: Invalid value: 1: failed rule: self > 1"]


def test_schema_bounds_follow_the_api_server() -> None:
    """An int-or-string's maxLength counts from 1.34 (apiserver 76004fdd7); the resource root's metadata.name and
    generateName are bounded by 253 and 252 from 1.37 (apiextensions 1f3023483)."""
    int_or_string = schema({"x-kubernetes-int-or-string": True, "maxLength": 10})
    root = schema({"type": "object", "properties": {"metadata": {"type": "object"}}})
    found = []
    for version in ((1, 33), (1, 34), (1, 36), (1, 37)):
        with fe.answering_as(version):
            size = schema_decl_type(int_or_string)
            meta = schema_decl_type(root, is_resource_root=True)
        assert size is not None and meta is not None
        name = meta.fields["metadata"].type.fields["name"].type.schema
        found.append((size.max_elements, name.max_length if name is not None else None))
    assert found == [(3 * 1024 * 1024 - 2, None), (40, None), (40, None), (40, 253)]


def test_the_same_rule_on_the_same_schema_compiles_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every version of a CRD repeating a rule, or fields of one shape sharing it: one compilation per (rule,
    schema, environment); another schema, environment or Kubernetes version compiles again."""
    from kcel.env import Env

    compiled: list[str] = []
    original = Env.compile

    def counting(env: Env, text: str, check: bool = True) -> Any:
        compiled.append(text)
        return original(env, text, check)

    monkeypatch.setattr(Env, "compile", counting)
    rule = "self.size() <= 10 && self != 'cache-test'"
    shape = {"type": "object", "properties": {name: {"type": "string", "x-kubernetes-validations": [{"rule": rule}]}
                                              for name in ("a", "b", "c")}}  # fmt: skip
    for _ in range(3):  # three versions with the same schema
        assert len(Validator(schema(shape)).validate({"a": "x" * 11, "b": "ok", "c": "cache-test"}).errors) == 2
    assert compiled == [rule]
    Validator(schema(shape), k8s_version="1.31").validate({"a": "ok"})
    Validator(schema(shape), environment="new").validate({"a": "ok"})
    other = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5,
                                                    "x-kubernetes-validations": [{"rule": rule}]}}}  # fmt: skip
    Validator(schema(other)).validate({"a": "ok"})
    assert compiled == [rule] * 4


def test_a_nodes_self_type_is_named_once_and_goes_with_the_node() -> None:
    """A fresh `selfType...` name the first time a node's rules compile; the same type for its other rules after
    (what it built for checking is kept), and nothing kept once the node's type is dropped.

    Asked of this test's own types by weak reference: the table is the process's, and what earlier tests left in it
    goes whenever their garbage is collected (a count of it differed by run order and collection timing)."""
    import gc
    import weakref

    from kcel.k8s.rules import validation
    from kcel.k8s.schemas.decltypes import schema_decl_type
    from kcel.k8s.schemas.schema import Schema

    decl = schema_decl_type(Schema.from_json({"type": "object", "properties": {"a": {"type": "string"}}}))
    assert decl is not None
    named = validation._self_type(decl)
    assert named.name.startswith("selfType") and named is not decl and validation._self_type(decl) is named
    other = schema_decl_type(Schema.from_json({"type": "object", "properties": {"a": {"type": "string"}}}))
    assert other is not None and validation._self_type(other).name != named.name
    scalar = schema_decl_type(Schema.from_json({"type": "string"}))
    assert scalar is not None and validation._self_type(scalar) is scalar
    names = {named.name, validation._self_type(other).name}
    held = [weakref.ref(decl), weakref.ref(named), weakref.ref(other), weakref.ref(validation._self_type(other))]
    del decl, named, other
    gc.collect()
    assert [ref() for ref in held] == [None] * 4  # the table keeps neither a node's type nor its self type alive
    assert not names & {kept.name for kept in list(validation._SELF_TYPES.values())}


def test_self_type_names_differ_on_a_coarse_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two nodes named within one tick of the clock (microseconds on macOS, coarser on Windows) get two names."""
    import time

    from kcel.k8s.rules import validation
    from kcel.k8s.schemas.decltypes import schema_decl_type
    from kcel.k8s.schemas.schema import Schema

    monkeypatch.setattr(time, "time_ns", lambda: 1_700_000_000_123_456_000)
    types = [schema_decl_type(Schema.from_json({"type": "object", "properties": {"a": {"type": "string"}}}))
             for _ in range(3)]  # fmt: skip
    names = [validation._self_type(decl).name for decl in types if decl is not None]
    assert len(names) == len(set(names)) == 3
