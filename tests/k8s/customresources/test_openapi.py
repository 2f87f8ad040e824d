"""OpenAPI value validation: (schema, object) -> the API server's field errors, as golden rows.

The first rows are apiextensions-apiserver's own table (pkg/apiserver/validation/validation_test.go
`TestValidateCustomResource`), which compares sets of error strings; the rest cover each check kube-openapi makes.
"""

# ruff: noqa: E501  (golden rows: one case per line, expected texts verbatim)

from __future__ import annotations

from typing import Any

import pytest

from kcel.k8s import field as fe
from kcel.k8s.customresources.openapi import OpenAPIValidator, enum_matches, is_json_integer
from kcel.k8s.schemas.schema import Schema


def errors(schema: dict[str, Any], obj: Any, old: Any = None, **options: Any) -> list[str]:
    return [str(e) for e in OpenAPIValidator(Schema.from_json(schema), **options).validate(obj, old)]


def field_schema(**field: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"field": field}}


INT_OR_STRING_ANY_OF = field_schema(
    **{"nullable": True, "x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
)
NUMERIC_FORMATS = {"type": "object", "properties": {
    "i32": {"type": "integer", "format": "int32"}, "i64": {"type": "integer", "format": "int64"},
    "f32": {"type": "number", "format": "float"}, "f64": {"type": "number", "format": "double"},
}}  # fmt: skip
ANY_OF = '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)'

UPSTREAM = [
    (field_schema(type="object"), {"field": "foo"}, {'field: Invalid value: "string": field in body must be of type object: "string"'}),
    (field_schema(type="object"), {"field": 42}, {'field: Invalid value: "integer": field in body must be of type object: "integer"'}),
    (field_schema(type="object"), {"field": 1.2}, {'field: Invalid value: "number": field in body must be of type object: "number"'}),
    (field_schema(type="object"), {"field": None}, {'field: Invalid value: "null": field in body must be of type object: "null"'}),
    (field_schema(type="object", nullable=True), {"field": None}, set()),
    (field_schema(type="object", nullable=True), {"field": []}, {'field: Invalid value: "array": field in body must be of type object: "array"'}),
    (field_schema(nullable=True), {"field": 1.2}, set()),
    (field_schema(**{"x-kubernetes-int-or-string": True}), {"field": None}, {'field: Invalid value: "null": field in body must be of type integer,string: "null"'}),
    (field_schema(**{"x-kubernetes-int-or-string": True}), {"field": 1.2}, {'field: Invalid value: "number": field in body must be of type integer,string: "number"'}),
    (field_schema(**{"x-kubernetes-int-or-string": True}), {"field": "foo"}, set()),
    (INT_OR_STRING_ANY_OF, {"field": None}, set()),
    (INT_OR_STRING_ANY_OF, {"field": True}, {
        ANY_OF, 'field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"',
        'field: Invalid value: "boolean": field in body must be of type integer: "boolean"'}),
    (INT_OR_STRING_ANY_OF, {"field": 1.2}, {
        ANY_OF, 'field: Invalid value: "number": field in body must be of type integer,string: "number"',
        'field: Invalid value: "number": field in body must be of type integer: "number"',
        '<nil>: Invalid value: "": Checked value must be of type integer (default format) in field'}),
    (field_schema(**{"nullable": True, "x-kubernetes-int-or-string": True,
                     "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]}), {"field": {}}, {
        '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated', ANY_OF,
        'field: Invalid value: "object": field in body must be of type integer,string: "object"',
        'field: Invalid value: "object": field in body must be of type integer: "object"'}),
    (field_schema(type="string", pattern="+"), {"field": "foo"}, {
        "field: Invalid value: \"foo\": field in body should match '+, but pattern is invalid: error parsing regexp: "
        "missing argument to repetition operator: `+`'"}),
    ({"type": "object", "required": ["field"], "properties": {"field": {"type": "object", "required": ["nested"],
      "properties": {"nested": {}}}}}, {"test": "a"}, {"field: Required value"}),
    ({"type": "object", "required": ["field"], "properties": {"field": {"type": "object", "required": ["nested"],
      "properties": {"nested": {}}}}}, {"field": {}}, {"field.nested: Required value"}),
    (field_schema(type="object", properties={"n": {"type": "integer", "enum": [1, 2]}, "s": {"type": "string", "enum": ["a", "b"]}}),
     {"field": {"n": "x", "s": True}}, {
        'field.n: Invalid value: "string": field.n in body must be of type integer: "string"',
        'field.n: Unsupported value: "x": supported values: "1", "2"',
        'field.s: Invalid value: "boolean": field.s in body must be of type string: "boolean"',
        'field.s: Unsupported value: true: supported values: "a", "b"'}),
    (field_schema(type="object", maxProperties=2), {"field": {"a": 1, "b": 2, "c": 3}}, {"field: Too many: 3: must have at most 2 items"}),
    (field_schema(type="array", maxItems=2), {"field": ["a", "b", "c"]}, {"field: Too many: 3: must have at most 2 items"}),
    (field_schema(type="string", maxLength=2), {"field": "abc"}, {"field: Too long: may not be more than 2 bytes"}),
    (field_schema(type="string", format="k8s-long-name"), {"field": "a.-"}, {'field: Invalid value: "a.-": field in body must be of type k8s-long-name: "a.-"'}),
    (field_schema(type="string", format="k8s-short-name"), {"field": "a-"}, {'field: Invalid value: "a-": field in body must be of type k8s-short-name: "a-"'}),
    (NUMERIC_FORMATS, {"i32": -(2**31), "i64": -(2**63), "f32": -3.4028234663852886e38, "f64": -1.7976931348623157e308}, set()),
    (NUMERIC_FORMATS, {"i32": 2**31}, {'<nil>: Invalid value: "": Checked value must be of type integer with format int32 in i32'}),
    (NUMERIC_FORMATS, {"i64": 9.223372036854775807e18 * 1.1}, {
        'i64: Invalid value: "float64": i64 in body must be of type int64: "float64"',
        '<nil>: Invalid value: "": Checked value must be of type integer with format int64 in i64'}),
    (NUMERIC_FORMATS, {"f32": 3.4028234663852886e38 * 1.1}, {'<nil>: Invalid value: "": Checked value must be of type number with format float in f32'}),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "obj", "expected"), UPSTREAM)
def test_upstream_table(schema: dict[str, Any], obj: Any, expected: set[str]) -> None:
    assert set(errors(schema, obj)) == expected


ROWS = [
    # numbers: bounds on integers print as integers, on floats with Go's %v
    (field_schema(type="integer", minimum=1, maximum=10), 0, ["field: Invalid value: 0: field in body should be greater than or equal to 1"]),
    (field_schema(type="integer", maximum=10, exclusiveMaximum=True), 10, ["field: Invalid value: 10: field in body should be less than 10"]),
    (field_schema(type="number", minimum=0.5, exclusiveMinimum=True), 0.5, ["field: Invalid value: 0.5: field in body should be greater than 0.5"]),
    (field_schema(type="number", maximum=1e6), 2e6, ["field: Invalid value: 2e+06: field in body should be less than or equal to 1e+06"]),
    (field_schema(type="integer", multipleOf=3), 7, ["field: Invalid value: 7: field in body should be a multiple of 3"]),
    (field_schema(type="number", multipleOf=0.1), 0.3, []),
    (field_schema(type="number", multipleOf=0.25), 0.3, ["field: Invalid value: 0.3: field in body should be a multiple of 0.25"]),
    (field_schema(type="integer"), 3.0, []),  # a whole float is an integer for the type check
    # strings: length in characters, then the pattern (RE2, unanchored)
    (field_schema(type="string", minLength=2), "é", ['field: Invalid value: "é": field in body should be at least 2 chars long']),
    (field_schema(type="string", maxLength=2), "éé", []),
    (field_schema(type="string", pattern="b"), "abc", []),
    (field_schema(type="string", pattern="^[0-9]+$"), "12a", ["field: Invalid value: \"12a\": field in body should match '^[0-9]+$'"]),
    # arrays
    (field_schema(type="array", minItems=2, items={"type": "string"}), ["a"], ["field: Invalid value: 1: field in body should have at least 2 items"]),
    (field_schema(type="array", uniqueItems=True), [1, 2, 1], ['field: Invalid value: "": field in body shouldn\'t contain duplicates']),
    (field_schema(type="array", uniqueItems=True), [1, 1.5, True], []),
    (field_schema(type="array", items={"type": "integer"}), [1, "a"], ['field[1]: Invalid value: "string": field[1] in body must be of type integer: "string"']),
    # objects and maps: map keys are joined with a dot, as kube-openapi names them
    (field_schema(type="object", minProperties=1), {}, ["field: Invalid value: 0: field in body should have at least 1 properties"]),
    (field_schema(type="object", additionalProperties={"type": "string", "maxLength": 1}), {"a.b": "xy"}, ["field.a.b: Too long: may not be more than 1 byte"]),
    # enums compare as Go converts: an integer matches a float enum value, a float is truncated to an integer one
    (field_schema(enum=[1.0, "a"]), 1, []),
    (field_schema(enum=[1]), 1.5, []),
    (field_schema(type="string", enum=["A"]), "B", ['field: Unsupported value: "B": supported values: "A"']),
    (field_schema(enum=[1, None, {"a": 1}]), None, ['field: Unsupported value: null: supported values: "1", "null", "{\\"a\\":1}"']),
    # formats: only the ones the API server keeps are checked; others are dropped from the schema
    (field_schema(type="string", format="uri"), "foo", ['field: Invalid value: "foo": field in body must be of type uri: "foo"']),
    (field_schema(type="string", format="date-time"), "2024-01-01T00:00:00Z", []),
    (field_schema(type="string", format="date-time"), "2024-01-01", ['field: Invalid value: "2024-01-01": field in body must be of type date-time: "2024-01-01"']),
    (field_schema(type="string", format="date-time"), 5, ['field: Invalid value: "int64": field in body must be of type date-time: "int64"']),
    (field_schema(type="string", format="no-such-format"), "x", []),
    (field_schema(type="string", format="ipv4"), "010.1.1.1", []),
    (field_schema(type="string", format="ipv6"), "1.2.3.4", ['field: Invalid value: "1.2.3.4": field in body must be of type ipv6: "1.2.3.4"']),
    (field_schema(type="string", format="cidr"), "10.0.0.0/33", ['field: Invalid value: "10.0.0.0/33": field in body must be of type cidr: "10.0.0.0/33"']),
    (field_schema(type="string", format="duration"), "about 5 minutes", []),
    (field_schema(type="string", format="byte"), "aGk=", []),
    (field_schema(type="string", format="uuid"), "not-a-uuid", ['field: Invalid value: "not-a-uuid": field in body must be of type uuid: "not-a-uuid"']),
    (field_schema(type="string", format="email"), "Jane <jane@example.com>", []),
    (field_schema(type="string", format="mac"), "00:00:5e:00:53:01", []),
    (field_schema(type="string", format="hostname"), "-bad.example", ['field: Invalid value: "-bad.example": field in body must be of type hostname: "-bad.example"']),
    # composition
    (field_schema(oneOf=[{"required": ["a"]}, {"required": ["b"]}]), {"a": 1, "b": 2},
     ['<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found 2 valid alternatives']),
    (field_schema(oneOf=[{"required": ["a"]}, {"required": ["b"]}]), {},
     ['<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found none valid', "field.a: Required value"]),
    (field_schema(**{"not": {"required": ["a"]}}), {"a": 1}, ['<nil>: Invalid value: "": "field" must not validate the schema (not)']),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "value", "expected"), ROWS)
def test_value_checks(schema: dict[str, Any], value: Any, expected: list[str]) -> None:
    assert errors(schema, {"field": value}) == expected


def test_ratcheting_drops_errors_of_unchanged_values_only() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 1},
              "b": {"type": "string", "maxLength": 1}}}  # fmt: skip
    old = {"a": "xx", "b": "y"}
    assert errors(schema, {"a": "xx", "b": "yy"}, old) == ["b: Too long: may not be more than 1 byte"]
    assert errors(schema, {"a": "xx", "b": "y"}, old) == []


def test_ratcheting_follows_map_list_keys_but_not_atomic_list_positions() -> None:
    item = {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "integer", "maximum": 1}}}
    schema = {"type": "object", "properties": {
        "m": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"], "items": item},
        "a": {"type": "array", "items": item}}}  # fmt: skip
    old = {"m": [{"k": "x", "v": 5}], "a": [{"k": "x", "v": 5}]}
    new = {"m": [{"k": "y", "v": 0}, {"k": "x", "v": 5}], "a": [{"k": "y", "v": 0}, {"k": "x", "v": 5}]}
    assert errors(schema, new, old) == ["a[1].v: Invalid value: 5: a[1].v in body should be less than or equal to 1"]


def test_apiversion_and_kind_at_the_root_are_never_ratcheted() -> None:
    pattern = {"type": "string", "pattern": "^A$"}
    schema = {"type": "object", "properties": {"kind": pattern, "other": pattern, "spec": {}}}
    new, old = {"kind": "B", "other": "B", "spec": 1}, {"kind": "B", "other": "B", "spec": 2}
    assert errors(schema, new, old) == ["kind: Invalid value: \"B\": kind in body should match '^A$'"]
    assert errors(schema, old, old) == []  # nothing changed at all: the root itself is ratcheted


def test_a_part_of_the_schema_reports_under_its_path() -> None:
    status = Schema.from_json({"type": "object", "required": ["phase"], "properties": {"n": {"type": "integer"}}})
    found = OpenAPIValidator(status).validate({"n": "x"}, path=fe.Path.new("status"))
    assert [str(e) for e in found] == [
        'status.n: Invalid value: "string": n in body must be of type integer: "string"',
        "status.phase: Required value",
    ]


def test_unsupported_formats_before_their_version_are_dropped() -> None:
    """k8s-short-name arrived at compatibility version 1.34, which API servers use from 1.35."""
    schema = field_schema(type="string", format="k8s-short-name")
    assert errors(schema, {"field": "A"}, k8s_version=(1, 34)) == []
    assert errors(schema, {"field": "A"}, k8s_version=(1, 35)) == [
        'field: Invalid value: "A": field in body must be of type k8s-short-name: "A"'
    ]


def test_number_formats_are_kept_and_checked_from_1_36() -> None:
    """Before 1.36 integer and number formats were stripped (apiextensions 0835a2fa9) and kube-openapi checked no
    ranges (1d94e88): a float is then an integer type error, and an int64 in an int32 field is fine."""
    schema = field_schema(type="integer", format="int32")
    assert errors(schema, {"field": 1.5}, k8s_version=(1, 35)) == [
        'field: Invalid value: "number": field in body must be of type integer: "number"'
    ]
    assert errors(schema, {"field": 2**40}, k8s_version=(1, 35)) == []
    assert errors(schema, {"field": 1.5}, k8s_version=(1, 36))[0] == (
        'field: Invalid value: "float64": field in body must be of type int32: "float64"'
    )
    assert errors(schema, {"field": 2**40}, k8s_version=(1, 36)) == [
        '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in field'
    ]


def test_helpers() -> None:
    assert [is_json_integer(v) for v in (3.0, 3.0000000001, 2.0**53, 0.5)] == [True, True, False, False]
    assert enum_matches(65, "A") and not enum_matches("1", 1) and not enum_matches(True, 1)
