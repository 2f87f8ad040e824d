"""Decoding manifests as the API server does: go-yaml v2 scalars, JSON numbers, keys, duplicates, documents."""

# ruff: noqa: E501  (golden rows: one case per line, expected texts verbatim)

from __future__ import annotations

import re
from typing import Any

import pytest

from kcel.k8s.manifests.decoding import DecodeError, decode_documents, decode_value, go_yaml_scalar

SCALARS = [
    ("y", True), ("Off", False), ("NO", False), ("yes", True), ("~", None), ("", None), ("Null", None),
    ("0755", 493), ("0o17", 15), ("0x1F", 31), ("0b101", 5), ("+5", 5), ("-0", 0), ("1_000", 1000),
    ("08", 8.0), ("1e3", 1000.0), (".5", 0.5), ("-.5", -0.5), ("1.", 1.0), ("1e400", "1e400"),
    ("1:20", "1:20"), ("2024-01-01", "2024-01-01"), ("1e", "1e"), ("=", "="), ("18446744073709551615", 2**64 - 1),
    ("+18446744073709551615", 1.8446744073709552e19), ("v1", "v1"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "value"), SCALARS)
def test_plain_scalars_resolve_as_go_yaml_v2(text: str, value: Any) -> None:
    found = go_yaml_scalar(text)
    assert (type(found), found) == (type(value), value)


VALUES = [
    # YAML goes through JSON: whole floats become integers, beyond int64 numbers become floats
    ("a: 1.0\nb: 2.5\nc: 9223372036854775808\nd: -0.0\n", {"a": 1, "b": 2.5, "c": 9.223372036854776e18, "d": 0}),
    # keys become JSON strings (`y` is a boolean key, so it is "true")
    ("1: a\n1.5: b\ntrue: c\ny: d\n1e10: e\n", {"1": "a", "1.5": "b", "true": "d", "1e+10": "e"}),
    ("a: !!binary aGVsbG8=\nb: '1'\nc: !!str 1\n", {"a": "hello", "b": "1", "c": "1"}),
    ("base: &b {x: 1}\nuse:\n  <<: *b\n  z: 2\n", {"base": {"x": 1}, "use": {"x": 1, "z": 2}}),
    # JSON: integers stay integers within int64, fractions and exponents are floats
    ('{"a": 1, "b": 1.0, "c": 1e2, "d": 123456789012345678901234}', {"a": 1, "b": 1.0, "c": 100.0, "d": 1.2345678901234568e23}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "value"), VALUES)
def test_values_are_what_the_api_server_decodes(text: str, value: Any) -> None:
    found = decode_value(text)
    assert found == value
    assert [type(v) for v in found.values()] == [type(v) for v in value.values()]


def test_duplicate_yaml_keys_are_strict_errors_and_the_last_value_wins() -> None:
    (document,) = decode_documents("a: 1\nb:\n  c: 2\n  c: 3\na: 4\n")
    assert document.value == {"a": 4, "b": {"c": 3}}
    assert document.strict_errors == (
        'yaml: unmarshal errors:\n  line 4: key "c" already set in map\n  line 5: key "a" already set in map',
    )


def test_duplicate_json_fields_are_named_by_path_in_document_order() -> None:
    (document,) = decode_documents('{"a": 1, "a": {"b": [{"c": 1, "c": 2}]}}', "x.json")
    assert document.value == {"a": {"b": [{"c": 2}]}}
    assert document.strict_errors == ('duplicate field "a"', 'duplicate field "a.b[0].c"')


def test_documents_are_cut_at_separator_lines_and_errors_stay_in_their_document() -> None:
    text = '# header\n---\na: 1\n---\nb: [\n---\n\n--- {c: 3}\n---\n{"d": 4}\n'
    found = [(d.index, d.line, d.value, d.error.split(": invalid")[0]) for d in decode_documents(text, "f.yaml")]
    assert found == [(1, 3, {"a": 1}, ""), (2, 5, None, "f.yaml:6:1"), (4, 8, {"c": 3}, ""), (5, 10, {"d": 4}, "")]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("a: .nan\n", "json: unsupported value: NaN"),
        ("? [1]\n: x\n", "unsupported map key of type: []interface {}, key: [1]"),
        ("a: ~\n~: b\n", "unsupported map key of type: %!s(<nil>), key: <nil>"),
        ('{"a": NaN}', "invalid JSON"),
    ],
)
def test_what_cannot_be_json_is_an_error(text: str, error: str) -> None:
    with pytest.raises(DecodeError, match=re.escape(error)):
        decode_value(text)
