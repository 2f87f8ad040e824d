"""Table tests of field paths and field errors as apimachinery prints them (pkg/util/validation/field).

Expected strings are Go's: `Path.String`, `Error.Error`, `ErrorBody` with `%v`/`%q`/encoding/json values,
and NewInvalid's aggregated 422 message.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from kcel.k8s import field as fe
from kcel.k8s.field import (
    OMIT,
    ErrorType,
    FieldError,
    GoStruct,
    Path,
    duplicate,
    forbidden,
    internal_error,
    invalid,
    invalid_status_message,
    not_found,
    not_supported,
    render_value,
    required,
    too_few,
    too_long,
    too_many,
    too_short,
    type_invalid,
)

# (path, String())
PATH_ROWS = [
    (Path(), "<nil>"),
    (Path.new("root"), "root"),
    (Path.new("root", "spec", "x"), "root.spec.x"),
    (Path().child("spec"), "spec"),
    (Path().child("spec", "containers").index(0).child("name"), "spec.containers[0].name"),
    (Path().key("a.b"), "[a.b]"),
    (Path().index(3), "[3]"),
    (Path.new("root").key("k").key("j"), "root[k][j]"),
    (Path.new("root").child("foo[subAdd]"), "root.foo[subAdd]"),
    (Path.new("a").child(""), "a[]"),  # an empty name is a subscript in Go's Path
    (Path.new("a", "b").root(), "a"),
]


@pytest.mark.parametrize(("path", "text"), PATH_ROWS)
def test_path_string(path: Path, text: str) -> None:
    assert str(path) == text


def test_paths_are_values() -> None:
    base = Path.new("root")
    assert base.child("a") == Path.new("root", "a")
    assert base.child("a") != base.key("a")
    assert str(base) == "root"  # extending never changes the base


# (bad value, rendering)
VALUE_ROWS = [
    (123456, "123456"),
    (-7, "-7"),
    (2**63 - 1, "9223372036854775807"),
    (1e6, "1e+06"),
    (1.5e6, "1.5e+06"),
    (123456.0, "123456"),
    (1234567.0, "1.234567e+06"),
    (0.0001, "0.0001"),
    (1e-05, "1e-05"),
    (0.5, "0.5"),
    (3.0, "3"),
    (-2.5, "-2.5"),
    (-0.0, "-0"),
    (1e21, "1e+21"),
    (1e100, "1e+100"),
    (0.1 + 0.2, "0.30000000000000004"),
    (math.inf, "+Inf"),
    (-math.inf, "-Inf"),
    (math.nan, "NaN"),
    (True, "true"),
    (False, "false"),
    (None, "null"),
    ("abc", '"abc"'),
    ("", '""'),
    ('a"b\\c', '"a\\"b\\\\c"'),
    ("\a\b\f\n\r\t\v", '"\\a\\b\\f\\n\\r\\t\\v"'),
    ("\x00\x7f", '"\\x00\\x7f"'),
    ("é👑", '"é👑"'),
    ("\u00ad\u2028", '"\\u00ad\\u2028"'),
    ("\U000e0001", '"\\U000e0001"'),
    (b"a\xffb".decode("utf-8", "surrogateescape"), '"a\\xffb"'),
    ("\ud800", '"\\xed\\xa0\\x80"'),
    ({}, "{}"),
    ([], "[]"),
    ({"b": 1, "a": [1.5, None, True]}, '{"a":[1.5,null,true],"b":1}'),
    ([1e6, 1e21, 1e-7, 0.000001, 1e20, 3.0, -0.0, 1.5e-10],
     "[1000000,1e+21,1e-7,0.000001,100000000000000000000,3,-0,1.5e-10]"),
    (["<a&b>", "\u2028", "\x01", "\b\f\n", "é", "\x7f", '"'],
     '["\\u003ca\\u0026b\\u003e","\\u2028","\\u0001","\\b\\f\\n","é","\x7f","\\""]'),
    ([b"\xff".decode("utf-8", "surrogateescape"), "\ud800"], '["\\ufffd","\\ufffd\\ufffd\\ufffd"]'),
    (GoStruct((("Rule", "self > 0"), ("Message", ""), ("Reason", None))),
     '{"Rule":"self \\u003e 0","Message":"","Reason":null}'),
]  # fmt: skip


@pytest.mark.parametrize(("value", "text"), VALUE_ROWS)
def test_render_value(value: Any, text: str) -> None:
    assert render_value(value) == text


def test_values_json_cannot_hold_are_refused() -> None:
    with pytest.raises(ValueError, match="unsupported value: NaN"):
        render_value([math.nan])
    with pytest.raises(TypeError, match="object"):
        render_value(object())


P = Path.new("p")
SUPPORTED_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]

# (error, Error())
ERROR_ROWS = [
    (invalid(Path().child("spec", "x"), "object", "failed rule: self.a < self.b"),
     'spec.x: Invalid value: "object": failed rule: self.a < self.b'),
    (invalid(Path.new("root", "foo"), OMIT, "gotta be baz"), "root.foo: Invalid value: gotta be baz"),
    (invalid(Path.new("root").index(1), 2, "gotta be odd"), "root[1]: Invalid value: 2: gotta be odd"),
    (invalid(P, 1.5e6, "too big"), "p: Invalid value: 1.5e+06: too big"),
    (invalid(P, {"a": 1}, "bad"), 'p: Invalid value: {"a":1}: bad'),
    (invalid(P, "x", ""), 'p: Invalid value: "x"'),
    (invalid(Path(), None, "some validation rules were not checked"),
     "<nil>: Invalid value: null: some validation rules were not checked"),
    (forbidden(Path.new("spec"), "msg"), "spec: Forbidden: msg"),
    (required(Path.new("spec"), "msg"), "spec: Required value: msg"),
    (required(Path.new("spec"), ""), "spec: Required value"),
    (duplicate(Path.new("spec"), 5), "spec: Duplicate value: 5"),
    (duplicate(Path.new("spec"), OMIT), "spec: Duplicate value"),
    (not_supported(Path.new("reason"), "X", SUPPORTED_REASONS),
     'reason: Unsupported value: "X": supported values: "FieldValueDuplicate", "FieldValueForbidden", '
     '"FieldValueInvalid", "FieldValueRequired"'),
    (not_supported(P, "X", []), 'p: Unsupported value: "X"'),
    (not_found(P, "k"), 'p: Not found: "k"'),
    (type_invalid(P, "x", "must be an integer"), 'p: Invalid value: "x": must be an integer'),
    (too_long(P, 1), "p: Too long: may not be more than 1 byte"),
    (too_long(P, 5, "character"), "p: Too long: may not be more than 5 characters"),
    (too_long(P, -1), "p: Too long: value is too long"),
    (too_short(P, "ab", 3), "p: Too short: must be at least 3 characters"),
    (too_many(P, 5, 3), "p: Too many: 5: must have at most 3 items"),
    (too_many(P, -1, 1), "p: Too many: must have at most 1 item"),
    (too_few(P, 0, 1), "p: Too few: 0: must have at least 1 item"),
    (too_few(P, 0, -1), "p: Too few: 0: has too few items"),
    (internal_error(P, "boom"), "p: Internal error: boom"),
]  # fmt: skip


@pytest.mark.parametrize(("error", "text"), ERROR_ROWS)
def test_error_text(error: FieldError, text: str) -> None:
    assert error.error() == str(error) == text
    assert f"{error.field}: {error.body()}" == text


def test_cause_carries_reason_body_and_field() -> None:
    error = invalid(Path.new("spec", "replicas"), 5, "must be at most 3")
    assert error.cause() == {"reason": "FieldValueInvalid", "message": "Invalid value: 5: must be at most 3",
                             "field": "spec.replicas"}  # fmt: skip


def test_error_types() -> None:
    assert ErrorType("FieldValueForbidden") is ErrorType.FORBIDDEN
    assert ErrorType.TYPE_INVALID.text == ErrorType.INVALID.text == "Invalid value"
    assert ErrorType.TYPE_INVALID.reason == "FieldValueTypeInvalid"
    assert ErrorType.NOT_SUPPORTED.text == "Unsupported value"


E1 = invalid(Path.new("spec", "replicas"), 5, "must be at most 3")
E2 = forbidden(Path.new("spec", "x"), "no")

# (errors, 422 message)
STATUS_ROWS = [
    ([E1], 'Widget.example.com "w1" is invalid: spec.replicas: Invalid value: 5: must be at most 3'),
    ([E1, E2], 'Widget.example.com "w1" is invalid: [spec.replicas: Invalid value: 5: must be at most 3, '
               "spec.x: Forbidden: no]"),
    ([E2, E1, E2], 'Widget.example.com "w1" is invalid: [spec.x: Forbidden: no, '
                   "spec.replicas: Invalid value: 5: must be at most 3]"),
    ([E2, forbidden(Path.new("spec", "x"), "no")], 'Widget.example.com "w1" is invalid: spec.x: Forbidden: no'),
    ([], 'Widget.example.com "w1" is invalid'),
]  # fmt: skip


@pytest.mark.parametrize(("errors", "message"), STATUS_ROWS)
def test_invalid_status_message(errors: list[FieldError], message: str) -> None:
    assert invalid_status_message("Widget.example.com", "w1", errors) == message


def test_status_message_quotes_the_name() -> None:
    assert invalid_status_message("Widget", 'a"b', [E2]) == 'Widget "a\\"b" is invalid: spec.x: Forbidden: no'


# (API server, too_long(max 1), too_long_max_length(max 5), too_many(max 1)): apimachinery 51cdbebd (1.32),
# c58e197e (1.34). Before 1.32 TooLong and TooLongMaxLength (OpenAPI maxLength) differed.
LENGTH_TEXTS = [
    ((1, 30), "must have at most 1 bytes", "may not be longer than 5", "must have at most 1 items"),
    ((1, 31), "must have at most 1 bytes", "may not be longer than 5", "must have at most 1 items"),
    ((1, 32), "may not be more than 1 bytes", "may not be more than 5 bytes", "must have at most 1 items"),
    ((1, 33), "may not be more than 1 bytes", "may not be more than 5 bytes", "must have at most 1 items"),
    ((1, 34), "may not be more than 1 byte", "may not be more than 5 bytes", "must have at most 1 item"),
    ((1, 37), "may not be more than 1 byte", "may not be more than 5 bytes", "must have at most 1 item"),
]


@pytest.mark.parametrize(("version", "long_1", "long_5", "many_1"), LENGTH_TEXTS)
def test_length_and_count_texts_follow_the_version(version: fe.Version, long_1: str, long_5: str, many_1: str) -> None:
    with fe.answering_as(version):
        errors = [fe.too_long(fe.Path(), 1), fe.too_long_max_length(fe.Path(), 5), fe.too_many(fe.Path(), 2, 1)]
    assert [e.detail for e in errors] == [long_1, long_5, many_1]
    assert fe.too_many(fe.Path(), 2, 1).version == fe.LATEST  # outside the block: the newest API server


def test_errors_render_with_the_version_they_were_made_under() -> None:
    with fe.answering_as((1, 33)):
        old = fe.invalid(fe.Path.new("spec"), {"a": [1, None]}, "bad")
    new = fe.invalid(fe.Path.new("spec"), {"a": [1, None]}, "bad")
    assert str(old) == 'spec: Invalid value: map[string]interface {}{"a":[]interface {}{1, interface {}(nil)}}: bad'
    assert str(new) == 'spec: Invalid value: {"a":[1,null]}: bad'
