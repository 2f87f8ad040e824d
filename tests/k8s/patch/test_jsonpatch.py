"""Table tests of JSON Patch as gopkg.in/evanphx/json-patch.v4 applies it for a MutatingAdmissionPolicy.

Expected texts are v4's (root package, v4.13.0; v4.12.0 where a 1.32-1.34 API server is modelled). Cases marked
"v4" come from its patch_test.go, "apiserver" from k8s.io/apiserver's mutating/patch/json_patch_test.go, with each
CEL expression written as the operations it evaluates to and each Deployment as the JSON its serializer writes.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import pytest

from kcel.k8s.field import answering_as
from kcel.k8s.patch import jsonpatch
from kcel.k8s.patch.jsonpatch import NIL_MAP, NIL_POINTER, JSONPatchError, PatchPanic, TestFailed, apply_patch


@dataclass(frozen=True)
class Raises:
    text: str
    kind: type[JSONPatchError] = JSONPatchError


def fails(path: str) -> Raises:
    return Raises(f"testing value {path} failed: test failed", TestFailed)


def panics(text: str) -> Raises:
    return Raises(text, PatchPanic)


def op(kind: Any, path: Any = None, *, src: Any = None, **value: Any) -> dict[str, Any]:
    """An operation; `value=...` gives a value (None is JSON null), leaving it out gives none."""
    built: dict[str, Any] = {} if kind is None else {"op": kind}
    if path is not None:
        built["path"] = path
    if src is not None:
        built["from"] = src
    return built | value


def invalid(index: int) -> str:
    return f"Unable to access invalid index: {index}: invalid index referenced"


def syntax(key: str) -> str:
    return f'strconv.Atoi: parsing "{key}": invalid syntax'


def typed(value: Any) -> str:
    """A JSON value with its types visible: 1 and 1.0, 1 and True differ."""
    return json.dumps(value, sort_keys=True)


def check(document: Any, operations: list[dict[str, Any]], expected: Any) -> None:
    before = copy.deepcopy(document)
    if isinstance(expected, Raises):
        with pytest.raises(JSONPatchError) as info:
            apply_patch(document, operations)
        assert (type(info.value), str(info.value)) == (expected.kind, expected.text)
    else:
        assert typed(apply_patch(document, operations)) == typed(expected)
    assert typed(document) == typed(before)


FOO_AB = {"foo": ["a", "b"]}
ADD = [
    pytest.param({"foo": "bar"}, [op("add", "/baz", value="qux")], {"baz": "qux", "foo": "bar"}, id="v4-member"),
    pytest.param({"a": 1}, [op("add", "/a", value=[2])], {"a": [2]}, id="existing-key-replaced"),
    pytest.param({}, [op("add", "/c", value={"g": {}})], {"c": {"g": {}}}, id="v4-object-value"),
    pytest.param({}, [op("add", "/a", value={"b": None})], {"a": {"b": None}}, id="nested-null-value"),
    pytest.param({}, [op("add", "/a", value=None)], {"a": None}, id="v4-null-value"),
    pytest.param({}, [op("add", "/a")], {"a": None}, id="no-value-adds-null"),
    pytest.param(FOO_AB, [op("add", "/foo/1", value="x")], {"foo": ["a", "x", "b"]}, id="v4-insert-middle"),
    pytest.param(FOO_AB, [op("add", "/foo/0", value="x")], {"foo": ["x", "a", "b"]}, id="insert-start"),
    pytest.param(FOO_AB, [op("add", "/foo/2", value="x")], {"foo": ["a", "b", "x"]}, id="index-len-appends"),
    pytest.param(FOO_AB, [op("add", "/foo/-", value="x")], {"foo": ["a", "b", "x"]}, id="dash-appends"),
    pytest.param({"foo": ["a"]}, [op("add", "/foo/-", value=[1])], {"foo": ["a", [1]]}, id="v4-append-array"),
    pytest.param(FOO_AB, [op("add", "/foo/-1", value="x")], {"foo": ["a", "b", "x"]}, id="v4-minus-one-appends"),
    pytest.param(FOO_AB, [op("add", "/foo/-2", value="x")], {"foo": ["a", "x", "b"]}, id="minus-two"),
    pytest.param(FOO_AB, [op("add", "/foo/-3", value="x")], {"foo": ["x", "a", "b"]}, id="minus-three-first"),
    pytest.param({"foo": []}, [op("add", "/foo/-1", value="q")], {"foo": ["q"]}, id="v4-minus-one-empty"),
    pytest.param(FOO_AB, [op("add", "/foo/01", value="x")], {"foo": ["a", "x", "b"]}, id="leading-zero"),
    pytest.param(FOO_AB, [op("add", "/foo/+1", value="x")], {"foo": ["a", "x", "b"]}, id="plus-sign"),
    pytest.param(FOO_AB, [op("add", "/foo/-0", value="x")], {"foo": ["x", "a", "b"]}, id="minus-zero"),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/-4", value="x")],
        Raises(f"error in add for path: '/foo/-4': {invalid(-4)}"),
        id="v4-minus-too-far",
    ),
    pytest.param(
        {"foo": ["a"]},
        [op("add", "/foo/2", value="x")],
        Raises(f"error in add for path: '/foo/2': {invalid(2)}"),
        id="v4-past-end",
    ),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/x", value=1)],
        Raises(f"error in add for path: '/foo/x': value was not a proper array index: 'x': {syntax('x')}"),
        id="not-an-index",
    ),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/", value=1)],
        Raises(f"error in add for path: '/foo/': value was not a proper array index: '': {syntax('')}"),
        id="empty-index",
    ),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/+", value=1)],
        Raises(f"error in add for path: '/foo/+': value was not a proper array index: '+': {syntax('+')}"),
        id="sign-only",
    ),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/1_0", value=1)],
        Raises(f"error in add for path: '/foo/1_0': value was not a proper array index: '1_0': {syntax('1_0')}"),
        id="underscore",
    ),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/\u00a0", value=1)],
        Raises(
            "error in add for path: '/foo/\u00a0': value was not a proper array index: '\u00a0': "
            'strconv.Atoi: parsing "\\u00a0": invalid syntax'
        ),
        id="index-quoted-as-go",
    ),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/99999999999999999999", value=1)],
        Raises(
            "error in add for path: '/foo/99999999999999999999': value was not a proper array index: "
            "'99999999999999999999': strconv.Atoi: parsing \"99999999999999999999\": value out of range"
        ),
        id="index-out-of-int-range",
    ),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/99999999999999999999x", value=1)],
        Raises(
            "error in add for path: '/foo/99999999999999999999x': value was not a proper array index: "
            "'99999999999999999999x': strconv.Atoi: parsing \"99999999999999999999x\": value out of range"
        ),
        id="overflow-before-syntax",
    ),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/9223372036854775807", value=1)],
        Raises(f"error in add for path: '/foo/9223372036854775807': {invalid(9223372036854775807)}"),
        id="max-int64-index",
    ),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/-9223372036854775808", value=1)],
        Raises(f"error in add for path: '/foo/-9223372036854775808': {invalid(-9223372036854775808)}"),
        id="min-int64-index",
    ),
    pytest.param(
        FOO_AB,
        [op("add", "/foo/9223372036854775808", value=1)],
        Raises(
            "error in add for path: '/foo/9223372036854775808': value was not a proper array index: "
            "'9223372036854775808': strconv.Atoi: parsing \"9223372036854775808\": value out of range"
        ),
        id="past-max-int64",
    ),
    pytest.param(
        {"foo": "bar"},
        [op("add", "/baz/bat", value="qux")],
        Raises('add operation does not apply: doc is missing path: "/baz/bat": missing value'),
        id="v4-missing-parent",
    ),
    pytest.param(
        {"a": 1},
        [op("add", "/a/b", value=1)],
        Raises('add operation does not apply: doc is missing path: "/a/b": missing value'),
        id="parent-is-scalar",
    ),
    pytest.param(
        {"a": None},
        [op("add", "/a/b", value=1)],
        Raises('add operation does not apply: doc is missing path: "/a/b": missing value'),
        id="parent-is-document-null",
    ),
    pytest.param(
        {"a": [1]},
        [op("add", "/a/1/b", value=1)],
        Raises('add operation does not apply: doc is missing path: "/a/1/b": missing value'),
        id="parent-index-out-of-range",
    ),
    pytest.param(
        {"a": [1]},
        [op("add", "/a/x/b", value=1)],
        Raises('add operation does not apply: doc is missing path: "/a/x/b": missing value'),
        id="parent-index-not-a-number",
    ),
    pytest.param(
        {"a": [{"b": 1}, {"b": 2}]}, [op("add", "/a/-1/c", value=3)], {"a": [{"b": 1}, {"b": 2, "c": 3}]}, id="via-neg"
    ),
    pytest.param(
        {"foo": "bar"},
        [op("add", "", value="qux")],
        Raises('add operation does not apply: doc is missing path: "": missing value'),
        id="v4-whole-document",
    ),
    pytest.param(
        {}, [op("add", "a", value=1)], Raises('add operation does not apply: doc is missing path: "a": missing value')
    ),
    pytest.param({"x": 0}, [op("add", "x/y", value=1)], {"x": 0, "y": 1}, id="no-leading-slash-reads-from-root"),
    pytest.param({}, [op("add", "/", value=1)], {"": 1}, id="empty-key"),
    pytest.param({"": {}}, [op("add", "//", value=1)], {"": {"": 1}}, id="empty-keys"),
    pytest.param({}, [op("add", "/a~1b", value=1)], {"a/b": 1}, id="tilde-one"),
    pytest.param({}, [op("add", "/a~0b", value=1)], {"a~b": 1}, id="tilde-zero"),
    pytest.param({}, [op("add", "/~01", value=1)], {"~1": 1}, id="tilde-zero-one-once"),
    pytest.param({}, [op("add", "/~~1", value=1)], {"~/": 1}, id="tilde-tilde-one"),
    pytest.param({}, [op("add", "/~2~", value=1)], {"~2~": 1}, id="other-tildes-kept"),
    pytest.param({"a/b": {}}, [op("add", "/a~1b/c~0", value=1)], {"a/b": {"c~": 1}}, id="escapes-in-parents"),
    pytest.param(
        {"foo": "bar"},
        [op("add", None, pathz="/baz", value="qux")],
        Raises("add operation failed to decode path: missing value"),
        id="v4-no-path",
    ),
    pytest.param(
        {},
        [{"op": "add", "path": None}],
        Raises("add operation failed to decode path: missing value"),
        id="v4-null-path",
    ),
    pytest.param({}, [op("add", 5, value=1)], Raises("add operation failed to decode path: missing value"), id="num"),
    pytest.param(
        {}, [op("add", "/a", value=None), op("add", "/a/b", value=1)], panics(NIL_MAP), id="into-added-null-panics"
    ),
]

REMOVE = [
    pytest.param({"baz": "qux", "foo": "bar"}, [op("remove", "/baz")], {"foo": "bar"}, id="v4-member"),
    pytest.param({"foo": ["a", "b", "c"]}, [op("remove", "/foo/1")], {"foo": ["a", "c"]}, id="v4-element"),
    pytest.param({"foo": ["a", "b", "c"]}, [op("remove", "/foo/-1")], {"foo": ["a", "b"]}, id="minus-one-last"),
    pytest.param({"foo": ["a", "b", "c"]}, [op("remove", "/foo/-2")], {"foo": ["a", "c"]}, id="v4-minus-two"),
    pytest.param({"foo": ["a", "b", "c"]}, [op("remove", "/foo/-3")], {"foo": ["b", "c"]}, id="minus-len-first"),
    pytest.param({"foo": ["a"]}, [op("remove", "/foo/0")], {"foo": []}, id="to-empty-array"),
    pytest.param({"q": {"baz": 1, "bar": None}}, [op("remove", "/q/bar")], {"q": {"baz": 1}}, id="v4-null-member"),
    pytest.param({"a": {"b": 1}}, [op("remove", "/a")], {}, id="subtree"),
    pytest.param(
        {"a": {"b": {"d": 1}}},
        [op("remove", "/a/b/c")],
        Raises("error in remove for path: '/a/b/c': Unable to remove nonexistent key: c: missing value"),
        id="v4-missing-key",
    ),
    pytest.param(
        {"a~b": 1},
        [op("remove", "/a~1b")],
        Raises("error in remove for path: '/a~1b': Unable to remove nonexistent key: a/b: missing value"),
        id="missing-key-printed-unescaped",
    ),
    pytest.param(
        {"a": {"b": [1]}},
        [op("remove", "/a/b/1")],
        Raises(f"error in remove for path: '/a/b/1': {invalid(1)}"),
        id="v4-past-end",
    ),
    pytest.param(
        {"foo": []},
        [op("remove", "/foo/-")],
        Raises(f"error in remove for path: '/foo/-': {syntax('-')}"),
        id="v4-dash",
    ),
    pytest.param(
        {"foo": []}, [op("remove", "/foo/-1")], Raises(f"error in remove for path: '/foo/-1': {invalid(-1)}"), id="v4-e"
    ),
    pytest.param(
        {"foo": ["bar"]},
        [op("remove", "/foo/-2")],
        Raises(f"error in remove for path: '/foo/-2': {invalid(-2)}"),
        id="v4-minus-too-far",
    ),
    pytest.param(
        {"a": 1},
        [op("remove", "")],
        Raises('remove operation does not apply: doc is missing path: "": missing value'),
        id="whole-document",
    ),
    pytest.param(
        {"a": 1},
        [op("remove", "/x/y")],
        Raises('remove operation does not apply: doc is missing path: "/x/y": missing value'),
        id="missing-parent",
    ),
    pytest.param(
        {"a": 1}, [op("remove", None)], Raises("remove operation failed to decode path: missing value"), id="no-path"
    ),
    pytest.param(
        {},
        [op("add", "/a", value=None), op("remove", "/a/b")],
        Raises("error in remove for path: '/a/b': Unable to remove nonexistent key: b: missing value"),
        id="inside-added-null",
    ),
]

REPLACE = [
    pytest.param({"baz": "qux", "foo": "b"}, [op("replace", "/baz", value="boo")], {"baz": "boo", "foo": "b"}, id="v4"),
    pytest.param({"a": 1}, [op("replace", "/b", value=2)], {"a": 1, "b": 2}, id="missing-key-is-added"),
    pytest.param({"foo": ["bar"]}, [op("replace", "/foo/0", value="baz")], {"foo": ["baz"]}, id="v4-element"),
    pytest.param({"foo": ["a", "b", "c"]}, [op("replace", "/foo/1", value="x")], {"foo": ["a", "x", "c"]}, id="v4-mid"),
    pytest.param({"foo": ["a", "b"]}, [op("replace", "/foo/-1", value="x")], {"foo": ["a", "x"]}, id="minus-one-last"),
    pytest.param([{"foo": ["b", "q"]}], [op("replace", "/0/foo/0", value="x")], [{"foo": ["x", "q"]}], id="v4-root-ar"),
    pytest.param({"bar": [{"baz": None}]}, [op("replace", "/bar/0/baz", value=1)], {"bar": [{"baz": 1}]}, id="v4-null"),
    pytest.param({"bar": [{"baz": 1}]}, [op("replace", "/bar/0/baz", value=None)], {"bar": [{"baz": None}]}, id="v4-n"),
    pytest.param({"bar": [None]}, [op("replace", "/bar/0", value=1)], {"bar": [1]}, id="v4-null-element"),
    pytest.param({"bar": [1]}, [op("replace", "/bar/0", value=None)], {"bar": [None]}, id="v4-to-null-element"),
    pytest.param({"a": 1}, [op("replace", "/a")], {"a": None}, id="no-value-writes-null"),
    pytest.param(
        {"foo": ["bar", "baz"]},
        [op("replace", "/foo/2", value="bum")],
        Raises("replace operation does not apply: doc is missing key: /foo/2: missing value"),
        id="v4-past-end",
    ),
    pytest.param(
        {"foo": ["a"]},
        [op("replace", "/foo/-2", value="x")],
        Raises("replace operation does not apply: doc is missing key: /foo/-2: missing value"),
        id="minus-too-far",
    ),
    pytest.param(
        {"foo": ["a"]},
        [op("replace", "/foo/-", value="x")],
        Raises("replace operation does not apply: doc is missing key: /foo/-: missing value"),
        id="dash",
    ),
    pytest.param(
        {"name": {"foo": "bat", "qux": "bum"}},
        [op("replace", "/foo/bar", value="baz")],
        Raises("replace operation does not apply: doc is missing path: /foo/bar: missing value"),
        id="v4-missing-parent",
    ),
    pytest.param(
        {"id": "0", "parentID": "0"},
        [
            op("test", "", value={"id": "0", "parentID": "0"}),
            op("replace", "", value={"id": "7", "originalID": "bar", "parentID": "0"}),
        ],
        {"id": "7", "originalID": "bar", "parentID": "0"},
        id="v4-test-and-replace-whole-document",
    ),
    pytest.param({"a": 1}, [op("replace", "", value=[1, None])], [1, None], id="whole-document-by-array"),
    pytest.param({"a": 1}, [op("replace", "", value=None)], None, id="whole-document-by-null"),
    pytest.param(
        {"a": 1},
        [op("replace", "", value=None), op("add", "/b", value=1)],
        panics(NIL_MAP),
        id="whole-null-document-is-read-only",
    ),
    pytest.param(
        {"a": 1},
        [op("replace", "", value="qux")],
        Raises("replace operation value must be object or array: %!w(<nil>)"),
        id="whole-document-by-scalar",
    ),
    pytest.param({"a": 1}, [op("replace", "")], panics(NIL_POINTER), id="whole-document-without-value"),
    pytest.param(
        {"a": 1},
        [op("replace", None, value=1)],
        Raises("replace operation failed to decode path: operation missing path field: missing value"),
        id="no-path",
    ),
    pytest.param(
        {"a": 1},
        [op("replace", 5, value=1)],
        Raises("replace operation failed to decode path: json: cannot unmarshal number into Go value of type string"),
        id="number-path",
    ),
    pytest.param(
        {"a": 1},
        [op("replace", True, value=1)],
        Raises("replace operation failed to decode path: json: cannot unmarshal bool into Go value of type string"),
        id="bool-path",
    ),
    pytest.param(
        {"a": 1},
        [op("replace", ["/a"], value=1)],
        Raises("replace operation failed to decode path: json: cannot unmarshal array into Go value of type string"),
        id="array-path",
    ),
    pytest.param(
        {"a": 1},
        [op("replace", {"p": 1}, value=1)],
        Raises("replace operation failed to decode path: json: cannot unmarshal object into Go value of type string"),
        id="object-path",
    ),
    pytest.param(
        {}, [op("add", "/a", value=None), op("replace", "/a/b", value=1)], panics(NIL_MAP), id="inside-added-null"
    ),
]

FOUR = {"foo": ["all", "grass", "cows", "eat"]}
MOVE = [
    pytest.param(
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [op("move", "/qux/thud", src="/foo/waldo")],
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
        id="v4-member",
    ),
    pytest.param(FOUR, [op("move", "/foo/3", src="/foo/1")], {"foo": ["all", "cows", "eat", "grass"]}, id="v4-to-3"),
    pytest.param(FOUR, [op("move", "/foo/2", src="/foo/1")], {"foo": ["all", "cows", "grass", "eat"]}, id="v4-to-2"),
    pytest.param(FOUR, [op("move", "/foo/-", src="/foo/0")], {"foo": ["grass", "cows", "eat", "all"]}, id="to-end"),
    pytest.param(FOUR, [op("move", "/foo/0", src="/foo/-1")], {"foo": ["eat", "all", "grass", "cows"]}, id="last-1st"),
    pytest.param({"a": None}, [op("move", "/b", src="/a")], {"b": None}, id="null-member"),
    pytest.param({"a": [1]}, [op("move", "/a/-", src="/a/0")], {"a": [1]}, id="onto-itself"),
    pytest.param(
        FOUR,
        [op("move", "/foo/4", src="/foo/1")],
        Raises(f"error in move for path: '/foo/4': {invalid(4)}"),
        id="v4-past-end",
    ),
    pytest.param(
        {"a": {"b": {"d": 1}}},
        [op("move", "/a/b/e", src="/a/b/c")],
        Raises("error in move for path: 'c': Unable to remove nonexistent key: c: missing value"),
        id="v4-missing-key-printed-as-key",
    ),
    pytest.param(
        {"a": {"b": [1]}},
        [op("move", "/a/b/2", src="/a/b/1")],
        Raises(f"error in move for path: '1': {invalid(1)}"),
        id="v4-from-past-end",
    ),
    pytest.param(
        {"a": [1]},
        [op("move", "/b", src="/a/-")],
        Raises(f"error in move for path: '-': {syntax('-')}"),
        id="from-dash",
    ),
    pytest.param(
        {"a": 1},
        [op("move", "/b", src="/x/y")],
        Raises("move operation does not apply: doc is missing from path: /x/y: missing value"),
        id="missing-from-parent",
    ),
    pytest.param(
        {"a": 1},
        [op("move", "/x/y", src="/a")],
        Raises("move operation does not apply: doc is missing destination path: /x/y: missing value"),
        id="missing-destination-parent",
    ),
    pytest.param(
        {"a": {"b": 1}},
        [op("move", "/a/c", src="/a")],
        Raises("move operation does not apply: doc is missing destination path: /a/c: missing value"),
        id="into-itself",
    ),
    pytest.param(
        {"a": 1},
        [op("move", "/b")],
        Raises("move operation failed to decode from: operation, missing from field: missing value"),
        id="no-from",
    ),
    pytest.param(
        {"a": 1},
        [op("move", "/b", **{"from": ""})],
        Raises("move operation failed to decode from: operation, missing from field: missing value"),
        id="empty-from-is-left-out",
    ),
    pytest.param(
        {"a": 1},
        [op("move", "/b", src=7)],
        Raises("move operation failed to decode from: json: cannot unmarshal number into Go value of type string"),
        id="number-from",
    ),
    pytest.param(
        {"a": 1},
        [op("move", None, src="/a")],
        Raises("move operation failed to decode path: operation missing path field: missing value"),
        id="no-path",
    ),
]

ROOT_COPY = [{"foo": ["bar", "qux", "baz"], "bar": ["qux", "baz"]}]
COPY = [
    pytest.param(
        ROOT_COPY,
        [op("copy", "/0/bar/0", src="/0/foo/0")],
        [{"foo": ["bar", "qux", "baz"], "bar": ["bar", "qux", "baz"]}],
        id="v4-element",
    ),
    pytest.param(
        ROOT_COPY,
        [op("copy", "/0/bar", src="/0/foo/0")],
        [{"foo": ["bar", "qux", "baz"], "bar": "bar"}],
        id="v4-element-over-member",
    ),
    pytest.param(
        [{"foo": {"bar": ["qux", "baz"]}, "baz": {"qux": "bum"}}],
        [op("copy", "/0/baz/bar", src="/0/foo/bar")],
        [{"baz": {"bar": ["qux", "baz"], "qux": "bum"}, "foo": {"bar": ["qux", "baz"]}}],
        id="v4-subtree",
    ),
    pytest.param({"foo": ["bar"]}, [op("copy", "/foo/0", src="/foo")], {"foo": [["bar"], "bar"]}, id="v4-into-itself"),
    pytest.param({"a": 1}, [op("copy", "/b", src="/nope")], {"a": 1, "b": None}, id="missing-key-copies-null"),
    pytest.param(
        {"a": {"x": [1]}},
        [op("copy", "/b", src="/a"), op("add", "/b/x/-", value=2), op("add", "/b/y", value=3)],
        {"a": {"x": [1]}, "b": {"x": [1, 2], "y": 3}},
        id="independent-copy",
    ),
    pytest.param(
        {"foo": ["bar"]},
        [op("copy", "/foo/6666666666", src="/")],
        Raises(f"error while adding value during copy: {invalid(6666666666)}"),
        id="v4-huge-index",
    ),
    pytest.param(
        {"foo": ["bar"]},
        [op("copy", "/foo/2", src="/foo/0")],
        Raises(f"error while adding value during copy: {invalid(2)}"),
        id="v4-past-end",
    ),
    pytest.param(
        {"foo": ["bar"]},
        [op("copy", "/b", src="/foo/5")],
        Raises(f"error in copy for from: '/foo/5': {invalid(5)}"),
        id="from-past-end",
    ),
    pytest.param(
        {"a": 1},
        [op("copy", "/b", src="/x/y")],
        Raises("copy operation does not apply: doc is missing from path: /x/y: missing value"),
        id="missing-from-parent",
    ),
    pytest.param(
        {"a": 1},
        [op("copy", "/x/y", src="/a")],
        Raises("copy operation does not apply: doc is missing destination path: /x/y: missing value"),
        id="missing-destination-parent",
    ),
    pytest.param(
        {},
        [op("copy", None, src=None)],
        Raises("copy operation failed to decode from: operation, missing from field: missing value"),
        id="v4-null-from",
    ),
    pytest.param(
        {"a": 1},
        [op("copy", None, src="/a")],
        Raises("copy operation failed to decode path: missing value"),
        id="no-path",
    ),
    pytest.param(
        {"a": 1},
        [op("copy", "/b", src="/a", value=2)],
        {"a": 1, "b": 1},
        id="value-ignored",
    ),
]

DEEP = {"baz": "qux", "foo": ["a", 2, "c"]}
TEST = [
    pytest.param(DEEP, [op("test", "/baz", value="qux"), op("test", "/foo/1", value=2)], DEEP, id="v4-pass"),
    pytest.param({"baz": "qux"}, [op("test", "/baz", value="bar")], fails("/baz"), id="v4-string-differs"),
    pytest.param(
        DEEP, [op("test", "/baz", value="qux"), op("test", "/foo/1", value="c")], fails("/foo/1"), id="v4-2nd"
    ),
    pytest.param({"baz": "qux"}, [op("test", "/foo", value=42)], fails("/foo"), id="v4-missing-key"),
    pytest.param({"baz/foo": "qux"}, [op("test", "/baz~1foo", value="qux")], {"baz/foo": "qux"}, id="v4-escaped"),
    pytest.param({"foo": []}, [op("test", "/foo")], fails("/foo"), id="v4-no-value"),
    pytest.param({"baz": []}, [op("test", "/foo")], {"baz": []}, id="v4-missing-key-no-value"),
    pytest.param({"foo": None}, [op("test", "/foo")], {"foo": None}, id="document-null-no-value"),
    # A CEL null reaches v4 as the text `null`, not as the nil RawMessage v4's own tests decode it to:
    pytest.param({"baz": "qux"}, [op("test", "/foo", value=None)], fails("/foo"), id="v4-missing-key-null-k8s"),
    pytest.param({"foo": None}, [op("test", "/foo", value=None)], fails("/foo"), id="v4-document-null-null-k8s"),
    pytest.param({"foo": {}}, [op("test", "/foo", value=None)], {"foo": {}}, id="v4-empty-object-equals-null-k8s"),
    pytest.param({"foo": []}, [op("test", "/foo", value=None)], {"foo": []}, id="v4-empty-array-equals-null-k8s"),
    pytest.param({"foo": [1]}, [op("test", "/foo", value=None)], fails("/foo"), id="array-not-null"),
    pytest.param({"foo": {"a": 1}}, [op("test", "/foo", value=None)], fails("/foo"), id="object-not-null"),
    pytest.param({"foo": 0}, [op("test", "/foo", value=None)], fails("/foo"), id="zero-not-null"),
    pytest.param({}, [op("add", "/a", value=None), op("test", "/a", value=None)], {"a": None}, id="added-null"),
    pytest.param({}, [op("add", "/a", value=None), op("test", "/a", value={})], {"a": None}, id="added-null-is-{}"),
    pytest.param({}, [op("add", "/a", value=None), op("test", "/a", value=[])], fails("/a"), id="added-null-not-[]"),
    pytest.param({}, [op("add", "/a", value=None), op("test", "/a")], fails("/a"), id="added-null-without-value"),
    pytest.param(
        {"a": {}},
        [op("add", "/a/n", value=None), op("test", "/a", value={"n": None})],
        fails("/a"),
        id="added-null-member-is-not-a-decoded-null",
    ),
    pytest.param(
        {"a": {}},
        [op("add", "/a/n", value=None), op("copy", "/b", src="/a"), op("test", "/b/n", value=None)],
        fails("/b/n"),
        id="copy-decodes-nulls-again",
    ),
    pytest.param(
        {"a": {}},
        [op("add", "/a/n", value=None), op("copy", "/b", src="/a/n"), op("test", "/b", value=None)],
        {"a": {"n": None}, "b": None},
        id="copied-null-node-stays-a-node",
    ),
    pytest.param({"n": 1}, [op("test", "/n", value=1.0)], {"n": 1}, id="int-equals-integral-float"),
    pytest.param({"n": 100}, [op("test", "/n", value=1e2)], {"n": 100}, id="same-json-text"),
    pytest.param({"n": 1.5}, [op("test", "/n", value=1.5)], {"n": 1.5}, id="float"),
    pytest.param({"n": 1e21}, [op("test", "/n", value=10**21)], fails("/n"), id="1e+21-is-not-1000000000000000000000"),
    pytest.param({"n": 2**63}, [op("test", "/n", value=2**63)], {"n": 2**63}, id="big-int-exact"),
    pytest.param({"n": 1}, [op("test", "/n", value="1")], fails("/n"), id="number-not-string"),
    pytest.param({"n": True}, [op("test", "/n", value=1)], fails("/n"), id="bool-not-number"),
    pytest.param({"n": False}, [op("test", "/n", value=False)], {"n": False}, id="bool"),
    pytest.param({"n": 1}, [op("test", "/n", value=[1])], fails("/n"), id="scalar-not-array"),
    pytest.param({"n": 1}, [op("test", "/n", value={})], fails("/n"), id="scalar-not-object"),
    pytest.param({"s": "<é>"}, [op("test", "/s", value="<é>")], {"s": "<é>"}, id="string"),
    pytest.param(
        {"o": {"b": "qux", "a": [1, {"x": None}]}},
        [op("test", "/o", value={"a": [1, {"x": None}], "b": "qux"})],
        {"o": {"b": "qux", "a": [1, {"x": None}]}},
        id="object-keys-out-of-order",
    ),
    pytest.param({"o": {"a": 1}}, [op("test", "/o", value={"a": 1, "b": 2})], fails("/o"), id="extra-key"),
    pytest.param({"o": {"a": 1}}, [op("test", "/o", value={"b": 1})], fails("/o"), id="other-key"),
    pytest.param({"o": {"a": None}}, [op("test", "/o", value={"a": "bar"})], fails("/o"), id="null-member-vs-string"),
    pytest.param({"o": {"a": None}}, [op("test", "/o", value={"a": None})], {"o": {"a": None}}, id="null-members"),
    pytest.param({"o": {"a": {}}}, [op("test", "/o", value={"a": None})], fails("/o"), id="nested-null-is-no-node"),
    pytest.param({"a": ["x", "y"]}, [op("test", "/a", value=["y", "x"])], fails("/a"), id="array-order"),
    pytest.param({"a": ["x"]}, [op("test", "/a", value=["x", "y"])], fails("/a"), id="array-length"),
    pytest.param({"a": [None]}, [op("test", "/a", value=[None])], panics(NIL_POINTER), id="null-elements-panic"),
    pytest.param({"a": [1]}, [op("test", "/a", value=[None])], panics(NIL_POINTER), id="null-element-panics"),
    pytest.param({"a": [1, None]}, [op("test", "/a", value=[2, None])], fails("/a"), id="differs-before-the-null"),
    pytest.param({"a": [[1], {"b": [2]}]}, [op("test", "/a", value=[[1], {"b": [2]}])], {"a": [[1], {"b": [2]}]}),
    pytest.param({"a": 1}, [op("test", "", value={"a": 1})], {"a": 1}, id="whole-document"),
    pytest.param({"a": 1}, [op("test", "", value={"a": 2})], fails(""), id="whole-document-differs"),
    pytest.param([1], [op("test", "", value=[1])], [1], id="whole-array-document"),
    pytest.param({}, [op("test", "", value=None)], {}, id="whole-empty-document-equals-null"),
    pytest.param({"a": 1}, [op("test", "")], panics(NIL_POINTER), id="whole-document-without-value"),
    pytest.param(
        {"a": 1},
        [op("test", "/x/y", value=1)],
        Raises("test operation does not apply: is missing path: /x/y: missing value"),
        id="missing-parent",
    ),
    pytest.param(
        {"a": 1},
        [op("test", "a", value=1)],
        Raises("test operation does not apply: is missing path: a: missing value"),
        id="no-slash",
    ),
    pytest.param(
        {"foo": [1]},
        [op("test", "/foo/9", value=1)],
        Raises(f"error in test for path: '/foo/9': {invalid(9)}"),
        id="past-end",
    ),
    pytest.param(
        {"foo": [1]},
        [op("test", "/foo/-", value=1)],
        Raises(f"error in test for path: '/foo/-': {syntax('-')}"),
        id="dash",
    ),
    pytest.param({"foo": [1, 2]}, [op("test", "/foo/-1", value=2)], {"foo": [1, 2]}, id="minus-one"),
    pytest.param(
        {"a": 1},
        [op("test", None, value=1)],
        Raises("test operation failed to decode path: operation missing path field: missing value"),
        id="no-path",
    ),
    pytest.param(
        {"a": 1},
        [op("test", "/a", value=2), op("add", "/b", value=1)],
        fails("/a"),
        id="stops-the-patch",
    ),
]

KINDS = [
    pytest.param({}, [op("frob", "/a")], Raises("Unexpected kind: frob"), id="unknown"),
    pytest.param({}, [op("ADD", "/a", value=1)], Raises("Unexpected kind: ADD"), id="case-sensitive"),
    pytest.param({}, [op("", "/a")], Raises("Unexpected kind: "), id="empty"),
    pytest.param({}, [op(None, "/a")], Raises("Unexpected kind: unknown"), id="missing"),
    pytest.param({}, [{"op": None, "path": ""}], Raises("Unexpected kind: unknown"), id="v4-null"),
    pytest.param({}, [op(1, "/a")], Raises("Unexpected kind: unknown"), id="number"),
    pytest.param({}, [op("add\a", "/a")], Raises("Unexpected kind: unknown"), id="go-quote-not-json"),
    pytest.param({}, [], {}, id="no-operations"),
    pytest.param(
        {"a": 1},
        [op("add", "/b", value=2), op("frob", "/c")],
        Raises("Unexpected kind: frob"),
        id="later-error-fails-the-patch",
    ),
]

# json_patch.go writes op, path and from with strconv.Quote; v4 decodes them as JSON strings.
QUOTING = [
    pytest.param({}, [op("add", "/a\tb", value=1)], {"a\tb": 1}, id="tab"),
    pytest.param({}, [op("add", '/"\\', value=1)], {'"\\': 1}, id="quote-backslash"),
    pytest.param({}, [op("add", "/\u00a0\u2028\ufeff", value=1)], {"\u00a0\u2028\ufeff": 1}, id="u-escapes"),
    pytest.param({}, [op("add", "/日本", value=1)], {"日本": 1}, id="printable"),
    pytest.param(
        {"a": 1},
        [op("replace", "/\x7f", value=1)],
        Raises("replace operation failed to decode path: invalid character 'x' in string escape code"),
        id="x-escape",
    ),
    pytest.param(
        {"a": 1},
        [op("replace", "/a\x01", value=1)],
        Raises("replace operation failed to decode path: invalid character 'x' in string escape code"),
        id="control",
    ),
    pytest.param(
        {"a": 1},
        [op("replace", "/\a\x01", value=1)],
        Raises("replace operation failed to decode path: invalid character 'a' in string escape code"),
        id="bell-first",
    ),
    pytest.param(
        {"a": 1},
        [op("test", "/\v", value=1)],
        Raises("test operation failed to decode path: invalid character 'v' in string escape code"),
        id="vertical-tab",
    ),
    pytest.param(
        {"a": 1},
        [op("move", "/b", src="/\U000e0001")],
        Raises("move operation failed to decode from: invalid character 'U' in string escape code"),
        id="astral-non-printable",
    ),
    pytest.param(
        {"a": 1},
        [op("copy", "/b", src="/\udcff")],
        Raises("copy operation failed to decode from: invalid character 'x' in string escape code"),
        id="invalid-utf8",
    ),
    pytest.param(
        {"a": 1},
        [op("add", "/\x7f", value=1)],
        Raises("add operation failed to decode path: missing value"),
        id="add-words-it-missing",
    ),
]

DOCUMENTS = [
    pytest.param([1, 2], [op("add", "/1", value=9), op("remove", "/0")], [9, 2], id="array"),
    pytest.param([], [op("add", "/-", value={"a": 1})], [{"a": 1}], id="empty-array"),
    pytest.param(None, [], None, id="null"),
    pytest.param(None, [op("add", "/a", value=1)], panics(NIL_MAP), id="null-is-read-only"),
    pytest.param(None, [op("test", "/a")], None, id="null-reads-empty"),
    pytest.param(None, [op("test", "", value={})], None, id="null-equals-empty-object"),
    pytest.param(
        None,
        [op("remove", "/a")],
        Raises("error in remove for path: '/a': Unable to remove nonexistent key: a: missing value"),
        id="null-remove",
    ),
    pytest.param(
        5, [], Raises("json: cannot unmarshal number into Go value of type jsonpatch.partialDoc"), id="number"
    ),
    pytest.param(
        "s", [], Raises("json: cannot unmarshal string into Go value of type jsonpatch.partialDoc"), id="string"
    ),
    pytest.param(True, [], Raises("json: cannot unmarshal bool into Go value of type jsonpatch.partialDoc"), id="bool"),
    pytest.param(
        {"i": 2**70, "f": 1.0, "z": -0.0},
        [op("copy", "/j", src="/i"), op("add", "/g", value=0.1)],
        {"i": 2**70, "f": 1.0, "z": -0.0, "j": 2**70, "g": 0.1},
        id="numbers-exact",
    ),
]


@pytest.mark.parametrize(("document", "operations", "expected"), ADD)
def test_add(document: Any, operations: list[dict[str, Any]], expected: Any) -> None:
    check(document, operations, expected)


@pytest.mark.parametrize(("document", "operations", "expected"), REMOVE)
def test_remove(document: Any, operations: list[dict[str, Any]], expected: Any) -> None:
    check(document, operations, expected)


@pytest.mark.parametrize(("document", "operations", "expected"), REPLACE)
def test_replace(document: Any, operations: list[dict[str, Any]], expected: Any) -> None:
    check(document, operations, expected)


@pytest.mark.parametrize(("document", "operations", "expected"), MOVE)
def test_move(document: Any, operations: list[dict[str, Any]], expected: Any) -> None:
    check(document, operations, expected)


@pytest.mark.parametrize(("document", "operations", "expected"), COPY)
def test_copy(document: Any, operations: list[dict[str, Any]], expected: Any) -> None:
    check(document, operations, expected)


@pytest.mark.parametrize(("document", "operations", "expected"), TEST)
def test_test(document: Any, operations: list[dict[str, Any]], expected: Any) -> None:
    check(document, operations, expected)


@pytest.mark.parametrize(("document", "operations", "expected"), KINDS + QUOTING + DOCUMENTS)
def test_operations_and_documents(document: Any, operations: list[dict[str, Any]], expected: Any) -> None:
    check(document, operations, expected)


# -- v4.12.0, which 1.32-1.34 API servers are built with --------------------------------------------------------------

V4_12 = [
    pytest.param(
        {"a": 1},
        [op("replace", "", value="qux"), op("add", "/b", value=2)],
        {"a": 1, "b": 2},
        id="whole-document-by-scalar-is-ignored",
    ),
    pytest.param({"baz": []}, [op("test", "/foo")], panics(NIL_POINTER), id="missing-key-no-value-panics"),
    pytest.param({"foo": None}, [op("test", "/foo")], panics(NIL_POINTER), id="document-null-no-value-panics"),
    pytest.param({"foo": 1}, [op("test", "/foo")], fails("/foo"), id="value-no-value-fails"),
    pytest.param({"a": 1}, [op("replace", "", value=[1])], [1], id="whole-document-by-array"),
    pytest.param(
        {"foo": []},
        [op("remove", "/foo/-1")],
        Raises(f"error in remove for path: '/foo/-1': {invalid(-1)}"),
        id="same-texts",
    ),
]


@pytest.mark.parametrize(("document", "operations", "expected"), V4_12)
def test_v4_12(document: Any, operations: list[dict[str, Any]], expected: Any) -> None:
    with answering_as((1, 34)):
        check(document, operations, expected)


def test_version_boundary() -> None:
    for version, expected in (((1, 32), {"a": 1}), ((1, 34), {"a": 1}), ((1, 35), None), ((1, 37), None)):
        with answering_as(version):
            if expected is None:
                with pytest.raises(JSONPatchError, match="must be object or array"):
                    apply_patch({"a": 1}, [op("replace", "", value=1)])
            else:
                assert apply_patch({"a": 1}, [op("replace", "", value=1)]) == expected


# -- AccumulatedCopySizeLimit ---------------------------------------------------------------------------------------

TWO_COPIES = [op("copy", "/foo/-", src="/foo/1"), op("copy", "/foo/-", src="/foo/1")]
COPY_LIMIT = [
    # v4: the quotes count, so each copy of 48 A's adds 50 bytes, of 49 A's 51.
    pytest.param(100, {"foo": ["A", "A" * 48]}, TWO_COPIES, {"foo": ["A"] + ["A" * 48] * 3}, id="v4-at-limit"),
    pytest.param(
        100,
        {"foo": ["A", "A" * 49]},
        TWO_COPIES,
        Raises("Unable to complete the copy, the accumulated size increase of copy is 102, exceeding the limit 100"),
        id="v4-over-limit",
    ),
    pytest.param(0, {"foo": ["A", "A" * 10**6]}, TWO_COPIES, {"foo": ["A"] + ["A" * 10**6] * 3}, id="0-is-unlimited"),
    pytest.param(
        7,
        {"s": "<"},
        [op("copy", "/t", src="/s")],
        Raises("Unable to complete the copy, the accumulated size increase of copy is 8, exceeding the limit 7"),
        id="html-escaped-as-go-marshals",
    ),
    pytest.param(4, {"s": "é"}, [op("copy", "/t", src="/s")], {"s": "é", "t": "é"}, id="utf8-bytes"),
    pytest.param(
        10,
        {"o": {"b": [1, None], "a": 1.5}},
        [op("copy", "/p", src="/o")],
        Raises("Unable to complete the copy, the accumulated size increase of copy is 22, exceeding the limit 10"),
        id="object-compact-json",
    ),
    pytest.param(1, {"n": None}, [op("copy", "/m", src="/n")], {"n": None, "m": None}, id="document-null-is-free"),
    pytest.param(
        3,
        {},
        [op("add", "/n", value=None), op("copy", "/m", src="/n")],
        Raises("Unable to complete the copy, the accumulated size increase of copy is 4, exceeding the limit 3"),
        id="null-node-is-4-bytes",
    ),
]


@pytest.mark.parametrize(("limit", "document", "operations", "expected"), COPY_LIMIT)
def test_copy_size_limit(
    monkeypatch: pytest.MonkeyPatch, limit: int, document: Any, operations: list[dict[str, Any]], expected: Any
) -> None:
    monkeypatch.setattr(jsonpatch, "ACCUMULATED_COPY_SIZE_LIMIT", limit)
    check(document, operations, expected)


def test_copy_size_is_per_patch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonpatch, "ACCUMULATED_COPY_SIZE_LIMIT", 60)
    document = {"foo": ["A", "A" * 48]}
    for _ in range(3):  # each Apply starts from zero
        assert len(apply_patch(document, TWO_COPIES[:1])["foo"]) == 3


# -- no sharing with the caller -------------------------------------------------------------------------------------


def test_result_shares_nothing_with_the_inputs() -> None:
    document = {"a": {"b": [1]}}
    value = {"x": [1]}
    operations = [op("add", "/v", value=value), op("add", "/w", value=value), op("add", "/v/x/-", value=2)]
    result = apply_patch(document, operations)
    assert result == {"a": {"b": [1]}, "v": {"x": [1, 2]}, "w": {"x": [1]}}
    result["a"]["b"].append(2)
    assert document == {"a": {"b": [1]}} and value == {"x": [1]}


def test_error_classes() -> None:
    assert issubclass(TestFailed, JSONPatchError) and issubclass(PatchPanic, JSONPatchError)
    assert not issubclass(TestFailed, PatchPanic) and not issubclass(PatchPanic, TestFailed)


# -- k8s.io/apiserver's TestJSONPatch --------------------------------------------------------------------------------


def container(name: str, **fields: Any) -> dict[str, Any]:
    """A corev1.Container as the JSON serializer writes it (resources is a struct, so always there)."""
    return {"name": name, "resources": {}, **fields}


def deployment(
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    labels: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """An appsv1.Deployment as the strict JSON serializer writes it (nil non-omitempty fields are null)."""
    pod: dict[str, Any] = {"containers": containers}
    if init is not None:
        pod = {"initContainers": init, **pod}
    metadata: dict[str, Any] = {"creationTimestamp": None}
    if labels is not None:
        metadata["labels"] = labels
    template = {"metadata": {"creationTimestamp": None}, "spec": pod}
    return {
        "metadata": metadata,
        "spec": {"selector": None, "template": template, "strategy": {}, **spec},
        "status": {},
    }


def with_pod(document: dict[str, Any], **fields: Any) -> dict[str, Any]:
    document = copy.deepcopy(document)
    document["spec"]["template"]["spec"].update(fields)
    return document


def with_meta(document: dict[str, Any], **fields: Any) -> dict[str, Any]:
    document = copy.deepcopy(document)
    document["metadata"].update(fields)
    return document


ABC = [container("a"), container("b"), container("c")]
MAIN = [container("main-app", image="nginx:1.24")]
INIT_1 = container("init-1", image="alpine:3.18", command=["echo", "init1"])
INIT_2 = container("init-2", image="alpine:3.18", command=["echo", "init2"])
UNSTRUCTURED_INIT = {"name": "unstructured-init", "image": "alpine:3.18"}
PODS = "/spec/template/spec"
LIMITS = f"{PODS}/containers/0/resources/limits"
REQUESTS = {"cpu": "100m", "memory": "128Mi"}
COMPLEX = {
    "containers": [container("a", image="nginx")],
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar", "baz"]}]}
                ]
            }
        }
    },
    "tolerations": [{"key": "taint", "operator": "Exists"}],
}

APISERVER = [
    pytest.param(
        deployment(replicas=1),
        [op("test", "/spec/replicas", value=100), op("replace", "/spec/replicas", value=3)],
        fails("/spec/replicas"),
        id="jsonPatch with false test operation",
    ),
    pytest.param(
        deployment(replicas=1),
        [op("test", "/spec/replicas", value=1), op("replace", "/spec/replicas", value=3)],
        deployment(replicas=3),
        id="jsonPatch with true test operation",
    ),
    pytest.param(
        deployment(replicas=1), [op("remove", "/spec/replicas")], deployment(), id="jsonPatch remove to unset field"
    ),
    pytest.param(
        deployment(labels={"x": "1", "y": "1"}),
        [op("remove", "/metadata/labels/y")],
        deployment(labels={"x": "1"}),
        id="jsonPatch remove map entry by key",
    ),
    pytest.param(
        deployment(ABC),
        [op("remove", f"{PODS}/containers/1")],
        deployment([container("a"), container("c")]),
        id="jsonPatch remove element in list",
    ),
    pytest.param(
        deployment(labels={"x": "1"}),
        [op("copy", "/metadata/labels/y", src="/metadata/labels/x")],
        deployment(labels={"x": "1", "y": "1"}),
        id="jsonPatch copy map entry by key",
    ),
    pytest.param(
        deployment(ABC),
        [op("copy", f"{PODS}/containers/-", src=f"{PODS}/containers/0")],
        deployment([*ABC, container("a")]),
        id="jsonPatch copy first element to end of list",
    ),
    pytest.param(
        deployment(labels={"x": "1"}),
        [op("move", "/metadata/labels/y", src="/metadata/labels/x")],
        deployment(labels={"y": "1"}),
        id="jsonPatch move map entry by key",
    ),
    pytest.param(
        deployment(ABC),
        [op("move", f"{PODS}/containers/-", src=f"{PODS}/containers/0")],
        deployment([container("b"), container("c"), container("a")]),
        id="jsonPatch move first element to end of list",
    ),
    pytest.param(
        deployment(labels={"y": "1"}),
        [op("add", "/metadata/labels/x", value="2")],
        deployment(labels={"y": "1", "x": "2"}),
        id="jsonPatch add map entry by key and value",
    ),
    pytest.param(
        deployment(),
        [op("add", "/metadata/labels", value={"y": "2"})],
        deployment(labels={"y": "2"}),
        id="jsonPatch add map value to field",
    ),
    pytest.param(
        deployment(labels={"x": "1"}),
        [op("add", "/metadata/labels", value={"y": "2"})],
        deployment(labels={"y": "2"}),
        id="jsonPatch add map to existing map",
    ),
    pytest.param(
        deployment([container("a")]),
        [op("add", f"{PODS}/containers/0", value={"name": "x"})],
        deployment([{"name": "x"}, container("a")]),
        id="jsonPatch add to start of list",
    ),
    pytest.param(
        deployment([container("a")]),
        [op("add", f"{PODS}/containers/-", value={"name": "x"})],
        deployment([container("a"), {"name": "x"}]),
        id="jsonPatch add to end of list",
    ),
    pytest.param(
        deployment(labels={"y": "1"}),
        [op("replace", "/metadata/labels/x", value="2")],
        deployment(labels={"y": "1", "x": "2"}),
        id="jsonPatch replace key in map",
    ),
    pytest.param(
        deployment(),
        [op("replace", "/metadata/labels", value={"y": "2"})],
        deployment(labels={"y": "2"}),
        id="jsonPatch replace map value of unset field",
    ),
    pytest.param(
        deployment(labels={"x": "1"}),
        [op("replace", "/metadata/labels", value={"y": "2"})],
        deployment(labels={"y": "2"}),
        id="jsonPatch replace map value of set field",
    ),
    pytest.param(
        deployment([container("a")]),
        [op("replace", f"{PODS}/containers/0", value={"name": "x"})],
        deployment([{"name": "x"}]),
        id="jsonPatch replace first element in list",
    ),
    pytest.param(
        deployment(),
        [op("add", "/spec", value={"selector": {}, "replicas": 10})],
        {**deployment(), "spec": {"selector": {}, "replicas": 10}},
        id="jsonPatch add map entry by key and value (Object.spec)",
    ),
    pytest.param(
        deployment(labels={}),
        [op("add", "/metadata/labels", value={"op": "opValue", "path": "pathValue", "from": "fromValue"})],
        deployment(labels={"op": "opValue", "path": "pathValue", "from": "fromValue"}),
        id="JSONPatch patch type has field access",
    ),
    pytest.param(
        deployment(labels={}),
        [op("add", "/metadata/labels", value={"op": "true", "op-unset": "false"})],
        deployment(labels={"op": "true", "op-unset": "false"}),
        id="JSONPatch patch type has field testing",
    ),
    pytest.param(
        deployment(labels={}),
        [op("add", "/metadata/labels", value={"empty": "true", "different-op": "false"})],
        deployment(labels={"empty": "true", "different-op": "false"}),
        id="JSONPatch patch type equality",
    ),
    pytest.param(
        deployment(labels={}),
        [op("add", "/metadata/labels", value={}), op("add", "/metadata/labels/k8s.io~1x~0y", value="true")],
        deployment(labels={"k8s.io/x~y": "true"}),
        id="JSONPatch key escaping",
    ),
    pytest.param(
        deployment([container("a")]),
        [op("add", f"{PODS}/containers/-", value={"name": "x", "ports": [{"containerPort": 8080}]})],
        deployment([container("a"), {"name": "x", "ports": [{"containerPort": 8080}]}]),
        id="jsonPatch with CEL initializer",
    ),
    # The patch applies; the API server's strict decoding of the result then rejects the unknown field.
    pytest.param(
        deployment([container("a")]),
        [op("add", f"{PODS}/containers/-", value={"name": "x", "ports": [{"containerPortZ": 8080}]})],
        deployment([container("a"), {"name": "x", "ports": [{"containerPortZ": 8080}]}]),
        id="jsonPatch invalid CEL initializer field (patch part)",
    ),
    pytest.param(
        deployment([container("a")]),
        [op("replace", f"{PODS}/containers/-", value={"name": "x"})],
        Raises("replace operation does not apply: doc is missing key: /spec/template/spec/containers/-: missing value"),
        id="jsonPatch replace end of list with - not allowed",
    ),
    pytest.param(
        deployment([container("a")]),
        [op("add", f"{PODS}/containers/1", value=container("a"))],
        deployment([container("a"), container("a")]),
        id="jsonPatch with complex struct as value",
    ),
    pytest.param(
        with_pod(deployment(), **COMPLEX),
        [op("replace", PODS, value=COMPLEX)],
        with_pod(deployment(), **COMPLEX),
        id="jsonPatch with large complex struct as value",
    ),
    pytest.param(
        deployment([container("a", image="nginx")]),
        [op("add", f"{PODS}/initContainers", value=[container("a", image="nginx")])],
        deployment([container("a", image="nginx")], init=[container("a", image="nginx")]),
        id="jsonPatch with slice of complex struct as value",
    ),
    pytest.param(
        deployment([container("a")]),
        [op("add", f"{PODS}/containers", value=[container("a"), container("a")])],
        deployment([container("a"), container("a")]),
        id="jsonPatch with list concatenation operator",
    ),
    pytest.param(
        deployment([container("c1", command=["server", "start"])]),
        [op("add", f"{PODS}/containers/0/args", value=["server", "start", "--debug", "-v"])],
        deployment([container("c1", command=["server", "start"], args=["server", "start", "--debug", "-v"])]),
        id="jsonPatch with list concatenation using constant value",
    ),
    pytest.param(
        deployment(MAIN, init=[container("init-setup", image="busybox:1.36")]),
        [op("replace", f"{PODS}/containers", value=[container("init-setup", image="busybox:1.36"), *MAIN])],
        deployment(
            [container("init-setup", image="busybox:1.36"), *MAIN], init=[container("init-setup", image="busybox:1.36")]
        ),
        id="jsonPatch with list concatenation reading from other fields",
    ),
    pytest.param(
        deployment(MAIN),
        [op("add", f"{PODS}/initContainers", value=[*MAIN, UNSTRUCTURED_INIT])],
        deployment(MAIN, init=[*MAIN, UNSTRUCTURED_INIT]),
        id="jsonPatch with list concatenation (typed + unstructured)",
    ),
    pytest.param(
        deployment(MAIN),
        [op("add", f"{PODS}/initContainers", value=[UNSTRUCTURED_INIT, *MAIN])],
        deployment(MAIN, init=[UNSTRUCTURED_INIT, *MAIN]),
        id="jsonPatch with list concatenation (unstructured + typed)",
    ),
    pytest.param(
        deployment(MAIN),
        [op("add", f"{PODS}/initContainers", value=[{"name": "unstructured-init1"}, {"name": "unstructured-init2"}])],
        deployment(MAIN, init=[{"name": "unstructured-init1"}, {"name": "unstructured-init2"}]),
        id="jsonPatch with list concatenation (unstructured + unstructured)",
    ),
    pytest.param(
        deployment(MAIN),
        [op("add", f"{PODS}/initContainers", value=[*MAIN, INIT_1])],
        deployment(MAIN, init=[*MAIN, INIT_1]),
        id="jsonPatch with list concatenation (typed + structured)",
    ),
    pytest.param(
        deployment(MAIN),
        [op("add", f"{PODS}/initContainers", value=[INIT_1, *MAIN])],
        deployment(MAIN, init=[INIT_1, *MAIN]),
        id="jsonPatch with list concatenation (structured + typed)",
    ),
    pytest.param(
        deployment(MAIN),
        [op("add", f"{PODS}/initContainers", value=[INIT_1, INIT_2])],
        deployment(MAIN, init=[INIT_1, INIT_2]),
        id="jsonPatch with list concatenation (structured + structured)",
    ),
    pytest.param(
        deployment(labels={"env": "prod", "app": "demo"}),
        [op("add", "/metadata/labels/added", value="true")],
        deployment(labels={"env": "prod", "app": "demo", "added": "true"}),
        id="jsonPatch with map key comprehension all predicate",
    ),
    pytest.param(
        deployment(replicas=3, paused=True),
        [
            op("add", "/spec/progressDeadlineSeconds", value=3),
            op("add", f"{PODS}/hostNetwork", value=True),
        ],
        with_pod(deployment(replicas=3, paused=True, progressDeadlineSeconds=3), hostNetwork=True),
        id="jsonPatch with scalar int and bool as values",
    ),
    pytest.param(
        deployment([container("c1", resources={"requests": REQUESTS})]),
        [op("add", LIMITS, value=REQUESTS)],
        deployment([container("c1", resources={"requests": REQUESTS, "limits": REQUESTS})]),
        id="jsonPatch with map of resource quantities as value",
    ),
    pytest.param(
        deployment([container("c1", command=["sh", "-c", "echo hello"])]),
        [op("add", f"{PODS}/containers/0/args", value=["sh", "-c", "echo hello"])],
        deployment([container("c1", command=["sh", "-c", "echo hello"], args=["sh", "-c", "echo hello"])]),
        id="jsonPatch with slice of scalars as value",
    ),
    pytest.param(
        deployment(labels={"env": "prod", "tier": "frontend"}),
        [op("add", "/metadata/annotations", value={"env": "prod", "tier": "frontend"})],
        with_meta(
            deployment(labels={"env": "prod", "tier": "frontend"}), annotations={"env": "prod", "tier": "frontend"}
        ),
        id="jsonPatch with map of scalars as value",
    ),
    pytest.param(
        deployment([container("c1", resources={"requests": {"cpu": "250m", "memory": "512Mi"}})]),
        [op("add", LIMITS, value={"cpu": "250m", "memory": "512Mi"})],
        deployment(
            [
                container(
                    "c1",
                    resources={
                        "requests": {"cpu": "250m", "memory": "512Mi"},
                        "limits": {"cpu": "250m", "memory": "512Mi"},
                    },
                )
            ]
        ),
        id="jsonPatch with map of struct as value",
    ),
    pytest.param(
        deployment(MAIN),
        [
            op(
                "add",
                f"{PODS}/containers/1",
                value={"name": "sidecar", "image": "busybox:1.36", "resources": {"limits": {"cpu": "200m"}}},
            )
        ],
        deployment([*MAIN, {"name": "sidecar", "image": "busybox:1.36", "resources": {"limits": {"cpu": "200m"}}}]),
        id="jsonPatch with constant complex struct object as value",
    ),
    pytest.param(
        deployment(MAIN),
        [op("add", f"{PODS}/initContainers", value=[INIT_1, INIT_2])],
        deployment(MAIN, init=[INIT_1, INIT_2]),
        id="jsonPatch with constant complex list of struct objects as value",
    ),
]


@pytest.mark.parametrize(("document", "operations", "expected"), APISERVER)
def test_apiserver_json_patch(document: Any, operations: list[dict[str, Any]], expected: Any) -> None:
    check(document, operations, expected)
