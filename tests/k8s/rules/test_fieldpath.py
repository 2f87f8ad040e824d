"""Table tests of CRD rule fieldPaths (apiextensions-apiserver `ValidFieldPath`), with upstream's messages.

The schema is TestValidateFieldPath's; the rows past the upstream ones pin the tokenizer's quirks (quoted
strings, escapes, the 64 KiB token limit of Go's bufio.Scanner). The last test runs the crd_field_path
cases of ../shared/k8s-cases through the conformance runner.
"""

from __future__ import annotations

import pytest

from conformance import k8scases
from conformance.k8s_field_cases import RUNNERS
from kcel.k8s.rules.fieldpath import FieldPathError, valid_field_path
from kcel.k8s.schemas.schema import Schema
from tests.conftest import SHARED

NUMBER = {"type": "number"}
SCHEMA = Schema.from_json({
    "type": "object",
    "properties": {
        "foo": {"type": "object", "additionalProperties": {"type": "object", "properties": {"subAdd": NUMBER}}},
        "white space": NUMBER,
        "'foo'bar": NUMBER,
        "a": {"type": "object", "properties": {
            "foo's": NUMBER, "test\a": NUMBER, "bb[b": NUMBER,
            "bbb": {"type": "object", "properties": {"c": NUMBER, "34": NUMBER}},
            "bbb.c": {"type": "object", "properties": {"a-b.3'4": NUMBER}},
        }},
        "list": {"type": "array", "items": {"type": "object", "properties": {"a": NUMBER, "a-b.3'4": NUMBER}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "loose": {"type": "object", "additionalProperties": True},
        "none": {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
    },
})  # fmt: skip

NOT_A_FIELD = "does not refer to a valid field"
END = "unexpected end of JSON path"

# (fieldPath, String() of the path)
VALID_ROWS = [
    ("", "<nil>"),
    (".a", "a"),
    ("['\\'foo\\'bar']", "'foo'bar"),
    ("['white space']", "white space"),
    (".a['bbb.c']", "a.bbb.c"),
    (".a['bbb.c']['a-b.3\\'4']", "a.bbb.c.a-b.3'4"),
    (".foo.subAdd", "foo[subAdd]"),
    (".foo['subAdd']", "foo[subAdd]"),
    (".foo.x.subAdd", "foo[x].subAdd"),
    (".a.foo's", "a.foo's"),  # a quote inside a name is plain text
    (".a['foo\\'s']", "a.foo's"),
    (".a['test\\a']", "a.test\a"),
    (".a.bbb.34", "a.bbb.34"),
    (".list", "list"),
    (".labels['a.b']", "labels[a.b]"),
    (".labels.[", "labels[[]"),  # after `.` any token is a name, even a delimiter
    (".loose.k", "loose[k]"),
    ("['a']'" + "x" * 70_000, "a"),  # a token too long for the scanner ends the path without an error
]

# (fieldPath, FieldPathError message)
ERROR_ROWS = [
    (".\\'foo\\'bar", NOT_A_FIELD),
    (".a.bb[b", NOT_A_FIELD),
    (".", END),
    (".a.bbb[0]", "expected single quoted string but got 0"),
    (".list[0]", "expected single quoted string but got 0"),
    (".list. a", NOT_A_FIELD),
    (".list['a']", NOT_A_FIELD),
    (".c", NOT_A_FIELD),
    ("a", "expected [ or . but got: a"),
    ("]", "expected [ or . but got: ]"),
    ("['a']'x'", "expected [ or . but got: 'x'"),
    ("[", END),
    ("['a'", END),
    ("['a'x", "expected ] but got x"),
    ("['a", "expected single quoted string but got 'a"),
    ("['a\\']", "expected single quoted string but got 'a\\']"),  # \' does not end the quoted string
    ("[']", "expected single quoted string but got ']"),
    ("['a\\q']", "invalid string literal: invalid escape char \\q"),
    ("['\\z\\a\\q']", "invalid string literal: invalid escape char \\q"),  # the last bad escape is named
    ("['']", NOT_A_FIELD),
    (".none.x", NOT_A_FIELD),  # `properties: {}` wins over additionalProperties
    (".loose.k.x", NOT_A_FIELD),
    ("." + "a" * 65_535, NOT_A_FIELD),
    ("." + "a" * 65_536, END),
    ("." + "é" * 32_768, END),  # the limit counts UTF-8 bytes
    (".labels['" + "k" * 65_535 + "']", END),
]


@pytest.mark.parametrize(("text", "expected"), VALID_ROWS, ids=[r[0][:40] for r in VALID_ROWS])
def test_valid_path(text: str, expected: str) -> None:
    path, _ = valid_field_path(text, SCHEMA)
    assert str(path) == expected


@pytest.mark.parametrize(("text", "message"), ERROR_ROWS, ids=[r[0][:40] for r in ERROR_ROWS])
def test_invalid_path(text: str, message: str) -> None:
    with pytest.raises(FieldPathError) as caught:
        valid_field_path(text, SCHEMA)
    assert str(caught.value) == message


def test_quoted_key_may_fill_the_whole_scanner_buffer() -> None:
    key = "k" * 65_534  # with its quotes the token is exactly 64 KiB
    path, found = valid_field_path(f".labels['{key}']", SCHEMA)
    assert str(path) == f"labels[{key}]" and found.type == "string"


def test_found_schema() -> None:
    assert valid_field_path("", SCHEMA)[1] is SCHEMA
    assert valid_field_path(".a.bbb.c", SCHEMA)[1].type == "number"
    assert set(valid_field_path(".foo['k']", SCHEMA)[1].properties or ()) == {"subAdd"}
    stand_in = valid_field_path(".loose.k", SCHEMA)[1]  # additionalProperties: true has no schema of its own
    assert (stand_in.type, stand_in.properties, stand_in.additional_properties) == ("", None, None)


def test_array_notation_can_be_refused() -> None:
    assert str(valid_field_path(".a.bbb", SCHEMA, allow_array_notation=False)[0]) == "a.bbb"
    with pytest.raises(FieldPathError, match="^array notation is not allowed$"):
        valid_field_path(".a['bbb']", SCHEMA, allow_array_notation=False)


CASES = [c for c in k8scases.load(SHARED / "k8s-cases") if c.data["kind"] == "crd_field_path"]


@pytest.mark.skipif(not CASES, reason="../shared/k8s-cases is absent")
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_kubernetes_cases(case: k8scases.Case) -> None:
    outcome = RUNNERS["crd_field_path"](case)
    assert outcome.status == "passed", outcome.reason
